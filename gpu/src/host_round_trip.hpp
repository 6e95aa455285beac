// The GPU backend's Ozaki steps (copy_real, split_level, all_zero, fp64_gemm, accumulate_scaled,
// exact_sum, epilogue) run on the host backend over copies of the device buffers they touch:
// they are not device-resident yet (docs/gpu.md). The bits are the host steps' by construction;
// the cost is a device-host round trip of each touched buffer per step.
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <optional>
#include <variant>

#include <tcemu/emulator/backend.hpp>

#include "cuda_check.hpp"

namespace tcemu::gpu::detail {

class HostRoundTrip {
 public:
  explicit HostRoundTrip(Backend& host) : host_(host) {}
  HostRoundTrip(const HostRoundTrip&) = delete;
  HostRoundTrip& operator=(const HostRoundTrip&) = delete;
  // Copies back every buffer the step may have written.
  ~HostRoundTrip() noexcept(false) {
    for (const auto& [device, mirror] : mirrors_) {
      if (!mirror.written) continue;
      TCEMU_CUDA_CHECK(cudaMemcpy(device->address(), mirror.host.address(), device->bytes(),
                                  cudaMemcpyHostToDevice));
    }
  }

  RealMatrix read(RealMatrix m) { return remap(m, false); }
  RealMatrix write(RealMatrix m) { return remap(m, true); }
  std::optional<RealMatrix> read(const std::optional<RealMatrix>& m) {
    return m ? std::optional<RealMatrix>(read(*m)) : std::nullopt;
  }
  ExponentVector read(ExponentVector v) { return remap(v, false); }
  ExponentVector write(ExponentVector v) { return remap(v, true); }
  OuterExponents read(const OuterExponents& e) { return {read(e.rows), read(e.columns)}; }
  std::optional<OuterExponents> read(const std::optional<OuterExponents>& e) {
    return e ? std::optional<OuterExponents>(read(*e)) : std::nullopt;
  }
  RealMatrixStack read(RealMatrixStack s) {
    s.first = read(s.first);
    return s;
  }
  SliceMatrix write(const SliceMatrix& s) {
    if (const auto* m = std::get_if<RealMatrix>(&s)) return write(*m);
    BufferMatrix b = std::get<BufferMatrix>(s);
    b.buffer = mirror(b.buffer, true);
    return b;
  }

 private:
  struct Mirror {
    Buffer host;
    bool written;
  };

  template <class Descriptor>
  Descriptor remap(Descriptor d, bool written) {
    d.buffer = mirror(d.buffer, written);
    return d;
  }

  const Buffer* mirror(const Buffer* device, bool written) {
    auto found = mirrors_.find(device);
    if (found == mirrors_.end()) {
      Buffer host = host_.allocate(device->bytes());
      if (device->bytes() > 0) {
        TCEMU_CUDA_CHECK(
            cudaMemcpy(host.address(), device->address(), device->bytes(), cudaMemcpyDeviceToHost));
      }
      found = mirrors_.emplace(device, Mirror{std::move(host), false}).first;
    }
    found->second.written = found->second.written || written;
    return &found->second.host;
  }

  Backend& host_;
  std::map<const Buffer*, Mirror> mirrors_;
};

}  // namespace tcemu::gpu::detail
