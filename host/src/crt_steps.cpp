#include "crt_steps.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include <tcemu/backend/crt_bounds.hpp>
#include <tcemu/backend/crt_moduli.hpp>
#include <tcemu/backend/crt_reconstruction.hpp>
#include <tcemu/backend/crt_residues.hpp>
#include <tcemu/backend/crt_scaling.hpp>
#include <tcemu/emulator/parallel_for.hpp>

#include "host_real_view.hpp"
#include "integer_gemm_steps.hpp"

namespace tcemu::detail {
namespace {

namespace el = crt_elements;

std::int32_t* shift_data(const ExponentVector& v) {
  return reinterpret_cast<std::int32_t*>(static_cast<unsigned char*>(v.buffer->address()) +
                                         v.offset_bytes);
}

}  // namespace

ScaleSummary host_crt_scale(const RealMatrix& x, SplitAxis axis, int max_bits,
                            const ExponentVector& shifts, int threads) {
  const HostReal in(x);
  const bool rows = axis == SplitAxis::rows;
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  std::vector<ScaleSummary> summaries(static_cast<std::size_t>(vectors));
  std::int32_t* out = shift_data(shifts);
  parallel_for(threads, vectors, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t v = begin; v < end; ++v) {
      el::VectorBits b;
      for (std::int64_t p = 0; p < length; ++p) b.add(rows ? in.get(v, p) : in.get(p, v));
      out[v] = b.shift(max_bits);
      summaries[static_cast<std::size_t>(v)] = {b.exact_bits(), b.nonfinite};
    }
  });
  ScaleSummary all;
  for (const ScaleSummary& s : summaries) {
    all.exact_bits = std::max(all.exact_bits, s.exact_bits);
    all.nonfinite = all.nonfinite || s.nonfinite;
  }
  return all;
}

void host_crt_norm_shifts(const RealMatrix& x, SplitAxis axis, int gamma,
                          const ExponentVector& shifts, const VectorNorms* norms, int threads) {
  const HostReal in(x);
  const bool rows = axis == SplitAxis::rows;
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  std::int32_t* shift = shift_data(shifts);
  parallel_for(threads, vectors, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t v = begin; v < end; ++v) {
      el::MagnitudeSums sums;
      for (std::int64_t p = 0; p < length; ++p)
        sums.add(rows ? in.get(v, p) : in.get(p, v), shift[v]);
      const el::VectorNorm n = el::vector_norm(sums, shift[v]);
      shift[v] = el::norm_shift(n, gamma);
      if (norms != nullptr) {
        shift_data(norms->rho)[v] = n.rho;
        shift_data(norms->log2_norm1)[v] = n.log2_norm1;
        shift_data(norms->top)[v] = n.top;
      }
    }
  });
}

void host_crt_residues(const RealMatrix& x, SplitAxis axis, const ExponentVector& shifts,
                       std::span<const IntegerMatrix> out, int threads) {
  const HostReal in(x);
  const bool rows = axis == SplitAxis::rows;
  const std::int32_t* shift = shift_data(shifts);
  std::vector<el::Modulus> moduli;
  for (std::size_t l = 0; l < out.size(); ++l) moduli.push_back(el::modulus(el::kModuli[l]));
  parallel_for(threads, x.rows, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      for (std::int64_t j = 0; j < x.cols; ++j) {
        const el::ResidueChunks value =
            el::residue_chunks(el::scaled_integer(in.get(i, j), shift[rows ? i : j]));
        for (std::size_t l = 0; l < out.size(); ++l) {
          const IntegerMatrix& o = out[l];
          const std::int64_t at = o.layout == Layout::row_major ? i * o.ld + j : j * o.ld + i;
          static_cast<std::int8_t*>(o.buffer->address())[o.offset_bytes + at] =
              static_cast<std::int8_t>(el::residue(value, moduli[l]));
        }
      }
    }
  });
}

void host_crt_product_residues(const IntegerMatrix& a, const IntegerMatrix& b, int modulus,
                               const IntegerMatrix& dst, int threads) {
  const std::vector<std::int32_t> sums = host_integer_sums(a, b, threads);
  const el::Modulus m = el::modulus(el::kModuli[modulus]);
  auto* out = static_cast<unsigned char*>(dst.buffer->address()) + dst.offset_bytes;
  const bool reduce = dst.format == Integer::s8;
  parallel_for(threads, dst.cols, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t j = begin; j < end; ++j) {
      const std::int32_t* column = sums.data() + j * dst.rows;
      if (reduce) {
        std::int8_t* to = reinterpret_cast<std::int8_t*>(out) + j * dst.ld;
        for (std::int64_t i = 0; i < dst.rows; ++i) {
          to[i] = static_cast<std::int8_t>(el::sum_residue(column[i], m));
        }
      } else {
        std::copy(column, column + dst.rows, reinterpret_cast<std::int32_t*>(out) + j * dst.ld);
      }
    }
  });
}

void host_crt_magnitude_bound(const RealMatrix& x, SplitAxis axis, int depth,
                              const VectorNorms& norms, const IntegerMatrix& out,
                              const BoundExponents& exponents, int threads) {
  const HostReal in(x);
  const bool rows = axis == SplitAxis::rows;
  const std::int64_t vectors = rows ? x.rows : x.cols, length = rows ? x.cols : x.rows;
  const int log2_length =
      length == 0 ? 0 : tcemu::detail::bit_width(static_cast<std::uint64_t>(length)) - 1;
  std::int32_t* norm2 = shift_data(exponents.norm2);
  std::int32_t* norm1 = shift_data(exponents.norm1);
  auto* quanta = static_cast<std::int8_t*>(out.buffer->address()) + out.offset_bytes;
  parallel_for(threads, vectors, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t v = begin; v < end; ++v) {
      const el::VectorNorm n{shift_data(norms.rho)[v], shift_data(norms.log2_norm1)[v],
                             shift_data(norms.top)[v]};
      const el::BoundVector b = el::bound_vector(n, log2_length, depth);
      norm2[v] = b.norm2;
      norm1[v] = b.norm1;
      for (std::int64_t p = 0; p < length; ++p) {
        const std::int64_t i = rows ? v : p, j = rows ? p : v;
        const std::int64_t at = out.layout == Layout::row_major ? i * out.ld + j : j * out.ld + i;
        quanta[at] = static_cast<std::int8_t>(
            el::magnitude_quanta(rows ? in.get(v, p) : in.get(p, v), b.quantum_shift));
      }
    }
  });
}

int host_crt_bound_need(std::span<const BoundLevel> levels, int log2_k, int threads) {
  std::vector<std::vector<std::int32_t>> sums;
  for (const BoundLevel& level : levels)
    sums.push_back(host_integer_sums(level.a, level.b, threads));
  const std::int64_t rows = levels.front().a.rows, cols = levels.front().b.cols;
  std::vector<int> need(static_cast<std::size_t>(cols), el::kNoNeed);
  parallel_for(threads, cols, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t j = begin; j < end; ++j) {
      int most = el::kNoNeed;
      for (std::int64_t i = 0; i < rows; ++i) {
        int least = el::kBoundUncertified;
        for (std::size_t l = 0; l < levels.size(); ++l) {
          const BoundLevel& level = levels[l];
          least = std::min(least, el::bound_need(sums[l][static_cast<std::size_t>(j * rows + i)],
                                                 shift_data(level.rows.norm2)[i],
                                                 shift_data(level.rows.norm1)[i],
                                                 shift_data(level.columns.norm2)[j],
                                                 shift_data(level.columns.norm1)[j], log2_k));
        }
        most = std::max(most, least);
      }
      need[static_cast<std::size_t>(j)] = most;
    }
  });
  return need.empty() ? el::kNoNeed : *std::max_element(need.begin(), need.end());
}

void host_crt_reconstruct(const IntegerMatrixStack& residues, const crt_elements::Table& table,
                          const OuterExponents& shifts, const RealMatrix& dst, int threads) {
  const auto* first = static_cast<const unsigned char*>(residues.first.buffer->address()) +
                      residues.first.offset_bytes;
  const std::int64_t ld = residues.first.ld;
  const bool sums = residues.first.format == Integer::s32;
  const HostReal out(dst);
  const std::int32_t* row_shift = shift_data(shifts.rows);
  const std::int32_t* col_shift = shift_data(shifts.columns);
  parallel_for(threads, dst.cols, 4, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t j = begin; j < end; ++j) {
      for (std::int64_t i = 0; i < dst.rows; ++i) {
        const auto residue = [&](int l) {
          const unsigned char* layer = first + static_cast<std::size_t>(l) * residues.stride_bytes;
          const auto at = static_cast<std::size_t>(j * ld + i);
          return sums ? el::sum_congruent(reinterpret_cast<const std::int32_t*>(layer)[at],
                                          table.moduli[l])
                      : static_cast<int>(reinterpret_cast<const std::int8_t*>(layer)[at]);
        };
        out.set(i, j, el::reconstruct(table, residue, std::int64_t{row_shift[i]} + col_shift[j]));
      }
    }
  });
}

}  // namespace tcemu::detail
