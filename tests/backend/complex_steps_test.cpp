// The complex steps of the Backend interface (complex_steps.hpp) on the host backend: the real
// form's blocks, signs and conjugation element by element (a sign flip keeps -0 and +0 apart),
// both layouts; the complex epilogue's scalings and zeros; and the shape and type checks.
#include <gtest/gtest.h>

#include <bit>
#include <complex>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <tcemu/backend/backend.hpp>
#include <tcemu/host/host_backends.hpp>

namespace tcemu {
namespace {

using Z = std::complex<double>;

std::uint64_t bits(double x) {
  return std::bit_cast<std::uint64_t>(x);
}

TEST(ComplexRealForm, PlacesEveryPartWithItsSign) {
  const auto backend = host::make_emulator_backend(1);
  // x (2 x 3, column-major, ld 3): x_ij = (10 i + j) + (100 + 10 i + j) i, one imaginary part -0.
  const std::int64_t rows = 2, cols = 3, ld = 3;
  std::vector<Z> x(static_cast<std::size_t>(ld * cols), {-1.0, -1.0});
  for (std::int64_t j = 0; j < cols; ++j) {
    for (std::int64_t i = 0; i < rows; ++i) {
      const auto id = static_cast<double>(10 * i + j);
      x[j * ld + i] = {id, 100.0 + id};
    }
  }
  x[1 * ld + 1] = {11.0, -0.0};
  Buffer xb = backend->allocate(x.size() * sizeof(Z));
  backend->copy_in(x.data(), xb, x.size() * sizeof(Z));
  // The same matrix as the row-major transpose view (3 x 2) reads x_ji at (i, j).
  for (const bool transposed : {false, true}) {
    const ComplexMatrix view =
        transposed ? ComplexMatrix{&xb, 0, Complex::c128, cols, rows, ld, Layout::row_major}
                   : ComplexMatrix{&xb, 0, Complex::c128, rows, cols, ld, Layout::column_major};
    const auto at = [&](std::int64_t i, std::int64_t j) {
      return transposed ? x[i * ld + j] : x[j * ld + i];
    };
    for (const bool conjugate : {false, true}) {
      for (const std::int64_t blocks : {1, 2}) {  // A2 (one block row) and B2
        const std::int64_t r = blocks * view.rows, c = 2 * view.cols;
        Buffer out = backend->allocate(static_cast<std::size_t>(r * c) * 8);
        backend->complex_real_form(view, conjugate,
                                   {&out, 0, Real::fp64, r, c, r, Layout::column_major});
        std::vector<double> got(static_cast<std::size_t>(r * c));
        backend->copy_out(out, got.data(), got.size() * 8);
        for (std::int64_t q = 0; q < c; ++q) {
          for (std::int64_t p = 0; p < r; ++p) {
            const bool u = p >= view.rows, v = q >= view.cols;
            const Z e = at(u ? p - view.rows : p, v ? q - view.cols : q);
            // [[Re, s Im], [-s Im, Re]] with s = -1 for the conjugate.
            const double s = conjugate ? -1.0 : 1.0;
            const double want = u == v ? e.real() : v ? s * e.imag() : -s * e.imag();
            EXPECT_EQ(bits(got[q * r + p]), bits(want))
                << p << ", " << q << (conjugate ? " conjugate" : "") << " blocks " << blocks
                << (transposed ? " transposed" : "");
          }
        }
      }
    }
  }
}

TEST(ComplexEpilogue, ScalesByRealAndComplexScalars) {
  const auto backend = host::make_emulator_backend(1);
  // S = [Re Im] for one element: s = 3 + 4i; C = 1 - 2i.
  const std::vector<double> s = {3.0, 4.0};
  Buffer sb = backend->allocate(16), cb = backend->allocate(16);
  backend->copy_in(s.data(), sb, 16);
  const RealMatrix v{&sb, 0, Real::fp64, 1, 2, 1, Layout::column_major};
  const ComplexMatrix c{&cb, 0, Complex::c128, 1, 1, 1, Layout::column_major};
  const auto run = [&](const std::optional<RealMatrix>& value, Z alpha, Z beta) {
    const Z old{1.0, -2.0};
    backend->copy_in(&old, cb, 16);
    backend->complex_epilogue(value, Real::fp64, alpha, beta, c);
    Z out;
    backend->copy_out(cb, &out, 16);
    return out;
  };
  EXPECT_EQ(run(v, {2.0, 0.0}, 0.0), Z(6.0, 8.0));
  EXPECT_EQ(run(v, {0.0, 1.0}, 0.0), Z(-4.0, 3.0));
  EXPECT_EQ(run(v, {1.0, 1.0}, {0.0, 1.0}),
            Z(-1.0 + 2.0, 7.0 + 1.0));                         // (3 - 4 + 2) + (4 + 3 + 1)i
  EXPECT_EQ(run(std::nullopt, 5.0, {0.0, 2.0}), Z(4.0, 2.0));  // beta C only
  const Z zero = run(std::nullopt, 5.0, 0.0);
  EXPECT_EQ(bits(zero.real()), 0u);
  EXPECT_EQ(bits(zero.imag()), 0u);
  // alpha s = -0 in both parts is +0 (a BLAS sum starts from +0).
  const std::vector<double> negative_zero = {-0.0, -0.0};
  backend->copy_in(negative_zero.data(), sb, 16);
  const Z z = run(v, 1.0, 0.0);
  EXPECT_EQ(bits(z.real()), 0u);
  EXPECT_EQ(bits(z.imag()), 0u);
}

TEST(ComplexSteps, RefuseMismatchedShapesAndTypes) {
  const auto backend = host::make_emulator_backend(1);
  Buffer b = backend->allocate(1024);
  const ComplexMatrix x{&b, 0, Complex::c128, 2, 3, 2, Layout::column_major};
  EXPECT_THROW(
      backend->complex_real_form(x, false, {&b, 512, Real::fp64, 2, 5, 2, Layout::column_major}),
      std::invalid_argument);
  EXPECT_THROW(
      backend->complex_real_form(x, false, {&b, 512, Real::fp64, 3, 6, 3, Layout::column_major}),
      std::invalid_argument);
  EXPECT_THROW(
      backend->complex_real_form(x, false, {&b, 512, Real::fp32, 2, 6, 2, Layout::column_major}),
      std::invalid_argument);
  EXPECT_THROW(backend->complex_epilogue(std::nullopt, Real::fp32, 1.0, 0.0, x),
               std::invalid_argument);  // fp32 arithmetic needs c64
  const ComplexMatrix c64{&b, 0, Complex::c64, 2, 3, 2, Layout::column_major};
  EXPECT_THROW(backend->complex_epilogue(std::nullopt, Real::fp32, 0.1, 0.0, c64),
               std::invalid_argument);  // 0.1 is not a binary32 value
  EXPECT_THROW(
      backend->complex_epilogue(RealMatrix{&b, 512, Real::fp64, 2, 3, 2, Layout::column_major},
                                Real::fp64, 1.0, 0.0, x),
      std::invalid_argument);  // V must be 2 x 6
}

}  // namespace
}  // namespace tcemu
