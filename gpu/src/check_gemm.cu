// tcemu::check_gemm on device views: the views' spans copied to the host, then the host check.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include <tcemu/gpu/check_gemm.hpp>

#include "cuda_check.hpp"

namespace tcemu::gpu {
namespace {

// The bytes from element (0, 0) to the last element of the last row (row major) or column
// (column major); none for an empty matrix. The operand check has made rows, cols >= 0 and ld at
// least the length of a row or column.
std::size_t span_bytes(const ConstMatrixView& v) {
  if (v.rows == 0 || v.cols == 0) return 0;
  const bool row_major = v.layout == Layout::row_major;
  const std::int64_t lines = row_major ? v.rows : v.cols;
  const std::int64_t line_length = row_major ? v.cols : v.rows;
  return static_cast<std::size_t>((lines - 1) * v.ld + line_length) * container_bytes(v.format);
}

std::vector<unsigned char> copy_to_host(const ConstMatrixView& device, const char* operand) {
  std::vector<unsigned char> host(span_bytes(device));
  if (!host.empty()) {
    const std::string call = std::string("cudaMemcpy of ") + operand + " (" +
                             std::to_string(host.size()) + " bytes, device to host)";
    detail::cuda_check(cudaMemcpy(host.data(), device.data, host.size(), cudaMemcpyDeviceToHost),
                       call.c_str(), __FILE__, __LINE__);
  }
  return host;
}

ConstMatrixView over(const std::vector<unsigned char>& host, ConstMatrixView view) {
  view.data = host.data();
  return view;
}

}  // namespace

GemmCheck check_gemm(const Datapath& datapath, const GemmOptions& options, ConstMatrixView a,
                     ConstMatrixView b, std::optional<ConstMatrixView> c, ConstMatrixView got,
                     std::int64_t listed) {
  check_gemm_operands("tcemu::gpu::check_gemm", datapath, options, a, b, c, got);
  TCEMU_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<unsigned char> a_host = copy_to_host(a, "A");
  const std::vector<unsigned char> b_host = copy_to_host(b, "B");
  const std::vector<unsigned char> c_host =
      c ? copy_to_host(*c, "C") : std::vector<unsigned char>();
  const std::vector<unsigned char> got_host = copy_to_host(got, "D");
  return tcemu::check_gemm(datapath, options, over(a_host, a), over(b_host, b),
                           c ? std::optional(over(c_host, *c)) : std::nullopt, over(got_host, got),
                           listed);
}

}  // namespace tcemu::gpu
