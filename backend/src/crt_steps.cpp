// The checks of the CRT steps (crt_steps.hpp), once for every backend.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <tcemu/backend/crt_bounds.hpp>
#include <tcemu/backend/crt_moduli.hpp>
#include <tcemu/backend/crt_reconstruction.hpp>
#include <tcemu/backend/crt_scaling.hpp>
#include <tcemu/backend/crt_steps.hpp>
#include <tcemu/backend/integer_gemm_steps.hpp>
#include <tcemu/emulator/floating_point_scope.hpp>

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

ScaleSummary CrtSteps::crt_scale(const RealMatrix& x, SplitAxis axis, int max_bits,
                                 const ExponentVector& shifts) {
  const FloatingPointScope scope;
  check(x, "x");
  if (max_bits < 1 || max_bits > 4096) {
    refuse(name(), "crt_scale: max_bits = " + std::to_string(max_bits) + " (1 to 4096)");
  }
  check_vector(*this, shifts, axis == SplitAxis::rows ? x.rows : x.cols, "of crt_scale");
  return crt_scale_checked(x, axis, max_bits, shifts);
}

ScaleSummary CrtSteps::crt_norm_scale(const RealMatrix& x, SplitAxis axis, int bound_bits,
                                      int gamma, const ExponentVector& shifts,
                                      const VectorNorms* norms) {
  const FloatingPointScope scope;
  check(x, "x");
  const std::int64_t length = axis == SplitAxis::rows ? x.cols : x.rows;
  if (bound_bits < 1 || bound_bits > crt_elements::kNormBoundBits) {
    refuse(name(), "crt_norm_scale: bound_bits = " + std::to_string(bound_bits) + " (1 to " +
                       std::to_string(crt_elements::kNormBoundBits) + ")");
  }
  if (length >= (std::int64_t{1} << 24)) {
    refuse(name(),
           "crt_norm_scale: vectors of " + std::to_string(length) + " elements (below 2^24)");
  }
  const int half_log = (static_cast<int>(std::bit_width(
                            static_cast<std::uint64_t>(std::max<std::int64_t>(length, 1) - 1))) +
                        1) /
                       2;
  if (gamma < bound_bits + half_log || gamma > 4096) {
    refuse(name(), "crt_norm_scale: gamma = " + std::to_string(gamma) + " (" +
                       std::to_string(bound_bits + half_log) + " to 4096 for bound_bits " +
                       std::to_string(bound_bits) + " and vectors of " + std::to_string(length) +
                       ")");
  }
  const std::int64_t vectors = axis == SplitAxis::rows ? x.rows : x.cols;
  check_vector(*this, shifts, vectors, "of crt_norm_scale");
  if (norms != nullptr) {
    check_vector(*this, norms->rho, vectors, "rho of crt_norm_scale");
    check_vector(*this, norms->log2_norm1, vectors, "log2_norm1 of crt_norm_scale");
    check_vector(*this, norms->top, vectors, "top of crt_norm_scale");
  }
  const ScaleSummary summary = crt_scale_checked(x, axis, bound_bits, shifts);
  crt_norm_shifts_checked(x, axis, gamma, shifts, norms);
  return summary;
}

void CrtSteps::crt_residues(const RealMatrix& x, SplitAxis axis, const ExponentVector& shifts,
                            std::span<const IntegerMatrix> out) {
  const FloatingPointScope scope;
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

void CrtSteps::crt_product_residues(const IntegerMatrix& a, const IntegerMatrix& b, int modulus,
                                    const IntegerMatrix& dst) {
  const FloatingPointScope scope;
  check(a, "A");
  check(b, "B");
  check(dst, "destination");
  if (a.format != Integer::s8 || b.format != Integer::s8) {
    refuse(name(), "crt_product_residues: A and B must hold int8 (s8)");
  }
  if (a.layout != Layout::row_major || b.layout != Layout::column_major ||
      dst.layout != Layout::column_major) {
    refuse(name(),
           "crt_product_residues: A must be row major, B and the destination column "
           "major (k contiguous in A and B)");
  }
  detail::same_shape(name(), b, "B", a.cols, b.cols);
  detail::same_shape(name(), dst, "destination", a.rows, b.cols);
  if (a.cols > kIntegerGemmMaxK) {
    refuse(name(), "crt_product_residues: k = " + std::to_string(a.cols) +
                       " could overflow int32 (at most " + std::to_string(kIntegerGemmMaxK) + ")");
  }
  if (modulus < 0 || modulus >= crt_elements::kMaxModuli) {
    refuse(name(), "crt_product_residues: modulus " + std::to_string(modulus) + " (0 to " +
                       std::to_string(crt_elements::kMaxModuli - 1) + ")");
  }
  if (dst.rows == 0 || dst.cols == 0) return;
  crt_product_residues_checked(a, b, modulus, dst);
}

void CrtSteps::crt_magnitude_bound(const RealMatrix& x, SplitAxis axis, int depth,
                                   const VectorNorms& norms, const IntegerMatrix& out,
                                   const BoundExponents& exponents) {
  const FloatingPointScope scope;
  check(x, "x");
  detail::require_fp64(name(), x, "x of crt_magnitude_bound");
  check(out, "quanta");
  if (out.format != Integer::s8) refuse(name(), "crt_magnitude_bound: the quanta must be int8");
  detail::same_shape(name(), out, "quanta", x.rows, x.cols);
  const std::int64_t vectors = axis == SplitAxis::rows ? x.rows : x.cols;
  const std::int64_t length = axis == SplitAxis::rows ? x.cols : x.rows;
  if (length >= (std::int64_t{1} << 24)) {
    refuse(name(),
           "crt_magnitude_bound: vectors of " + std::to_string(length) + " elements (below 2^24)");
  }
  if (depth < -8 || depth > 30) {
    refuse(name(), "crt_magnitude_bound: depth = " + std::to_string(depth) + " (-8 to 30)");
  }
  check_vector(*this, norms.rho, vectors, "rho of crt_magnitude_bound");
  check_vector(*this, norms.log2_norm1, vectors, "log2_norm1 of crt_magnitude_bound");
  check_vector(*this, norms.top, vectors, "top of crt_magnitude_bound");
  check_vector(*this, exponents.norm2, vectors, "norm2 of crt_magnitude_bound");
  check_vector(*this, exponents.norm1, vectors, "norm1 of crt_magnitude_bound");
  crt_magnitude_bound_checked(x, axis, depth, norms, out, exponents);
}

int CrtSteps::crt_bound_need(std::span<const BoundLevel> levels, std::int64_t k) {
  const FloatingPointScope scope;
  if (levels.empty() || levels.size() > 2) {
    refuse(name(), "crt_bound_need: " + std::to_string(levels.size()) + " levels (1 or 2)");
  }
  const IntegerMatrix& first = levels.front().a;
  if (first.cols > k) {
    refuse(name(), "crt_bound_need: the levels sum " + std::to_string(first.cols) +
                       " terms, more than the product's k = " + std::to_string(k));
  }
  for (const BoundLevel& level : levels) {
    const IntegerMatrix &a = level.a, &b = level.b;
    check(a, "A");
    check(b, "B");
    if (a.format != Integer::s8 || b.format != Integer::s8) {
      refuse(name(), "crt_bound_need: A and B must hold int8 (s8)");
    }
    if (a.layout != Layout::row_major || b.layout != Layout::column_major) {
      refuse(name(), "crt_bound_need: A must be row major, B column major (k contiguous)");
    }
    detail::same_shape(name(), a, "A", first.rows, first.cols);
    detail::same_shape(name(), b, "B", a.cols, levels.front().b.cols);
    if (a.cols > kIntegerGemmMaxK) {
      refuse(name(), "crt_bound_need: k = " + std::to_string(a.cols) +
                         " could overflow int32 (at most " + std::to_string(kIntegerGemmMaxK) +
                         ")");
    }
    check_vector(*this, level.rows.norm2, a.rows, "norm2 of the rows");
    check_vector(*this, level.rows.norm1, a.rows, "norm1 of the rows");
    check_vector(*this, level.columns.norm2, b.cols, "norm2 of the columns");
    check_vector(*this, level.columns.norm1, b.cols, "norm1 of the columns");
  }
  if (first.rows == 0 || levels.front().b.cols == 0) return crt_elements::kNoNeed;
  const int log2_k =
      k == 0 ? 0 : static_cast<int>(std::bit_width(static_cast<std::uint64_t>(k))) - 1;
  return crt_bound_need_checked(levels, log2_k);
}

void CrtSteps::crt_reconstruct(const IntegerMatrixStack& residues, const OuterExponents& shifts,
                               const RealMatrix& dst, fp64::Direction d) {
  const FloatingPointScope scope;
  if (residues.count < 1 || residues.count > crt_elements::kMaxModuli) {
    refuse(name(), "crt_reconstruct: " + std::to_string(residues.count) + " residues (1 to " +
                       std::to_string(crt_elements::kMaxModuli) + ")");
  }
  IntegerMatrix last = residues.first;
  last.offset_bytes += static_cast<std::size_t>(residues.count - 1) * residues.stride_bytes;
  check(residues.first, "residues");
  check(last, "residues (last)");
  check(dst, "destination");
  if (residues.first.layout != Layout::column_major) {
    refuse(name(), "crt_reconstruct: the residues must be column major");
  }
  detail::require_fp64(name(), dst, "the destination");
  detail::same_shape(name(), dst, "destination", residues.first.rows, residues.first.cols);
  check_vector(*this, shifts.rows, dst.rows, "of the rows");
  check_vector(*this, shifts.columns, dst.cols, "of the columns");
  crt_elements::Table table = crt_elements::table(static_cast<int>(residues.count));
  table.direction = d;
  crt_reconstruct_checked(residues, table, shifts, dst);
}

}  // namespace tcemu
