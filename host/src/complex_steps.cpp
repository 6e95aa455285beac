// The complex steps on the host: the element functions of complex_elements.hpp (the ones the GPU
// kernels run), element by element over the parts view of each complex matrix.
#include "complex_steps.hpp"

#include <tcemu/backend/complex_elements.hpp>
#include <tcemu/emulator/parallel_for.hpp>

#include "host_real_view.hpp"

namespace tcemu::detail {
namespace {

namespace el = complex_elements;

// Where part `imaginary` of complex element (i, j) sits in the parts view (complex_parts).
struct Part {
  std::int64_t i, j;
};
Part part(const HostReal& parts, std::int64_t i, std::int64_t j, bool imaginary) {
  const std::int64_t at = imaginary ? 1 : 0;
  return parts.layout == Layout::row_major ? Part{i, 2 * j + at} : Part{2 * i + at, j};
}

template <RealType T>
void epilogue(const std::optional<RealMatrix>& v, std::complex<double> alpha,
              std::complex<double> beta, const ComplexMatrix& c, fp64::Direction d, int threads) {
  const HostReal out(complex_parts(c));
  const HostReal value = v ? HostReal(*v) : HostReal();
  const bool fp64_out = c.format == Complex::c128;
  const el::Pair<T> a{static_cast<T>(alpha.real()), static_cast<T>(alpha.imag())};
  const el::Pair<T> b{static_cast<T>(beta.real()), static_cast<T>(beta.imag())};
  const bool read_c = beta != 0.0;
  parallel_for(threads, c.cols, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t j = begin; j < end; ++j) {
      for (std::int64_t i = 0; i < c.rows; ++i) {
        const Part re = part(out, i, j, false), im = part(out, i, j, true);
        el::Pair<T> old{T(0), T(0)};
        if (read_c) {
          old = {static_cast<T>(out.get(re.i, re.j)), static_cast<T>(out.get(im.i, im.j))};
        }
        const el::Pair<T> r =
            v ? el::complex_epilogue(
                    a, {static_cast<T>(value.get(i, j)), static_cast<T>(value.get(i, c.cols + j))},
                    b, old)
              : el::complex_epilogue_without_value(b, old);
        out.set_bits(re.i, re.j, el::part_bits(r.re, fp64_out, d));
        out.set_bits(im.i, im.j, el::part_bits(r.im, fp64_out, d));
      }
    }
  });
}

}  // namespace

void host_complex_real_form(const ComplexMatrix& x, bool conjugate, const RealMatrix& dst,
                            int threads) {
  const HostReal in(complex_parts(x)), out(dst);
  const bool fp64 = dst.format == Real::fp64;
  parallel_for(threads, dst.cols, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t c = begin; c < end; ++c) {
      for (std::int64_t r = 0; r < dst.rows; ++r) {
        const el::RealFormSource s = el::real_form_source(r, c, x.rows, x.cols, conjugate);
        const Part p = part(in, s.i, s.j, s.imaginary);
        out.set_bits(r, c, el::flip_sign(in.bits(p.i, p.j), fp64, s.flip));
      }
    }
  });
}

void host_complex_epilogue(const std::optional<RealMatrix>& v, Real arithmetic,
                           std::complex<double> alpha, std::complex<double> beta,
                           const ComplexMatrix& c, fp64::Direction d, int threads) {
  if (arithmetic == Real::fp64) {
    epilogue<double>(v, alpha, beta, c, d, threads);
  } else {
    epilogue<float>(v, alpha, beta, c, d, threads);
  }
}

}  // namespace tcemu::detail
