// devices(), gpu_built(): what the GPU backend sees (tcemu/gpu/device.hpp).
#include <string>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#if TCEMU_WITH_GPU
#include <tcemu/gpu/device.hpp>
#endif

#include "backends.hpp"
#include "bindings.hpp"

namespace tcemu::python {

void bind_devices(nb::module_& m) {
  m.def("gpu_built", &gpu_built, "Whether this build has the CUDA backend.");
  m.def(
      "devices",
      [] {
        nb::list out;
#if TCEMU_WITH_GPU
        for (const gpu::DeviceInfo& d : gpu::list_devices()) {
          nb::dict info;
          info["index"] = d.index;
          info["name"] = d.name;
          info["compute_capability"] = nb::make_tuple(d.compute_major, d.compute_minor);
          info["global_memory_bytes"] = d.global_memory_bytes;
          info["multiprocessors"] = d.multiprocessors;
          info["arch_preset"] = d.arch_preset();
          out.append(info);
        }
#endif
        return out;
      },
      "The CUDA devices present, each a dict (index, name, compute_capability, "
      "global_memory_bytes, multiprocessors, arch_preset); empty without a GPU or without the "
      "CUDA backend.");
}

}  // namespace tcemu::python
