// Random Scheme descriptions, run through the backend, against an independent composition: the
// split on the host with convert() and float arithmetic, the products with emulated_gemm, the
// combination with float arithmetic. Bit identity pins the semantics of scheme.hpp for variants no
// preset uses. Built twice: a quick run for the default `ctest` and a long one (label `long`).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>

#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/markidis/presets.hpp>

#include "matrices.hpp"

#ifndef TCEMU_COMPOSITION_CASES
#error "define TCEMU_COMPOSITION_CASES"
#endif

namespace tcemu::markidis {
namespace {

using testing::Matrix;

Scheme random_scheme(std::mt19937& rng) {
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  const FloatFormat formats_[] = {formats::fp16, formats::bf16, formats::tf32};
  const int scales[] = {0, 5, 11};
  Scheme s{"random", formats_[pick(3)], {}, {}, std::nullopt};
  const int parts = 1 + pick(3);
  for (int p = 0; p < parts; ++p) {
    s.parts.push_back(
        {pick(2) ? Rounding::nearest_even : Rounding::toward_zero, p == 0 ? 0 : scales[pick(3)]});
  }
  // A random nonempty subset of the products, grouped by weight; a weight class is cut in two
  // accumulators half of the time.
  std::map<int, std::vector<Product>> by_weight;
  for (int i = 0; i < parts; ++i) {
    for (int j = 0; j < parts; ++j) {
      if (pick(3) != 0 || (i == 0 && j == 0)) {
        by_weight[s.parts[i].scale_exponent + s.parts[j].scale_exponent].push_back({i, j});
      }
    }
  }
  for (auto& [weight, products] : by_weight) {
    std::shuffle(products.begin(), products.end(), rng);
    const std::size_t cut = products.size() > 1 && pick(2)
                                ? 1 + pick(static_cast<int>(products.size()) - 1)
                                : products.size();
    s.groups.push_back({{products.begin(), products.begin() + cut}, pick(3)});
    if (cut < products.size())
      s.groups.push_back({{products.begin() + cut, products.end()}, pick(3)});
  }
  std::shuffle(s.groups.begin(), s.groups.end(), rng);
  return s;
}

// The parts of x on the host: part_p = round(r_p 2^s_p), r_(p+1) = r_p - part_p 2^-s_p, with
// float arithmetic (ldexp by 2^s of these normal values is exact, the subtraction is exact by the
// argument in backend.hpp).
std::vector<std::vector<std::uint32_t>> host_parts(const Scheme& s, const Matrix& x) {
  std::vector<std::vector<std::uint32_t>> parts(s.parts.size());
  std::vector<float> r = x.v;
  for (std::size_t p = 0; p < s.parts.size(); ++p) {
    for (float& v : r) {
      const std::uint32_t part =
          convert(formats::fp32, s.part_format,
                  std::bit_cast<std::uint32_t>(std::ldexp(v, s.parts[p].scale_exponent)),
                  s.parts[p].rounding);
      parts[p].push_back(part);
      v -= std::ldexp(
          std::bit_cast<float>(convert(s.part_format, formats::fp32, part, Rounding::nearest_even)),
          -s.parts[p].scale_exponent);
    }
  }
  return parts;
}

Matrix host_composition(const Scheme& s, const Datapath& dp, const Matrix& a, const Matrix& b) {
  const std::int64_t m = a.rows, k = a.cols, n = b.cols;
  const auto pa = host_parts(s, a), pb = host_parts(s, b);
  // Part matrices in their container (2 bytes for fp16/bf16, 4 for tf32), column major.
  auto view = [&](const std::vector<std::uint32_t>& bits, std::vector<unsigned char>& storage,
                  std::int64_t rows, std::int64_t cols) {
    const std::size_t width = container_bytes(s.part_format);
    storage.resize(bits.size() * width);
    for (std::size_t i = 0; i < bits.size(); ++i) std::memcpy(&storage[i * width], &bits[i], width);
    return ConstMatrixView{storage.data(), s.part_format, rows, cols, rows, Layout::column_major};
  };
  std::vector<Matrix> acc;
  for (const AccumulatorGroup& g : s.groups) {
    acc.push_back({m, n, std::vector<float>(m * n)});
    MatrixView d{{reinterpret_cast<unsigned char*>(acc.back().v.data()), formats::fp32, m, n, m,
                  Layout::column_major}};
    for (std::size_t p = 0; p < g.products.size(); ++p) {
      std::vector<unsigned char> sa, sb;
      GemmOptions o;
      o.takeout_every_k = g.takeout_every_instructions * dp.instruction_k;
      if (p > 0) {
        o.beta = 1.0f;
        o.c_input = CInput::initial_accumulator;
      }
      emulated_gemm(dp, o, view(pa[g.products[p].a_part], sa, m, k),
                    view(pb[g.products[p].b_part], sb, k, n),
                    p > 0 ? std::optional<ConstMatrixView>(d) : std::nullopt, d);
    }
  }
  const int sigma0 = group_weight(s, s.groups[0]);
  Matrix out = acc[0];
  for (std::size_t i = 0; i < out.v.size(); ++i) {
    for (std::size_t g = 1; g < acc.size(); ++g) {
      out.v[i] += std::ldexp(acc[g].v[i], sigma0 - group_weight(s, s.groups[g]));
    }
    out.v[i] = std::ldexp(out.v[i], -sigma0);
  }
  return out;
}

TEST(SchemeComposition, RandomSchemesMatchTheHostComposition) {
  std::mt19937 rng(2026);
  const char* archs[] = {"sm80", "sm90", "exact-rz"};
  for (int c = 0; c < TCEMU_COMPOSITION_CASES; ++c) {
    const Scheme s = random_scheme(rng);
    validate(s);
    const Datapath dp = scheme_datapath(s, archs[c % 3]);
    const std::int64_t m = 3 + c % 5, n = 2 + c % 7, k = 1 + (c * 37) % 90;
    const Matrix a = testing::random_matrix(m, k, 100 + c, 4);
    const Matrix b = testing::random_matrix(k, n, 200 + c, 4);
    ASSERT_TRUE(testing::same_bits(host_composition(s, dp, a, b), testing::run(s, dp, a, b), a, b))
        << "case " << c << " on " << archs[c % 3] << ": " << describe(s);
  }
}

}  // namespace
}  // namespace tcemu::markidis
