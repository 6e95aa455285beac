// The accurate-BLAS experiments of the seed slides, on the CPU (the host backend): CSV out,
// experiments/plot_accurate.py draws the figures, docs/results/accurate-accuracy.md has the page.
// Progress goes to stderr.
//
//   accurate_experiments condition --out FILE [--n 1000] [--per-decade 2]
//       Dot2, ExBLAS-style, Ozaki (cpu64, DP and CR) and plain binary64 on ill-conditioned dot
//       products (GenDot of Ogita, Rump and Oishi), condition 1 to 1e40, with Dot2's error bound
//       u + gamma_n^2 cond / 2 (relative).
//   accurate_experiments table --out FILE [--n 500]
//       The seeds' accuracy table: max relative error of an n x n x n DGEMM against MPFR for
//       plain binary64 (k order, our stand-in for cuBLAS), Dot2, ExBLAS, Ozaki d = 2..6 (fast
//       mode, binary64 slices: OzBLAS on DGEMM) and Ozaki CR, for phi = 0.1, 1, 2, 4, 8.
#include <bit>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <tcemu/accurate/handle.hpp>
#include <tcemu/ozaki/handle.hpp>
#include <tcemu/reference/accumulator_gemm.hpp>
#include <tcemu/reference/exact_gemm.hpp>
#include <tcemu/reference/ill_conditioned.hpp>

namespace {

using namespace tcemu;

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

double relative_error(double got, double exact) {
  if (got == exact) return 0;
  return std::fabs(got - exact) / std::fabs(exact);
}

void condition(const std::string& path, std::int64_t n, int per_decade) {
  std::ofstream csv(path);
  csv << "n,target,condition,method,relative_error,dot2_bound\n";
  auto backend = make_cpu64_backend();
  accurate::Handle dot2(*backend, InnerProduct::dot2), exblas(*backend, InnerProduct::exact);
  ozaki::Handle oz_dp(*backend, ozaki::Fp64Products{}, {.mode = ozaki::Mode::dp});
  ozaki::Handle oz_cr(*backend, ozaki::Fp64Products{}, {.mode = ozaki::Mode::cr});
  const double u = 0x1p-53, nu = static_cast<double>(n) * u, gamma = nu / (1 - nu);
  std::uint64_t seed = 1;
  for (int step = 0; step <= 40 * per_decade; ++step) {
    const double target = std::pow(10.0, static_cast<double>(step) / per_decade);
    const auto d = reference::ill_conditioned_dot(n, std::max(target, 1.0), seed++);
    double plain = 0;
    for (std::int64_t i = 0; i < n; ++i) plain = plain + d.x[i] * d.y[i];
    const std::map<std::string, double> results = {
        {"plain binary64", plain},
        {"Dot2", dot2.ddot(n, d.x.data(), 1, d.y.data(), 1)},
        {"ExBLAS", exblas.ddot(n, d.x.data(), 1, d.y.data(), 1)},
        {"Ozaki DP (cpu64)", oz_dp.ddot(n, d.x.data(), 1, d.y.data(), 1)},
        {"Ozaki CR (cpu64)", oz_cr.ddot(n, d.x.data(), 1, d.y.data(), 1)}};
    const double bound = u + gamma * gamma * d.condition / 2;
    for (const auto& [method, value] : results) {
      csv << n << ',' << target << ',' << std::setprecision(6) << d.condition << ',' << method
          << ',' << relative_error(value, d.exact) << ',' << bound << '\n';
    }
    std::cerr << "condition " << std::setprecision(3) << d.condition << ": Dot2 "
              << relative_error(results.at("Dot2"), d.exact) << " (bound " << bound << "), plain "
              << relative_error(plain, d.exact) << ", ExBLAS "
              << relative_error(results.at("ExBLAS"), d.exact) << '\n';
  }
}

std::vector<double> phi_matrix(std::int64_t count, double phi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> normal;
  std::vector<double> x(static_cast<std::size_t>(count));
  for (double& v : x) v = (uniform(rng) - 0.5) * std::exp(phi * normal(rng));
  return x;
}

void table(const std::string& path, std::int64_t n) {
  std::ofstream csv(path);
  csv << "phi,n,method,max_relative_error,not_correctly_rounded,seconds\n";
  auto backend = make_cpu64_backend();
  for (double phi : {0.1, 1.0, 2.0, 4.0, 8.0}) {
    const auto a = phi_matrix(n * n, phi, 1), b = phi_matrix(n * n, phi, 2);
    auto start = std::chrono::steady_clock::now();
    const auto exact = reference::correctly_rounded_gemm(n, n, n, a, b);
    const double mpfr_seconds = seconds_since(start);
    start = std::chrono::steady_clock::now();
    const auto fast = reference::accumulator_gemm(n, n, n, a, b);
    const double fast_seconds = seconds_since(start);
    std::int64_t disagree = 0;
    for (std::size_t e = 0; e < exact.size(); ++e) {
      disagree += std::bit_cast<std::uint64_t>(exact[e]) != std::bit_cast<std::uint64_t>(fast[e]);
    }
    std::cerr << "phi " << phi << ", n " << n << ": MPFR reference " << mpfr_seconds
              << " s, long-accumulator reference " << fast_seconds << " s, " << disagree
              << " elements differ\n";
    auto row = [&](const std::string& method, const std::vector<double>& c, double seconds) {
      double worst = 0;
      std::int64_t wrong = 0;
      for (std::size_t e = 0; e < c.size(); ++e) {
        wrong += std::bit_cast<std::uint64_t>(c[e]) != std::bit_cast<std::uint64_t>(exact[e]);
        if (exact[e] != 0) worst = std::fmax(worst, relative_error(c[e], exact[e]));
      }
      csv << phi << ',' << n << ',' << method << ',' << std::setprecision(6) << worst << ','
          << wrong << ',' << seconds << '\n';
      csv.flush();
      std::cerr << "  " << std::setw(22) << method << ": max rel. error " << std::setprecision(3)
                << worst << ", not CR " << wrong << ", " << seconds << " s\n";
    };
    row("MPFR reference", exact, mpfr_seconds);
    row("accumulator reference", fast, fast_seconds);
    std::vector<double> c(static_cast<std::size_t>(n * n));
    start = std::chrono::steady_clock::now();
    for (std::int64_t j = 0; j < n; ++j) {  // k order, no FMA: the reference BLAS's loop
      for (std::int64_t i = 0; i < n; ++i) {
        double s = 0;
        for (std::int64_t p = 0; p < n; ++p) s = s + a[p * n + i] * b[j * n + p];
        c[j * n + i] = s;
      }
    }
    row("plain DGEMM", c, seconds_since(start));
    for (const InnerProduct method : {InnerProduct::dot2, InnerProduct::exact}) {
      accurate::Handle h(*backend, method);
      start = std::chrono::steady_clock::now();
      h.dgemm('N', 'N', n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
      row(method == InnerProduct::dot2 ? "Dot2" : "ExBLAS", c, seconds_since(start));
    }
    std::vector<std::pair<std::string, ozaki::Options>> ozaki_methods;
    for (int d = 2; d <= 6; ++d) {
      ozaki_methods.push_back(
          {"Ozaki d=" + std::to_string(d), {.mode = ozaki::Mode::tunable, .splits = d}});
    }
    ozaki_methods.push_back({"Ozaki CR", {.mode = ozaki::Mode::cr, .max_splits = 80}});
    for (auto& [method, options] : ozaki_methods) {
      options.workspace_bytes = std::size_t{1} << 30;
      ozaki::Handle h(*backend, ozaki::Fp64Products{}, options);
      start = std::chrono::steady_clock::now();
      h.dgemm('N', 'N', n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
      row(method, c, seconds_since(start));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: accurate_experiments condition|table --out FILE [--n N]\n";
    return 2;
  }
  try {
    std::map<std::string, std::string> o;
    for (int i = 2; i + 1 < argc; i += 2) o[std::string(argv[i]).substr(2)] = argv[i + 1];
    const std::string what = argv[1];
    auto get = [&](const std::string& key, const std::string& fallback) {
      return o.contains(key) ? o[key] : fallback;
    };
    if (what == "condition") {
      condition(get("out", "condition.csv"), std::stoll(get("n", "1000")),
                std::stoi(get("per-decade", "2")));
    } else if (what == "table") {
      table(get("out", "table.csv"), std::stoll(get("n", "500")));
    } else {
      std::cerr << "unknown experiment " << what << '\n';
      return 2;
    }
  } catch (const std::exception& e) {
    std::cerr << "accurate_experiments: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
