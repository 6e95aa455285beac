// The emulator in every caller state: the emulated GEMM (sm90 fp16 and bf16 into fp32, with
// subnormal inputs, alpha and beta), mma_element, the integer GEMM and mma, and the MX and NVFP4
// quantizers.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/integer_gemm.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/emulator/quantize.hpp>

#include "caller_state.hpp"

namespace tcemu {
namespace {

TEST(CallerState, EmulatedGemmAndMma) {
  for (const FloatFormat& input : {formats::fp16, formats::bf16}) {
    const Datapath dp = preset("sm90", input, formats::fp32);
    const std::int64_t m = 6, n = 5, k = 32;
    std::mt19937_64 rng(5);
    // Random bit patterns of the input format with a zero exponent field in one word of four
    // (subnormals), fp32 C likewise.
    const auto words = [&](const FloatFormat& f, std::int64_t count) {
      std::vector<std::uint32_t> out(static_cast<std::size_t>(count));
      const std::uint32_t mask = (f.container_bits() >= 32 ? ~0u : (1u << f.container_bits()) - 1);
      for (std::uint32_t& w : out) {
        w = static_cast<std::uint32_t>(rng()) & mask;
        if (rng() % 4 == 0) w &= ~(((1u << f.exponent_bits) - 1) << f.fraction_bits);
        if (((w >> f.fraction_bits) & ((1u << f.exponent_bits) - 1)) == (1u << f.exponent_bits) - 1)
          w &= ~(1u << f.fraction_bits);  // no Inf or NaN
      }
      return out;
    };
    const std::vector<std::uint32_t> a = words(input, m * k), b = words(input, k * n),
                                     c = words(formats::fp32, m * n);
    const auto bytes = [&](const std::vector<std::uint32_t>& w, const FloatFormat& f) {
      std::vector<unsigned char> out(w.size() * container_bytes(f));
      MatrixView v{{out.data(), f, 1, static_cast<std::int64_t>(w.size()),
                    static_cast<std::int64_t>(w.size()), Layout::row_major}};
      for (std::size_t i = 0; i < w.size(); ++i) v.set(0, static_cast<std::int64_t>(i), w[i]);
      return out;
    };
    const std::vector<unsigned char> ab = bytes(a, input), bb = bytes(b, input),
                                     cb = bytes(c, formats::fp32);
    SCOPED_TRACE(input.name);
    test::expect_same_in_every_caller_state([&] {
      std::vector<unsigned char> d(static_cast<std::size_t>(m * n) * 4);
      emulated_gemm(dp, {.alpha = 0.75f, .beta = -1.5f, .threads = 2},
                    ConstMatrixView{ab.data(), input, m, k, k, Layout::row_major},
                    ConstMatrixView{bb.data(), input, k, n, n, Layout::row_major},
                    ConstMatrixView{cb.data(), formats::fp32, m, n, n, Layout::row_major},
                    MatrixView{{d.data(), formats::fp32, m, n, n, Layout::row_major}});
      std::vector<std::uint32_t> out(static_cast<std::size_t>(m * n));
      for (std::int64_t i = 0; i < m * n; ++i)
        std::memcpy(&out[static_cast<std::size_t>(i)], &d[static_cast<std::size_t>(4 * i)], 4);
      for (std::int64_t i = 0; i < m; ++i) {
        std::vector<std::uint32_t> row(a.begin() + i * k, a.begin() + (i + 1) * k), col(k);
        for (std::int64_t p = 0; p < k; ++p)
          col[static_cast<std::size_t>(p)] = b[static_cast<std::size_t>(p * n)];
        out.push_back(mma_element(dp, row, col, c[static_cast<std::size_t>(i)]));
      }
      return test::words(out);
    });
  }
}

TEST(CallerState, IntegerGemmAndMma) {
  const IntegerDatapath dp{integer_formats::s8, integer_formats::s8, 32, IntegerOverflow::wrap};
  const std::int64_t m = 5, n = 4, k = 40;
  std::mt19937_64 rng(9);
  std::vector<std::uint8_t> a(m * k), b(k * n);
  for (std::uint8_t& x : a) x = static_cast<std::uint8_t>(rng());
  for (std::uint8_t& x : b) x = static_cast<std::uint8_t>(rng());
  test::expect_same_in_every_caller_state([&] {
    std::vector<std::int32_t> d(static_cast<std::size_t>(m * n));
    emulated_integer_gemm(dp, {a.data(), dp.a_format, m, k, k, Layout::row_major},
                          {b.data(), dp.b_format, k, n, n, Layout::row_major}, std::nullopt,
                          {{d.data(), m, n, n, Layout::row_major}}, 2);
    std::vector<std::int32_t> row(k), col(k);
    for (std::int64_t p = 0; p < k; ++p) {
      row[static_cast<std::size_t>(p)] = static_cast<std::int8_t>(a[static_cast<std::size_t>(p)]);
      col[static_cast<std::size_t>(p)] =
          static_cast<std::int8_t>(b[static_cast<std::size_t>(p * n)]);
    }
    d.push_back(integer_mma_element(dp, row, col, 7));
    return test::words(d);
  });
}

TEST(CallerState, Quantization) {
  // fp32 values over many binades, fp32 subnormals among them: NVFP4's tensor scale has a full
  // significand, so its multiply by the block scale rounds.
  const std::int64_t m = 4, k = 48;
  std::mt19937_64 rng(35);
  std::vector<float> x(static_cast<std::size_t>(m * k));
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-140, 20);
  for (float& v : x) v = std::ldexp(unit(rng), exponent(rng));
  x[0] = 1.2345678f;  // the tensor's largest magnitude
  const ConstMatrixView view{
      reinterpret_cast<const unsigned char*>(x.data()), formats::fp32, m, k, k, Layout::row_major};
  // An NVFP4 block where NVFP4's one fp32 multiply decides a code: the tensor scale's
  // significand 0xC00001 times the block scale 1.5 is 0x2400003 * 2^-1, two bits too long, which
  // round to nearest rounds up and toward zero down. 0.25 * total is then a tie between 0 and 0.5
  // (to 0, even); under a truncated total it lies above the tie and gives 0.5 (code 1).
  const std::uint32_t tensor_scale = 0x3FC00001u;
  const float total = std::bit_cast<float>(tensor_scale) * 1.5f;
  const std::vector<std::uint32_t> block{std::bit_cast<std::uint32_t>(9 * total / 1.5f),
                                         std::bit_cast<std::uint32_t>(0.25f * total)};
  test::expect_same_in_every_caller_state([&] {
    std::vector<std::uint8_t> codes(block.size());
    const std::uint8_t scale = quantize_nvfp4_block(formats::fp32, block, tensor_scale, codes);
    EXPECT_EQ(scale, 0x3C);  // 1.5
    EXPECT_EQ(codes[1], 0);  // the tie
    std::vector<std::uint32_t> out{scale, codes[0], codes[1]};
    for (const QuantizedMatrix& q : {quantize_nvfp4(view, ScaledOperand::a),
                                     quantize_mx(view, formats::e2m1, ScaledOperand::b)}) {
      out.insert(out.end(), q.codes.begin(), q.codes.end());
      out.insert(out.end(), q.scales.begin(), q.scales.end());
      out.push_back(q.tensor_scale);
    }
    return test::words(out);
  });
}

}  // namespace
}  // namespace tcemu
