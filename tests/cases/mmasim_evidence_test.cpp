// The evidence against MMA-Sim 2.1.1 (tests/data/mmasim/README.md): the sets cover every Blackwell
// preset row with FP6/FP4 inputs or block scaling, the cases are deterministic and reach the ends
// of every range, every committed MMA-Sim result is tcemu's bit for bit, and a datapath with one
// field changed is not (so that the committed cases pin each field).
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include <tcemu/cases/mmasim_evidence.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>

namespace tcemu {
namespace {

// MMA-Sim's results: TCEMU_MMASIM_RESULTS where set (a folder of `mmasim_reference.py --out`,
// e.g. a device run's 10^5 cases per set), else the committed archive unpacked into the build.
std::string results_dir() {
  const char* dir = std::getenv("TCEMU_MMASIM_RESULTS");
  return dir != nullptr && *dir != '\0' ? dir : TCEMU_MMASIM_DIR;
}

// Fails (never skips) where the results are missing: the evidence is part of the suite.
bool have_results(const std::string& dir) {
  if (std::filesystem::exists(dir + "/results.tsv")) return true;
  ADD_FAILURE() << "no MMA-Sim 2.1.1 results in " << dir
                << " (results.tsv): run the device command of tests/data/mmasim/README.md on a "
                   "machine with PyTorch and commit tests/data/mmasim/mmasim-results.tar.xz";
  return false;
}

const EvidenceSet& set_named(const std::vector<EvidenceSet>& sets, const std::string& name) {
  for (const EvidenceSet& s : sets) {
    if (s.name == name) return s;
  }
  throw std::logic_error("no evidence set " + name);
}

bool is_fp6_or_fp4(const FloatFormat& f) {
  return f == formats::e3m2 || f == formats::e2m3 || f == formats::e2m1;
}

TEST(MmaSimEvidence, SetsCoverEveryFp6Fp4AndBlockScaledRowOnce) {
  const std::vector<EvidenceSet> sets = mmasim_evidence_sets();
  // kind::f8f6f4: 25 pairs x 2 results; mxf8f6f4: 25 pairs; mxf4/mxf4nvf4.block32 (one datapath),
  // mxf4nvf4.block16 ue8m0 and ue4m3.
  EXPECT_EQ(sets.size(), 25u * 2 + 25 + 3);
  std::set<std::string> names;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    EXPECT_TRUE(names.insert(sets[i].name).second) << sets[i].name;
    EXPECT_FALSE(sets[i].mmasim.empty()) << sets[i].name;
    for (std::size_t j = 0; j < i; ++j) EXPECT_FALSE(sets[i].datapath == sets[j].datapath);
  }
  std::size_t covered = 0;
  for (const PresetEntry& row : all_presets()) {
    const Datapath& dp = row.datapath;
    if (!dp.block_scaled() && !is_fp6_or_fp4(dp.input) && !is_fp6_or_fp4(dp.b_format())) continue;
    const std::string label = std::string(row.arch) + " " + std::string(row.instruction);
    int found = 0;
    for (const EvidenceSet& s : sets) {
      for (const std::string& r : s.rows) found += r == label && s.datapath == dp ? 1 : 0;
    }
    EXPECT_EQ(found, 1) << label << ": " << describe(dp);
    ++covered;
  }
  EXPECT_GT(covered, 100u);
  const EvidenceSet& mxf4 = set_named(sets, "mxf4-block32-ue8m0");
  EXPECT_EQ(mxf4.rows.size(), 4u);  // tcgen05 and sm120, mxf4 and mxf4nvf4
  EXPECT_EQ(mxf4.mmasim.size(), 4u);
}

TEST(MmaSimEvidence, CasesAreDeterministicAndWellFormed) {
  for (const EvidenceSet& set : mmasim_evidence_sets()) {
    const Datapath& dp = set.datapath;
    const std::size_t k = static_cast<std::size_t>(dp.instruction_k);
    const std::size_t scales = dp.block_scaled() ? scale_count(dp, k) : 0;
    for (std::uint64_t i = 0; i < 64; ++i) {
      const MmaCase x = evidence_case(dp, kEvidenceSeed, set.stream, i);
      const MmaCase y = evidence_case(dp, kEvidenceSeed, set.stream, i);
      ASSERT_EQ(x.a.size(), k);
      ASSERT_EQ(x.b.size(), k);
      ASSERT_EQ(x.scale_a.size(), scales);
      ASSERT_EQ(x.scale_b.size(), scales);
      EXPECT_TRUE(x.a == y.a && x.b == y.b && x.c == y.c && x.scale_a == y.scale_a &&
                  x.scale_b == y.scale_b);
      for (std::size_t j = 0; j < k; ++j) {
        EXPECT_LT(x.a[j], 1u << dp.input.storage_bits()) << set.name << " case " << i;
        EXPECT_LT(x.b[j], 1u << dp.b_format().storage_bits()) << set.name << " case " << i;
      }
      for (std::size_t j = 0; j < scales; ++j) EXPECT_LT(x.scale_a[j] | x.scale_b[j], 256u);
      EXPECT_EQ(x.c >> 1 >> (dp.accumulator.storage_bits() - 1), 0u);
    }
    // Another set, another seed: other cases.
    EXPECT_NE(evidence_digest(set, kEvidenceSeed, 16), evidence_digest(set, 2, 16)) << set.name;
  }
}

// The scenarios reach what they are for: the ends of the scale ranges, all-zero groups, and
// results of every class (tcemu classifies them).
TEST(MmaSimEvidence, ScenariosReachTheEndsOfTheRanges) {
  const std::vector<EvidenceSet> sets = mmasim_evidence_sets();
  for (const char* name : {"mxf4nvf4-block16-ue4m3", "mxf4-block32-ue8m0",
                           "mxf8f6f4-block32-ue8m0-e4m3-e2m1", "f8f6f4-e5m2-e2m3-fp16"}) {
    const EvidenceSet& set = set_named(sets, name);
    const Datapath& dp = set.datapath;
    const bool ue8m0 = dp.block_scaling.scale_a == formats::ue8m0;
    std::set<std::string> seen;
    for (std::uint64_t i = 0; i < 4000; ++i) {
      const MmaCase x = evidence_case(dp, kEvidenceSeed, set.stream, i);
      for (const std::uint32_t s : x.scale_a) {
        if (s == 0) seen.insert("scale 0x00");
        if (s == 0xFF || (!ue8m0 && s == 0x7F)) seen.insert("NaN scale");
        if (ue8m0 && s == 0xFE) seen.insert("scale 0xFE");
        if (!ue8m0 && s >= 1 && s <= 7) seen.insert("subnormal scale");
        if (!ue8m0 && s > 0x80 && s != 0xFF) seen.insert("bit 7 set");
      }
      for (std::size_t g = 0; g < x.a.size(); g += 16) {
        bool zero = true;
        for (std::size_t j = g; j < g + 16; ++j) {
          zero = zero && decode(dp.input, x.a[j]).value_class == ValueClass::zero;
        }
        if (zero) seen.insert("all-zero group");
      }
      const Decoded d = decode(dp.accumulator, mma_case_element(dp, x));
      const bool subnormal =
          d.value_class == ValueClass::finite &&
          d.alignment_exponent(dp.accumulator) == dp.accumulator.min_exponent() &&
          d.significand < (std::uint64_t{1} << dp.accumulator.fraction_bits);
      seen.insert(subnormal                               ? "d subnormal"
                  : d.value_class == ValueClass::zero     ? "d zero"
                  : d.value_class == ValueClass::finite   ? "d normal"
                  : d.value_class == ValueClass::infinity ? "d Inf"
                                                          : "d NaN");
    }
    std::vector<std::string> wanted = {"d zero", "d normal", "d Inf", "d NaN", "d subnormal"};
    if (dp.block_scaled()) {
      wanted.insert(wanted.end(), {"all-zero group", "scale 0x00", "NaN scale"});
      if (ue8m0) wanted.push_back("scale 0xFE");
      if (!ue8m0) wanted.insert(wanted.end(), {"subnormal scale", "bit 7 set"});
    }
    for (const std::string& w : wanted) EXPECT_TRUE(seen.count(w)) << name << ": no " << w;
  }
}

TEST(MmaSimEvidence, CommittedResultsAreTcemusBitForBit) {
  const std::string dir = results_dir();
  if (!have_results(dir)) return;
  const std::vector<EvidenceSetResult> results = check_evidence_folder(dir, 0, 5);
  for (const EvidenceSetResult& r : results) {
    EXPECT_EQ(r.error, "") << r.set.name;
    EXPECT_GE(r.check.cases, 10000u) << r.set.name << ": the evidence keeps 10^4 cases per set";
    EXPECT_EQ(r.check.mismatches, 0u) << r.set.name;
    for (const EvidenceMismatch& m : r.check.first) {
      ADD_FAILURE() << describe_mismatch(r.set, r.seed, m);
    }
  }
}

// Each field a datapath of the evidence sets, changed alone, disagrees with MMA-Sim on some of
// the committed cases: the evidence pins every field, not only the presets as a whole.
TEST(MmaSimEvidence, OneFieldChangedDisagreesWithMmaSim) {
  const std::string dir = results_dir();
  if (!have_results(dir)) return;
  const std::vector<EvidenceRecord> records = read_evidence_manifest(dir + "/results.tsv");
  const std::vector<EvidenceSet> sets = mmasim_evidence_sets();
  for (const char* name :
       {"f8f6f4-e4m3-e2m1-fp32", "f8f6f4-e5m2-e3m2-fp16", "mxf8f6f4-block32-ue8m0-e2m3-e3m2",
        "mxf4-block32-ue8m0", "mxf4nvf4-block16-ue4m3"}) {
    const EvidenceSet& set = set_named(sets, name);
    std::uint64_t seed = kEvidenceSeed;
    for (const EvidenceRecord& r : records) seed = r.name == set.name ? r.seed : seed;
    const std::vector<std::uint32_t> mmasim =
        read_evidence_results(dir + "/" + set.name + ".d", set.datapath);
    const auto disagrees = [&](const char* field, auto change) {
      EvidenceSet changed = set;
      change(changed.datapath);
      const EvidenceCheck check = check_evidence(changed, seed, mmasim, 0);
      EXPECT_GT(check.mismatches, 0u) << name << " with " << field << " changed";
    };
    const Datapath& dp = set.datapath;
    disagrees("alignment_fraction_bits - 1",
              [](Datapath& d) { d.alignment_fraction_bits = *d.alignment_fraction_bits - 1; });
    disagrees("alignment_fraction_bits + 1",
              [](Datapath& d) { d.alignment_fraction_bits = *d.alignment_fraction_bits + 1; });
    // The floor binds only where every term lies below it and c is zero. Unscaled, a product's
    // last bit lies at or above 2^-32 (e5m2's smallest subnormal squared), within the grid of
    // either floor (25 bits below -133, or below -21 for fp16: 2^-46); in mxf4 a group term's
    // last bit lies 2 below its scales' exponent, so the grid (35 bits below the floor) cuts only
    // terms below 2^-162, which the RZ to fp32 drops whatever the floor. Only mxf8f6f4's scaled
    // single products meet it.
    if (dp.block_scaled() && dp.block_scaling.group_terms == 1) {
      disagrees("alignment_floor + 1", [](Datapath& d) { ++d.alignment_floor; });
      disagrees("alignment_floor - 1", [](Datapath& d) { --d.alignment_floor; });
    }
    disagrees("zero_sign", [](Datapath& d) { d.zero_sign = ZeroSign::ieee; });
    disagrees("block_rounding", [](Datapath& d) {
      d.block_rounding = d.block_rounding == Rounding::toward_zero ? Rounding::nearest_even
                                                                   : Rounding::toward_zero;
    });
    // An fp32 result overflows only past the largest finite c plus products a ulp of it
    // (2^104) large: ue8m0 scales reach that, unscaled fp8/fp6/fp4 and ue4m3 products do not.
    if (dp.accumulator == formats::fp16 || dp.block_scaling.scale_a == formats::ue8m0) {
      disagrees("overflow", [](Datapath& d) { d.overflow = Overflow::saturate; });
    }
    disagrees("c_entry", [](Datapath& d) { d.c_entry = AccumulatorEntry::added_after_blocks; });
    if (dp.block_scaled()) {
      disagrees("nan_scale", [](Datapath& d) {
        d.block_scaling.nan_scale = NanScale::ignored_for_zero_products;
      });
      disagrees("group_terms", [](Datapath& d) {
        d.block_scaling.group_terms = d.block_scaling.group_terms == 1 ? 2 : 8;
      });
    }
  }
}

}  // namespace
}  // namespace tcemu
