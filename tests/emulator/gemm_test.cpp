#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <functional>
#include <random>
#include <stdexcept>
#include <vector>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/test/same_bits.hpp>

namespace tcemu {
namespace {

// A matrix of raw bits stored in the format's container.
struct Storage {
  FloatFormat format;
  std::int64_t rows, cols, ld;
  Layout layout;
  std::vector<unsigned char> bytes;

  Storage(FloatFormat f, std::int64_t r, std::int64_t c, Layout l, std::int64_t extra_ld = 0)
      : format(f),
        rows(r),
        cols(c),
        ld(std::max<std::int64_t>(1, l == Layout::row_major ? c : r) + extra_ld),
        layout(l) {
    const std::int64_t outer = l == Layout::row_major ? r : c;
    bytes.assign(
        static_cast<std::size_t>(std::max<std::int64_t>(outer * ld, 1)) * container_bytes(f), 0);
  }
  MatrixView view() { return {{bytes.data(), format, rows, cols, ld, layout}}; }
  ConstMatrixView cview() const { return {bytes.data(), format, rows, cols, ld, layout}; }
};

// Random operand bits: normal values with exponents around 0, subnormals, zeros of both signs,
// and (when allowed) every finite bit pattern.
std::uint32_t random_bits(const FloatFormat& f, std::mt19937_64& rng, bool wide) {
  // The low storage_bits() bits (all 32 for fp32, where 1 << 32 would be undefined).
  const std::uint32_t mask = ~std::uint32_t{0} >> (32 - f.storage_bits());
  for (;;) {
    std::uint32_t bits = static_cast<std::uint32_t>(rng()) & mask;
    const int kind = static_cast<int>(rng() % 8);
    const std::uint32_t exponent_mask = ((std::uint32_t{1} << f.exponent_bits) - 1)
                                        << f.fraction_bits;
    if (kind == 0) bits &= ~exponent_mask;  // subnormal or zero
    if (kind == 1) bits &= f.sign_mask();   // signed zero
    if (kind >= 2 && !wide) {               // exponent near the bias
      const std::uint32_t e =
          static_cast<std::uint32_t>(f.bias() - 3 + static_cast<int>(rng() % 6));
      bits = (bits & ~exponent_mask) | (e << f.fraction_bits);
    }
    bits <<= f.padding_bits;
    const ValueClass vc = decode(f, bits).value_class;
    if (vc != ValueClass::nan && vc != ValueClass::infinity) return bits;
  }
}

void fill(Storage& s, std::mt19937_64& rng, bool wide) {
  MatrixView v = s.view();
  for (std::int64_t i = 0; i < s.rows; ++i) {
    for (std::int64_t j = 0; j < s.cols; ++j) v.set(i, j, random_bits(s.format, rng, wide));
  }
}

// Issue 18: random_bits shifted a 32-bit 1 by 32 for fp32 (undefined), and with -O3 the fp32 C
// it drew took 7 bit patterns (+0 and 2^-3..2^2). Over a sample of every format, it gives what
// its comment says: negative values, zeros of both signs, subnormals, and every fraction and
// sign bit (with `wide`, every storage bit) both clear and set.
TEST(GemmTestSupport, RandomBitsCoverWhatTheCommentSays) {
  for (const FloatFormat& f :
       {formats::fp32, formats::tf32, formats::fp16, formats::bf16, formats::e4m3, formats::e5m2}) {
    for (const bool wide : {false, true}) {
      SCOPED_TRACE(std::string(f.name) + (wide ? " wide" : ""));
      std::mt19937_64 rng(18);
      std::uint32_t seen_set = 0, seen_clear = 0;
      int negative = 0, positive_zero = 0, negative_zero = 0, subnormal = 0;
      for (int i = 0; i < 20000; ++i) {
        const std::uint32_t bits = random_bits(f, rng, wide) >> f.padding_bits;
        seen_set |= bits;
        seen_clear |= ~bits;
        const bool sign = (bits & f.sign_mask()) != 0;
        const std::uint32_t magnitude = bits & (f.sign_mask() - 1);
        negative += sign && magnitude != 0;
        positive_zero += !sign && magnitude == 0;
        negative_zero += sign && magnitude == 0;
        subnormal += magnitude != 0 && (magnitude >> f.fraction_bits) == 0;
      }
      EXPECT_GT(negative, 1000);
      EXPECT_GT(positive_zero, 100);
      EXPECT_GT(negative_zero, 100);
      EXPECT_GT(subnormal, 1000);
      const std::uint32_t storage = ~std::uint32_t{0} >> (32 - f.storage_bits());
      const std::uint32_t varying =
          wide ? storage : (f.sign_mask() | ((std::uint32_t{1} << f.fraction_bits) - 1));
      EXPECT_EQ(seen_set & varying, varying);
      EXPECT_EQ(seen_clear & varying, varying);
    }
  }
}

// The specification: element (i, j) is mma_element over row i of A and column j of B.
std::uint32_t expected_element(const Datapath& dp, const Storage& a, const Storage& b,
                               std::int64_t i, std::int64_t j, std::uint32_t c) {
  std::vector<std::uint32_t> row, col;
  for (std::int64_t p = 0; p < a.cols; ++p) {
    row.push_back(a.cview().get(i, p));
    col.push_back(b.cview().get(p, j));
  }
  return mma_element(dp, row, col, c);
}

// How bits of `format` read in a failure message (through fp32, which holds them all).
std::function<std::string(std::uint64_t)> reading(const FloatFormat& format) {
  return [format](std::uint64_t bits) {
    return test::fp32_value(
        convert(format, formats::fp32, static_cast<std::uint32_t>(bits), Rounding::nearest_even));
  };
}

// The inputs of element (i, j) of D = A B (+ C): row i of A, column j of B and, when given,
// C's element, in hex.
std::function<std::string(std::int64_t, std::int64_t)> gemm_inputs(const Storage& a,
                                                                   const Storage& b,
                                                                   const Storage* c = nullptr) {
  return [&a, &b, c](std::int64_t i, std::int64_t j) {
    std::string out =
        "A row " + std::to_string(i) + ": " +
        test::hex_values(
            a.cols, [&](std::int64_t p) { return a.cview().get(i, p); }, hex_digits(a.format)) +
        "\nB column " + std::to_string(j) + ": " +
        test::hex_values(
            b.rows, [&](std::int64_t p) { return b.cview().get(p, j); }, hex_digits(b.format));
    if (c) out += "\nC " + test::hex(c->cview().get(i, j), hex_digits(c->format));
    return out;
  };
}

// D's elements against `expected_at`, bit for bit, with the inputs of each differing element.
template <typename ExpectedAt>
::testing::AssertionResult d_is(const Storage& d, const ExpectedAt& expected_at, const Storage& a,
                                const Storage& b, const Storage* c = nullptr) {
  return test::same_bits_at(
      d.rows, d.cols, expected_at,
      [&](std::int64_t i, std::int64_t j) { return d.cview().get(i, j); },
      {.order = d.layout == Layout::row_major ? test::Order::row_major : test::Order::column_major,
       .inputs = gemm_inputs(a, b, c),
       .value = reading(d.format)});
}

struct Case {
  const char* arch;
  const char* instruction;
  FloatFormat input;
  FloatFormat accumulator;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.arch << " " << c.instruction << " " << c.input.name << " -> " << c.accumulator.name;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = std::string(info.param.arch) + "_" + std::string(info.param.input.name) + "_" +
                     std::string(info.param.accumulator.name);
  for (char& ch : name) ch = (ch == '-' || ch == '.') ? '_' : ch;
  return name;
}

class GemmMatchesElements : public ::testing::TestWithParam<Case> {};

TEST_P(GemmMatchesElements, InitialAccumulatorChainEqualsMmaElement) {
  const Case& cs = GetParam();
  const Datapath dp = preset(cs.arch, cs.input, cs.accumulator, cs.instruction);
  std::mt19937_64 rng(42);
  for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{
           {5, 37, 77}, {16, 16, 64}, {3, 17, 1}, {9, 40, 33}}) {
    for (bool wide : {false, true}) {
      Storage a(dp.input, m, k, Layout::row_major, 3);
      Storage b(dp.input, k, n, Layout::column_major, 1);
      Storage c(dp.accumulator, m, n, Layout::row_major);
      Storage d(dp.accumulator, m, n, Layout::column_major, 2);
      fill(a, rng, wide);
      fill(b, rng, wide);
      fill(c, rng, wide);
      emulated_gemm(dp, {.beta = 1.0f, .c_input = CInput::initial_accumulator, .threads = 3},
                    a.cview(), b.cview(), c.cview(), d.view());
      ASSERT_TRUE(d_is(
          d,
          [&](std::int64_t i, std::int64_t j) {
            return expected_element(dp, a, b, i, j, c.cview().get(i, j));
          },
          a, b, &c))
          << describe(dp) << " m=" << m << " n=" << n << " k=" << k << " wide=" << wide;
    }
  }
}

// Taking the result out of the tensor core every kb values of k: each chunk is an mma_element
// chain from +0, added to C with an fp32 round-to-nearest add, in k order.
class TakenOutGemm : public ::testing::TestWithParam<Case> {};

TEST_P(TakenOutGemm, ChunksAreAddedToCInFp32) {
  const Case& cs = GetParam();
  const Datapath dp = preset(cs.arch, cs.input, cs.accumulator, cs.instruction);
  std::mt19937_64 rng(7);
  const std::int64_t m = 6, n = 11, k = 5 * dp.instruction_k + 3;
  for (const std::int64_t kb :
       {std::int64_t{dp.instruction_k}, 2 * std::int64_t{dp.instruction_k}}) {
    Storage a(dp.input, m, k, Layout::column_major);
    Storage b(dp.input, k, n, Layout::row_major, 2);
    Storage c(dp.accumulator, m, n, Layout::row_major);
    Storage d(dp.accumulator, m, n, Layout::row_major);
    fill(a, rng, false);
    fill(b, rng, false);
    fill(c, rng, false);
    emulated_gemm(
        dp,
        {.beta = 1.0f, .c_input = CInput::initial_accumulator, .takeout_every_k = kb, .threads = 2},
        a.cview(), b.cview(), c.cview(), d.view());
    const auto expected = [&](std::int64_t i, std::int64_t j) {
      float sum = std::bit_cast<float>(c.cview().get(i, j));
      for (std::int64_t first = 0; first < k; first += kb) {
        std::vector<std::uint32_t> row, col;
        for (std::int64_t p = first; p < std::min(k, first + kb); ++p) {
          row.push_back(a.cview().get(i, p));
          col.push_back(b.cview().get(p, j));
        }
        sum += std::bit_cast<float>(mma_element(dp, row, col, 0));
      }
      return std::bit_cast<std::uint32_t>(sum);
    };
    ASSERT_TRUE(d_is(d, expected, a, b, &c)) << describe(dp) << " kb=" << kb;
  }
}

INSTANTIATE_TEST_SUITE_P(Presets, GemmMatchesElements,
                         ::testing::Values(Case{"sm70", "mma.sync", formats::fp16, formats::fp32},
                                           Case{"sm80", "mma.sync", formats::bf16, formats::fp32},
                                           Case{"sm80", "mma.sync", formats::tf32, formats::fp32},
                                           Case{"sm89", "mma.sync", formats::e4m3, formats::fp32},
                                           Case{"sm90", "mma.sync", formats::fp16, formats::fp32},
                                           Case{"sm90", "mma.sync", formats::fp16, formats::fp16},
                                           Case{"sm90", "mma.sync", formats::e5m2, formats::fp16},
                                           Case{"sm90", "mma.sync", formats::e4m3, formats::fp32},
                                           Case{"sm100", "mma.sync", formats::e4m3, formats::fp32},
                                           Case{"exact-rn", "mma.sync", formats::bf16,
                                                formats::fp32}),
                         case_name);

INSTANTIATE_TEST_SUITE_P(Presets, TakenOutGemm,
                         ::testing::Values(Case{"sm80", "mma.sync", formats::bf16, formats::fp32},
                                           Case{"sm80", "mma.sync", formats::tf32, formats::fp32},
                                           Case{"sm89", "mma.sync", formats::e4m3, formats::fp32},
                                           Case{"sm90", "mma.sync", formats::fp16, formats::fp32},
                                           Case{"sm90", "mma.sync", formats::tf32, formats::fp32},
                                           Case{"sm90", "mma.sync", formats::e4m3, formats::fp32},
                                           Case{"exact-rz", "mma.sync", formats::fp16,
                                                formats::fp32}),
                         case_name);

TEST(Gemm, ResultDoesNotDependOnThreadCount) {
  const Datapath dp = preset("sm90", formats::fp16, formats::fp32);
  std::mt19937_64 rng(7);
  Storage a(dp.input, 33, 200, Layout::row_major);
  Storage b(dp.input, 200, 70, Layout::row_major);
  fill(a, rng, false);
  fill(b, rng, false);
  Storage d1(dp.accumulator, 33, 70, Layout::row_major);
  Storage d8(dp.accumulator, 33, 70, Layout::row_major);
  emulated_gemm(dp, {.threads = 1}, a.cview(), b.cview(), std::nullopt, d1.view());
  emulated_gemm(dp, {.threads = 8}, a.cview(), b.cview(), std::nullopt, d8.view());
  EXPECT_TRUE(d_is(
      d8, [&](std::int64_t i, std::int64_t j) { return d1.cview().get(i, j); }, a, b))
      << "8 threads against 1";
}

TEST(Gemm, EpilogueIsFmaOfAlphaAccumulatorAndBetaC) {
  const Datapath dp = preset("sm80", formats::fp16, formats::fp32);
  std::mt19937_64 rng(3);
  Storage a(dp.input, 4, 24, Layout::row_major);
  Storage b(dp.input, 24, 5, Layout::row_major);
  Storage c(dp.accumulator, 4, 5, Layout::row_major);
  Storage d(dp.accumulator, 4, 5, Layout::row_major);
  fill(a, rng, false);
  fill(b, rng, false);
  fill(c, rng, false);
  const float alpha = 0.75f, beta = -1.5f;
  emulated_gemm(dp, {.alpha = alpha, .beta = beta}, a.cview(), b.cview(), c.cview(), d.view());
  EXPECT_TRUE(d_is(
      d,
      [&](std::int64_t i, std::int64_t j) {
        const float acc = std::bit_cast<float>(expected_element(dp, a, b, i, j, 0));
        const float cij = std::bit_cast<float>(c.cview().get(i, j));
        return std::bit_cast<std::uint32_t>(std::fma(alpha, acc, beta * cij));
      },
      a, b, &c));
}

TEST(Gemm, SpecialValuesFollowTheDatapathRules) {
  const Datapath dp = preset("sm90", formats::fp16, formats::fp32);
  Storage a(dp.input, 2, 16, Layout::row_major);
  Storage b(dp.input, 16, 2, Layout::row_major);
  const std::uint32_t one = 0x3C00, inf = 0x7C00, nan = 0x7E00;
  for (int p = 0; p < 16; ++p) {
    a.view().set(0, p, one);
    a.view().set(1, p, one);
    b.view().set(p, 0, one);
    b.view().set(p, 1, one);
  }
  a.view().set(0, 3, inf);  // row 0: +Inf * 1 -> column 0 Inf; column 1 gets Inf * 0 -> NaN
  b.view().set(3, 1, 0);
  a.view().set(1, 5, nan);  // row 1: NaN
  Storage d(dp.accumulator, 2, 2, Layout::row_major);
  emulated_gemm(dp, {}, a.cview(), b.cview(), std::nullopt, d.view());
  EXPECT_EQ(d.cview().get(0, 0), 0x7F800000u);
  EXPECT_EQ(d.cview().get(0, 1), dp.nan_bits);
  EXPECT_EQ(d.cview().get(1, 0), dp.nan_bits);
  EXPECT_EQ(d.cview().get(1, 1), dp.nan_bits);
}

// The fast path finds Inf and NaN while packing A and B and then leaves the product to the
// general path: here one Inf in B (the only non-finite input) of a product whose inputs outnumber
// fp16's bit patterns (so packing reads the operand table), every element against mma_element.
TEST(Gemm, InfinityInBOnlyTakesTheGeneralPath) {
  const Datapath dp = preset("sm90", formats::fp16, formats::fp32);
  constexpr std::int64_t m = 9, k = 3300, n = 11;
  static_assert((m + n) * k > std::int64_t{1} << 16);
  std::mt19937_64 rng(16);
  Storage a(dp.input, m, k, Layout::row_major);
  Storage b(dp.input, k, n, Layout::row_major);
  fill(a, rng, false);
  fill(b, rng, false);
  b.view().set(2500, 7, 0xFC00);  // -Inf
  Storage d(dp.accumulator, m, n, Layout::row_major);
  emulated_gemm(dp, {}, a.cview(), b.cview(), std::nullopt, d.view());
  int infinite = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const std::uint32_t got = d.cview().get(i, j);
      EXPECT_EQ(got, expected_element(dp, a, b, i, j, 0)) << i << ", " << j;
      infinite += (got & 0x7FFFFFFFu) >= 0x7F800000u;
    }
  }
  // Column 7 is Inf or NaN wherever its row's A at k = 2500 is not zero (checked to happen).
  EXPECT_GT(infinite, 0);
}

TEST(Gemm, OverflowMidChainStaysInfinite) {
  // bf16 2^64 * 2^64 = 2^128 per product: the first 16-term block overflows to Inf (the sm90
  // overflow rule) and the three later blocks keep it.
  const Datapath dp = preset("sm90", formats::bf16, formats::fp32);
  Storage a(dp.input, 1, 64, Layout::row_major);
  Storage b(dp.input, 64, 1, Layout::row_major);
  for (int p = 0; p < 64; ++p) {
    a.view().set(0, p, 0x5F80);  // 2^64
    b.view().set(p, 0, 0x5F80);
  }
  Storage d(dp.accumulator, 1, 1, Layout::row_major);
  emulated_gemm(dp, {}, a.cview(), b.cview(), std::nullopt, d.view());
  EXPECT_EQ(d.cview().get(0, 0), 0x7F800000u);
  EXPECT_EQ(d.cview().get(0, 0), expected_element(dp, a, b, 0, 0, 0));
}

TEST(Gemm, BadArgumentsAreNamed) {
  const Datapath dp = preset("sm90", formats::fp16, formats::fp32);
  Storage a(dp.input, 4, 8, Layout::row_major);
  Storage b(dp.input, 8, 3, Layout::row_major);
  Storage d(dp.accumulator, 4, 3, Layout::row_major);
  auto message = [&](auto&& call) {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  ConstMatrixView bad_ld = a.cview();
  bad_ld.ld = 7;
  EXPECT_NE(message([&] {
              emulated_gemm(dp, {}, bad_ld, b.cview(), std::nullopt, d.view());
            }).find("ldA = 7 must be >= max(1, 8)"),
            std::string::npos);
  Storage b_wrong(dp.input, 9, 3, Layout::row_major);
  EXPECT_NE(message([&] {
              emulated_gemm(dp, {}, a.cview(), b_wrong.cview(), std::nullopt, d.view());
            }).find("B is 9 x 3, expected 8 x 3"),
            std::string::npos);
  Storage a_bf16(formats::bf16, 4, 8, Layout::row_major);
  EXPECT_NE(message([&] {
              emulated_gemm(dp, {}, a_bf16.cview(), b.cview(), std::nullopt, d.view());
            }).find("A holds bf16"),
            std::string::npos);
  EXPECT_NE(message([&] {
              emulated_gemm(dp, {.beta = 1.0f}, a.cview(), b.cview(), std::nullopt, d.view());
            }).find("C is required"),
            std::string::npos);
  EXPECT_NE(message([&] {
              emulated_gemm(dp, {.alpha = 2.0f, .c_input = CInput::initial_accumulator}, a.cview(),
                            b.cview(), d.cview(), d.view());
            }).find("alpha and beta must be 1"),
            std::string::npos);
}

TEST(Gemm, TakeoutArgumentsAreChecked) {
  const Datapath dp = preset("sm90", formats::fp16, formats::fp32);
  Storage a(dp.input, 2, 32, Layout::row_major);
  Storage b(dp.input, 32, 2, Layout::row_major);
  Storage d(dp.accumulator, 2, 2, Layout::row_major);
  const auto run = [&](const Datapath& path, std::int64_t kb, Storage& out) {
    emulated_gemm(path, {.takeout_every_k = kb}, a.cview(), b.cview(), std::nullopt, out.view());
  };
  const auto message_of = [](const auto& call) {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of([&] { run(dp, 24, d); }).find("not a multiple of the instruction's k = 16"),
            std::string::npos);
  EXPECT_NE(message_of([&] { run(dp, -16, d); }).find("must be >= 0"), std::string::npos);
  const Datapath half = preset("sm90", formats::fp16, formats::fp16);
  Storage d16(half.accumulator, 2, 2, Layout::row_major);
  EXPECT_NE(message_of([&] { run(half, 16, d16); }).find("needs an fp32 accumulator"),
            std::string::npos);
}

TEST(Gemm, TakeoutOfTheWholeKEqualsOneChain) {
  const Datapath dp = preset("sm90", formats::bf16, formats::fp32);
  std::mt19937_64 rng(3);
  Storage a(dp.input, 7, 48, Layout::row_major);
  Storage b(dp.input, 48, 5, Layout::row_major);
  Storage d1(dp.accumulator, 7, 5, Layout::row_major);
  Storage d2(dp.accumulator, 7, 5, Layout::row_major);
  fill(a, rng, true);
  fill(b, rng, true);
  emulated_gemm(dp, {}, a.cview(), b.cview(), std::nullopt, d1.view());
  emulated_gemm(dp, {.takeout_every_k = 48}, a.cview(), b.cview(), std::nullopt, d2.view());
  // +0 + x is x for every x but -0, which becomes +0.
  EXPECT_TRUE(d_is(
      d2,
      [&](std::int64_t i, std::int64_t j) {
        const std::uint32_t chain = d1.cview().get(i, j);
        return chain == 0x80000000u ? 0u : chain;
      },
      a, b));
}

TEST(Gemm, EmptyInnerDimensionGivesBetaC) {
  const Datapath dp = preset("sm90", formats::fp16, formats::fp32);
  Storage a(dp.input, 2, 0, Layout::row_major);
  Storage b(dp.input, 0, 2, Layout::row_major);
  Storage c(dp.accumulator, 2, 2, Layout::row_major);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) c.view().set(i, j, std::bit_cast<std::uint32_t>(1.5f));
  Storage d(dp.accumulator, 2, 2, Layout::row_major);
  emulated_gemm(dp, {.alpha = 1.0f, .beta = 2.0f}, a.cview(), b.cview(), c.cview(), d.view());
  EXPECT_EQ(d.cview().get(1, 1), std::bit_cast<std::uint32_t>(3.0f));
}

}  // namespace
}  // namespace tcemu

namespace tcemu {
namespace {

// fuzz/findings/README.md, finding 1: K = 0 is an empty chain in mma_element as in
// emulated_gemm (d = c), while one instruction of zero products passes c through the block. On
// the fuzzer's datapath (blocks rounded to 9 bits, RN) the two differ: c = bb66 stays bb66 and
// goes through the block as bb68.
TEST(MmaElement, EmptyChainIsC) {
  const Datapath dp{.input = formats::e5m2,
                    .accumulator = formats::fp16,
                    .instruction_k = 840,
                    .block_terms = 8,
                    .k_group = 4,
                    .alignment_fraction_bits = 34,
                    .alignment_floor = -245,
                    .block_rounding = Rounding::nearest_even,
                    .block_result_precision = 9,
                    .c_entry = AccumulatorEntry::aligned_in_first_block,
                    .overflow = Overflow::saturate,
                    .zero_sign = ZeroSign::ieee,
                    .nan_bits = 0xfde8};
  validate(dp);
  const std::uint32_t c = 0xbb66;
  EXPECT_EQ(mma_element(dp, {}, {}, c), c);
  const std::vector<std::uint32_t> zeros(static_cast<std::size_t>(dp.instruction_k), 0);
  EXPECT_EQ(mma_element(dp, zeros, zeros, c), 0xbb68u);
  std::uint16_t c16 = static_cast<std::uint16_t>(c), d16 = 0;
  unsigned char none = 0;
  emulated_gemm(dp, {.alpha = 1, .beta = 1, .c_input = CInput::initial_accumulator},
                {&none, dp.input, 1, 0, 1, Layout::row_major},
                {&none, dp.input, 0, 1, 1, Layout::row_major},
                ConstMatrixView{reinterpret_cast<const unsigned char*>(&c16), dp.accumulator, 1, 1,
                                1, Layout::row_major},
                MatrixView{{reinterpret_cast<unsigned char*>(&d16), dp.accumulator, 1, 1, 1,
                            Layout::row_major}});
  EXPECT_EQ(d16, c);
}

}  // namespace
}  // namespace tcemu
