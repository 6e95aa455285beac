#include <tcemu/session/products.hpp>

namespace tcemu::session {

ozaki::Products ozaki_products(SliceProducts backend, OzakiSlices slices,
                               const std::function<Datapath()>& tensor_cores) {
  switch (slices) {
    case OzakiSlices::crt:
      return ozaki::CrtProducts{};
    case OzakiSlices::int8:
      return ozaki::IntegerProducts{};
    case OzakiSlices::floating:
      break;
  }
  if (backend == SliceProducts::binary64) return ozaki::Fp64Products{};
  return ozaki::TensorCoreProducts{tensor_cores()};
}

}  // namespace tcemu::session
