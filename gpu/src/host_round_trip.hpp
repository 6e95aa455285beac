// The GPU backend's Ozaki steps (copy_real, split_level, all_zero, fp64_gemm, accumulate_scaled,
// exact_sum, epilogue) run on the host backend over copies of the device buffers they touch:
// they are not device-resident yet (docs/gpu.md). The bits are the host steps' by construction;
// the cost is a device-host round trip of the bytes each step reads and writes.
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include <tcemu/emulator/backend.hpp>

#include "cuda_check.hpp"

namespace tcemu::gpu::detail {

class HostRoundTrip {
 public:
  explicit HostRoundTrip(Backend& host) : host_(host) {}
  HostRoundTrip(const HostRoundTrip&) = delete;
  HostRoundTrip& operator=(const HostRoundTrip&) = delete;
  // Copies back the byte ranges the step wrote; called once the host step has returned (a
  // step that throws leaves the device buffers as they were).
  void write_back() {
    for (const auto& [device, mirror] : mirrors_) {
      for (const auto& [begin, end] : mirror.written) {
        TCEMU_CUDA_CHECK(
            cudaMemcpy(static_cast<unsigned char*>(device->address()) + begin,
                       static_cast<const unsigned char*>(mirror.host.address()) + begin,
                       end - begin, cudaMemcpyHostToDevice));
      }
    }
  }

  RealMatrix read(RealMatrix m) { return remap(m, real_bytes(m.type), false); }
  RealMatrix write(RealMatrix m) { return remap(m, real_bytes(m.type), true); }
  std::optional<RealMatrix> read(const std::optional<RealMatrix>& m) {
    return m ? std::optional<RealMatrix>(read(*m)) : std::nullopt;
  }
  ExponentVector read(ExponentVector v) { return remap_vector(v, false); }
  ExponentVector write(ExponentVector v) { return remap_vector(v, true); }
  OuterExponents read(const OuterExponents& e) { return {read(e.rows), read(e.columns)}; }
  std::optional<OuterExponents> read(const std::optional<OuterExponents>& e) {
    return e ? std::optional<OuterExponents>(read(*e)) : std::nullopt;
  }
  RealMatrixStack read(RealMatrixStack s) {
    touch(s.first.buffer, {s.first.offset_bytes, s.first.offset_bytes}, false);  // even if empty
    for (std::int64_t i = 0; i < s.count; ++i) {
      RealMatrix level = s.first;
      level.offset_bytes += static_cast<std::size_t>(i) * s.stride_bytes;
      read(level);
    }
    s.first.buffer = host_buffer(s.first.buffer);
    return s;
  }
  SliceMatrix write(const SliceMatrix& s) {
    if (const auto* m = std::get_if<RealMatrix>(&s)) return write(*m);
    const BufferMatrix& b = std::get<BufferMatrix>(s);
    return remap(b, container_bytes(b.format), true);
  }

 private:
  using Range = std::pair<std::size_t, std::size_t>;
  struct Mirror {
    Buffer host;
    std::vector<Range> written;
  };

  // Bytes [begin, end) of a matrix's elements inside its buffer.
  template <class Matrix>
  static Range extent(const Matrix& m, std::size_t element_bytes) {
    if (m.rows == 0 || m.cols == 0) return {m.offset_bytes, m.offset_bytes};
    const std::int64_t inner = m.layout == Layout::row_major ? m.cols : m.rows;
    const std::int64_t outer = m.layout == Layout::row_major ? m.rows : m.cols;
    return {m.offset_bytes,
            m.offset_bytes + static_cast<std::size_t>((outer - 1) * m.ld + inner) * element_bytes};
  }

  template <class Matrix>
  Matrix remap(Matrix m, std::size_t element_bytes, bool written) {
    touch(m.buffer, extent(m, element_bytes), written);
    m.buffer = host_buffer(m.buffer);
    return m;
  }
  ExponentVector remap_vector(ExponentVector v, bool written) {
    touch(v.buffer, {v.offset_bytes, v.offset_bytes + static_cast<std::size_t>(v.size) * 4},
          written);
    v.buffer = host_buffer(v.buffer);
    return v;
  }

  // Copies the range to the host mirror (every copy happens before the step runs, so copying an
  // overlapping range twice reads the same bytes) and remembers it when the step writes it.
  void touch(const Buffer* device, Range range, bool written) {
    auto found = mirrors_.find(device);
    if (found == mirrors_.end()) {
      found = mirrors_.emplace(device, Mirror{host_.allocate(device->bytes()), {}}).first;
    }
    if (range.second > range.first) {
      TCEMU_CUDA_CHECK(
          cudaMemcpy(static_cast<unsigned char*>(found->second.host.address()) + range.first,
                     static_cast<const unsigned char*>(device->address()) + range.first,
                     range.second - range.first, cudaMemcpyDeviceToHost));
      if (written) found->second.written.push_back(range);
    }
  }

  const Buffer* host_buffer(const Buffer* device) { return &mirrors_.at(device).host; }

  Backend& host_;
  std::map<const Buffer*, Mirror> mirrors_;
};

}  // namespace tcemu::gpu::detail
