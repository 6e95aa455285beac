#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/emulator/integer_gemm.hpp>
#include <tcemu/emulator/integer_mma.hpp>

namespace tcemu {
namespace {

constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();

IntegerDatapath datapath(IntegerFormat a, IntegerFormat b, int k, IntegerOverflow o) {
  return {a, b, k, o};
}

template <typename F>
std::string thrown_message(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

TEST(IntegerFormat, RangesNamesAndBits) {
  using namespace integer_formats;
  EXPECT_EQ(s8.min_value(), -128);
  EXPECT_EQ(s8.max_value(), 127);
  EXPECT_EQ(u8.max_value(), 255);
  EXPECT_EQ(s4.min_value(), -8);
  EXPECT_EQ(s4.max_value(), 7);
  EXPECT_EQ(u4.min_value(), 0);
  EXPECT_EQ(u4.max_value(), 15);
  EXPECT_EQ(s32.min_value(), kMin);
  EXPECT_EQ(hex_digits(s4), 1);
  EXPECT_EQ(hex_digits(u8), 2);
  EXPECT_EQ(hex_digits(s32), 8);
  for (const IntegerFormat f : {s8, u8, s4, u4, s32}) {
    ASSERT_TRUE(integer_format_by_name(f.name).has_value()) << f.name;
    EXPECT_EQ(*integer_format_by_name(f.name), f);
  }
  EXPECT_FALSE(integer_format_by_name("s16").has_value());
  EXPECT_FALSE(integer_format_by_name("fp16").has_value());
  // Every pattern of the small formats round-trips through its value.
  for (const IntegerFormat f : {s8, u8, s4, u4}) {
    for (std::uint32_t bits = 0; bits < (1u << f.bits); ++bits) {
      const std::int32_t v = integer_from_bits(f, bits);
      EXPECT_TRUE(f.holds(v)) << f.name << " " << bits;
      EXPECT_EQ(integer_to_bits(f, v), bits) << f.name << " " << bits;
    }
  }
  EXPECT_EQ(integer_from_bits(s4, 0x8), -8);
  EXPECT_EQ(integer_from_bits(s8, 0xff), -1);
  EXPECT_EQ(integer_from_bits(u8, 0xff), 255);
  EXPECT_EQ(integer_from_bits(s32, 0x80000000u), kMin);
  EXPECT_EQ(integer_to_bits(s32, -1), 0xffffffffu);
  EXPECT_THROW(integer_from_bits(s4, 0x10), std::invalid_argument);
  EXPECT_THROW(integer_to_bits(u4, 16), std::invalid_argument);
  EXPECT_THROW(integer_to_bits(s8, -129), std::invalid_argument);
}

TEST(IntegerDatapath, ValidateNamesTheField) {
  using namespace integer_formats;
  EXPECT_NO_THROW(validate(datapath(s8, u8, 32, IntegerOverflow::wrap)));
  EXPECT_NO_THROW(validate(datapath(u4, s4, 64, IntegerOverflow::saturate)));
  EXPECT_NE(thrown_message([] {
              validate(datapath(s8, s4, 32, IntegerOverflow::wrap));
            }).find("differ in width"),
            std::string::npos);
  EXPECT_NE(thrown_message([] {
              validate(datapath(s32, s8, 32, IntegerOverflow::wrap));
            }).find("a_format s32"),
            std::string::npos);
  EXPECT_NE(thrown_message([] {
              validate(datapath(s8, s8, 0, IntegerOverflow::wrap));
            }).find("instruction_k = 0"),
            std::string::npos);
  EXPECT_THROW(validate(datapath(s8, s8, kMaxIntegerInstructionK + 1, IntegerOverflow::wrap)),
               std::invalid_argument);
}

TEST(IntegerMmaElement, ProductsOfEveryFormatPair) {
  using namespace integer_formats;
  const auto one = [](IntegerFormat fa, IntegerFormat fb, std::int32_t a, std::int32_t b) {
    const std::int32_t av[] = {a}, bv[] = {b};
    return integer_mma_element(datapath(fa, fb, 16, IntegerOverflow::wrap), av, bv, 0);
  };
  EXPECT_EQ(one(s8, s8, -128, -128), 16384);
  EXPECT_EQ(one(s8, u8, -128, 255), -32640);
  EXPECT_EQ(one(u8, s8, 255, 127), 32385);
  EXPECT_EQ(one(u8, u8, 255, 255), 65025);
  EXPECT_EQ(one(s4, s4, -8, -8), 64);
  EXPECT_EQ(one(s4, u4, -8, 15), -120);
  EXPECT_EQ(one(u4, u4, 15, 15), 225);
}

TEST(IntegerMmaElement, KZeroPassesC) {
  const auto dp = datapath(integer_formats::s8, integer_formats::s8, 32, IntegerOverflow::saturate);
  EXPECT_EQ(integer_mma_element(dp, {}, {}, kMin), kMin);
  EXPECT_EQ(integer_mma_element(dp, {}, {}, 12345), 12345);
}

TEST(IntegerMmaElement, WrapAndSaturateOnRealOverflow) {
  using namespace integer_formats;
  const std::int32_t a[] = {1}, b[] = {1};
  EXPECT_EQ(integer_mma_element(datapath(s8, s8, 16, IntegerOverflow::wrap), a, b, kMax), kMin);
  EXPECT_EQ(integer_mma_element(datapath(s8, s8, 16, IntegerOverflow::saturate), a, b, kMax), kMax);
  const std::int32_t neg[] = {-1};
  EXPECT_EQ(integer_mma_element(datapath(s8, s8, 16, IntegerOverflow::wrap), neg, b, kMin), kMax);
  EXPECT_EQ(integer_mma_element(datapath(s8, s8, 16, IntegerOverflow::saturate), neg, b, kMin),
            kMin);
  // 2^16 products 255 * 255 from 0: 65536 * 65025 = 4261478400 = 2^32 - 33488896.
  const std::vector<std::int32_t> x(65536, 255);
  EXPECT_EQ(integer_mma_element(datapath(u8, u8, 32, IntegerOverflow::wrap), x, x, 0), -33488896);
  EXPECT_EQ(integer_mma_element(datapath(u8, u8, 32, IntegerOverflow::saturate), x, x, 0), kMax);
}

TEST(IntegerMmaElement, SaturationHappensOncePerInstruction) {
  using namespace integer_formats;
  // +100 then -100 from kMax - 10: one instruction sees the exact sum and does not saturate; two
  // instructions clamp the first result to kMax and then subtract 100.
  const std::int32_t a[] = {10, -10}, b[] = {10, 10};
  const std::int32_t c = kMax - 10;
  EXPECT_EQ(integer_mma_element(datapath(s8, s8, 2, IntegerOverflow::saturate), a, b, c), c);
  EXPECT_EQ(integer_mma_element(datapath(s8, s8, 1, IntegerOverflow::saturate), a, b, c),
            kMax - 100);
  // Wrapping is associative: the instruction boundaries do not matter.
  EXPECT_EQ(integer_mma_element(datapath(s8, s8, 1, IntegerOverflow::wrap), a, b, c), c);
  // A saturated chain (instruction_k 16, K 40: instructions of 16, 16 and 8 terms) from kMin:
  // the first instruction's products (16 * -128 * 127 = -260096) clamp at kMin, the second's
  // (16 * 127 * 127 = 258064) lift it, the third's (8 * 1 * 1) too.
  std::vector<std::int32_t> av(40), bv(40);
  for (int p = 0; p < 16; ++p) av[p] = -128, bv[p] = 127;
  for (int p = 16; p < 32; ++p) av[p] = 127, bv[p] = 127;
  for (int p = 32; p < 40; ++p) av[p] = 1, bv[p] = 1;
  EXPECT_EQ(integer_mma_element(datapath(s8, s8, 16, IntegerOverflow::saturate), av, bv, kMin),
            kMin + 258064 + 8);
  // Without the clamp the chain wraps past kMin to kMax - 260095 and then beyond kMax.
  const std::int64_t exact = std::int64_t{kMin} - 260096 + 258064 + 8;
  EXPECT_EQ(integer_mma_element(datapath(s8, s8, 16, IntegerOverflow::wrap), av, bv, kMin),
            static_cast<std::int32_t>(exact + (std::int64_t{1} << 32)));
}

TEST(IntegerMmaElement, RefusesBadValuesAndLengths) {
  using namespace integer_formats;
  const auto dp = datapath(s4, u4, 64, IntegerOverflow::wrap);
  const std::int32_t ok[] = {7, -8}, bad_s4[] = {7, 8}, bad_u4[] = {-1, 0}, three[] = {1, 2, 3};
  EXPECT_NE(thrown_message([&] { integer_mma_element(dp, bad_s4, bad_u4, 0); }).find("a[1] = 8"),
            std::string::npos);
  EXPECT_NE(thrown_message([&] {
              const std::int32_t b[] = {0, 0};
              integer_mma_element(dp, ok, bad_u4, 0);
              integer_mma_element(dp, ok, b, 0);
            }).find("b[0] = -1 is not an u4 value"),
            std::string::npos);
  EXPECT_NE(thrown_message([&] { integer_mma_element(dp, ok, three, 0); }).find("b has 3"),
            std::string::npos);
}

// Random values of a format: uniform, with its extremes drawn often so that overflow is reached.
std::int32_t random_value(const IntegerFormat& f, std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0:
      return static_cast<std::int32_t>(f.min_value());
    case 1:
      return static_cast<std::int32_t>(f.max_value());
    default:
      return static_cast<std::int32_t>(
          f.min_value() +
          static_cast<std::int64_t>(rng() %
                                    static_cast<std::uint64_t>(f.max_value() - f.min_value() + 1)));
  }
}

// A random int32 accumulator: near either end of the range half of the time.
std::int32_t random_accumulator(std::mt19937_64& rng) {
  const auto offset = static_cast<std::int32_t>(rng() % 300000);
  switch (rng() % 4) {
    case 0:
      return kMax - offset;
    case 1:
      return kMin + offset;
    default:
      return static_cast<std::int32_t>(static_cast<std::uint32_t>(rng()));
  }
}

TEST(IntegerMmaElement, RandomChainsMatchTheirDefinition) {
  using namespace integer_formats;
  std::mt19937_64 rng(14);
  int wrapped = 0, saturated = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const IntegerFormat fa = trial % 2 ? s8 : u4, fb = trial % 3 ? u8 : s8;
    const IntegerFormat a_format = fa.bits == 8 ? fa : (trial % 5 ? s4 : u4);
    const IntegerFormat b_format = a_format.bits == 8 ? fb : (trial % 7 ? u4 : s4);
    const int k = static_cast<int>(rng() % 100);
    const int ik = 1 << (rng() % 7);
    std::vector<std::int32_t> a(k), b(k);
    for (int p = 0; p < k; ++p)
      a[p] = random_value(a_format, rng), b[p] = random_value(b_format, rng);
    const std::int32_t c = random_accumulator(rng);
    // Wrap: the exact sum modulo 2^32, however the chain is cut.
    std::int64_t exact = c;
    for (int p = 0; p < k; ++p) exact += std::int64_t{a[p]} * b[p];
    const auto modular = static_cast<std::int32_t>(static_cast<std::uint32_t>(exact));
    EXPECT_EQ(integer_mma_element(datapath(a_format, b_format, ik, IntegerOverflow::wrap), a, b, c),
              modular);
    wrapped += exact != modular;
    // Saturate: the exact sum when no prefix at an instruction boundary leaves int32, else a
    // clamped value on the side the sum left.
    bool left = false;
    std::int64_t prefix = c;
    for (int p = 0; p < k; ++p) {
      prefix += std::int64_t{a[p]} * b[p];
      if ((p + 1) % ik == 0 || p + 1 == k) left |= prefix > kMax || prefix < kMin;
    }
    const std::int32_t s =
        integer_mma_element(datapath(a_format, b_format, ik, IntegerOverflow::saturate), a, b, c);
    if (!left) {
      EXPECT_EQ(s, exact);
    } else {
      ++saturated;
    }
  }
  // The generator reaches overflow in both modes.
  EXPECT_GT(wrapped, 50);
  EXPECT_GT(saturated, 100);
}

// Integer matrices with ld padding in either layout.
struct Operand {
  IntegerFormat format;
  std::int64_t rows, cols, ld;
  Layout layout;
  std::vector<std::uint8_t> bytes;

  Operand(IntegerFormat f, std::int64_t r, std::int64_t c, Layout l, std::int64_t pad)
      : format(f),
        rows(r),
        cols(c),
        ld(std::max<std::int64_t>(1, l == Layout::row_major ? c : r) + pad),
        layout(l) {
    bytes.assign(
        static_cast<std::size_t>(std::max<std::int64_t>(1, (l == Layout::row_major ? r : c) * ld)),
        0xaa);
  }
  IntegerOperandView view() const { return {bytes.data(), format, rows, cols, ld, layout}; }
  void set(std::int64_t i, std::int64_t j, std::int32_t v) {
    bytes[static_cast<std::size_t>(view().index(i, j))] = static_cast<std::uint8_t>(v);
  }
};

struct Accumulators {
  std::int64_t rows, cols, ld;
  Layout layout;
  std::vector<std::int32_t> values;
  Accumulators(std::int64_t r, std::int64_t c, Layout l, std::int64_t pad)
      : rows(r),
        cols(c),
        ld(std::max<std::int64_t>(1, l == Layout::row_major ? c : r) + pad),
        layout(l) {
    values.assign(
        static_cast<std::size_t>(std::max<std::int64_t>(1, (l == Layout::row_major ? r : c) * ld)),
        0x5a5a5a5a);
  }
  Int32MatrixView view() { return {{values.data(), rows, cols, ld, layout}}; }
};

TEST(EmulatedIntegerGemm, MatchesTheElementFunctionOnRandomMatrices) {
  using namespace integer_formats;
  std::mt19937_64 rng(1414);
  const struct {
    IntegerFormat a, b;
    int k;
    IntegerOverflow overflow;
  } cases[] = {{s8, s8, 32, IntegerOverflow::wrap},     {s8, u8, 32, IntegerOverflow::saturate},
               {u8, s8, 16, IntegerOverflow::saturate}, {u8, u8, 16, IntegerOverflow::wrap},
               {s4, s4, 64, IntegerOverflow::saturate}, {u4, s4, 32, IntegerOverflow::wrap}};
  int overflowed = 0;
  for (const auto& cs : cases) {
    const IntegerDatapath dp{cs.a, cs.b, cs.k, cs.overflow};
    const std::int64_t m = 70, n = 301, k = 77;  // two tasks, and tails in every blocking dimension
    const Layout la = rng() % 2 ? Layout::row_major : Layout::column_major;
    const Layout lb = rng() % 2 ? Layout::row_major : Layout::column_major;
    Operand a(cs.a, m, k, la, 3), b(cs.b, k, n, lb, 1);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t p = 0; p < k; ++p) a.set(i, p, random_value(cs.a, rng));
    for (std::int64_t p = 0; p < k; ++p)
      for (std::int64_t j = 0; j < n; ++j) b.set(p, j, random_value(cs.b, rng));
    Accumulators c(m, n, Layout::column_major, 2);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) c.view().at(i, j) = random_accumulator(rng);
    const Accumulators c_copy = c;
    Accumulators d1(m, n, Layout::row_major, 5), d3(m, n, Layout::row_major, 0);
    emulated_integer_gemm(dp, a.view(), b.view(), c.view(), d1.view(), 1);
    emulated_integer_gemm(dp, a.view(), b.view(), c.view(), d3.view(), 3);
    // C aliasing D.
    emulated_integer_gemm(dp, a.view(), b.view(), c.view(), c.view(), 2);
    std::vector<std::int32_t> row(k), col(k);
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        for (std::int64_t p = 0; p < k; ++p)
          row[p] = a.view().get(i, p), col[p] = b.view().get(p, j);
        const std::int32_t c0 = Accumulators(c_copy).view().at(i, j);
        const std::int32_t expected = integer_mma_element(dp, row, col, c0);
        ASSERT_EQ(d1.view().at(i, j), expected)
            << cs.a.name << " x " << cs.b.name << " (" << i << ", " << j << ")";
        ASSERT_EQ(d3.view().at(i, j), expected);
        ASSERT_EQ(c.view().at(i, j), expected);
        std::int64_t exact = c0;
        for (std::int64_t p = 0; p < k; ++p) exact += std::int64_t{row[p]} * col[p];
        overflowed += exact != expected;
      }
    }
  }
  EXPECT_GT(overflowed, 1000);  // the generator drives real overflow through the GEMM
}

TEST(EmulatedIntegerGemm, WithoutCAndWithKZero) {
  using namespace integer_formats;
  const IntegerDatapath dp{s8, s8, 32, IntegerOverflow::wrap};
  Operand a(s8, 2, 0, Layout::row_major, 0), b(s8, 0, 3, Layout::row_major, 0);
  Accumulators c(2, 3, Layout::row_major, 0), d(2, 3, Layout::row_major, 0);
  for (std::size_t i = 0; i < c.values.size(); ++i) c.values[i] = kMin + static_cast<int>(i);
  emulated_integer_gemm(dp, a.view(), b.view(), c.view(), d.view());
  EXPECT_EQ(d.values, c.values);
  emulated_integer_gemm(dp, a.view(), b.view(), std::nullopt, d.view());
  EXPECT_EQ(d.values, std::vector<std::int32_t>(6, 0));
  // 2 x 2 by hand, no C: [[1, -2], [3, 4]] [[5, 6], [-7, 8]].
  Operand a2(s8, 2, 2, Layout::row_major, 0), b2(s8, 2, 2, Layout::column_major, 0);
  a2.set(0, 0, 1), a2.set(0, 1, -2), a2.set(1, 0, 3), a2.set(1, 1, 4);
  b2.set(0, 0, 5), b2.set(0, 1, 6), b2.set(1, 0, -7), b2.set(1, 1, 8);
  Accumulators d2(2, 2, Layout::row_major, 0);
  emulated_integer_gemm(dp, a2.view(), b2.view(), std::nullopt, d2.view());
  EXPECT_EQ(d2.values, (std::vector<std::int32_t>{19, -10, -13, 50}));
}

TEST(EmulatedIntegerGemm, RefusesBadOperandsNamingThem) {
  using namespace integer_formats;
  const IntegerDatapath dp{s4, s4, 64, IntegerOverflow::wrap};
  Operand a(s4, 2, 3, Layout::row_major, 0), b(s4, 3, 2, Layout::row_major, 0);
  for (auto& x : a.bytes) x = 0;
  for (auto& x : b.bytes) x = 0xf8;  // -8, sign-extended
  Accumulators d(2, 2, Layout::row_major, 0);
  EXPECT_NO_THROW(emulated_integer_gemm(dp, a.view(), b.view(), std::nullopt, d.view()));
  a.set(1, 2, 8);  // byte 0x08: not sign-extended s4
  EXPECT_NE(thrown_message([&] {
              emulated_integer_gemm(dp, a.view(), b.view(), std::nullopt, d.view());
            }).find("A(1, 2) holds the byte 8"),
            std::string::npos);
  a.set(1, 2, 0);
  Operand u(u4, 3, 2, Layout::row_major, 0);
  EXPECT_NE(thrown_message([&] {
              emulated_integer_gemm(dp, a.view(), u.view(), std::nullopt, d.view());
            }).find("B holds u4"),
            std::string::npos);
  Operand wrong(s4, 4, 2, Layout::row_major, 0);
  EXPECT_NE(thrown_message([&] {
              emulated_integer_gemm(dp, a.view(), wrong.view(), std::nullopt, d.view());
            }).find("B is 4 x 2, expected 3 x 2"),
            std::string::npos);
  Accumulators small(2, 2, Layout::row_major, 0);
  small.ld = 1;
  EXPECT_NE(thrown_message([&] {
              emulated_integer_gemm(dp, a.view(), b.view(), std::nullopt, small.view());
            }).find("ldD = 1"),
            std::string::npos);
  Accumulators c_wrong(3, 2, Layout::row_major, 0);
  EXPECT_NE(thrown_message([&] {
              emulated_integer_gemm(dp, a.view(), b.view(), c_wrong.view(), d.view());
            }).find("C is 3 x 2"),
            std::string::npos);
  EXPECT_NE(thrown_message([&] {
              emulated_integer_gemm({s4, s8, 64, IntegerOverflow::wrap}, a.view(), b.view(),
                                    std::nullopt, d.view());
            }).find("emulated_integer_gemm: integer datapath"),
            std::string::npos);
}

}  // namespace
}  // namespace tcemu
