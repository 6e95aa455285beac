// The tensor-core steps on the host: the emulator's GEMM and conversion on host buffers.
#include "tensor_core_steps.hpp"

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/gemm.hpp>

#include "host_matrix_view.hpp"

namespace tcemu::detail {

void host_mma_gemm(const Datapath& datapath, const GemmOptions& options, const BufferMatrix& a,
                   const BufferMatrix& b, const std::optional<BufferMatrix>& c,
                   const BufferMatrix& d, const std::optional<ScaleBuffers>& scales, int threads) {
  std::optional<ConstMatrixView> c_view;
  if (c) c_view = host_view(*c);
  GemmOptions threaded = options;
  if (threaded.threads == 0) threaded.threads = threads;
  if (scales) {
    emulated_gemm(datapath, threaded, host_view(a), host_view(b),
                  BlockScales{host_view(scales->a), host_view(scales->b)}, c_view,
                  host_view_mutable(d));
  } else {
    emulated_gemm(datapath, threaded, host_view(a), host_view(b), c_view, host_view_mutable(d));
  }
}

void host_convert(const BufferMatrix& src, const BufferMatrix& dst, Rounding rounding) {
  const ConstMatrixView from = host_view(src);
  const MatrixView to = host_view_mutable(dst);
  for (std::int64_t i = 0; i < src.rows; ++i) {
    for (std::int64_t j = 0; j < src.cols; ++j) {
      to.set(i, j, convert(src.format, dst.format, from.get(i, j), rounding));
    }
  }
}

}  // namespace tcemu::detail
