// The checks of the CRT steps (crt_steps.hpp), once for every backend.
#include <stdexcept>
#include <string>

#include <tcemu/backend/crt_steps.hpp>

#include "step_checks.hpp"

namespace tcemu {
namespace {

using detail::refuse;

void check_vector(const MemorySpace& backend, const ExponentVector& v, std::int64_t size,
                  const char* name_of) {
  const std::string what = backend.name() + ": shift vector " + name_of;
  if (v.buffer == nullptr || v.buffer->owner() != &backend) {
    throw std::invalid_argument(what + " is not in a buffer of this backend");
  }
  if (v.size != size) {
    throw std::invalid_argument(what + " has " + std::to_string(v.size) + " elements, expected " +
                                std::to_string(size));
  }
  if (v.offset_bytes + static_cast<std::size_t>(size) * 4 > v.buffer->bytes()) {
    throw std::out_of_range(what + " runs past its buffer of " + std::to_string(v.buffer->bytes()));
  }
}

}  // namespace

int CrtSteps::crt_scale(const RealMatrix& x, SplitAxis axis, int max_bits,
                        const ExponentVector& shifts) {
  check(x, "x");
  if (max_bits < 1 || max_bits > 4096) {
    refuse(name(), "crt_scale: max_bits = " + std::to_string(max_bits) + " (1 to 4096)");
  }
  check_vector(*this, shifts, axis == SplitAxis::rows ? x.rows : x.cols, "of crt_scale");
  return crt_scale_checked(x, axis, max_bits, shifts);
}

void CrtSteps::crt_residues(const RealMatrix& x, SplitAxis axis, const ExponentVector& shifts,
                            std::span<const IntegerMatrix> out) {
  check(x, "x");
  check_vector(*this, shifts, axis == SplitAxis::rows ? x.rows : x.cols, "of crt_residues");
  if (out.empty() || out.size() > static_cast<std::size_t>(crt_elements::kMaxModuli)) {
    refuse(name(), "crt_residues: " + std::to_string(out.size()) + " moduli (1 to " +
                       std::to_string(crt_elements::kMaxModuli) + ")");
  }
  for (const IntegerMatrix& o : out) {
    check(o, "residues");
    if (o.format != Integer::s8) refuse(name(), "crt_residues: residues must be int8");
    detail::same_shape(name(), o, "residues", x.rows, x.cols);
  }
  crt_residues_checked(x, axis, shifts, out);
}

void CrtSteps::crt_reconstruct(const RealMatrixStack& products, const OuterExponents& shifts,
                               const RealMatrix& dst) {
  if (products.count < 1 || products.count > crt_elements::kMaxModuli) {
    refuse(name(), "crt_reconstruct: " + std::to_string(products.count) + " products (1 to " +
                       std::to_string(crt_elements::kMaxModuli) + ")");
  }
  RealMatrix last = products.first;
  last.offset_bytes += static_cast<std::size_t>(products.count - 1) * products.stride_bytes;
  check(products.first, "products");
  check(last, "products (last)");
  check(dst, "destination");
  detail::require_fp64(name(), products.first, "the products");
  detail::require_fp64(name(), dst, "the destination");
  detail::same_shape(name(), dst, "destination", products.first.rows, products.first.cols);
  check_vector(*this, shifts.rows, dst.rows, "of the rows");
  check_vector(*this, shifts.columns, dst.cols, "of the columns");
  crt_reconstruct_checked(products, crt_elements::table(static_cast<int>(products.count)), shifts,
                          dst);
}

}  // namespace tcemu
