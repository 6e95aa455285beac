// What the GPU GEMM tests share: host matrices of bit patterns in any layout, the papers' random
// inputs with special values, and one GEMM on the GPU backend against the emulator backend,
// compared bit for bit.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <tcemu/backend/backend.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/gpu/device.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/test/same_bits.hpp>

namespace tcemu::gpu_test {

// A host matrix of bit patterns with its own layout and padded leading dimension.
struct HostMatrix {
  FloatFormat format;
  std::int64_t rows, cols, ld;
  Layout layout;
  std::vector<unsigned char> bytes;

  HostMatrix(FloatFormat f, std::int64_t r, std::int64_t c, Layout l, std::int64_t extra_ld = 0)
      : format(f),
        rows(r),
        cols(c),
        ld(std::max<std::int64_t>(1, l == Layout::row_major ? c : r) + extra_ld),
        layout(l),
        bytes(static_cast<std::size_t>(
                  std::max<std::int64_t>(1, (l == Layout::row_major ? r : c) * ld)) *
              container_bytes(f)) {}
  MatrixView view() { return {{bytes.data(), format, rows, cols, ld, layout}}; }
  ConstMatrixView cview() const { return {bytes.data(), format, rows, cols, ld, layout}; }
};

// How bits of `format` read in a failure message: through fp32, which holds every value of the
// formats here.
inline std::function<std::string(std::uint64_t)> reading(const FloatFormat& format) {
  return [format](std::uint64_t bits) {
    return test::fp32_value(
        convert(format, formats::fp32, static_cast<std::uint32_t>(bits), Rounding::nearest_even));
  };
}

// The inputs of element (i, j) of a GEMM's D: row i of A, column j of B and, when given, C's
// element, in hex.
inline std::string gemm_inputs(const HostMatrix& a, const HostMatrix& b, const HostMatrix* c,
                               std::int64_t i, std::int64_t j) {
  const ConstMatrixView av = a.cview(), bv = b.cview();
  std::string out =
      "A row " + std::to_string(i) + ": " +
      test::hex_values(
          a.cols, [&](std::int64_t p) { return av.get(i, p); }, hex_digits(a.format)) +
      "\nB column " + std::to_string(j) + ": " +
      test::hex_values(
          b.rows, [&](std::int64_t p) { return bv.get(p, j); }, hex_digits(b.format));
  if (c) out += "\nC " + test::hex(c->cview().get(i, j), hex_digits(c->format));
  return out;
}

// The papers' inputs (rand - 0.5) * exp(phi * randn) rounded to the format, with a fraction
// `special` of zeros of both signs, subnormals, Inf and NaN.
inline void fill(HostMatrix& x, std::mt19937_64& rng, double phi, double special = 0.0) {
  std::uniform_real_distribution<double> uniform(-0.5, 0.5), unit(0.0, 1.0);
  std::normal_distribution<double> normal;
  const MatrixView v = x.view();
  for (std::int64_t i = 0; i < x.rows; ++i) {
    for (std::int64_t j = 0; j < x.cols; ++j) {
      std::uint32_t bits = convert(formats::fp32, x.format,
                                   std::bit_cast<std::uint32_t>(static_cast<float>(
                                       uniform(rng) * std::exp(phi * normal(rng)))),
                                   Rounding::nearest_even);
      if (unit(rng) < special) {
        const std::uint32_t exponent_mask = ((1u << x.format.exponent_bits) - 1)
                                            << (x.format.fraction_bits + x.format.padding_bits);
        const std::uint32_t sign = x.format.sign_mask() << x.format.padding_bits;
        switch (rng() % 4) {
          case 0:
            bits &= sign;
            break;  // signed zero
          case 1:
            bits &= ~exponent_mask;
            break;  // subnormal
          case 2:
            bits = encode_infinity(x.format, rng() % 2);
            break;
          default:
            bits = convert(formats::fp32, x.format, 0x7FC00000u, Rounding::nearest_even);
        }
      }
      v.set(i, j, bits);
    }
  }
}

struct OnBackend {
  Buffer buffer;
  BufferMatrix matrix;
};

inline OnBackend put(Backend& backend, const HostMatrix& x) {
  OnBackend out{backend.allocate(x.bytes.size()), {}};
  backend.copy_in(x.bytes.data(), out.buffer, x.bytes.size());
  out.matrix = {&out.buffer, 0, x.format, x.rows, x.cols, x.ld, x.layout};
  return out;
}

inline std::vector<unsigned char> take(const Backend& backend, const OnBackend& x) {
  std::vector<unsigned char> out(x.buffer.bytes());
  backend.copy_out(x.buffer, out.data(), out.size());
  return out;
}

inline std::string skip_reason() {
  std::string why;
  const auto devices = gpu::list_devices(&why);
  if (devices.empty()) return "no CUDA device: " + why;
  if (devices.front().arch_preset().empty())
    return "no emulator preset for " + devices.front().name;
  return "";
}

// D of one GEMM on both backends, compared bit for bit (the emulator's D expected).
// The scales of a block-scaled product (m x s and s x n, BlockScales in gemm.hpp).
struct HostScales {
  HostMatrix a, b;
};

inline test::BitComparison compare_gemms(Backend& gpu, const Datapath& dp,
                                         const GemmOptions& options, const HostMatrix& a,
                                         const HostMatrix& b, const HostMatrix& c, HostMatrix d,
                                         const HostScales* scales = nullptr) {
  const auto emulator = host::make_emulator_backend();
  const bool with_c = options.c_input == CInput::initial_accumulator || options.beta != 0.0f;
  std::vector<unsigned char> results[2];
  Backend* backends[2] = {&gpu, emulator.get()};
  for (int which = 0; which < 2; ++which) {
    Backend& be = *backends[which];
    const OnBackend ba = put(be, a), bb = put(be, b), bc = put(be, c), bd = put(be, d);
    std::optional<BufferMatrix> c_matrix;
    if (with_c) c_matrix = bc.matrix;
    std::optional<OnBackend> sa, sb;
    std::optional<ScaleBuffers> scale_buffers;
    if (scales) {
      sa.emplace(put(be, scales->a));
      sb.emplace(put(be, scales->b));
      // Each matrix must point at the buffer moved into the optional, not put()'s temporary.
      sa->matrix.buffer = &sa->buffer;
      sb->matrix.buffer = &sb->buffer;
      scale_buffers = ScaleBuffers{sa->matrix, sb->matrix};
    }
    be.mma_gemm(dp, options, ba.matrix, bb.matrix, c_matrix, bd.matrix, scale_buffers);
    results[which] = take(be, bd);
  }
  HostMatrix got = d, want = d;
  got.bytes = results[0];
  want.bytes = results[1];
  return test::compare_bits_at(
      d.rows, d.cols, [&](std::int64_t i, std::int64_t j) { return want.cview().get(i, j); },
      [&](std::int64_t i, std::int64_t j) { return got.cview().get(i, j); },
      {.inputs = [&](std::int64_t i,
                     std::int64_t j) { return gemm_inputs(a, b, with_c ? &c : nullptr, i, j); },
       .value = reading(d.format)});
}

// TCEMU_GPU_TEST_REDUCED=1 (compute-sanitizer runs, scripts/device_run.sh's sanitize step): the
// GEMM tests below run every engine, format, layout and option on smaller matrices, so that
// the sanitizers' slowed kernels finish; every comparison is still made, bit for bit.
inline bool reduced_sizes() {
  const char* value = std::getenv("TCEMU_GPU_TEST_REDUCED");
  return value != nullptr && std::string(value) == "1";
}

}  // namespace tcemu::gpu_test
