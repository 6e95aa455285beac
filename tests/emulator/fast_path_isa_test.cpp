// Every instruction set the emulated GEMM's fast path is compiled for in this build and this CPU
// runs (detail::fast_path_isas: AVX-512, AVX2 and the build's baseline, chosen at run time in a
// portable build) against the model, mma_element, bit for bit: on random operands near 1 and over
// the formats' whole ranges, subnormals, signed zeros, exact cancellation, Inf and NaN operands
// (which the fast path hands back to the general one), and accumulators with subnormals, large
// values and infinities, on datapaths with every kernel specialisation (block size, zero sign,
// block rounding).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/test/same_bits.hpp>

namespace tcemu {
namespace {

enum class Values { near_one, whole_range, cancelling, special };

// One operand or accumulator bit pattern: a fifth of them subnormal or zero, the rest normal with
// an exponent near the bias (near_one, cancelling) or anywhere (whole_range); `special` adds an
// Inf or NaN now and then. Padding bits (tf32) stay zero.
std::uint32_t draw(const FloatFormat& f, std::mt19937_64& rng, Values values) {
  const std::uint32_t mask = ~std::uint32_t{0} >> (32 - f.storage_bits());
  const std::uint32_t exponent_mask = ((std::uint32_t{1} << f.exponent_bits) - 1)
                                      << f.fraction_bits;
  for (;;) {
    std::uint32_t bits = static_cast<std::uint32_t>(rng()) & mask;
    const int kind = static_cast<int>(rng() % 10);
    if (kind == 0) bits &= ~exponent_mask;  // subnormal or zero
    if (kind == 1) bits &= f.sign_mask();   // signed zero
    if (kind >= 2 && values != Values::whole_range) {
      const auto e = static_cast<std::uint32_t>(f.bias() - 4 + static_cast<int>(rng() % 8));
      bits = (bits & ~exponent_mask) | (e << f.fraction_bits);
    }
    bits <<= f.padding_bits;
    const ValueClass vc = decode(f, bits).value_class;
    const bool special = vc == ValueClass::nan || vc == ValueClass::infinity;
    if (!special || (values == Values::special && rng() % 40 == 0)) return bits;
  }
}

struct Operands {
  std::int64_t m, n, k;
  std::vector<std::uint32_t> a, b, c;  // row major, in 32-bit containers
};

// Cancelling operands: the second of each pair of k along a row of A is the first with its sign
// flipped, and B's two rows of the pair are equal, so their products cancel exactly.
Operands operands(const Datapath& dp, std::int64_t m, std::int64_t n, std::int64_t k, Values values,
                  std::mt19937_64& rng) {
  Operands x{m, n, k, {}, {}, {}};
  const FloatFormat& in_b = dp.b_format();
  for (std::int64_t i = 0; i < m * k; ++i) x.a.push_back(draw(dp.input, rng, values));
  for (std::int64_t i = 0; i < k * n; ++i) x.b.push_back(draw(in_b, rng, values));
  for (std::int64_t i = 0; i < m * n; ++i) x.c.push_back(draw(dp.accumulator, rng, values));
  if (values == Values::cancelling) {
    const std::uint32_t sign = dp.input.sign_mask() << dp.input.padding_bits;
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t p = 0; p + 1 < k; p += 2) {
        x.a[static_cast<std::size_t>(i * k + p + 1)] =
            x.a[static_cast<std::size_t>(i * k + p)] ^ sign;
      }
    }
    for (std::int64_t p = 0; p + 1 < k; p += 2) {
      for (std::int64_t j = 0; j < n; ++j) {
        x.b[static_cast<std::size_t>((p + 1) * n + j)] = x.b[static_cast<std::size_t>(p * n + j)];
      }
    }
  }
  return x;
}

// The model: mma_element over row i of A and column j of B from C's element.
std::vector<std::uint32_t> model(const Datapath& dp, const Operands& x) {
  std::vector<std::uint32_t> d;
  for (std::int64_t i = 0; i < x.m; ++i) {
    for (std::int64_t j = 0; j < x.n; ++j) {
      std::vector<std::uint32_t> row, col;
      for (std::int64_t p = 0; p < x.k; ++p) {
        row.push_back(x.a[static_cast<std::size_t>(i * x.k + p)]);
        col.push_back(x.b[static_cast<std::size_t>(p * x.n + j)]);
      }
      d.push_back(mma_element(dp, row, col, x.c[static_cast<std::size_t>(i * x.n + j)]));
    }
  }
  return d;
}

// Bit patterns in the format's containers (little endian) and back.
std::vector<unsigned char> containers(const FloatFormat& f, const std::vector<std::uint32_t>& v) {
  const std::size_t width = container_bytes(f);
  std::vector<unsigned char> out(v.size() * width);
  for (std::size_t e = 0; e < v.size(); ++e) {
    for (std::size_t byte = 0; byte < width; ++byte) {
      out[e * width + byte] = static_cast<unsigned char>(v[e] >> (8 * byte));
    }
  }
  return out;
}
std::vector<std::uint32_t> patterns(const FloatFormat& f, const std::vector<unsigned char>& bytes) {
  const std::size_t width = container_bytes(f);
  std::vector<std::uint32_t> out(bytes.size() / width);
  for (std::size_t e = 0; e < out.size(); ++e) {
    for (std::size_t byte = 0; byte < width; ++byte) {
      out[e] |= static_cast<std::uint32_t>(bytes[e * width + byte]) << (8 * byte);
    }
  }
  return out;
}

// The emulated GEMM's D with C as the initial accumulator.
std::vector<std::uint32_t> gemm(const Datapath& dp, const Operands& x, int threads) {
  const FloatFormat& in_b = dp.b_format();
  const std::vector<unsigned char> a = containers(dp.input, x.a), b = containers(in_b, x.b),
                                   c = containers(dp.accumulator, x.c);
  std::vector<unsigned char> d(c.size());
  emulated_gemm(dp, {.beta = 1.0f, .c_input = CInput::initial_accumulator, .threads = threads},
                {a.data(), dp.input, x.m, x.k, x.k, Layout::row_major},
                {b.data(), in_b, x.k, x.n, x.n, Layout::row_major},
                ConstMatrixView{c.data(), dp.accumulator, x.m, x.n, x.n, Layout::row_major},
                {{d.data(), dp.accumulator, x.m, x.n, x.n, Layout::row_major}});
  return patterns(dp.accumulator, d);
}

// Restores the fastest instruction set when a test ends, passed or not.
struct FastestAfterwards {
  ~FastestAfterwards() { detail::use_fast_path_isa(""); }
};

std::vector<Datapath> datapaths() {
  std::vector<Datapath> out = {preset("sm90", formats::fp16, formats::fp32),
                               preset("sm90", formats::fp16, formats::fp16),
                               preset("sm70", formats::fp16, formats::fp32),
                               preset("sm80", formats::bf16, formats::fp32),
                               preset("sm80", formats::tf32, formats::fp32),
                               preset("sm89", formats::e4m3, formats::fp32),
                               preset("sm90", formats::e5m2, formats::fp16),
                               preset("exact-rn", formats::bf16, formats::fp32)};
  // The kernel's other specialisations: the other zero-sign rule, and round-to-nearest blocks of
  // fewer bits (ties at every binade).
  Datapath flipped = preset("sm90", formats::fp16, formats::fp32);
  flipped.zero_sign = flipped.zero_sign == ZeroSign::ieee ? ZeroSign::positive : ZeroSign::ieee;
  out.push_back(flipped);
  Datapath nearest = preset("sm80", formats::bf16, formats::fp32);
  nearest.block_rounding = Rounding::nearest_even;
  nearest.block_result_precision = 8;
  out.push_back(nearest);
  return out;
}

TEST(FastPathIsas, TheFastestIsFirstAndAnUnknownNameIsRefused) {
  const std::vector<std::string_view> isas = detail::fast_path_isas();
  ASSERT_FALSE(isas.empty());
  EXPECT_THROW(detail::use_fast_path_isa("no-such-isa"), std::invalid_argument);
}

TEST(FastPathIsas, EveryInstructionSetGivesTheModelsBits) {
  const FastestAfterwards restore;
  std::mt19937_64 rng(39);
  std::string tested;
  for (const std::string_view isa : detail::fast_path_isas()) tested += " " + std::string(isa);
  SCOPED_TRACE("instruction sets of this build and CPU:" + tested);
  for (const Datapath& dp : datapaths()) {
    for (const Values values :
         {Values::near_one, Values::whole_range, Values::cancelling, Values::special}) {
      // Rows and columns past whole tiles and row groups, k past whole instructions.
      const Operands x = operands(dp, 13, 21, 3 * dp.instruction_k + 5, values, rng);
      const std::vector<std::uint32_t> expected = model(dp, x);
      for (const std::string_view isa : detail::fast_path_isas()) {
        detail::use_fast_path_isa(isa);
        ASSERT_TRUE(
            test::same_bits(expected, gemm(dp, x, 2), x.m, x.n, {.order = test::Order::row_major}))
            << isa << ": " << describe(dp) << " values " << static_cast<int>(values);
      }
    }
  }
}

}  // namespace
}  // namespace tcemu
