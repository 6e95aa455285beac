// Host implementations of the Ozaki steps; backend.hpp states what each computes, bit for bit.
#include "host_ozaki_steps.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <tcemu/emulator/convert.hpp>

#include "exact_sum.hpp"
#include "host_real_view.hpp"
#include "parallel_for.hpp"

namespace tcemu::detail {
namespace {

constexpr std::uint64_t kCanonicalNan = 0x7FF8000000000000ULL;

// 2^e for e in binary64's normal range, built from the bit fields.
double power_of_two(int e) {
  return std::bit_cast<double>(static_cast<std::uint64_t>(e + 1023) << 52);
}

// Exponent of the leading bit of a finite nonzero x, from its bit fields.
int leading_exponent(double x) {
  const auto raw = std::bit_cast<std::uint64_t>(x) & ~(std::uint64_t{1} << 63);
  const auto field = static_cast<int>(raw >> 52);
  if (field != 0) return field - 1023;
  return 63 - std::countl_zero(raw) - 1074;  // subnormal: the fraction's leading bit
}

std::int32_t* exponent_data(const ExponentVector& v) {
  return reinterpret_cast<std::int32_t*>(static_cast<unsigned char*>(v.buffer->address()) +
                                         v.offset_bytes);
}

MatrixView host_view(const BufferMatrix& m) {
  return {{static_cast<unsigned char*>(m.buffer->address()) + m.offset_bytes, m.format, m.rows,
           m.cols, m.ld, m.layout}};
}

// One element of a split level (backend.hpp): returns q = round_half_even(v / u) for
// u = 2^unit = 2^(t - 52) and replaces v by v - q u.
double split_element(double& v, int t, int unit) {
  if (t < -1022) {
    const double q = std::scalbn(v, -unit);  // an integer: v is a multiple of u
    v = 0.0;
    return q;
  }
  if (t <= 1023) {
    const double sigma = std::bit_cast<double>((static_cast<std::uint64_t>(t + 1023) << 52) |
                                               (std::uint64_t{1} << 51));
    const double sum = v + sigma;
    const double slice = sum - sigma;
    v = v - slice;
    return std::scalbn(slice, -unit);
  }
  const double s = std::bit_cast<double>((static_cast<std::uint64_t>(t - 128 + 1023) << 52) |
                                         (std::uint64_t{1} << 51));
  const double w = v * power_of_two(-128);
  const double sum = w + s;
  const double slice = sum - s;
  if (slice != 0.0) v = (w - slice) * power_of_two(128);
  return std::scalbn(slice, 128 - unit);
}

}  // namespace

void host_copy_real(const RealMatrix& src, const RealMatrix& dst, int threads) {
  const HostReal from(src), to(dst);
  parallel_for(threads, src.rows, 64, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      for (std::int64_t j = 0; j < src.cols; ++j) {
        if (src.type == dst.type) {
          const std::size_t bytes = real_bytes(src.type);
          std::memcpy(to.data + to.index(i, j) * bytes, from.data + from.index(i, j) * bytes,
                      bytes);
        } else {
          to.set(i, j, from.get(i, j));  // fp32 -> fp64: exact
        }
      }
    }
  });
}

void host_split_level(const RealMatrix& x, SplitAxis axis, int bits, const SliceMatrix& slice,
                      const ExponentVector& exponents, int threads) {
  const HostReal rem(x);
  const bool by_rows = axis == SplitAxis::rows;
  const std::int64_t vectors = by_rows ? x.rows : x.cols;
  const std::int64_t length = by_rows ? x.cols : x.rows;
  std::int32_t* exponent_out = exponent_data(exponents);
  const RealMatrix* fp64_slice = std::get_if<RealMatrix>(&slice);
  const BufferMatrix* tc_slice = std::get_if<BufferMatrix>(&slice);
  parallel_for(threads, vectors, 16, [&](std::int64_t begin, std::int64_t end) {
    const HostReal out64 = fp64_slice ? HostReal(*fp64_slice) : HostReal();
    const MatrixView out_tc =
        tc_slice ? host_view(*tc_slice) : MatrixView{{nullptr, formats::fp16, 0, 0, 1, x.layout}};
    for (std::int64_t v = begin; v < end; ++v) {
      auto at = [&](std::int64_t p) { return by_rows ? rem.fp64_at(v, p) : rem.fp64_at(p, v); };
      auto write = [&](std::int64_t p, double q) {
        const std::int64_t i = by_rows ? v : p, j = by_rows ? p : v;
        if (fp64_slice) {
          out64.set(i, j, q);
        } else {
          // q is an integer of magnitude <= 2^bits <= 2^24: exact in fp32, then in the slice
          // format (checked by Backend::split_level).
          const auto bits32 = std::bit_cast<std::uint32_t>(static_cast<float>(q));
          out_tc.set(i, j, convert(formats::fp32, out_tc.format, bits32, Rounding::nearest_even));
        }
      };
      double mu = 0.0;
      for (std::int64_t p = 0; p < length; ++p) {
        const double a = std::fabs(*at(p));
        if (std::isfinite(a) && a > mu) mu = a;
      }
      if (mu == 0.0) {
        exponent_out[v] = 0;
        for (std::int64_t p = 0; p < length; ++p) write(p, 0.0);
        continue;
      }
      const int e = leading_exponent(mu);
      const int unit = e + 1 - bits;  // u = 2^unit
      const int t = e + 53 - bits;    // sigma = 1.5 * 2^t
      exponent_out[v] = unit;
      for (std::int64_t p = 0; p < length; ++p) {
        double* element = at(p);
        if (!std::isfinite(*element)) {
          write(p, 0.0);
          continue;
        }
        const double q = split_element(*element, t, unit);
        write(p, q == 0.0 ? 0.0 : q);
      }
    }
  });
}

bool host_all_zero(const RealMatrix& x) {
  const HostReal m(x);
  for (std::int64_t i = 0; i < x.rows; ++i) {
    for (std::int64_t j = 0; j < x.cols; ++j) {
      const double v = *m.fp64_at(i, j);
      if (std::isfinite(v) && v != 0.0) return false;
    }
  }
  return true;
}

void host_accumulate_scaled(const RealMatrix& p, const OuterExponents& scale,
                            const OuterExponents& base, const RealMatrix& dst, bool overwrite,
                            int threads) {
  const HostReal product(p), out(dst);
  const std::int32_t* row_e = exponent_data(scale.rows);
  const std::int32_t* col_e = exponent_data(scale.columns);
  const std::int32_t* row_b = exponent_data(base.rows);
  const std::int32_t* col_b = exponent_data(base.columns);
  parallel_for(threads, p.cols, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t j = begin; j < end; ++j) {
      for (std::int64_t i = 0; i < p.rows; ++i) {
        const std::int64_t e =
            (std::int64_t{row_e[i]} - row_b[i]) + (std::int64_t{col_e[j]} - col_b[j]);
        // scalbn saturates: beyond +-4000 every finite product over- or underflows anyway.
        const double t = std::scalbn(product.get(i, j),
                                     static_cast<int>(std::clamp<std::int64_t>(e, -4000, 4000)));
        double* d = out.fp64_at(i, j);
        *d = overwrite ? t : *d + t;
      }
    }
  });
}

void host_exact_sum(const RealMatrixStack& stack, const OuterExponents& scale,
                    const RealMatrix& dst, int threads) {
  const HostReal out(dst);
  const std::int32_t* row_e = exponent_data(scale.rows);
  const std::int32_t* col_e = exponent_data(scale.columns);
  std::vector<HostReal> layers;
  for (std::int64_t l = 0; l < stack.count; ++l) {
    RealMatrix layer = stack.first;
    layer.offset_bytes += static_cast<std::size_t>(l) * stack.stride_bytes;
    layers.emplace_back(layer);
  }
  parallel_for(threads, dst.cols, 4, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t j = begin; j < end; ++j) {
      for (std::int64_t i = 0; i < dst.rows; ++i) {
        ExactAccumulator acc;
        for (const HostReal& layer : layers) acc.add(*layer.fp64_at(i, j));
        *out.fp64_at(i, j) = acc.round(std::int64_t{row_e[i]} + col_e[j]);
      }
    }
  });
}

void host_epilogue(const std::optional<RealMatrix>& v, const std::optional<OuterExponents>& v_scale,
                   double alpha, double beta, const std::optional<RealMatrix>& c,
                   const std::optional<RealMatrix>& a, const std::optional<RealMatrix>& b,
                   const RealMatrix& out, int threads) {
  const HostReal result(out);
  const HostReal value = v ? HostReal(*v) : HostReal();
  const HostReal c_in = c ? HostReal(*c) : HostReal();
  std::vector<char> special_row, special_col;
  HostReal a_in, b_in;
  if (a) {
    a_in = HostReal(*a);
    b_in = HostReal(*b);
    special_row.assign(static_cast<std::size_t>(a->rows), 0);
    special_col.assign(static_cast<std::size_t>(b->cols), 0);
    for (std::int64_t i = 0; i < a->rows; ++i) {
      for (std::int64_t p = 0; p < a->cols; ++p) {
        if (!std::isfinite(a_in.get(i, p))) special_row[i] = 1;
      }
    }
    for (std::int64_t j = 0; j < b->cols; ++j) {
      for (std::int64_t p = 0; p < b->rows; ++p) {
        if (!std::isfinite(b_in.get(p, j))) special_col[j] = 1;
      }
    }
  }
  // IEEE's verdict on the non-finite products of row i and column j.
  auto special_sum = [&](std::int64_t i, std::int64_t j) {
    bool plus = false, minus = false;
    for (std::int64_t p = 0; p < a->cols; ++p) {
      const double x = a_in.get(i, p), y = b_in.get(p, j);
      if (std::isnan(x) || std::isnan(y)) return std::bit_cast<double>(kCanonicalNan);
      if (std::isinf(x) || std::isinf(y)) {
        if (x == 0.0 || y == 0.0) return std::bit_cast<double>(kCanonicalNan);
        (std::signbit(x) != std::signbit(y) ? minus : plus) = true;
      }
    }
    if (plus && minus) return std::bit_cast<double>(kCanonicalNan);
    return plus ? std::numeric_limits<double>::infinity()
                : -std::numeric_limits<double>::infinity();
  };
  parallel_for(threads, out.cols, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t j = begin; j < end; ++j) {
      for (std::int64_t i = 0; i < out.rows; ++i) {
        if (!v) {
          const double r = beta == 0.0 ? 0.0 : beta * c_in.get(i, j);
          result.set(i, j, std::isnan(r) ? std::bit_cast<double>(kCanonicalNan) : r);
          continue;
        }
        double s = value.get(i, j);
        if (v_scale) {
          const std::int64_t e =
              std::int64_t{exponent_data(v_scale->rows)[i]} + exponent_data(v_scale->columns)[j];
          s = std::scalbn(s, static_cast<int>(std::clamp<std::int64_t>(e, -4000, 4000)));
        }
        if (s == 0.0) s = 0.0;  // +0
        if (a && (special_row[i] || special_col[j])) s = special_sum(i, j);
        double r = alpha * s;
        if (r == 0.0) r = 0.0;  // +0
        if (beta != 0.0) {
          const double scaled_c = beta * c_in.get(i, j);
          r = r + scaled_c;
        }
        if (std::isnan(r)) r = std::bit_cast<double>(kCanonicalNan);  // fp32: 0x7FC00000
        result.set(i, j, r);
      }
    }
  });
}

}  // namespace tcemu::detail
