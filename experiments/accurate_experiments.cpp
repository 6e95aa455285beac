// The accurate-BLAS experiments of the seed slides, on the CPU (the host backend) or, for the
// accuracy table, the GPU: CSV out (kUsage says what each experiment computes),
// experiments/plot_accurate.py draws the figures, docs/results/accurate-accuracy.md has the page.
// Progress goes to stderr.
#include <bit>
#include <chrono>
#include <cmath>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/accurate/handle.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/ozaki/handle.hpp>
#include <tcemu/reference/accumulator_gemm.hpp>
#include <tcemu/reference/exact_gemm.hpp>
#include <tcemu/reference/ill_conditioned.hpp>
#include <tcemu/session/arguments.hpp>
#include <tcemu/session/backends.hpp>
#include <tcemu/session/output_file.hpp>

#include "accuracy.hpp"
#include "gpu.hpp"

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
  session::OutputFile file(path);
  std::ostream& csv = file.stream();
  csv << "n,target,condition,method,relative_error,dot2_bound\n";
  auto backend = host::make_cpu64_backend();
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
  file.close();
}

// One product of the accuracy table: C = A B (n x n x n, column major, host arrays in and out).
using Matrix = std::vector<double>;
struct Method {
  std::string name;
  std::function<Matrix(const Matrix& a, const Matrix& b)> product;
};

// Dot2 and ExBLAS (Backend::inner_products, through accurate::Handle) on `backend`.
void add_inner_products(std::vector<Method>& methods, Backend& backend, std::int64_t n) {
  for (const InnerProduct method : {InnerProduct::dot2, InnerProduct::exact}) {
    methods.push_back({method == InnerProduct::dot2 ? "Dot2" : "ExBLAS",
                       [&backend, method, n](const Matrix& a, const Matrix& b) {
                         std::vector<double> c(a.size());
                         accurate::Handle(backend, method)
                             .dgemm('N', 'N', n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(),
                                    n);
                         return c;
                       }});
  }
}

// Ozaki d = 2..6 (tunable, fast mode) and CR with `products` on `backend`, named "Ozaki d=2" ...
// "Ozaki CR" followed by `suffix`.
void add_ozaki(std::vector<Method>& methods, Backend& backend, const ozaki::Products& products,
               const std::string& suffix, std::int64_t n) {
  std::vector<std::pair<std::string, ozaki::Options>> variants;
  for (int d = 2; d <= 6; ++d) {
    variants.push_back(
        {"Ozaki d=" + std::to_string(d), {.mode = ozaki::Mode::tunable, .splits = d}});
  }
  variants.push_back({"Ozaki CR", {.mode = ozaki::Mode::cr, .max_splits = 80}});
  for (auto& [name, options] : variants) {
    options.workspace_bytes = std::size_t{1} << 30;
    methods.push_back(
        {name + suffix, [&backend, products, options, n](const Matrix& a, const Matrix& b) {
           std::vector<double> c(a.size());
           ozaki::Handle(backend, products, options)
               .dgemm('N', 'N', n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
           return c;
         }});
  }
}

// The CPU table (the host backend): plain binary64 in k order (our stand-in for cuBLAS), Dot2,
// ExBLAS and the Ozaki rows with binary64 slices (OzBLAS on DGEMM).
std::vector<Method> cpu_methods(Backend& cpu, std::int64_t n) {
  std::vector<Method> methods = {{"plain DGEMM", [n](const Matrix& a, const Matrix& b) {
                                    return experiments::plain_dgemm(n, n, n, a, b);
                                  }}};
  add_inner_products(methods, cpu, n);
  add_ozaki(methods, cpu, ozaki::Fp64Products{}, "", n);
  return methods;
}

// The GPU table: cublasDgemm, Dot2 and ExBLAS on the device, and the Ozaki rows with fp16 slices
// on the tensor cores (products by cuBLAS, the device's datapath `arch`) and with binary64 slices
// (products by cublasDgemm).
std::vector<Method> gpu_methods(Backend& gpu, const std::string& arch, std::int64_t n) {
  std::vector<Method> methods = {{"cublasDgemm", [&gpu, n](const Matrix& a, const Matrix& b) {
                                    return experiments::cublas_dgemm(gpu, n, n, n, a, b);
                                  }}};
  add_inner_products(methods, gpu, n);
  add_ozaki(methods, gpu, ozaki::TensorCoreProducts{preset(arch, formats::fp16, formats::fp32)},
            " (fp16 TC)", n);
  add_ozaki(methods, gpu, ozaki::Fp64Products{}, " (FP64)", n);
  return methods;
}

// The table on the backend called `backend_name`: the host one with binary64 slice products
// (cpu64) or the GPU.
void table(const std::string& path, std::int64_t n, const std::string& backend_name) {
  const session::BackendChoice* choice = session::find_backend_choice(backend_name);
  std::unique_ptr<Backend> backend;
  std::vector<Method> methods;
  if (choice && !choice->gpu && choice->products == session::SliceProducts::binary64) {
    backend = session::make_backend(*choice);
    methods = cpu_methods(*backend, n);
  } else if (choice && choice->gpu) {
    const std::string arch = experiments::gpu_arch();
    backend = experiments::make_gpu();
    methods = gpu_methods(*backend, arch, n);
  } else {
    throw session::UsageError("--backend must be cpu64 or gpu, got '" + backend_name + "'");
  }
  session::OutputFile file(path);
  std::ostream& csv = file.stream();
  csv << "phi,n,method,max_relative_error,not_correctly_rounded,seconds\n";
  for (double phi : {0.1, 1.0, 2.0, 4.0, 8.0}) {
    const auto a = experiments::phi_values(n * n, phi, 1),
               b = experiments::phi_values(n * n, phi, 2);
    std::cerr << "phi " << phi << ", n " << n << ": MPFR and long-accumulator references...\n";
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
      const experiments::Accuracy acc = experiments::accuracy(c, exact);
      csv << phi << ',' << n << ',' << method << ',' << std::setprecision(6)
          << acc.max_relative_error << ',' << acc.not_correctly_rounded << ',' << seconds << '\n';
      csv.flush();
      std::cerr << "  " << std::setw(22) << method << ": max rel. error " << std::setprecision(3)
                << acc.max_relative_error << ", not CR " << acc.not_correctly_rounded << ", "
                << seconds << " s\n";
    };
    row("MPFR reference", exact, mpfr_seconds);
    row("accumulator reference", fast, fast_seconds);
    for (const Method& method : methods) {
      start = std::chrono::steady_clock::now();
      const auto c = method.product(a, b);
      row(method.name, c, seconds_since(start));
    }
  }
  file.close();
}

constexpr const char* kUsage =
    R"(usage: accurate_experiments condition|table [--out FILE] [options]

The accurate-BLAS experiments of the seed slides. Each writes one CSV; progress goes to stderr;
experiments/plot_accurate.py draws the figures.

  condition  Dot2, ExBLAS-style, Ozaki (cpu64, DP and CR) and plain binary64 on ill-conditioned
             dot products of length n (GenDot of Ogita, Rump and Oishi), condition 1 to 1e40,
             with Dot2's error bound u + gamma_n^2 cond / 2 (relative)
  table      the seeds' accuracy table: the max relative error of an n x n x n DGEMM against
             MPFR for phi = 0.1, 1, 2, 4, 8. cpu64: plain binary64 (k order), Dot2, ExBLAS,
             Ozaki d = 2..6 (fast mode, binary64 slices) and Ozaki CR. gpu (device 0):
             cublasDgemm, Dot2 and ExBLAS on the device, and the Ozaki rows with fp16 slices on
             the tensor cores and with binary64 slices; seconds are host to host, one cold call

Options:
  --out FILE             the CSV written (default condition.csv or table.csv)
  --n N                  condition: the length (default 1000); table: the size (default 500)
  --per-decade N         condition: conditions per decade (default 2)
  --backend NAME         table: cpu64 (default) or gpu
)";

int run(const session::Arguments& args) {
  if (args.positional().size() != 1)
    throw session::UsageError("give one experiment: condition or table");
  const std::string what = args.positional()[0];
  if (what == "condition") {
    condition(args.value_or("out", "condition.csv"), args.integer_or("n", 1000, 1, 100'000'000),
              static_cast<int>(args.integer_or("per-decade", 2, 1, 1000)));
  } else if (what == "table") {
    table(args.value_or("out", "table.csv"), args.integer_or("n", 500, 1, 1'000'000),
          args.value_or("backend", "cpu64"));
  } else {
    throw session::UsageError("unknown experiment '" + what + "' (condition, table)");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tcemu::session::run_program(
      {"accurate_experiments", kUsage, {"out", "n", "per-decade", "backend"}, {}}, argc, argv, run);
}
