// The Ozaki scheme's accuracy and reproducibility experiments (Mukunoki, Ozaki, Ogita, Imamura,
// ISC 2020: the accuracy table of OzBLAS, Fig. 3 / 8, the reproducibility table). Each
// subcommand writes one CSV; experiments/plot_ozaki.py draws the figures; docs/results/ has the
// pages. Progress goes to stderr.
//
//   ozaki_experiments table   --out FILE --n N --backend emulator|cpu64|gpu [--arch sm90]
//   ozaki_experiments phi     --out FILE --n N
//   ozaki_experiments size    --out FILE --phi PHI --sizes 16,32,...
//   ozaki_experiments repro   --out FILE --n N [--backend gpu]
//
// --backend gpu (device 0; the program exits with a message when there is none): the fp16 slices
// on the device's tensor cores, products by cuBLAS, the datapath the device's preset (--arch is
// ignored), and a cublasDgemm row beside plain DGEMM (host to host, one cold call). repro adds
// the GPU's results to the CPU ones.
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/ozaki/handle.hpp>
#include <tcemu/reference/exact_gemm.hpp>

#include "accuracy.hpp"
#include "backend_choice.hpp"
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

std::map<std::string, std::string> parse(int argc, char** argv) {
  std::map<std::string, std::string> o;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string key = argv[i];
    if (!key.starts_with("--")) throw std::invalid_argument("expected --option, got " + key);
    o[key.substr(2)] = argv[i + 1];
  }
  return o;
}

std::string get(const std::map<std::string, std::string>& o, const std::string& key,
                const std::string& fallback) {
  const auto it = o.find(key);
  return it == o.end() ? fallback : it->second;
}

// The slice products `choice` implies: binary64 slices, or fp16 slices on the tensor cores of
// preset `arch`.
ozaki::Products products_for(const cli::BackendChoice& choice, const std::string& arch) {
  if (choice.products == cli::SliceProducts::binary64) return ozaki::Fp64Products{};
  return ozaki::TensorCoreProducts{preset(arch, formats::fp16, formats::fp32)};
}

// The backend of `choice` on every host thread; on the GPU, experiments::make_gpu's (products by
// cuBLAS).
std::unique_ptr<Backend> backend_for(const cli::BackendChoice& choice) {
  return choice.gpu ? experiments::make_gpu() : choice.make(0);
}

void header(std::ofstream& csv) {
  csv << "experiment,backend,arch,method,phi,m,n,k,max_relative_error,not_correctly_rounded,"
         "slices_a,slices_b,gemms,seconds\n";
}

void row(std::ofstream& csv, const std::string& experiment, const std::string& backend,
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
void accuracy_runs(std::ofstream& csv, const std::string& experiment, const std::string& backend,
                   const std::string& arch, std::int64_t n, const std::vector<double>& phis,
                   const std::vector<Method>& methods) {
  const cli::BackendChoice& choice = cli::backend_choice(backend);
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
  std::ofstream csv(path);
  if (!csv) throw std::runtime_error("cannot write " + path);
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
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: ozaki_experiments table|phi|size|repro --out FILE [options]\n";
    return 2;
  }
  try {
    const std::string what = argv[1];
    const auto o = parse(argc, argv);
    const std::string out = get(o, "out", what + ".csv");
    const std::string backend = get(o, "backend", "emulator");
    // Nothing for an unknown name: repro then runs on the CPU alone, the others stop with an
    // error in accuracy_runs.
    const cli::BackendChoice* choice = cli::find_backend_choice(backend);
    const bool gpu = choice && choice->gpu;
    if (what == "repro") {
      reproducibility(out, std::stoll(get(o, "n", "10000")), gpu);
      return 0;
    }
    const std::string arch = choice && choice->products == cli::SliceProducts::binary64 ? "fp64"
                             : gpu ? experiments::gpu_arch()
                                   : get(o, "arch", "sm90");
    std::ofstream csv(out);
    if (!csv) throw std::runtime_error("cannot write " + out);
    header(csv);
    if (what == "table") {
      accuracy_runs(csv, "table", backend, arch, std::stoll(get(o, "n", "256")), {1, 4, 7, 10},
                    table_methods());
    } else if (what == "phi") {
      std::vector<Method> methods = {{"DGEMM-TC DP", {.mode = ozaki::Mode::dp}},
                                     {"DGEMM-TC CR", {.mode = ozaki::Mode::cr, .max_splits = 80}}};
      for (int d : {2, 3, 4}) {
        methods.push_back({"d=" + std::to_string(d) + " fast",
                           {.mode = ozaki::Mode::tunable, .splits = d, .fast = true}});
      }
      accuracy_runs(csv, "phi", backend, arch, std::stoll(get(o, "n", "128")),
                    {0.1, 0.5, 1, 2, 4, 7, 10}, methods);
    } else if (what == "size") {
      const double phi = std::stod(get(o, "phi", "1"));
      std::vector<Method> methods = {
          {"DGEMM-TC DP", {.mode = ozaki::Mode::dp}},
          {"DGEMM-TC CR", {.mode = ozaki::Mode::cr, .max_splits = 80}},
          {"d=3 fast", {.mode = ozaki::Mode::tunable, .splits = 3, .fast = true}}};
      std::stringstream sizes(get(o, "sizes", "16,32,64,128,256"));
      for (std::string s; std::getline(sizes, s, ',');) {
        accuracy_runs(csv, "size", backend, arch, std::stoll(s), {phi}, methods);
      }
    } else {
      std::cerr << "unknown experiment " << what << '\n';
      return 2;
    }
  } catch (const std::exception& e) {
    std::cerr << "ozaki_experiments: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
