// Markidis's schemes (markidis::sgemm) and the accurate BLAS (accurate::Handle: Dot2 and the exact
// inner product, as DOT, GEMV and GEMM) in every caller state, on the emulator and cpu64
// backends, with subnormal inputs.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <tcemu/accurate/handle.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/markidis/gemm.hpp>
#include <tcemu/markidis/presets.hpp>
#include <tcemu/reference/phi_values.hpp>

#include "caller_state.hpp"

namespace tcemu {
namespace {

constexpr std::int64_t kM = 7, kN = 6, kK = 24;

TEST(CallerState, MarkidisSchemes) {
  const std::vector<float> a = reference::phi_values<float>(kM * kK, 1.0, 21),
                           b = reference::phi_values<float>(kK * kN, 1.0, 22);
  // The same with subnormals in A's first row and B; the scaled schemes refuse them (their
  // parts cannot hold them), and take A and B as they are.
  std::vector<float> a_subnormal = a, b_subnormal = b;
  for (std::int64_t p = 0; p < kK; ++p) a_subnormal[static_cast<std::size_t>(p * kM)] *= 0x1p-130f;
  b_subnormal[5] = 0x1p-140f;
  for (const std::string_view name : markidis::scheme_names()) {
    SCOPED_TRACE(std::string(name));
    const markidis::Scheme scheme = markidis::scheme_by_name(name);
    const Datapath dp = markidis::scheme_datapath(scheme, "sm90");
    const auto product = [&](const std::vector<float>& x, const std::vector<float>& y) {
      const auto backend = host::make_emulator_backend(2);
      std::vector<float> c(kM * kN, 0.5f);
      markidis::sgemm(*backend, scheme, dp, 'N', 'N', kM, kN, kK, 1.25f, x.data(), kM, y.data(), kK,
                      -0.5f, c.data(), kM, 2);
      return test::words(c);
    };
    bool subnormals = true;
    try {
      product(a_subnormal, b_subnormal);
    } catch (const std::invalid_argument&) {
      subnormals = false;
    }
    test::expect_same_in_every_caller_state(
        [&] { return subnormals ? product(a_subnormal, b_subnormal) : product(a, b); });
  }
}

TEST(CallerState, AccurateBlas) {
  std::vector<double> a = reference::phi_values(kM * kK, 2.0, 31),
                      b = reference::phi_values(kK * kN, 2.0, 32);
  for (std::int64_t p = 0; p < kK; ++p) a[static_cast<std::size_t>(p * kM)] *= 0x1p-1040;
  b[7] = 0x1p-1060;
  std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());
  for (std::int64_t p = 0; p < kK; ++p) af[static_cast<std::size_t>(p * kM)] = 0x1p-140f;
  for (const InnerProduct method : {InnerProduct::dot2, InnerProduct::exact}) {
    for (const bool cpu64 : {false, true}) {
      SCOPED_TRACE(std::string(method == InnerProduct::dot2 ? "dot2" : "exact") +
                   (cpu64 ? " on cpu64" : " on the emulator"));
      test::expect_same_in_every_caller_state([&] {
        const auto backend = cpu64 ? host::make_cpu64_backend(2) : host::make_emulator_backend(2);
        accurate::Handle h(*backend, method);
        std::vector<double> c(kM * kN, 0.25), y(kM, -0.75);
        h.dgemm('N', 'N', kM, kN, kK, 1.5, a.data(), kM, b.data(), kK, 0.5, c.data(), kM);
        h.dgemv('N', kM, kK, 1.5, a.data(), kM, b.data(), 1, 0.5, y.data(), 1);
        c.insert(c.end(), y.begin(), y.end());
        c.push_back(h.ddot(kK, a.data(), kM, b.data(), 1));
        std::vector<float> cf(kM * kN, 0.25f);
        h.sgemm('N', 'N', kM, kN, kK, 1.5f, af.data(), kM, bf.data(), kK, 0.5f, cf.data(), kM);
        c.insert(c.end(), cf.begin(), cf.end());  // each fp32 result exactly as a double
        return test::words(c);
      });
    }
  }
}

}  // namespace
}  // namespace tcemu
