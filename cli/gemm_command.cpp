// tcemu gemm: runs a GEMM scheme (gemm_schemes.hpp) on a backend, on matrix files or on
// generated inputs, with an accuracy report against the correctly rounded product (MPFR or the
// long accumulator) and a progress line on long runs.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <limits>
#include <new>
#include <random>
#include <stdexcept>
#include <thread>

#include <tcemu/cases/printable.hpp>
#include <tcemu/ozaki/options.hpp>
#include <tcemu/reference/accumulator_gemm.hpp>
#include <tcemu/reference/exact_gemm.hpp>
#include <tcemu/session/backends.hpp>

#include "commands.hpp"
#include "datapath_options.hpp"
#include "gemm_schemes.hpp"
#include "matrix_file.hpp"
#include "progress.hpp"

namespace tcemu::cli {
namespace {

constexpr const char* kUsage =
    R"(usage: tcemu gemm --scheme NAME [--backend emulator|cpu64|gpu] [scheme options]
                  --a FILE --b FILE [--c FILE --alpha x --beta y] --out FILE
       tcemu gemm --scheme NAME [...] [--m M --n N --k K --phi PHI --seed S]

Computes C := alpha A B + beta C with a GEMM scheme. A matrix file has a first line 'ROWS COLS',
then ROWS lines of COLS hex bit patterns (16 digits for an fp64 scheme, 8 for fp32), row major.
Without --a and --b it draws A (M x K) and B (K x N) as (rand - 0.5) * exp(PHI * randn)
(defaults 64, 64, 64, PHI 1, seed 1) and prints the accuracy against the correctly rounded
product: the largest relative error (NaN when a NaN or Inf is in either) and the elements
that differ from it (a NaN agrees with any NaN). With --alpha other than 1 the reference is
RN(alpha x the correctly rounded A B) in the scheme's precision, the BLAS epilogue every scheme
applies; the correctly rounded schemes promise the correctly rounded A B only for alpha 1.
With --rounding (the Ozaki schemes' mode cr) the reference is A B rounded in that direction.

Exit status: 0 success; 2 a usage or input error (an unknown or malformed option, an option the
scheme or mode does not use, a matrix file that is missing, unreadable, malformed or of the wrong
shape); 1 any other failure (out of memory, a GPU error, an output that could not be written).

  --scheme NAME          see the list below
  --backend NAME         emulator (default), cpu64 (binary64 products on the CPU), gpu (the
                         tensor-core products on the CUDA device for any datapath: our hardware
                         kernels where they compute it, the emulated engine otherwise)
  --threads N            host threads (default: all)
  --alpha x --beta y     (defaults 1 and 0; --beta needs --c)
  --reference R          the correctly rounded A B the accuracy report compares with:
                         mpfr (default for generated inputs): every element's exact sum
                         rounded by MPFR; exact: the same bits from the long accumulator
                         (reference/accumulator_gemm.hpp), no MPFR, several times faster;
                         none (default with --a and --b): no reference, no report. With --a and
                         --b, mpfr or exact report on the files' product (beta must be 0)
  --progress P           auto (default): a progress line on stderr once a run has taken 1 s
                         (redrawn in place on a terminal, a line per 10% otherwise), on the GPU
                         for the reference only (the scheme's would unbatch its products);
                         always: from the start, on every backend; never

Schemes:
)";

std::int64_t dimension(const session::Arguments& args, const std::string& name) {
  const long long v = args.integer(name).value_or(64);
  if (v < 0 || v > 100000) throw session::UsageError("--" + name + " must be in [0, 100000]");
  return v;
}

std::string shape(std::int64_t rows, std::int64_t cols) {
  return std::to_string(rows) + " x " + std::to_string(cols);
}

// Runs `allocating`, turning std::bad_alloc into an error that names the size involved.
template <typename F>
auto naming_size(const std::string& what, std::int64_t elements, F allocating) {
  try {
    return allocating();
  } catch (const std::bad_alloc&) {
    throw std::runtime_error("out of memory: could not allocate " + what + ", " +
                             std::to_string(elements) + " elements (" +
                             std::to_string(elements * 8) + " bytes as fp64)");
  }
}

enum class Reference { none, mpfr, exact };

Reference reference_named(const std::string& word) {
  if (word == "none") return Reference::none;
  if (word == "mpfr") return Reference::mpfr;
  if (word == "exact") return Reference::exact;
  throw session::UsageError("--reference must be mpfr, exact or none, got '" + printable(word) +
                            "'");
}

// The correctly rounded A B (fp32: rounded to binary32), by MPFR or the long accumulator, a
// block of columns at a time so that `progress` moves (every element is computed on its own:
// the blocks do not change it). A block has at least 4 columns per thread.
std::vector<double> correctly_rounded(const GemmProblem& p, bool fp32, Reference reference,
                                      fp64::Direction rounding, int threads, Progress& progress) {
  const std::int64_t workers =
      threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
  const std::int64_t width = std::max<std::int64_t>((p.n + 19) / 20, 4 * workers);
  std::vector<double> exact;
  exact.reserve(static_cast<std::size_t>(p.m * p.n));
  for (std::int64_t j0 = 0; j0 < p.n; j0 += width) {
    const std::int64_t cols = std::min(width, p.n - j0);
    const std::vector<double> b(p.b.begin() + j0 * p.k, p.b.begin() + (j0 + cols) * p.k);
    const std::vector<double> block =
        rounding != fp64::Direction::nearest_even
            ? reference::correctly_rounded_gemm(p.m, cols, p.k, p.a, b, rounding, fp32, threads)
        : reference == Reference::mpfr
            ? reference::correctly_rounded_gemm(p.m, cols, p.k, p.a, b, fp32, threads)
            : reference::accumulator_gemm(p.m, cols, p.k, p.a, b, fp32, threads);
    exact.insert(exact.end(), block.begin(), block.end());
    progress.update(static_cast<double>(j0 + cols) / static_cast<double>(p.n));
  }
  return exact;
}

const GemmScheme& scheme_named(const std::string& name) {
  for (const GemmScheme& s : gemm_schemes()) {
    if (s.name == name) return s;
  }
  std::string names;
  for (const GemmScheme& s : gemm_schemes()) names += (names.empty() ? "" : ", ") + s.name;
  throw session::UsageError("--scheme must be one of " + names + ", got '" + printable(name) + "'");
}

std::string usage() {
  std::string text = kUsage;
  for (const GemmScheme& s : gemm_schemes()) text += "  " + s.name + ": " + s.summary + "\n";
  std::set<std::string> printed;  // schemes of one library share their options' help
  for (const GemmScheme& s : gemm_schemes()) {
    if (printed.insert(s.options_help).second) text += "\n" + s.options_help;
  }
  return text + "\n" + datapath_options_help();
}

}  // namespace

int gemm_command(const std::vector<std::string>& words) {
  const std::set<std::string> own = {"scheme", "backend", "threads",   "a",       "b", "c",
                                     "alpha",  "beta",    "out",       "m",       "n", "k",
                                     "phi",    "seed",    "reference", "progress"};
  std::set<std::string> names = own;
  for (const GemmScheme& s : gemm_schemes()) names.insert(s.options.begin(), s.options.end());
  const session::Arguments args(words, names, {"help"});
  if (args.flag("help")) {
    std::cout << usage();
    return 0;
  }
  if (!args.positional().empty())
    throw session::UsageError("unexpected word '" + printable(args.positional()[0]) + "'");
  const auto scheme_name = args.value("scheme");
  if (!scheme_name) throw session::UsageError("--scheme is required");
  const GemmScheme& scheme = scheme_named(*scheme_name);
  for (const std::string& name : names) {
    if (!own.contains(name) && !scheme.options.contains(name) && args.value(name)) {
      throw session::UsageError("--" + name + " is not an option of scheme " + scheme.name);
    }
  }
  const std::string backend_name = args.value_or("backend", "emulator");
  const long long threads = args.integer("threads").value_or(0);
  if (threads < 0 || threads > 4096) throw session::UsageError("--threads must be in [0, 4096]");
  GemmProblem p;
  p.alpha = args.number_or("alpha", 1.0);
  p.beta = args.number_or("beta", 0.0);
  const bool from_files = args.value("a") || args.value("b");
  const Reference reference =
      reference_named(args.value_or("reference", from_files ? "none" : "mpfr"));
  // The direction the Ozaki schemes' --rounding asks for (they refuse a bad word): the
  // reference's too, by MPFR.
  const fp64::Direction rounding = ozaki::rounding_by_name(args.value_or("rounding", "nearest"))
                                       .value_or(fp64::Direction::nearest_even);
  if (rounding != fp64::Direction::nearest_even && reference == Reference::exact) {
    throw session::UsageError(
        "--reference exact rounds to nearest only: use --reference mpfr with --rounding");
  }
  const Progress::Show show = Progress::show_named(args.value_or("progress", "auto"));
  Progress progress(show);
  if (from_files) {
    if (!args.value("a") || !args.value("b")) throw session::UsageError("give both --a and --b");
    if (!args.value("out")) throw session::UsageError("--out FILE is required with --a and --b");
    for (const char* drawn : {"m", "n", "k", "phi", "seed"}) {
      if (args.value(drawn)) {
        throw session::UsageError("--" + std::string(drawn) +
                                  " is for generated inputs, not with --a and --b");
      }
    }
    const DenseMatrix a = read_matrix_file(*args.value("a"), scheme.element);
    const DenseMatrix b = read_matrix_file(*args.value("b"), scheme.element);
    if (a.cols != b.rows) {
      throw session::UsageError("A is " + std::to_string(a.rows) + " x " + std::to_string(a.cols) +
                                " but B has " + std::to_string(b.rows) + " rows");
    }
    p.m = a.rows;
    p.k = a.cols;
    p.n = b.cols;
    p.a = a.values;
    p.b = b.values;
    if (reference != Reference::none && p.beta != 0.0) {
      throw session::UsageError("--reference " + *args.value("reference") + " needs --beta 0");
    }
    if (const auto c_file = args.value("c")) {
      const DenseMatrix c = read_matrix_file(*c_file, scheme.element);
      if (c.rows != p.m || c.cols != p.n)
        throw session::UsageError("C must be " + std::to_string(p.m) + " x " + std::to_string(p.n));
      p.c = c.values;
    } else {
      if (p.beta != 0.0) throw session::UsageError("--beta needs --c");
      naming_size("C, " + shape(p.m, p.n), p.m * p.n,
                  [&] { p.c.assign(static_cast<std::size_t>(p.m * p.n), 0.0); });
    }
  } else {
    if (args.value("c") || args.value("out"))
      throw session::UsageError("--c and --out go with --a and --b");
    if (p.beta != 0.0) throw session::UsageError("--beta needs --c");
    p.m = dimension(args, "m");
    p.n = dimension(args, "n");
    p.k = dimension(args, "k");
    // The spread of the magnitudes, exp(PHI randn): a finite PHI >= 0 (-PHI draws the same).
    const double phi = args.number_or("phi", 1.0);
    if (!(std::isfinite(phi) && phi >= 0.0)) {
      throw session::UsageError("--phi must be a finite number >= 0, got " +
                                printable(*args.value("phi")));
    }
    std::mt19937_64 rng(static_cast<std::uint64_t>(args.integer("seed").value_or(1)));
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    std::normal_distribution<double> normal;
    auto draw = [&](std::int64_t count) {
      std::vector<double> x(static_cast<std::size_t>(count));
      for (double& v : x) {
        v = (uniform(rng) - 0.5) * std::exp(phi * normal(rng));
        if (scheme.element == Real::fp32) v = static_cast<float>(v);
      }
      return x;
    };
    p.a = naming_size("A, " + shape(p.m, p.k), p.m * p.k, [&] { return draw(p.m * p.k); });
    p.b = naming_size("B, " + shape(p.k, p.n), p.k * p.n, [&] { return draw(p.k * p.n); });
    naming_size("C, " + shape(p.m, p.n), p.m * p.n,
                [&] { p.c.assign(static_cast<std::size_t>(p.m * p.n), 0.0); });
  }

  const session::BackendChoice& choice = session::backend_choice(backend_name);
  // A scheme that reports its steps may give up batching for it (the Ozaki schemes' tensor-core
  // products): on the GPU, where runs are short and batches count, only with --progress always.
  ProgressHook hook;
  if (show == Progress::Show::always || (show == Progress::Show::automatic && !choice.gpu)) {
    hook = [&](double fraction) { progress.update(fraction); };
  }
  auto backend = session::make_backend(choice, {.threads = static_cast<int>(threads)});
  const auto start = std::chrono::steady_clock::now();
  progress.phase(scheme.name);
  const std::vector<std::string> lines =
      naming_size(scheme.name + " on " + shape(p.m, p.n) + " x " + std::to_string(p.k),
                  p.m * p.k + p.k * p.n + p.m * p.n,
                  [&] { return scheme.run(args, *backend, choice, p, hook); });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.end_phase();

  std::cout << scheme.name << " on " << backend_name << ": " << p.m << " x " << p.n << " x " << p.k
            << ", " << std::setprecision(3) << seconds << " s\n";
  for (const std::string& line : lines) std::cout << line << '\n';
  if (from_files) write_matrix_file(*args.value("out"), {p.m, p.n, p.c}, scheme.element);
  if (reference == Reference::none) return 0;
  // The reference: the correctly rounded A B, then the BLAS epilogue every scheme applies
  // in its working precision, RN(alpha s) (beta is 0 here). With alpha = 1 this is the correctly
  // rounded product itself, which is what the correctly rounded schemes promise; with another
  // alpha it is RN(alpha RN(A B)), and the report says so.
  const bool fp32 = scheme.element == Real::fp32;
  progress.phase(reference == Reference::mpfr ? "MPFR reference" : "exact reference");
  std::vector<double> exact = naming_size("the reference, " + shape(p.m, p.n), p.m * p.n, [&] {
    return correctly_rounded(p, fp32, reference, rounding, static_cast<int>(threads), progress);
  });
  progress.end_phase();
  const bool scaled = std::bit_cast<std::uint64_t>(p.alpha) != std::bit_cast<std::uint64_t>(1.0);
  if (scaled) {
    for (double& e : exact) {
      e = fp32 ? static_cast<double>(static_cast<float>(p.alpha) * static_cast<float>(e))
               : p.alpha * e;
      if (e == 0.0) e = 0.0;  // BLAS's C = 0 + alpha s: +0
    }
  }
  double worst = 0.0;
  std::int64_t wrong = 0;
  for (std::size_t e = 0; e < exact.size(); ++e) {
    const bool both_nan = std::isnan(exact[e]) && std::isnan(p.c[e]);
    // NaN against NaN agrees whatever its sign and payload (IEEE 754 leaves them open).
    if (!both_nan && std::bit_cast<std::uint64_t>(exact[e]) != std::bit_cast<std::uint64_t>(p.c[e]))
      ++wrong;
    // A NaN anywhere (or an Inf that differs) shows in the maximum as NaN, which std::fmax
    // would drop.
    if (std::isnan(exact[e]) || std::isnan(p.c[e]) ||
        (!(std::isfinite(exact[e]) && std::isfinite(p.c[e])) && exact[e] != p.c[e])) {
      worst = std::numeric_limits<double>::quiet_NaN();
    } else if (std::isfinite(exact[e]) && exact[e] != 0.0 && !std::isnan(worst)) {
      worst = std::max(worst, std::fabs(p.c[e] - exact[e]) / std::fabs(exact[e]));
    }
  }
  const std::string against = rounding != fp64::Direction::nearest_even
                                  ? std::string("A B rounded ") + ozaki::rounding_name(rounding)
                              : scaled ? (fp32 ? "RN(alpha x correctly rounded A B) in fp32"
                                               : "RN(alpha x correctly rounded A B) in fp64")
                                       : "the correctly rounded A B";
  if (!from_files) std::cout << "phi " << args.number_or("phi", 1.0) << ": ";
  std::cout << "against " << against << ": max relative error " << std::setprecision(3) << worst
            << ", elements not correctly rounded " << wrong << " of " << exact.size() << '\n';
  return 0;
}

}  // namespace tcemu::cli
