#include "integer_gemm_steps.hpp"

#include <cstdint>
#include <vector>

#include <tcemu/emulator/integer_gemm.hpp>
#include <tcemu/emulator/parallel_for.hpp>

#include "host_real_view.hpp"

namespace tcemu::detail {

std::vector<std::int32_t> host_integer_sums(const IntegerMatrix& a, const IntegerMatrix& b,
                                            int threads) {
  // The emulator's integer MMA (integer_gemm.hpp): s8 x s8 products, exact, summed into int32 by
  // mma.sync.m16n8k32 instructions that wrap modulo 2^32; no sum reaches 2^31 (kIntegerGemmMaxK),
  // so nothing wraps and the int32 result is the exact sum.
  const IntegerDatapath datapath{integer_formats::s8, integer_formats::s8, 32,
                                 IntegerOverflow::wrap};
  const auto* base_a = static_cast<const std::uint8_t*>(a.buffer->address()) + a.offset_bytes;
  const auto* base_b = static_cast<const std::uint8_t*>(b.buffer->address()) + b.offset_bytes;
  std::vector<std::int32_t> sums(static_cast<std::size_t>(a.rows * b.cols));
  emulated_integer_gemm(datapath, {base_a, integer_formats::s8, a.rows, a.cols, a.ld, a.layout},
                        {base_b, integer_formats::s8, b.rows, b.cols, b.ld, b.layout}, std::nullopt,
                        {{sums.data(), a.rows, b.cols, a.rows, Layout::column_major}}, threads);
  return sums;
}

void host_integer_gemm(const IntegerMatrix& a, const IntegerMatrix& b, const RealMatrix& c,
                       int threads) {
  const std::vector<std::int32_t> sums = host_integer_sums(a, b, threads);
  const HostReal out(c);
  parallel_for(threads, c.cols, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t j = begin; j < end; ++j) {
      for (std::int64_t i = 0; i < c.rows; ++i) {
        out.set(i, j, static_cast<double>(sums[static_cast<std::size_t>(j * c.rows + i)]));
      }
    }
  });
}

}  // namespace tcemu::detail
