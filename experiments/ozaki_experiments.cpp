// The Ozaki scheme's accuracy and reproducibility experiments (Mukunoki, Ozaki, Ogita, Imamura,
// ISC 2020: the accuracy table of OzBLAS, Fig. 3 / 8, the reproducibility table). Each
// experiment writes one CSV (kUsage); experiments/plot_ozaki.py draws the figures; docs/results/
// has the pages. Progress goes to stderr.
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/ozaki/handle.hpp>
#include <tcemu/reference/exact_gemm.hpp>
#include <tcemu/session/arguments.hpp>
#include <tcemu/session/backends.hpp>
#include <tcemu/session/output_file.hpp>
#include <tcemu/session/products.hpp>

#include "accuracy.hpp"
#include "gpu.hpp"

namespace {

using namespace tcemu;

using experiments::Accuracy;
using experiments::accuracy;
using experiments::phi_values;
using experiments::plain_dgemm;

struct Method {
  std::string name;
  ozaki::Options options;
};

std::vector<Method> table_methods() {
  std::vector<Method> m = {{"DGEMM-TC DP", {.mode = ozaki::Mode::dp}},
                           {"DGEMM-TC CR", {.mode = ozaki::Mode::cr, .max_splits = 80}}};
  for (int d = 2; d <= 6; ++d) {
    m.push_back({"d=" + std::to_string(d) + " fast",
                 {.mode = ozaki::Mode::tunable, .splits = d, .fast = true}});
    m.push_back({"d=" + std::to_string(d) + " full",
                 {.mode = ozaki::Mode::tunable, .splits = d, .fast = false}});
  }
  return m;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

struct Run {
  std::vector<double> c;
  ozaki::Report report;
  double seconds;
};

Run run_ozaki(Backend& backend, const ozaki::Products& products, const ozaki::Options& options,
              std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<double>& a,
              const std::vector<double>& b) {
  ozaki::Options o = options;
  o.workspace_bytes = std::size_t{1} << 30;
  ozaki::Handle h(backend, products, o);
  Run r{std::vector<double>(static_cast<std::size_t>(m * n)), {}, 0};
  const auto start = std::chrono::steady_clock::now();
  h.dgemm('N', 'N', m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, r.c.data(), m);
  r.seconds = seconds_since(start);
  r.report = h.report();
  return r;
}

// The slice products `choice` implies: binary64 slices, or fp16 slices on the tensor cores of
// preset `arch`.
ozaki::Products products_for(const session::BackendChoice& choice, const std::string& arch) {
  return session::ozaki_products(choice.products, session::OzakiSlices::floating,
                                 [&] { return preset(arch, formats::fp16, formats::fp32); });
}

// The backend of `choice` on every host thread; on the GPU, experiments::make_gpu's (products by
// cuBLAS).
std::unique_ptr<Backend> backend_for(const session::BackendChoice& choice) {
  return choice.gpu ? experiments::make_gpu() : session::make_backend(choice);
}

void header(std::ostream& csv) {
  csv << "experiment,backend,arch,method,phi,m,n,k,max_relative_error,not_correctly_rounded,"
         "slices_a,slices_b,gemms,seconds\n";
}

void row(std::ostream& csv, const std::string& experiment, const std::string& backend,
         const std::string& arch, const std::string& method, double phi, std::int64_t n,
         const Accuracy& acc, const ozaki::Report* r, double seconds) {
  csv << experiment << ',' << backend << ',' << arch << ',' << method << ',' << phi << ',' << n
      << ',' << n << ',' << n << ',' << std::setprecision(6) << acc.max_relative_error << ','
      << acc.not_correctly_rounded << ',' << (r ? r->slices_a : 0) << ',' << (r ? r->slices_b : 0)
      << ',' << (r ? r->gemms : 0) << ',' << seconds << '\n';
  csv.flush();
  std::cerr << "  " << std::setw(14) << method << "  phi " << std::setw(4) << phi << "  n " << n
            << ": max rel. error " << std::setprecision(3) << acc.max_relative_error << ", not CR "
            << acc.not_correctly_rounded << ", " << seconds << " s\n";
}

// Accuracy of every method for each phi at one size (the OzBLAS accuracy table), on the backend
// called `backend` (an unknown name is an error).
void accuracy_runs(std::ostream& csv, const std::string& experiment, const std::string& backend,
                   const std::string& arch, std::int64_t n, const std::vector<double>& phis,
                   const std::vector<Method>& methods) {
  const session::BackendChoice& choice = session::backend_choice(backend);
  auto be = backend_for(choice);
  const ozaki::Products products = products_for(choice, arch);
  for (double phi : phis) {
    const auto a = phi_values(n * n, phi, 1), b = phi_values(n * n, phi, 2);
    std::cerr << experiment << ": phi " << phi << ", n " << n << ": MPFR reference...\n";
    auto start = std::chrono::steady_clock::now();
    const auto exact = reference::correctly_rounded_gemm(n, n, n, a, b);
    std::cerr << "  reference in " << seconds_since(start) << " s\n";
    start = std::chrono::steady_clock::now();
    const auto plain = plain_dgemm(n, n, n, a, b);
    row(csv, experiment, backend, arch, "plain DGEMM", phi, n, accuracy(plain, exact), nullptr,
        seconds_since(start));
    if (choice.gpu) {  // host to host, one cold call
      start = std::chrono::steady_clock::now();
      const auto vendor = experiments::cublas_dgemm(*be, n, n, n, a, b);
      row(csv, experiment, backend, arch, "cublasDgemm", phi, n, accuracy(vendor, exact), nullptr,
          seconds_since(start));
    }
    for (const Method& method : methods) {
      const Run r = run_ozaki(*be, products, method.options, n, n, n, a, b);
      row(csv, experiment, backend, arch, method.name, phi, n, accuracy(r.c, exact), &r.report,
          r.seconds);
    }
  }
}

std::string hex(double v) {
  std::ostringstream s;
  s << std::hex << std::setw(16) << std::setfill('0') << std::bit_cast<std::uint64_t>(v);
  return s.str();
}

// A dot product of length n computed by each method on several backends, datapaths and thread
// counts: the hex result of each. With `gpu`, also cublasDgemm and the Ozaki scheme on device 0
// (fp16 slices with products by cuBLAS and by our mma.sync kernel, and binary64 slices).
void reproducibility(const std::string& path, std::int64_t n, bool gpu) {
  const std::string gpu_arch = gpu ? experiments::gpu_arch() : "";
  session::OutputFile file(path);
  std::ostream& csv = file.stream();
  csv << "method,where,result_hex,result\n";
  const auto x = phi_values(n, 1.0, 3), y = phi_values(n, 1.0, 4);
  auto put = [&](const std::string& method, const std::string& where, double v) {
    csv << method << ',' << where << ',' << hex(v) << ',' << std::setprecision(17) << v << '\n';
    std::cerr << "  " << std::setw(16) << method << "  " << std::setw(28) << where << "  " << hex(v)
              << '\n';
  };
  // Plain binary64 sums in three orders: what a BLAS may do on different machines.
  double forward = 0.0, backward = 0.0;
  for (std::int64_t p = 0; p < n; ++p) forward = forward + x[p] * y[p];
  for (std::int64_t p = n - 1; p >= 0; --p) backward = backward + x[p] * y[p];
  std::vector<double> partial(8, 0.0);  // 8 lanes, as a vectorised dot product sums
  for (std::int64_t p = 0; p < n; ++p) partial[p % 8] = partial[p % 8] + x[p] * y[p];
  double lanes = 0.0;
  for (double s : partial) lanes = lanes + s;
  put("plain", "k order", forward);
  put("plain", "reverse k order", backward);
  put("plain", "8 lanes", lanes);
  if (gpu) {
    put("plain", "gpu cublasDgemm",
        experiments::cublas_dgemm(*experiments::make_gpu(), 1, 1, n, x, y)[0]);
  }
  const double exact = reference::correctly_rounded_gemm(1, 1, n, x, y)[0];
  put("MPFR", "correctly rounded", exact);
  struct Where {
    std::string name;
    std::unique_ptr<Backend> backend;
    ozaki::Products products;
  };
  std::vector<Where> places;
  for (const char* arch : {"sm70", "sm80", "sm90", "exact-rn", "exact-rz"}) {
    for (int threads : {1, 2}) {
      places.push_back({std::string("emulator ") + arch + " (" + std::to_string(threads) +
                            " thread" + (threads > 1 ? "s)" : ")"),
                        host::make_emulator_backend(threads),
                        ozaki::TensorCoreProducts{preset(arch, formats::fp16, formats::fp32)}});
    }
  }
  places.push_back({"cpu64", host::make_cpu64_backend(), ozaki::Fp64Products{}});
  if (gpu) {
    const ozaki::TensorCoreProducts tc{preset(gpu_arch, formats::fp16, formats::fp32)};
    places.push_back({"gpu " + gpu_arch + " cuBLAS fp16 GEMM", experiments::make_gpu(), tc});
    places.push_back(
        {"gpu " + gpu_arch + " mma.sync kernel", experiments::make_gpu(/*our_kernels=*/true), tc});
    places.push_back(
        {"gpu FP64 slices (cublasDgemm)", experiments::make_gpu(), ozaki::Fp64Products{}});
  }
  std::vector<Method> methods;
  for (int d = 1; d <= 3; ++d) {
    methods.push_back({"d=" + std::to_string(d), {.mode = ozaki::Mode::tunable, .splits = d}});
  }
  methods.push_back({"DP", {.mode = ozaki::Mode::dp}});
  methods.push_back({"CR", {.mode = ozaki::Mode::cr, .max_splits = 80}});
  for (const Method& method : methods) {
    for (Where& w : places) {
      put(method.name, w.name,
          run_ozaki(*w.backend, w.products, method.options, 1, 1, n, x, y).c[0]);
    }
  }
  file.close();
}

constexpr const char* kUsage =
    R"(usage: ozaki_experiments table|phi|size|repro [--out FILE] [options]

The Ozaki scheme's accuracy and reproducibility experiments (Mukunoki, Ozaki, Ogita, Imamura,
ISC 2020). Each experiment writes one CSV (default EXPERIMENT.csv); progress goes to stderr;
experiments/plot_ozaki.py draws the figures.

  table   max relative error and elements not correctly rounded (against MPFR) of plain DGEMM,
          DGEMM-TC DP and CR and tunable d = 2..6 (fast and full), n x n x n, phi 1, 4, 7, 10
  phi     the same for DP, CR and d = 2, 3, 4 fast, phi 0.1 to 10
  size    DP, CR and d = 3 fast at phi --phi for each n of --sizes
  repro   one dot product of length n by every method on several backends, datapaths and thread
          counts: the hex result of each (columns method, where, result_hex, result)

Options:
  --out FILE             the CSV written (default EXPERIMENT.csv, e.g. table.csv)
  --n N                  table, phi: the size n (default 256, 128); repro: the dot product's
                         length (default 10000)
  --backend NAME         emulator (default), cpu64 (binary64 slices) or gpu (device 0: fp16
                         slices on its tensor cores, products by cuBLAS, its own preset, and a
                         cublasDgemm row; repro adds the GPU's results to the CPU ones)
  --arch PRESET          emulator: the datapath of the fp16 slices' products (default sm90)
  --phi PHI              size: the exponent spread of the inputs (default 1)
  --sizes N,N,...        size: the sizes (default 16,32,64,128,256)
)";

int run(const session::Arguments& args) {
  if (args.positional().size() != 1) {
    throw session::UsageError("give one experiment: table, phi, size or repro");
  }
  const std::string what = args.positional()[0];
  if (what != "table" && what != "phi" && what != "size" && what != "repro") {
    throw session::UsageError("unknown experiment '" + what + "' (table, phi, size, repro)");
  }
  constexpr long long kMaxN = 1'000'000;
  const std::string out = args.value_or("out", what + ".csv");
  const std::string backend = args.value_or("backend", "emulator");
  const session::BackendChoice& choice = session::backend_choice(backend);
  if (what == "repro") {
    reproducibility(out, args.integer_or("n", 10000, 1, 100'000'000), choice.gpu);
    return 0;
  }
  const std::string arch = choice.products == session::SliceProducts::binary64 ? "fp64"
                           : choice.gpu ? experiments::gpu_arch()
                                        : args.value_or("arch", "sm90");
  const double phi = args.number_or("phi", 1);
  std::vector<std::int64_t> sizes;
  for (const std::string& s : args.list_or("sizes", "16,32,64,128,256")) {
    sizes.push_back(session::integer_in("--sizes", s, 1, kMaxN));
  }
  session::OutputFile file(out);
  std::ostream& csv = file.stream();
  header(csv);
  if (what == "table") {
    accuracy_runs(csv, "table", backend, arch, args.integer_or("n", 256, 1, kMaxN), {1, 4, 7, 10},
                  table_methods());
  } else if (what == "phi") {
    std::vector<Method> methods = {{"DGEMM-TC DP", {.mode = ozaki::Mode::dp}},
                                   {"DGEMM-TC CR", {.mode = ozaki::Mode::cr, .max_splits = 80}}};
    for (int d : {2, 3, 4}) {
      methods.push_back({"d=" + std::to_string(d) + " fast",
                         {.mode = ozaki::Mode::tunable, .splits = d, .fast = true}});
    }
    accuracy_runs(csv, "phi", backend, arch, args.integer_or("n", 128, 1, kMaxN),
                  {0.1, 0.5, 1, 2, 4, 7, 10}, methods);
  } else {
    const std::vector<Method> methods = {
        {"DGEMM-TC DP", {.mode = ozaki::Mode::dp}},
        {"DGEMM-TC CR", {.mode = ozaki::Mode::cr, .max_splits = 80}},
        {"d=3 fast", {.mode = ozaki::Mode::tunable, .splits = 3, .fast = true}}};
    for (const std::int64_t n : sizes) accuracy_runs(csv, "size", backend, arch, n, {phi}, methods);
  }
  file.close();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tcemu::session::run_program(
      {"ozaki_experiments", kUsage, {"out", "n", "backend", "arch", "phi", "sizes"}, {}}, argc,
      argv, run);
}
