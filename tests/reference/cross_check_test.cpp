// Randomised cross-check of the emulator (tcemu::mma_element) against the independent MPFR oracle
// (tcemu::reference::oracle_mma_element), bit for bit, for every datapath preset and a few
// variants with one field changed.
//
// One test per datapath, named SUITE.DATAPATH (e.g. CrossCheck.sm90_wgmma_fp16_fp32). This source
// is built twice: with the compile definitions TCEMU_CROSS_CHECK_CASES (random cases per
// datapath; the environment variable of the same name overrides it) and TCEMU_CROSS_CHECK_SUITE
// (the suite name, so that the quick and the long program register distinct CTest names). The
// seed is fixed (the environment variable TCEMU_SEED overrides it) and printed. Cases are drawn
// in chunks of kChunk, each from its own generator seeded by (seed, datapath name, chunk), so the
// cases and their outcome do not depend on the thread count (TCEMU_TEST_THREADS, default: all
// cores).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <tcemu/cases/case_generator.hpp>
#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/reference/format_value.hpp>
#include <tcemu/reference/mma_oracle.hpp>

#ifndef TCEMU_CROSS_CHECK_CASES
#define TCEMU_CROSS_CHECK_CASES 2000
#endif
#ifndef TCEMU_CROSS_CHECK_SUITE
#define TCEMU_CROSS_CHECK_SUITE "CrossCheck"
#endif

namespace tcemu {
namespace {

constexpr std::uint64_t kDefaultSeed = 0x7463656D75;  // "tcemu"
constexpr std::size_t kChunk = 500;
constexpr std::size_t kMaxReported = 5;

std::uint64_t environment_number(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::stoull(text, nullptr, 0) : fallback;
}

// ---------------------------------------------------------------------------------------------
// The datapaths: every preset the emulator offers, and variants with one field overridden.

struct Combination {
  std::string name;  // letters, digits and '_' (a gtest parameter name)
  Datapath datapath;
};

std::string test_name(std::string text) {
  for (char& ch : text) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return text;
}

std::vector<Combination> combinations() {
  std::vector<Combination> out;
  for (const PresetEntry& e : all_presets()) {
    const std::string b =
        e.datapath.has_input_b ? "_" + std::string(e.datapath.input_b.name) : std::string();
    out.push_back({test_name(std::string(e.arch) + "_" + std::string(e.instruction) + "_" +
                             std::string(e.datapath.input.name) + b + "_" +
                             std::string(e.datapath.accumulator.name)),
                   e.datapath});
  }
  const auto variant = [&](std::string name, std::string_view arch, const FloatFormat& input,
                           const FloatFormat& accumulator,
                           const std::function<void(Datapath&)>& change) {
    Datapath dp = preset(arch, input, accumulator);
    change(dp);
    out.push_back({test_name("variant_" + name), dp});
  };
  using namespace formats;
  variant("sm90_fp16_fp32_rn", "sm90", fp16, fp32,
          [](Datapath& dp) { dp.block_rounding = Rounding::nearest_even; });
  variant("sm90_bf16_fp32_rn", "sm90", bf16, fp32,
          [](Datapath& dp) { dp.block_rounding = Rounding::nearest_even; });
  variant("sm80_bf16_fp32_f30", "sm80", bf16, fp32,
          [](Datapath& dp) { dp.alignment_fraction_bits = 30; });
  variant("sm90_fp16_fp16_f30", "sm90", fp16, fp16,
          [](Datapath& dp) { dp.alignment_fraction_bits = 30; });
  // Fewer alignment bits than the block result keeps: a block can change its own c, so running
  // an empty block would show (the contract says it does not run).
  variant("sm80_fp16_fp32_f10", "sm80", fp16, fp32,
          [](Datapath& dp) { dp.alignment_fraction_bits = 10; });
  variant("exact_rn_fp16_fp32_kgroup2", "exact-rn", fp16, fp32, [](Datapath& dp) {
    dp.block_terms = 8;  // two blocks per 16-term instruction, dealt two terms at a time
    dp.k_group = 2;
  });
  variant("exact_rz_bf16_fp32_kgroup2", "exact-rz", bf16, fp32, [](Datapath& dp) {
    dp.block_terms = 4;
    dp.k_group = 2;
  });
  variant("sm80_fp16_fp32_after", "sm80", fp16, fp32,
          [](Datapath& dp) { dp.c_entry = AccumulatorEntry::added_after_blocks; });
  variant("sm90_tf32_fp32_after", "sm90", tf32, fp32,
          [](Datapath& dp) { dp.c_entry = AccumulatorEntry::added_after_blocks; });
  variant("sm90_fp16_fp16_after", "sm90", fp16, fp16,
          [](Datapath& dp) { dp.c_entry = AccumulatorEntry::added_after_blocks; });
  variant("sm90_bf16_fp32_no_floor", "sm90", bf16, fp32,
          [](Datapath& dp) { dp.alignment_floor = kNoAlignmentFloor; });
  variant("sm90_tf32_fp32_saturate", "sm90", tf32, fp32,
          [](Datapath& dp) { dp.overflow = Overflow::saturate; });
  variant("sm80_fp16_fp16_rz_ieee_overflow", "sm80", fp16, fp16, [](Datapath& dp) {
    dp.block_rounding = Rounding::toward_zero;
    dp.overflow = Overflow::ieee;
  });
  variant("sm90_bf16_fp32_p14_rn", "sm90", bf16, fp32, [](Datapath& dp) {
    dp.block_result_precision = 14;
    dp.block_rounding = Rounding::nearest_even;
  });
  variant("sm90_fp16_fp16_p8", "sm90", fp16, fp16,
          [](Datapath& dp) { dp.block_result_precision = 8; });
  variant("exact_rz_bf16_fp32_zero_positive", "exact-rz", bf16, fp32,
          [](Datapath& dp) { dp.zero_sign = ZeroSign::positive; });
  variant("sm89_e5m2_fp16_kgroup1", "sm89", e5m2, fp16, [](Datapath& dp) { dp.k_group = 1; });
  const auto scaled = [&](std::string name, const FloatFormat& a, std::string_view instruction,
                          const std::function<void(Datapath&)>& change) {
    Datapath dp = preset("sm100", a, fp32, instruction);
    change(dp);
    out.push_back({test_name("variant_" + name), dp});
  };
  scaled("nvfp4_f30", e2m1, "tcgen05.mxf4nvf4.block16.ue4m3",
         [](Datapath& dp) { dp.alignment_fraction_bits = 30; });
  scaled("nvfp4_exact_rn", e2m1, "tcgen05.mxf4nvf4.block16.ue4m3", [](Datapath& dp) {
    dp.alignment_fraction_bits = std::nullopt;
    dp.block_rounding = Rounding::nearest_even;
  });
  scaled("nvfp4_group4_ignore_nan", e2m1, "tcgen05.mxf4nvf4.block16.ue4m3", [](Datapath& dp) {
    dp.block_scaling.group_terms = 4;
    dp.block_scaling.nan_scale = NanScale::ignored_for_zero_products;
  });
  scaled("mxf8_e4m3_group8", e4m3, "tcgen05.mxf8f6f4.block32",
         [](Datapath& dp) { dp.block_scaling.group_terms = 8; });
  scaled("mxf8_e4m3_blocks8", e4m3, "tcgen05.mxf8f6f4.block32", [](Datapath& dp) {
    dp.block_terms = 8;
    dp.k_group = 8;
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// The comparison.

std::string hex(std::uint32_t bits, const FloatFormat& f) {
  std::ostringstream out;
  out << "0x" << std::hex << std::setw(hex_digits(f)) << std::setfill('0') << bits;
  return out.str();
}

std::string hex_list(const std::vector<std::uint32_t>& bits, const FloatFormat& f) {
  std::string text = "{";
  for (std::size_t i = 0; i < bits.size(); ++i) text += (i ? ", " : "") + hex(bits[i], f);
  return text + "}";
}

std::string value_of(std::uint32_t bits, const FloatFormat& f) {
  return hex(bits, f) + " = " + reference::exact_value(f, bits).value.to_string();
}

// What the results of a run were, to show that the generator reaches every kind of result.
enum ResultClass { kNan, kInfinity, kPositiveZero, kNegativeZero, kSubnormal, kMaxFinite, kNormal };
constexpr const char* kResultClassNames[] = {"nan",       "inf", "+0",    "-0",
                                             "subnormal", "max", "normal"};
constexpr std::size_t kResultClasses = std::size(kResultClassNames);

ResultClass classify(std::uint32_t bits, const FloatFormat& f) {
  const std::uint32_t stored = bits >> f.padding_bits;
  const std::uint32_t fraction = stored & ((1u << f.fraction_bits) - 1);
  const std::uint32_t field = (stored >> f.fraction_bits) & ((1u << f.exponent_bits) - 1);
  const std::uint32_t all_ones = (1u << f.exponent_bits) - 1;
  if (field == all_ones) return fraction == 0 ? kInfinity : kNan;  // IEEE accumulators
  if (field == 0) {
    if (fraction != 0) return kSubnormal;
    return (stored & f.sign_mask()) != 0 ? kNegativeZero : kPositiveZero;
  }
  return field == all_ones - 1 && fraction == (1u << f.fraction_bits) - 1 ? kMaxFinite : kNormal;
}

// A scale code: mostly near 1, often anywhere in the format, sometimes NaN or zero.
std::uint32_t random_scale(const FloatFormat& f, std::mt19937_64& rng) {
  const bool e8m0 = f == formats::ue8m0;
  const std::uint32_t nan = e8m0 ? 0xFF : 0x7F, one = e8m0 ? 127 : 0x38;
  switch (rng() % 16) {
    case 0:
      return nan;
    case 1:
      return 0;
    case 2:
    case 3:
    case 4:
    case 5:
      return static_cast<std::uint32_t>(rng() % nan);
    default:
      return one - 4 + static_cast<std::uint32_t>(rng() % 9);
  }
}

struct Mismatch {
  std::size_t index;
  std::string message;
};

std::uint64_t name_hash(std::string_view name) {  // FNV-1a: stable across platforms
  std::uint64_t h = 0xCBF29CE484222325;
  for (const char ch : name) h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001B3;
  return h;
}

// One datapath's cross-check, registered at start-up by name (plain names, no "# GetParam()"
// comments for CTest's test discovery to carry along).
class CrossCheck : public ::testing::Test {
 public:
  explicit CrossCheck(Combination combination) : combination_(std::move(combination)) {}
  void TestBody() override;

 private:
  Combination combination_;
};

void CrossCheck::TestBody() {
  const Combination& combination = combination_;
  const Datapath& dp = combination.datapath;
  const std::size_t cases = environment_number("TCEMU_CROSS_CHECK_CASES", TCEMU_CROSS_CHECK_CASES);
  const std::uint64_t seed = environment_number("TCEMU_SEED", kDefaultSeed);
  const std::size_t threads = std::max<std::size_t>(
      1, environment_number("TCEMU_TEST_THREADS", std::thread::hardware_concurrency()));
  std::cout << "[ cross-check ] " << combination.name << ": " << cases << " cases, seed 0x"
            << std::hex << seed << std::dec << " (TCEMU_SEED), " << threads << " threads\n"
            << "[ datapath    ] " << describe(dp) << std::endl;
  RecordProperty("seed", std::to_string(seed));

  const std::size_t chunks = (cases + kChunk - 1) / kChunk;
  std::atomic<std::size_t> next_chunk{0};
  std::atomic<std::size_t> found{0};
  std::mutex mutex;
  std::vector<Mismatch> mismatches;
  std::array<std::atomic<std::size_t>, kResultClasses> histogram{};
  const auto work = [&] {
    std::array<std::size_t, kResultClasses> counts{};
    MmaCase x;
    MmaCase b_case;
    std::vector<std::uint32_t> scale_a, scale_b;
    std::string_view scenario;
    for (std::size_t chunk = next_chunk++; chunk < chunks && found < kMaxReported;
         chunk = next_chunk++) {
      CaseGenerator generator(dp, seed, name_hash(combination.name), chunk);
      // b of its own format (kind::f8f6f4 pairs): a second generator on that format.
      Datapath b_datapath = dp;
      b_datapath.input = dp.b_format();
      CaseGenerator b_generator(b_datapath, seed, name_hash(combination.name) + 1, chunk);
      std::mt19937_64 scale_rng(seed ^ name_hash(combination.name) ^ (chunk * 0x9E3779B97F4A7C15));
      const std::size_t end = std::min(cases, (chunk + 1) * kChunk);
      for (std::size_t index = chunk * kChunk; index < end && found < kMaxReported; ++index) {
        scenario = generator.next(x, generator.random_k());
        if (dp.has_input_b) {
          b_generator.next(b_case, x.a.size());
          x.b = b_case.b;
        }
        if (dp.block_scaled()) {
          const std::size_t count = scale_count(dp, x.a.size());
          scale_a.resize(count);
          scale_b.resize(count);
          for (std::size_t s = 0; s < count; ++s) {
            scale_a[s] = random_scale(dp.block_scaling.scale_a, scale_rng);
            scale_b[s] = random_scale(dp.block_scaling.scale_b, scale_rng);
          }
        }
        std::string problem;
        std::uint32_t emulated = 0;
        std::uint32_t expected = 0;
        try {
          emulated = dp.block_scaled() ? mma_element(dp, x.a, x.b, x.c, scale_a, scale_b)
                                       : mma_element(dp, x.a, x.b, x.c);
          expected = dp.block_scaled()
                         ? reference::oracle_mma_element(dp, x.a, x.b, x.c, scale_a, scale_b)
                         : reference::oracle_mma_element(dp, x.a, x.b, x.c);
          if (emulated != expected) {
            problem = "emulator " + value_of(emulated, dp.accumulator) + "\n  oracle   " +
                      value_of(expected, dp.accumulator);
          }
        } catch (const std::exception& e) {
          problem = std::string("exception: ") + e.what();
        }
        ++counts[classify(expected, dp.accumulator)];
        if (problem.empty()) continue;
        std::ostringstream message;
        message << "mismatch in " << combination.name << ", case " << index << " (seed 0x"
                << std::hex << seed << std::dec << ", scenario " << scenario << ")\n"
                << "  datapath " << describe(dp) << "\n  K = " << x.a.size()
                << "\n  a = " << hex_list(x.a, dp.input)
                << "\n  b = " << hex_list(x.b, dp.b_format())
                << "\n  c = " << hex(x.c, dp.accumulator);
        if (dp.block_scaled()) {
          message << "\n  scales of a = " << hex_list(scale_a, dp.block_scaling.scale_a)
                  << "\n  scales of b = " << hex_list(scale_b, dp.block_scaling.scale_b);
        }
        message << "\n  " << problem;
        ++found;
        const std::lock_guard lock(mutex);
        mismatches.push_back({index, message.str()});
      }
    }
    for (std::size_t i = 0; i < kResultClasses; ++i) histogram[i] += counts[i];
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();

  std::cout << "[ results     ]";
  for (std::size_t i = 0; i < kResultClasses; ++i) {
    std::cout << ' ' << kResultClassNames[i] << ' ' << histogram[i].load();
  }
  std::cout << std::endl;

  std::sort(mismatches.begin(), mismatches.end(),
            [](const Mismatch& x, const Mismatch& y) { return x.index < y.index; });
  for (std::size_t i = 0; i < std::min(kMaxReported, mismatches.size()); ++i) {
    ADD_FAILURE() << mismatches[i].message;
  }
  if (!mismatches.empty()) std::cout << "[ cross-check ] stopped after the first mismatches\n";
}

const bool kRegistered = [] {
  for (Combination& combination : combinations()) {
    const std::string name = combination.name;
    ::testing::RegisterTest(TCEMU_CROSS_CHECK_SUITE, name.c_str(), nullptr, nullptr, __FILE__,
                            __LINE__, [combination = std::move(combination)]() -> ::testing::Test* {
                              return new CrossCheck(combination);
                            });
  }
  return true;
}();

}  // namespace
}  // namespace tcemu
