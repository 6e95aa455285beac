// Schemes through the backend: bit identity with a direct composition of emulated_gemm calls,
// accuracy against an FP64 reference, determinism across thread counts, range handling and
// special values.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/markidis/presets.hpp>

#include "matrices.hpp"

namespace tcemu::markidis {
namespace {

using testing::Matrix;
using testing::random_matrix;
using testing::reference_product;
using testing::relative_residual;
using testing::run;

// fp16 parts of a matrix, split on the host with convert() and float arithmetic: hi = RN(x),
// r = x - hi (a float subtraction, exact), lo = RN(r * 2^lo_scale) (an exact float product for
// these inputs, whose residuals are normal numbers).
struct HostParts {
  std::vector<std::uint16_t> hi, lo;
};
HostParts host_split(const Matrix& x, int lo_scale) {
  HostParts p;
  for (float v : x.v) {
    const auto hi = static_cast<std::uint16_t>(convert(
        formats::fp32, formats::fp16, std::bit_cast<std::uint32_t>(v), Rounding::nearest_even));
    const float r =
        v - std::bit_cast<float>(convert(formats::fp16, formats::fp32, hi, Rounding::nearest_even));
    p.hi.push_back(hi);
    p.lo.push_back(static_cast<std::uint16_t>(
        convert(formats::fp32, formats::fp16, std::bit_cast<std::uint32_t>(std::ldexp(r, lo_scale)),
                Rounding::nearest_even)));
  }
  return p;
}

ConstMatrixView view(const std::vector<std::uint16_t>& v, std::int64_t rows, std::int64_t cols) {
  return {reinterpret_cast<const unsigned char*>(v.data()),
          formats::fp16,
          rows,
          cols,
          rows,
          Layout::column_major};
}
MatrixView view(std::vector<float>& v, std::int64_t rows, std::int64_t cols) {
  return {{reinterpret_cast<unsigned char*>(v.data()), formats::fp32, rows, cols, rows,
           Layout::column_major}};
}

// halfhalf as Ootomo and Yokota describe it, composed by hand from emulated_gemm calls.
TEST(SchemeGemm, HalfhalfIsTheCompositionOfEmulatedGemms) {
  const std::int64_t m = 24, n = 20, k = 100;  // k = 6 instructions and a partial one
  const Matrix a = random_matrix(m, k, 1), b = random_matrix(k, n, 2);
  for (std::string_view arch : {"sm80", "sm90", "exact-rz"}) {
    const Datapath dp = preset(arch, formats::fp16, formats::fp32);
    const HostParts pa = host_split(a, 11), pb = host_split(b, 11);
    std::vector<float> hh(m * n), corr(m * n);
    GemmOptions out;
    out.takeout_every_k = dp.instruction_k;
    emulated_gemm(dp, out, view(pa.hi, m, k), view(pb.hi, k, n), std::nullopt, view(hh, m, n));
    emulated_gemm(dp, {}, view(pa.hi, m, k), view(pb.lo, k, n), std::nullopt, view(corr, m, n));
    GemmOptions chained;
    chained.beta = 1.0f;
    chained.c_input = CInput::initial_accumulator;
    emulated_gemm(dp, chained, view(pa.lo, m, k), view(pb.hi, k, n), view(corr, m, n),
                  view(corr, m, n));
    Matrix expected{m, n, std::vector<float>(m * n)};
    for (std::size_t i = 0; i < hh.size(); ++i) expected.v[i] = hh[i] + corr[i] * 0x1p-11f;

    const Matrix got = run(scheme_by_name("halfhalf"), dp, a, b);
    EXPECT_TRUE(testing::same_bits(expected, got, a, b)) << arch;
  }
}

// markidis4: the four products as one chain of Tensor Core instructions, in the listed order.
TEST(SchemeGemm, MarkidisIsOneChainOfEmulatedGemms) {
  const std::int64_t m = 9, n = 17, k = 64;
  const Matrix a = random_matrix(m, k, 3), b = random_matrix(k, n, 4);
  const Datapath dp = preset("sm80", formats::fp16, formats::fp32);
  const HostParts pa = host_split(a, 0), pb = host_split(b, 0);
  std::vector<float> acc(m * n);
  emulated_gemm(dp, {}, view(pa.hi, m, k), view(pb.hi, k, n), std::nullopt, view(acc, m, n));
  GemmOptions chained;
  chained.beta = 1.0f;
  chained.c_input = CInput::initial_accumulator;
  const std::pair<const std::vector<std::uint16_t>*, const std::vector<std::uint16_t>*> rest[] = {
      {&pa.hi, &pb.lo}, {&pa.lo, &pb.hi}, {&pa.lo, &pb.lo}};
  for (const auto& [x, y] : rest) {
    emulated_gemm(dp, chained, view(*x, m, k), view(*y, k, n), view(acc, m, n), view(acc, m, n));
  }
  const Matrix got = run(scheme_by_name("markidis4"), dp, a, b);
  EXPECT_TRUE(testing::same_bits(Matrix{m, n, acc}, got, a, b));
}

struct Accuracy {
  double scheme, sgemm;
};
Accuracy accuracy(std::string_view scheme, std::string_view arch, std::int64_t k, int spread = 0) {
  const Matrix a = random_matrix(16, k, 7, spread), b = random_matrix(k, 16, 8, spread);
  const std::vector<double> ref = reference_product(a, b);
  const Scheme s = scheme_by_name(scheme);
  return {relative_residual(run(s, scheme_datapath(s, arch), a, b), ref),
          relative_residual(testing::float_sgemm(a, b), ref)};
}

// Ootomo and Yokota's claim: with the accumulation outside the Tensor Core (and RN inside, the
// exact-rn datapath) halfhalf reaches the relative residual of SGEMM; Markidis's scheme on the
// A100's truncating datapath does not, its error growing with k.
TEST(SchemeGemm, CorrectedSchemesReachSgemmAccuracyAndMarkidisOnRzDoesNot) {
  const std::int64_t k = 1024;
  for (std::string_view scheme : {"halfhalf", "tf32tf32", "bf16x9"}) {
    const Accuracy r = accuracy(scheme, "exact-rn", k);
    EXPECT_LT(r.scheme, 2.0 * r.sgemm) << scheme << " " << r.scheme << " vs SGEMM " << r.sgemm;
  }
  const Accuracy hh = accuracy("halfhalf", "sm80", k);
  EXPECT_LT(hh.scheme, 2.0 * hh.sgemm) << hh.scheme << " vs SGEMM " << hh.sgemm;
  const Accuracy mk = accuracy("markidis", "sm80", k);
  EXPECT_GT(mk.scheme, 4.0 * mk.sgemm) << mk.scheme << " vs SGEMM " << mk.sgemm;
  // The truncation, not the split: the same products on the RN datapath come close to SGEMM.
  const Accuracy mk_rn = accuracy("markidis", "exact-rn", k);
  EXPECT_LT(mk_rn.scheme, mk.scheme / 4.0) << mk_rn.scheme << " vs RZ " << mk.scheme;
}

TEST(SchemeGemm, BitsDoNotDependOnTheThreadCount) {
  const Matrix a = random_matrix(33, 80, 9, 4), b = random_matrix(80, 21, 10, 4);
  for (std::string_view name : {"halfhalf", "markidis", "3xtf32", "bf16x3"}) {
    const Scheme s = scheme_by_name(name);
    for (std::string_view arch : {"sm90", "exact-rn"}) {
      const Datapath dp = scheme_datapath(s, arch);
      const Matrix one = run(s, dp, a, b, 1);
      EXPECT_TRUE(testing::same_bits(one, run(s, dp, a, b, 2), a, b)) << name << " " << arch;
      EXPECT_TRUE(testing::same_bits(one, run(s, dp, a, b, 5), a, b)) << name << " " << arch;
    }
  }
}

TEST(SchemeGemm, HalfhalfRefusesMatricesBeyondFp16AndTheScaledVariantHandlesThem) {
  Matrix a = random_matrix(8, 64, 11), b = random_matrix(64, 8, 12);
  a(3, 5) = 1.0e5f;  // beyond fp16's 65504
  const Scheme hh = scheme_by_name("halfhalf");
  const Datapath dp = scheme_datapath(hh, "exact-rn");
  try {
    run(hh, dp, a, b);
    ADD_FAILURE() << "accepted an input beyond fp16";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("of A overflow fp16 part 0"), std::string::npos) << what;
    EXPECT_NE(what.find("100000"), std::string::npos) << what;
  }
  const std::vector<double> ref = reference_product(a, b);
  const Scheme scaled = scheme_by_name("halfhalf-scaled");
  EXPECT_LT(relative_residual(run(scaled, dp, a, b), ref),
            2.0 * relative_residual(testing::float_sgemm(a, b), ref));
}

// Tiny inputs: without scaling the fp16 parts underflow and the result is far from SGEMM's;
// scaled into the fp16 range, halfhalf is accurate again.
TEST(SchemeGemm, MatrixScalingRecoversTinyInputs) {
  Matrix a = random_matrix(8, 128, 13), b = random_matrix(128, 8, 14);
  for (float& x : a.v) x = std::ldexp(x, -20);
  const std::vector<double> ref = reference_product(a, b);
  const double sgemm = relative_residual(testing::float_sgemm(a, b), ref);
  const Datapath dp = scheme_datapath(scheme_by_name("halfhalf"), "exact-rn");
  const double plain = relative_residual(run(scheme_by_name("halfhalf"), dp, a, b), ref);
  const double scaled = relative_residual(run(scheme_by_name("halfhalf-scaled"), dp, a, b), ref);
  EXPECT_GT(plain, 20.0 * sgemm) << plain;  // about 15 of 24 bits kept: hi is subnormal
  EXPECT_LT(scaled, 2.0 * sgemm) << scaled << " vs SGEMM " << sgemm;
}

// One power of two per matrix cannot hold an element far below the matrix's largest: the scaled
// scheme refuses it, naming the matrix and the range, where it returned 0 without a word
// ([[1e30, 1], [2, 3]] times I gave 1e30, 0, 0, 0). Elements it holds still run.
TEST(SchemeGemm, MatrixScalingRefusesElementsItCannotHold) {
  Matrix a{2, 2, {1.0e30f, 2.0f, 1.0f, 3.0f}};  // column major: [[1e30, 1], [2, 3]]
  const Matrix identity{2, 2, {1.0f, 0.0f, 0.0f, 1.0f}};
  const Scheme s = scheme_by_name("halfhalf-scaled");
  const Datapath dp = scheme_datapath(s, "exact-rn");
  try {
    const Matrix d = run(s, dp, a, identity);
    ADD_FAILURE() << "returned " << d(0, 0) << " " << d(1, 0) << " " << d(0, 1) << " " << d(1, 1);
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("3 nonzero element(s) of A lie below 2^"), std::string::npos) << what;
    EXPECT_NE(what.find("1.00000002e+30"), std::string::npos) << what;
  }
  // B = the same matrix is refused as B; 1e30 replaced by 1e10 (2^33 above 1) runs exactly.
  EXPECT_THROW(run(s, dp, identity, a), std::invalid_argument);
  a(0, 0) = 1.0e10f;
  const Matrix d = run(s, dp, a, identity);
  EXPECT_EQ(d.v, a.v);
}

// The matrix-level scaling is exact: A 2^20 is split into the same parts as A, so the scaled
// scheme's result for A 2^20 is its result for A times 2^20, bit for bit.
TEST(SchemeGemm, MatrixScalingCommutesWithPowersOfTwo) {
  const Matrix a = random_matrix(12, 48, 17, 6), b = random_matrix(48, 10, 18, 6);
  Matrix a_big = a;
  for (float& x : a_big.v) x = std::ldexp(x, 20);
  const Scheme s = scheme_by_name("halfhalf-scaled");
  for (std::string_view arch : {"sm80", "exact-rn"}) {
    const Datapath dp = scheme_datapath(s, arch);
    Matrix want = run(s, dp, a, b);
    for (float& x : want.v) x = std::ldexp(x, 20);
    EXPECT_TRUE(testing::same_bits(want, run(s, dp, a_big, b), a_big, b)) << arch;
  }
}

// A composed scheme whose low part overflows is refused, naming that part.
TEST(SchemeGemm, OverflowOfALowPartIsReported) {
  Scheme s = scheme_by_name("halfhalf");
  s.name = "halfhalf-2^40";
  s.parts[1].scale_exponent = 40;
  s.groups[1].products = {{0, 1}, {1, 0}};
  const Matrix a = random_matrix(4, 16, 19), b = random_matrix(16, 4, 20);
  try {
    run(s, scheme_datapath(s, "sm90"), a, b);
    ADD_FAILURE() << "accepted an overflowing low part";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("of A overflow fp16 part 1"), std::string::npos)
        << e.what();
  }
}

// NaN and Inf in A or B give what a float SGEMM gives, on every scheme.
TEST(SchemeGemm, SpecialValuesPropagateAsInSgemm) {
  const float inf = std::numeric_limits<float>::infinity();
  Matrix a = random_matrix(5, 40, 15), b = random_matrix(40, 6, 16);
  a(0, 3) = inf;
  a(1, 7) = -inf;
  a(1, 9) = inf;
  a(2, 11) = std::numeric_limits<float>::quiet_NaN();
  b(3, 1) = 0.0f;  // Inf * 0 in (0, 1)
  b(20, 4) = -inf;
  const Matrix want = testing::float_sgemm(a, b);
  for (std::string_view name : scheme_names()) {
    const Scheme s = scheme_by_name(name);
    const Matrix got = run(s, scheme_datapath(s, "sm90"), a, b);
    int specials = 0;
    for (std::size_t i = 0; i < want.v.size(); ++i) {
      if (std::isfinite(want.v[i])) {
        EXPECT_TRUE(std::isfinite(got.v[i])) << name << " " << i;
        continue;
      }
      ++specials;
      if (std::isnan(want.v[i])) {
        EXPECT_EQ(std::bit_cast<std::uint32_t>(got.v[i]), 0x7FFFFFFFu) << name << " " << i;
      } else {
        EXPECT_EQ(got.v[i], want.v[i]) << name << " " << i;
      }
    }
    EXPECT_GE(specials, 10) << name;
  }
}

}  // namespace
}  // namespace tcemu::markidis
