// The CR guarantee on larger products (label `long`): every element correctly rounded against
// MPFR for phi from 0.1 to 10 on the emulator (sm90 and sm70) and on cpu64.
#include <gtest/gtest.h>

#include <bit>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/ozaki/handle.hpp>

#include "ozaki_support.hpp"

namespace tcemu::ozaki {
namespace {

class CorrectlyRoundedLong : public ::testing::TestWithParam<double> {};

TEST_P(CorrectlyRoundedLong, EveryElementOfA160By150By1000Product) {
  const double phi = GetParam();
  const std::int64_t m = 160, n = 150, k = 1000;
  const auto a = testing::phi_matrix(m, k, phi, 101), b = testing::phi_matrix(k, n, phi, 102);
  const auto reference = testing::correctly_rounded_product(m, n, k, a, b);
  struct Run {
    const char* name;
    std::unique_ptr<Backend> backend;
    Products products;
  };
  Run runs[] = {
      {"sm90", host::make_emulator_backend(),
       TensorCoreProducts{preset("sm90", formats::fp16, formats::fp32)}},
      {"sm70", host::make_emulator_backend(),
       TensorCoreProducts{preset("sm70", formats::fp16, formats::fp32)}},
      {"cpu64", host::make_cpu64_backend(), Fp64Products{}},
  };
  for (Run& r : runs) {
    Handle h(*r.backend, r.products, {.mode = Mode::cr, .max_splits = 64});
    std::vector<double> c(static_cast<std::size_t>(m * n));
    h.dgemm('N', 'N', m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, c.data(), m);
    EXPECT_TRUE(testing::same_product_bits(reference, c, m, n, k, a, b))
        << r.name << ", phi " << phi;
  }
}

INSTANTIATE_TEST_SUITE_P(Phi, CorrectlyRoundedLong, ::testing::Values(0.1, 1.0, 4.0, 10.0));

}  // namespace
}  // namespace tcemu::ozaki
