// tcemu._tcemu: the extension module behind the Python package tcemu (python/tcemu). C++
// exceptions reach Python through nanobind's translation: std::invalid_argument as ValueError,
// std::out_of_range as IndexError, std::runtime_error and the rest as RuntimeError, each with
// the C++ message.
#include "bindings.hpp"

NB_MODULE(_tcemu, m) {
  using namespace tcemu::python;
  m.doc() = "Bit-exact model of NVIDIA Tensor Core MMA (the C++ libraries of tcemu)";
  bind_formats(m);
  bind_datapath(m);
  bind_mma(m);
  bind_fp64(m);
  bind_matmul(m);
  bind_ozaki(m);
  bind_markidis(m);
  bind_accurate(m);
  bind_validate(m);
  bind_devices(m);
  bind_probe(m);
  bind_detect(m);
  bind_quantize(m);
}
