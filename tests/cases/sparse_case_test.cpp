// Sparse MMA (mma.sp, 2:4 structured sparsity): the case format, the selection of B's rows by the
// metadata, a sparse case through its preset and the probe's cases; h100_sparse_probe_test.cpp
// replays what the H100 did, tests/emulator/sparse_presets_test.cpp checks the presets.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include <tcemu/cases/case_generator.hpp>
#include <tcemu/cases/sparse_case.hpp>
#include <tcemu/cases/sparse_probe_cases.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/emulator/sparse_presets.hpp>

namespace tcemu {
namespace {

using formats::fp16;
using formats::fp32;

std::string error_of(std::string_view line) {
  try {
    parse_sparse_case_line(line, 9, fp16, fp32);
  } catch (const CaseFileError& e) {
    EXPECT_EQ(e.line(), 9u);
    return e.what();
  }
  return "no error";
}

// K = 8: kept a 3c00 4000 (group 0, positions 1 and 3) and 4200 4400 (group 1, positions 0, 2).
constexpr std::string_view kLine =
    "8 3c00 4000 4200 4400 1302 0001 0002 0003 0004 0005 0006 0007 0008 3f800000";

TEST(SparseCase, ParsesAndFormatsALine) {
  const auto c = parse_sparse_case_line(kLine, 1, fp16, fp32);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->a, (std::vector<std::uint32_t>{0x3C00, 0x4000, 0x4200, 0x4400}));
  EXPECT_EQ(c->index, (std::vector<std::uint8_t>{1, 3, 0, 2}));
  EXPECT_EQ(c->b.size(), 8u);
  EXPECT_EQ(c->c, 0x3F800000u);
  EXPECT_FALSE(c->d);
  EXPECT_EQ(format_sparse_case_line(*c, fp16, fp32), kLine);
  const auto with_d = parse_sparse_case_line(std::string(kLine) + " 41200000", 1, fp16, fp32);
  ASSERT_TRUE(with_d && with_d->d);
  EXPECT_EQ(*with_d->d, 0x41200000u);
  EXPECT_FALSE(parse_sparse_case_line("# comment", 1, fp16, fp32));
  EXPECT_FALSE(parse_sparse_case_line("  ", 1, fp16, fp32));
}

TEST(SparseCase, RejectsMalformedLinesNamingTheField) {
  EXPECT_EQ(error_of("6 3c00 3c00 3c00 01 0001 0002 0003 0004 0005 0006 3f800000"),
            "line 9: K '6' is not a multiple of 4 that the line can hold");
  EXPECT_EQ(error_of("8 3c00 4000 4200 4400 1302 0001 0002 0003 0004 0005 0006 0007 3f800000"),
            "line 9: sparse K = 8 needs 15 fields (K, 4 kept a, the metadata, 8 b, c) or 16 with "
            "a recorded d, found 14");
  EXPECT_EQ(error_of("8 3c00 4000 4200 4400 130 0001 0002 0003 0004 0005 0006 0007 0008 3f800000"
                     " 3f800000"),
            "line 9: metadata '130' must be 4 digits 0-3 (one per kept a)");
  EXPECT_EQ(error_of("8 3c00 4000 4200 4400 1402 0001 0002 0003 0004 0005 0006 0007 0008 3f800000"),
            "line 9: metadata '1402' has a digit other than 0-3");
  EXPECT_EQ(error_of("8 3c00 4000 4200 4400 1320 0001 0002 0003 0004 0005 0006 0007 0008 3f800000"),
            "line 9: sparse case: indices 20 of group 1 are not increasing (01 02 03 12 13 23)");
  EXPECT_EQ(error_of("8 3c00 4000 4200 4400 1102 0001 0002 0003 0004 0005 0006 0007 0008 3f800000"),
            "line 9: sparse case: indices 11 of group 0 are not increasing (01 02 03 12 13 23)");
  EXPECT_EQ(error_of("8 3c00 4000 4200 xyz0 1302 0001 0002 0003 0004 0005 0006 0007 0008 3f800000"),
            "line 9: a_3 'xyz0' is not hexadecimal");
  EXPECT_EQ(error_of("8 3c00 4000 4200 4400 1302 0001 0002 0003 0004 0005 0006 0007 0008 3f80"),
            "line 9: c '3f80' must be 8 hex digits (fp32)");
}

TEST(SparseCase, Tf32KeepsOneKOfEachPair) {
  const std::string b = " 3f800000 3f800000 3f800000 3f800000 00000000";
  EXPECT_TRUE(parse_sparse_case_line("4 3f800000 3f800000 13" + b, 1, formats::tf32, fp32));
  try {
    parse_sparse_case_line("4 3f800000 3f800000 01" + b, 4, formats::tf32, fp32);
    ADD_FAILURE() << "indices 01 accepted for tf32";
  } catch (const CaseFileError& e) {
    EXPECT_EQ(std::string(e.what()),
              "line 4: sparse case: indices 01 of group 0 keep no single k of each pair, as "
              "tf32's 1:2 sparsity needs (02 03 12 13)");
  }
}

TEST(SparseCase, TheMetadataSelectsBsRows) {
  const auto c = parse_sparse_case_line(kLine, 1, fp16, fp32);
  ASSERT_TRUE(c);
  const MmaCase dense = dense_case(*c);
  EXPECT_EQ(dense.a, c->a);
  // Kept k: 1, 3 (group 0) and 4, 6 (group 1); b_k holds k + 1.
  EXPECT_EQ(dense.b, (std::vector<std::uint32_t>{0x0002, 0x0004, 0x0005, 0x0007}));
  EXPECT_EQ(dense.c, c->c);
  SparseMmaCase bad = *c;
  bad.index.pop_back();
  EXPECT_THROW(dense_case(bad), std::invalid_argument);
}

// In the model, zero products change nothing: a sparse case gives the bits of the dense K-term
// case with zeros at the dropped positions of A, run through the dense shape of K/2 terms in
// one block (finite b, so that no dropped Inf meets a zero).
TEST(SparsePresets, ASparseCaseIsTheDenseCaseWithZerosDropped) {
  const Datapath kept = sparse_preset("sm90", fp16, fp32, "mma.sp.m16n8k32");
  const SparseProbeCases probe = sparse_probe_cases(kept, 32, 2000, 5);
  Datapath dense_k32 = kept;
  dense_k32.instruction_k = dense_k32.block_terms = dense_k32.k_group = 32;
  std::size_t compared = 0;
  for (const SparseMmaCase& c : probe.cases) {
    if (std::ranges::any_of(c.b, [](std::uint32_t b) { return (b & 0x7C00u) == 0x7C00u; }))
      continue;
    std::vector<std::uint32_t> a(32, 0);
    for (std::size_t j = 0; j < c.a.size(); ++j) a[4 * (j / 2) + c.index[j]] = c.a[j];
    EXPECT_EQ(sparse_mma_element(kept, c), mma_element(dense_k32, a, c.b, c.c));
    ++compared;
  }
  EXPECT_GT(compared, 500u);
}

TEST(SparseProbeCases, CoverEveryIndexPairAndHideNanAndInfInDroppedRows) {
  const Datapath kept = sparse_preset("sm90", fp16, fp32, "mma.sp.m16n8k16");
  const std::size_t random = 3000;
  const SparseProbeCases probe = sparse_probe_cases(kept, 16, random, 3);
  const ProbeCases dense = probe_cases(kept, 8, random, 3);
  ASSERT_EQ(probe.cases.size(), random + 3 * (dense.cases.size() - random));
  std::set<std::pair<int, int>> pairs;
  std::size_t special_dropped = 0;
  for (std::size_t i = 0; i < probe.cases.size(); ++i) {
    const SparseMmaCase& c = probe.cases[i];
    ASSERT_NO_THROW(check_sparse_case(c));
    ASSERT_EQ(c.b.size(), 16u);
    const std::size_t source = i < random ? i : random + (i - random) / 3;
    const MmaCase d = dense_case(c);
    EXPECT_EQ(d.a, dense.cases[source].a);
    EXPECT_EQ(d.b, dense.cases[source].b);
    for (std::size_t g = 0; g < 4; ++g) {
      pairs.insert({c.index[2 * g], c.index[2 * g + 1]});
      for (std::uint8_t k = 0; k < 4; ++k) {
        if (k != c.index[2 * g] && k != c.index[2 * g + 1] && (c.b[4 * g + k] & 0x7C00u) == 0x7C00u)
          ++special_dropped;
      }
    }
    if (i >= random) {
      const std::string& name = probe.names[i];
      const std::string expected = (i - random) % 3 == 0   ? " (indices 01)"
                                   : (i - random) % 3 == 1 ? " (indices 23)"
                                                           : " (random indices)";
      EXPECT_TRUE(name.ends_with(expected)) << name;
      if ((i - random) % 3 == 0) {
        EXPECT_EQ(c.index[0] * 10 + c.index[1], 1);
      }
      if ((i - random) % 3 == 1) {
        EXPECT_EQ(c.index[6] * 10 + c.index[7], 23);
      }
    } else {
      EXPECT_TRUE(probe.names[i].empty());
    }
  }
  EXPECT_EQ(pairs.size(), 6u);
  EXPECT_GT(special_dropped, 100u);  // NaN or Inf in B rows the instruction must not read
}

TEST(SparseProbeCases, Tf32CasesKeepOneKOfEachPair) {
  const Datapath kept = sparse_preset("sm90", formats::tf32, fp32, "mma.sp.m16n8k16");
  const SparseProbeCases probe = sparse_probe_cases(kept, 16, 1000, 3);
  std::set<std::pair<int, int>> pairs;
  for (const SparseMmaCase& c : probe.cases) {
    ASSERT_NO_THROW(check_sparse_case(c, formats::tf32));
    for (std::size_t g = 0; g < 4; ++g) pairs.insert({c.index[2 * g], c.index[2 * g + 1]});
  }
  EXPECT_EQ(pairs, (std::set<std::pair<int, int>>{{0, 2}, {0, 3}, {1, 2}, {1, 3}}));
  EXPECT_TRUE(probe.names[1000].ends_with(" (indices 02)")) << probe.names[1000];
  EXPECT_TRUE(probe.names[1001].ends_with(" (indices 13)")) << probe.names[1001];
}

TEST(SparseProbeCases, Fp8K64CasesAreValidEightBitCases) {
  const Datapath dp = sparse_preset("sm90", formats::e4m3, fp32, "mma.sp.m16n8k64");
  const SparseProbeCases probe = sparse_probe_cases(dp, 64, 200, 3);
  ASSERT_GT(probe.cases.size(), 200u);
  bool high_bits = false;
  for (const SparseMmaCase& c : probe.cases) {
    ASSERT_EQ(c.b.size(), 64u);
    check_sparse_case(c, formats::e4m3);
    for (std::uint32_t b : c.b) high_bits = high_bits || b > 0xFF;
    const std::string line = format_sparse_case_line(c, formats::e4m3, fp32);
    const auto back = parse_sparse_case_line(line, 1, formats::e4m3, fp32);
    ASSERT_TRUE(back);
    EXPECT_EQ(sparse_mma_element(dp, *back), sparse_mma_element(dp, c));
  }
  EXPECT_FALSE(high_bits);
}

}  // namespace
}  // namespace tcemu
