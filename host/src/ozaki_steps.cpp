// Host implementations of the Ozaki steps; tcemu/backend/ozaki_steps.hpp states what each
// computes, bit for bit, and the element functions (ozaki_elements.hpp) compute it.
#include "ozaki_steps.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include <tcemu/backend/ozaki_elements.hpp>

#include <tcemu/emulator/parallel_for.hpp>
#include "host_real_view.hpp"

namespace tcemu::detail {
namespace {

namespace el = ozaki_elements;

std::int32_t* exponent_data(const ExponentVector& v) {
  return reinterpret_cast<std::int32_t*>(static_cast<unsigned char*>(v.buffer->address()) +
                                         v.offset_bytes);
}

MatrixView host_view(const BufferMatrix& m) {
  return {{static_cast<unsigned char*>(m.buffer->address()) + m.offset_bytes, m.format, m.rows,
           m.cols, m.ld, m.layout}};
}

// The i-th matrix of a stack.
RealMatrix layer(const RealMatrixStack& stack, std::int64_t l) {
  RealMatrix m = stack.first;
  m.offset_bytes += static_cast<std::size_t>(l) * stack.stride_bytes;
  return m;
}

}  // namespace

void host_copy_real(const RealMatrix& src, const RealMatrix& dst, int threads) {
  const HostReal from(src), to(dst);
  parallel_for(threads, src.rows, 64, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      for (std::int64_t j = 0; j < src.cols; ++j) {
        if (src.format == dst.format) {
          const std::size_t bytes = real_bytes(src.format);
          std::memcpy(to.data + to.index(i, j) * bytes, from.data + from.index(i, j) * bytes,
                      bytes);
        } else {
          to.set_bits(i, j, fp64::bits(from.get(i, j)));  // fp32 -> fp64: exact
        }
      }
    }
  });
}

int host_split(const RealMatrix& x, SplitAxis axis, int bits, int levels,
               std::span<const SliceMatrix> slices, std::span<const ExponentVector> exponents,
               int threads) {
  const HostReal rem(x);
  const bool by_rows = axis == SplitAxis::rows;
  const std::int64_t vectors = by_rows ? x.rows : x.cols;
  const std::int64_t length = by_rows ? x.cols : x.rows;
  const int stored = static_cast<int>(slices.size());
  // zero_after[v]: the levels after which vector v is zero (levels + 1: not within `levels`).
  std::vector<int> zero_after(static_cast<std::size_t>(vectors), 1);
  // Each level's slice as binary64 (out64[s].data != nullptr), int8 (out8[s] set) or in a
  // tensor-core format.
  std::vector<HostReal> out64(slices.size());
  std::vector<std::optional<IntegerMatrix>> out8(slices.size());
  std::vector<MatrixView> out_tc(slices.size(),
                                 MatrixView{{nullptr, formats::fp16, 0, 0, 1, x.layout}});
  for (std::size_t s = 0; s < slices.size(); ++s) {
    if (const auto* r = std::get_if<RealMatrix>(&slices[s])) {
      out64[s] = HostReal(*r);
    } else if (const auto* s8 = std::get_if<IntegerMatrix>(&slices[s])) {
      out8[s] = *s8;
    } else {
      out_tc[s] = host_view(std::get<BufferMatrix>(slices[s]));
    }
  }
  parallel_for(threads, vectors, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t v = begin; v < end; ++v) {
      auto at = [&](std::int64_t p) { return by_rows ? rem.fp64_at(v, p) : rem.fp64_at(p, v); };
      // Writes q as element p of the slice of level s.
      auto write = [&](int s, std::int64_t p, double q) {
        const std::int64_t i = by_rows ? v : p, j = by_rows ? p : v;
        if (out64[s].data != nullptr) {
          out64[s].set_bits(i, j, fp64::bits(q));
        } else if (out8[s]) {
          const IntegerMatrix& t = *out8[s];
          const std::int64_t index = t.layout == Layout::row_major ? i * t.ld + j : j * t.ld + i;
          static_cast<std::int8_t*>(t.buffer->address())[t.offset_bytes + index] =
              static_cast<std::int8_t>(q);  // |q| <= 2^bits <= 64 (check_split)
        } else {
          out_tc[s].set(i, j, el::slice_bits(q, out_tc[s].format));
        }
      };
      auto largest = [&] {
        std::uint64_t mu = 0;
        for (std::int64_t p = 0; p < length; ++p) {
          mu = std::max(mu, fp64::finite_magnitude(fp64::bits(*at(p))));
        }
        return mu;
      };
      int after = levels + 1;
      for (int s = 0; s < levels; ++s) {
        const std::uint64_t mu = largest();
        if (mu == 0) {  // zero before level s + 1: this and every later level stores zeros
          after = std::max(1, s);
          for (int z = s; z < stored; ++z) {
            exponent_data(exponents[z])[v] = 0;
            for (std::int64_t p = 0; p < length; ++p) write(z, p, 0.0);
          }
          break;
        }
        const el::SplitLevel level = el::split_level_of(mu, bits);
        if (s < stored) exponent_data(exponents[s])[v] = level.unit;
        for (std::int64_t p = 0; p < length; ++p) {
          const double q = el::split_element(*at(p), level);
          if (s < stored) write(s, p, q);
        }
      }
      if (after == levels + 1 && largest() == 0) after = levels;
      zero_after[static_cast<std::size_t>(v)] = after;
    }
  });
  return vectors == 0 ? 1 : *std::max_element(zero_after.begin(), zero_after.end());
}

bool host_all_zero(const RealMatrix& x) {
  const HostReal m(x);
  for (std::int64_t i = 0; i < x.rows; ++i) {
    for (std::int64_t j = 0; j < x.cols; ++j) {
      if (fp64::finite_magnitude(fp64::bits(*m.fp64_at(i, j))) != 0) return false;
    }
  }
  return true;
}

void host_accumulate_scaled(const RealMatrixStack& products, std::span<const OuterExponents> scales,
                            const OuterExponents& base, const RealMatrix& dst, bool overwrite,
                            int threads) {
  std::vector<HostReal> terms;
  for (std::int64_t l = 0; l < products.count; ++l) terms.emplace_back(layer(products, l));
  const HostReal out(dst);
  const std::int32_t* row_b = exponent_data(base.rows);
  const std::int32_t* col_b = exponent_data(base.columns);
  parallel_for(threads, dst.cols, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t j = begin; j < end; ++j) {
      for (std::int64_t i = 0; i < dst.rows; ++i) {
        double* d = out.fp64_at(i, j);
        for (std::size_t l = 0; l < terms.size(); ++l) {
          const std::int64_t e = (std::int64_t{exponent_data(scales[l].rows)[i]} - row_b[i]) +
                                 (std::int64_t{exponent_data(scales[l].columns)[j]} - col_b[j]);
          *d = el::accumulate_element(*d, terms[l].get(i, j), e, overwrite && l == 0);
        }
      }
    }
  });
}

void host_exact_sum(const RealMatrixStack& stack, const OuterExponents& scale,
                    const RealMatrix& dst, fp64::Direction d, int threads) {
  const HostReal out(dst);
  const std::int32_t* row_e = exponent_data(scale.rows);
  const std::int32_t* col_e = exponent_data(scale.columns);
  std::vector<HostReal> layers;
  for (std::int64_t l = 0; l < stack.count; ++l) layers.emplace_back(layer(stack, l));
  parallel_for(threads, dst.cols, 4, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t j = begin; j < end; ++j) {
      for (std::int64_t i = 0; i < dst.rows; ++i) {
        el::ExactSum<> sum;
        for (const HostReal& l : layers) sum.add(*l.fp64_at(i, j));
        *out.fp64_at(i, j) = sum.round(std::int64_t{row_e[i]} + col_e[j], d);
      }
    }
  });
}

void host_epilogue(const std::optional<RealMatrix>& v, const std::optional<OuterExponents>& v_scale,
                   double alpha, double beta, const std::optional<RealMatrix>& c,
                   const std::optional<RealMatrix>& a, const std::optional<RealMatrix>& b,
                   const RealMatrix& out, fp64::Direction d, int threads) {
  const HostReal result(out);
  const HostReal value = v ? HostReal(*v) : HostReal();
  const HostReal c_in = c ? HostReal(*c) : HostReal();
  const bool fp64_out = out.format == Real::fp64;
  std::vector<char> special_row, special_col;
  HostReal a_in, b_in;
  if (a) {
    a_in = HostReal(*a);
    b_in = HostReal(*b);
    special_row.assign(static_cast<std::size_t>(a->rows), 0);
    special_col.assign(static_cast<std::size_t>(b->cols), 0);
    for (std::int64_t i = 0; i < a->rows; ++i) {
      for (std::int64_t p = 0; p < a->cols; ++p) {
        if (!fp64::is_finite(fp64::bits(a_in.get(i, p)))) special_row[i] = 1;
      }
    }
    for (std::int64_t j = 0; j < b->cols; ++j) {
      for (std::int64_t p = 0; p < b->rows; ++p) {
        if (!fp64::is_finite(fp64::bits(b_in.get(p, j)))) special_col[j] = 1;
      }
    }
  }
  parallel_for(threads, out.cols, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t j = begin; j < end; ++j) {
      for (std::int64_t i = 0; i < out.rows; ++i) {
        const double c_ij = beta == 0.0 ? 0.0 : c_in.get(i, j);
        if (!v) {
          result.set_bits(i, j,
                          el::output_bits(el::epilogue_without_value(beta, c_ij), fp64_out, d));
          continue;
        }
        double s = value.get(i, j);
        if (v_scale) {
          s = fp64::scale(s, std::int64_t{exponent_data(v_scale->rows)[i]} +
                                 exponent_data(v_scale->columns)[j]);
        }
        if (a && (special_row[i] || special_col[j])) {
          NonfiniteProducts special;
          for (std::int64_t p = 0; p < a->cols; ++p) special.add(a_in.get(i, p), b_in.get(p, j));
          s = special.value();
        }
        result.set_bits(i, j, el::output_bits(blas_epilogue(alpha, s, beta, c_ij), fp64_out, d));
      }
    }
  });
}

}  // namespace tcemu::detail
