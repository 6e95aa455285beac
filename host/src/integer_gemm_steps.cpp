#include "integer_gemm_steps.hpp"

#include <cstdint>

#include <tcemu/emulator/parallel_for.hpp>

#include "host_real_view.hpp"

namespace tcemu::detail {

void host_integer_gemm(const IntegerMatrix& a, const IntegerMatrix& b, const RealMatrix& c,
                       int threads) {
  const auto* a8 = static_cast<const std::int8_t*>(a.buffer->address()) + a.offset_bytes;
  const auto* b8 = static_cast<const std::int8_t*>(b.buffer->address()) + b.offset_bytes;
  const HostReal out(c);
  parallel_for(threads, c.cols, 4, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t j = begin; j < end; ++j) {
      for (std::int64_t i = 0; i < c.rows; ++i) {
        // int32 accumulation, as IMMA: exact, |sum| <= k 2^14 < 2^31 (kIntegerGemmMaxK).
        std::int32_t sum = 0;
        for (std::int64_t p = 0; p < a.cols; ++p) {
          sum += std::int32_t{a8[i * a.ld + p]} * std::int32_t{b8[j * b.ld + p]};
        }
        out.set(i, j, static_cast<double>(sum));
      }
    }
  });
}

}  // namespace tcemu::detail
