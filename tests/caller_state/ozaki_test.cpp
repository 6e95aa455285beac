// The Ozaki schemes (ozaki::Handle) in every caller state: dgemm-tc, dgemm-int8, dgemm-crt and
// binary64 slices in dp, cr (also rounded upward, downward, toward zero: Options::rounding, which
// the caller's mode does not change) and tunable, sgemm in sp, tunable and cr (to nearest and
// upward), zgemm and cgemm through the real form, through the emulator backend and cpu64.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/ozaki/handle.hpp>
#include <tcemu/reference/phi_values.hpp>

#include "caller_state.hpp"

namespace tcemu::ozaki {
namespace {

constexpr std::int64_t kM = 9, kN = 7, kK = 20;

// A with its first row subnormal and B with its last column subnormal (so that DAZ would change
// row 0 and column n - 1 of C; whole rows and columns, so that CR modes hold them exactly); the
// rest spread over phi = 1.
struct Inputs {
  std::vector<double> a, b;
  Inputs()
      : a(reference::phi_values(kM * kK, 1.0, 11)), b(reference::phi_values(kK * kN, 1.0, 12)) {
    for (std::int64_t p = 0; p < kK; ++p) a[static_cast<std::size_t>(p * kM)] *= 0x1p-1040;
    for (std::int64_t p = 0; p < kK; ++p)
      b[static_cast<std::size_t>(p + (kN - 1) * kK)] *= 0x1p-1030;
  }
};

struct Case {
  std::string name;
  Products products;
  Options options;
  bool cpu64;  // also on the cpu64 backend (FP64 products only there)
};

std::vector<Case> cases() {
  const Products tc = TensorCoreProducts{preset("sm90", formats::fp16, formats::fp32)};
  return {
      {"tc dp", tc, {.mode = Mode::dp}, false},
      {"tc cr", tc, {.mode = Mode::cr}, false},
      {"tc tunable", tc, {.mode = Mode::tunable, .splits = 4}, false},
      {"fp64 dp", Fp64Products{}, {.mode = Mode::dp}, true},
      {"int8 dp", IntegerProducts{}, {.mode = Mode::dp}, false},
      {"int8 cr", IntegerProducts{}, {.mode = Mode::cr}, false},
      {"int8 tunable", IntegerProducts{}, {.mode = Mode::tunable, .splits = 4}, false},
      {"crt dp", CrtProducts{}, {.mode = Mode::dp}, true},
      {"crt cr", CrtProducts{}, {.mode = Mode::cr}, true},
      {"crt tunable", CrtProducts{}, {.mode = Mode::tunable, .splits = 14}, true},
      {"fp64 cr", Fp64Products{}, {.mode = Mode::cr}, true},
      {"fp64 tunable", Fp64Products{}, {.mode = Mode::tunable, .splits = 3}, true},
      {"tc cr downward", tc, {.mode = Mode::cr, .rounding = fp64::Direction::downward}, false},
      {"int8 cr toward zero",
       IntegerProducts{},
       {.mode = Mode::cr, .rounding = fp64::Direction::toward_zero},
       false},
      {"crt cr upward",
       CrtProducts{},
       {.mode = Mode::cr, .rounding = fp64::Direction::upward},
       true},
      {"fp64 cr upward",
       Fp64Products{},
       {.mode = Mode::cr, .rounding = fp64::Direction::upward},
       true},
  };
}

TEST(CallerState, OzakiDgemm) {
  const Inputs in;
  for (const Case& c : cases()) {
    for (const bool cpu64 : {false, true}) {
      if (cpu64 && !c.cpu64) continue;
      SCOPED_TRACE(c.name + (cpu64 ? " on cpu64" : " on the emulator"));
      test::expect_same_in_every_caller_state([&] {
        const auto backend = cpu64 ? host::make_cpu64_backend(2) : host::make_emulator_backend(2);
        Handle h(*backend, c.products, c.options);
        // A directed rounding is for C := A B (alpha 1, beta 0).
        const bool directed = c.options.rounding != fp64::Direction::nearest_even;
        std::vector<double> out(kM * kN, 0.25);
        h.dgemm('N', 'N', kM, kN, kK, directed ? 1.0 : 1.5, in.a.data(), kM, in.b.data(), kK,
                directed ? 0.0 : 0.5, out.data(), kM);
        out.push_back(h.ddot(kK, in.a.data(), kM, in.b.data(), 1));
        return test::words(out);
      });
    }
  }
}

TEST(CallerState, OzakiSgemm) {
  const Inputs in;
  std::vector<float> a(in.a.begin(), in.a.end()), b(in.b.begin(), in.b.end());
  for (std::int64_t p = 0; p < kK; ++p) a[static_cast<std::size_t>(p * kM)] = 0x1p-140f;
  const Products tc = TensorCoreProducts{preset("sm90", formats::fp16, formats::fp32)};
  for (const Options& options :
       {Options{.mode = Mode::sp}, Options{.mode = Mode::tunable, .splits = 3},
        Options{.mode = Mode::cr},
        Options{.mode = Mode::cr, .rounding = fp64::Direction::upward}}) {
    test::expect_same_in_every_caller_state([&] {
      const auto backend = host::make_emulator_backend(2);
      Handle h(*backend, tc, options);
      // A directed rounding is for C := A B (alpha 1, beta 0).
      const bool directed = options.rounding != fp64::Direction::nearest_even;
      std::vector<float> out(kM * kN, 0.25f);
      h.sgemm('N', 'N', kM, kN, kK, directed ? 1.0f : 1.5f, a.data(), kM, b.data(), kK,
              directed ? 0.0f : 0.5f, out.data(), kM);
      return test::words(out);
    });
  }
}

// The parts of complex values, as words.
template <typename T>
std::vector<std::uint64_t> part_words(const std::vector<std::complex<T>>& values) {
  std::vector<T> parts(2 * values.size());
  std::memcpy(parts.data(), values.data(), parts.size() * sizeof(T));
  return test::words(parts);
}

TEST(CallerState, OzakiComplex) {
  const Inputs in;
  // Z = A - i A / 4 and likewise for B: the subnormal row and column stay whole rows and columns
  // of the real form, which cr holds exactly.
  std::vector<std::complex<double>> a(in.a.size()), b(in.b.size());
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = {in.a[i], -0.25 * in.a[i]};
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = {in.b[i], -0.25 * in.b[i]};
  const std::vector<std::complex<float>> af(a.begin(), a.end()), bf(b.begin(), b.end());
  for (const Options& options :
       {Options{.mode = Mode::dp}, Options{.mode = Mode::cr},
        Options{.mode = Mode::cr, .rounding = fp64::Direction::downward}}) {
    SCOPED_TRACE(std::string(mode_name(options.mode)) + " " + rounding_name(options.rounding));
    const bool directed = options.rounding != fp64::Direction::nearest_even;
    const std::complex<double> alpha = directed ? 1.0 : std::complex<double>(1.5, -0.5);
    const std::complex<double> beta = directed ? 0.0 : std::complex<double>(0.5, 0.25);
    test::expect_same_in_every_caller_state([&] {
      const auto backend = host::make_cpu64_backend(2);
      Handle h(*backend, CrtProducts{}, options);
      std::vector<std::complex<double>> out(kM * kN, {0.25, -1.0});
      h.zgemm('N', 'N', kM, kN, kK, alpha, a.data(), kM, b.data(), kK, beta, out.data(), kM);
      std::vector<std::uint64_t> words = part_words(out);
      if (options.mode == Mode::dp) return words;  // cgemm takes sp, tunable and cr
      std::vector<std::complex<float>> outf(kM * kN, {0.25f, -1.0f});
      h.cgemm('N', 'N', kM, kN, kK, std::complex<float>(alpha), af.data(), kM, bf.data(), kK,
              std::complex<float>(beta), outf.data(), kM);
      const std::vector<std::uint64_t> more = part_words(outf);
      words.insert(words.end(), more.begin(), more.end());
      return words;
    });
  }
}

}  // namespace
}  // namespace tcemu::ozaki
