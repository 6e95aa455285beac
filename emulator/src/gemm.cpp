#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/floating_point_scope.hpp>
#include <tcemu/emulator/fp32_bits.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/mma.hpp>

#include <tcemu/emulator/parallel_for.hpp>
#include <tcemu/emulator/scaled_groups.hpp>

#include "gemm_fast_path.hpp"

namespace tcemu {
namespace {

[[noreturn]] void bad_argument(const std::string& what) {
  throw std::invalid_argument("emulated_gemm: " + what);
}

void check_shape(std::string_view caller, const char* name, const ConstMatrixView& x,
                 std::int64_t rows, std::int64_t cols, const FloatFormat& format,
                 const char* format_role) {
  const auto refuse = [&](const std::string& what) {
    throw std::invalid_argument(std::string(caller) + ": " + what);
  };
  const std::string n(name);
  if (x.rows != rows || x.cols != cols) {
    refuse(n + " is " + std::to_string(x.rows) + " x " + std::to_string(x.cols) + ", expected " +
           std::to_string(rows) + " x " + std::to_string(cols));
  }
  if (!(x.format == format)) {
    refuse(n + " holds " + std::string(x.format.name) + ", the datapath's " + format_role +
           " format is " + std::string(format.name));
  }
  const std::int64_t inner = x.layout == Layout::row_major ? cols : rows;
  if (x.ld < std::max<std::int64_t>(1, inner)) {
    refuse("ld" + n + " = " + std::to_string(x.ld) + " must be >= max(1, " + std::to_string(inner) +
           ")");
  }
  if (x.data == nullptr && rows > 0 && cols > 0) refuse(n + " has no data");
}

float to_float(const FloatFormat& format, std::uint32_t bits) {
  return format == formats::fp32
             ? std::bit_cast<float>(bits)
             : std::bit_cast<float>(convert(format, formats::fp32, bits, Rounding::nearest_even));
}

// The epilogue's fp32 result in the accumulator format. GPU fp32 arithmetic returns its NaN
// kGpuFp32Nan whatever the operands' payloads, where the host's keeps a payload.
std::uint32_t from_float(const FloatFormat& format, float value) {
  const std::uint32_t bits = std::isnan(value) ? kGpuFp32Nan : std::bit_cast<std::uint32_t>(value);
  return format == formats::fp32 ? bits
                                 : convert(formats::fp32, format, bits, Rounding::nearest_even);
}

// The rows (by_rows) or columns of x decoded in `f`, each `length` long and stored contiguously.
std::vector<Decoded> decode_lines(const FloatFormat& f, const ConstMatrixView& x, bool by_rows) {
  const std::int64_t lines = by_rows ? x.rows : x.cols, length = by_rows ? x.cols : x.rows;
  std::vector<Decoded> out(static_cast<std::size_t>(lines * length));
  for (std::int64_t l = 0; l < lines; ++l) {
    for (std::int64_t p = 0; p < length; ++p)
      out[l * length + p] = decode(f, by_rows ? x.get(l, p) : x.get(p, l));
  }
  return out;
}

// The reference evaluation: every element through mma_element_decoded, A decoded by rows and B
// by columns once (and their scales, for a block-scaled datapath).
void general_mma_chain(const Datapath& dp, ConstMatrixView a, ConstMatrixView b,
                       const BlockScales* scales, std::span<std::uint32_t> acc, int threads) {
  const std::int64_t m = a.rows, k = a.cols, n = b.cols;
  const std::vector<Decoded> rows = decode_lines(dp.input, a, true);
  const std::vector<Decoded> cols = decode_lines(dp.b_format(), b, false);
  const std::int64_t s = scales ? scales->a.cols : 0;
  const std::vector<Decoded> row_scales =
      scales ? decode_lines(dp.block_scaling.scale_a, scales->a, true) : std::vector<Decoded>{};
  const std::vector<Decoded> col_scales =
      scales ? decode_lines(dp.block_scaling.scale_b, scales->b, false) : std::vector<Decoded>{};
  const auto line = [](const std::vector<Decoded>& all, std::int64_t index, std::int64_t length) {
    return std::span<const Decoded>(all.data() + index * length, static_cast<std::size_t>(length));
  };
  detail::parallel_for(threads, m, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        std::uint32_t& d = acc[static_cast<std::size_t>(i * n + j)];
        d = scales ? mma_element_decoded(dp, line(rows, i, k), line(cols, j, k), d,
                                         line(row_scales, i, s), line(col_scales, j, s))
                   : mma_element_decoded(dp, line(rows, i, k), line(cols, j, k), d);
      }
    }
  });
}

// acc becomes the chain of MMA instructions over all of a's columns and b's rows, from acc.
void mma_chain(const Datapath& dp, ConstMatrixView a, ConstMatrixView b, const BlockScales* scales,
               std::span<std::uint32_t> acc, int threads) {
  if (scales != nullptr && detail::scaled_groups_apply(dp)) {
    detail::fast_group_chain(dp, a, b, *scales, acc, threads);
    return;
  }
  if (!detail::fast_path_applies(dp) || !detail::fast_mma_chain(dp, a, b, scales, acc, threads)) {
    general_mma_chain(dp, a, b, scales, acc, threads);
  }
}

ConstMatrixView columns(ConstMatrixView x, std::int64_t first, std::int64_t count) {
  return {x.data + x.offset(0, first), x.format, x.rows, count, x.ld, x.layout};
}

ConstMatrixView rows(ConstMatrixView x, std::int64_t first, std::int64_t count) {
  return {x.data + x.offset(first, 0), x.format, count, x.cols, x.ld, x.layout};
}

// acc (fp32 bits) += the chain of each chunk of kb values of k, taken out of the tensor core
// after the chunk (GemmOptions::takeout_every_k). kb is a multiple of instruction_k, which
// scale_block divides: a chunk's scales are whole columns of scales->a and rows of scales->b.
void mma_chain_taken_out(const Datapath& dp, ConstMatrixView a, ConstMatrixView b,
                         const BlockScales* scales, std::int64_t kb, std::span<std::uint32_t> acc,
                         int threads) {
  const std::int64_t k = a.cols;
  std::vector<std::uint32_t> chunk(acc.size());
  for (std::int64_t first = 0; first < k; first += kb) {
    const std::int64_t count = std::min(kb, k - first);
    std::fill(chunk.begin(), chunk.end(), encode_zero(dp.accumulator, false));
    std::optional<BlockScales> chunk_scales;
    if (scales) {
      const std::int64_t block = dp.block_scaling.scale_block;
      const std::int64_t scale_first = first / block, scale_count = (count + block - 1) / block;
      chunk_scales = BlockScales{columns(scales->a, scale_first, scale_count),
                                 rows(scales->b, scale_first, scale_count)};
    }
    mma_chain(dp, columns(a, first, count), rows(b, first, count),
              chunk_scales ? &*chunk_scales : nullptr, chunk, threads);
    const auto size = static_cast<std::int64_t>(acc.size());
    detail::parallel_for(threads, size, 4096, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) acc[i] = fp32_add_rn(acc[i], chunk[i]);
    });
  }
}

}  // namespace

void check_gemm_operands(std::string_view caller, const Datapath& dp, const GemmOptions& options,
                         const ConstMatrixView& a, const ConstMatrixView& b,
                         const std::optional<ConstMatrixView>& c, const ConstMatrixView& d,
                         const BlockScales* scales) {
  const auto refuse = [&](const std::string& what) {
    throw std::invalid_argument(std::string(caller) + ": " + what);
  };
  const std::int64_t m = a.rows, k = a.cols, n = b.cols;
  if (m < 0 || n < 0 || k < 0) refuse("negative dimension");
  check_shape(caller, "A", a, m, k, dp.input, "input");
  check_shape(caller, "B", b, k, n, dp.b_format(), dp.has_input_b ? "b input" : "input");
  if (dp.block_scaled() && scales == nullptr) {
    refuse("the datapath is block-scaled (" + std::string(dp.block_scaling.scale_a.name) +
           " scales per " + std::to_string(dp.block_scaling.scale_block) +
           " k): the scales of A and B are required");
  }
  if (!dp.block_scaled() && scales != nullptr) refuse("scales given to a datapath without scaling");
  if (scales) {
    const auto s = static_cast<std::int64_t>(scale_count(dp, static_cast<std::size_t>(k)));
    check_shape(caller, "the scales of A", scales->a, m, s, dp.block_scaling.scale_a, "A scale");
    check_shape(caller, "the scales of B", scales->b, s, n, dp.block_scaling.scale_b, "B scale");
  }
  check_shape(caller, "D", d, m, n, dp.accumulator, "accumulator");
  const bool reads_c = options.c_input == CInput::initial_accumulator || options.beta != 0.0f;
  if (reads_c && !c) refuse("C is required (beta != 0 or C is the initial accumulator)");
  if (c) check_shape(caller, "C", *c, m, n, dp.accumulator, "accumulator");
  if (options.c_input == CInput::initial_accumulator &&
      (options.alpha != 1.0f || options.beta != 1.0f)) {
    refuse("alpha and beta must be 1 when C is the initial accumulator");
  }
}

namespace {

void scaled_or_plain_gemm(const Datapath& dp, const GemmOptions& options, ConstMatrixView a,
                          ConstMatrixView b, const BlockScales* scales,
                          std::optional<ConstMatrixView> c, MatrixView d) {
  const FloatingPointScope scope;
  validate(dp);
  check_gemm_operands("emulated_gemm", dp, options, a, b, c, d, scales);
  const std::int64_t m = a.rows, k = a.cols, n = b.cols;
  if (options.takeout_every_k < 0) {
    bad_argument("takeout_every_k = " + std::to_string(options.takeout_every_k) + " must be >= 0");
  }
  if (options.takeout_every_k > 0) {
    if (options.takeout_every_k % dp.instruction_k != 0) {
      bad_argument(
          "takeout_every_k = " + std::to_string(options.takeout_every_k) +
          " is not a multiple of the instruction's k = " + std::to_string(dp.instruction_k));
    }
    if (!(dp.accumulator == formats::fp32)) {
      bad_argument("takeout_every_k needs an fp32 accumulator, the datapath's is " +
                   std::string(dp.accumulator.name));
    }
  }
  if (m == 0 || n == 0) return;

  const std::uint32_t zero = encode_zero(dp.accumulator, false);
  // Filled by rows in parallel: a serial fill of m n words held up every thread of a product.
  const auto storage =
      std::make_unique_for_overwrite<std::uint32_t[]>(static_cast<std::size_t>(m * n));
  const std::span<std::uint32_t> acc(storage.get(), static_cast<std::size_t>(m * n));
  const bool from_c = options.c_input == CInput::initial_accumulator;
  detail::parallel_for(options.threads, m, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      for (std::int64_t j = 0; j < n; ++j)
        acc[static_cast<std::size_t>(i * n + j)] = from_c ? c->get(i, j) : zero;
    }
  });
  if (k > 0) {
    if (options.takeout_every_k > 0) {
      mma_chain_taken_out(dp, a, b, scales, options.takeout_every_k, acc, options.threads);
    } else {
      mma_chain(dp, a, b, scales, acc, options.threads);
    }
  }

  // alpha = 1 and beta = 0 (C not read): fma's result is acc's value itself (to_float is exact,
  // times 1 exact, from_float exact back), a NaN aside, which becomes from_float's NaN.
  const bool identity_epilogue =
      options.c_input == CInput::epilogue && options.alpha == 1.0f && options.beta == 0.0f;
  const std::uint32_t epilogue_nan = from_float(dp.accumulator, std::nanf(""));
  detail::parallel_for(options.threads, m, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        std::uint32_t out = acc[i * n + j];
        if (identity_epilogue) {
          if (decode(dp.accumulator, out).value_class == ValueClass::nan) out = epilogue_nan;
        } else if (options.c_input == CInput::epilogue) {
          // BLAS: C is not read when beta == 0, so a NaN there does not propagate.
          const float product = options.alpha * to_float(dp.accumulator, out);
          const float result =
              options.beta == 0.0f
                  ? product
                  : std::fma(options.alpha, to_float(dp.accumulator, out),
                             options.beta * to_float(dp.accumulator, c->get(i, j)));
          out = from_float(dp.accumulator, result);
        }
        d.set(i, j, out);
      }
    }
  });
}

}  // namespace

void emulated_gemm(const Datapath& dp, const GemmOptions& options, ConstMatrixView a,
                   ConstMatrixView b, std::optional<ConstMatrixView> c, MatrixView d) {
  scaled_or_plain_gemm(dp, options, a, b, nullptr, c, d);
}

void emulated_gemm(const Datapath& dp, const GemmOptions& options, ConstMatrixView a,
                   ConstMatrixView b, const BlockScales& scales, std::optional<ConstMatrixView> c,
                   MatrixView d) {
  scaled_or_plain_gemm(dp, options, a, b, &scales, c, d);
}

}  // namespace tcemu
