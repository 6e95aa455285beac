// tcemu explain: the Ozaki scheme's error-free steps on a small product, one step at a time, run
// through the same Backend steps the scheme uses (split_level, mma_gemm, accumulate_scaled,
// exact_sum) on the emulator.
#include <bit>
#include <charconv>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <tcemu/backend/backend.hpp>
#include <tcemu/emulator/case_file.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/matrix.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/ozaki/split_rule.hpp>
#include <tcemu/reference/exact_gemm.hpp>

#include "commands.hpp"
#include "datapath_options.hpp"

namespace tcemu::cli {
namespace {

constexpr const char* kUsage =
    R"(usage: tcemu explain [--x LIST --y LIST | --a LIST --b LIST] [--splits d]
                     [datapath options]

Shows each error-free step of the Ozaki scheme on a dot product x . y (--x, --y: k numbers,
comma or space separated, decimal or C hex floats such as 0x1.8p-3) or on a 2 x 2 product A B
(--a, --b: 4 numbers each, row major): the slices of every row of A and column of B with their
bits, each slice product on the emulated tensor cores and why it is exact, and the summation,
in FP64 (DP mode) and exactly rounded once (CR mode). Without --splits the split runs until the
remainders are zero. Default: x = (1e16, 1, -1e16, 0.1), y = (1, 1, 1, 3), where the plain
FP64 dot product loses the 1 to cancellation.

)";

std::vector<double> numbers(const std::string& name, const std::string& text) {
  std::vector<double> v;
  std::string word;
  std::istringstream in(text);
  while (std::getline(in, word, ',')) {
    std::istringstream words(word);
    for (std::string w; words >> w;) {
      double x = 0;
      const bool hex = w.find("0x") != std::string::npos || w.find("0X") != std::string::npos;
      const char* first = w.data();
      bool negative = false;
      if (*first == '-') {
        negative = true;
        ++first;
      }
      if (hex) first += 2;
      const auto [end, error] = std::from_chars(
          first, w.data() + w.size(), x, hex ? std::chars_format::hex : std::chars_format::general);
      if (error != std::errc() || end != w.data() + w.size()) {
        throw UsageError("--" + name + ": not a number: '" + w + "'");
      }
      v.push_back(negative ? -x : x);
    }
  }
  return v;
}

std::string hex64(double v) {
  std::ostringstream s;
  s << std::hex << std::setw(16) << std::setfill('0') << std::bit_cast<std::uint64_t>(v);
  return s.str();
}

std::string show(double v) {
  std::ostringstream s;
  s << std::setprecision(17) << v << " (" << std::hexfloat << v << ")";
  return s.str();
}

template <typename T>
std::vector<T> download(Backend& backend, const Buffer& buffer, std::size_t count) {
  std::vector<T> v(count);
  backend.copy_out(buffer, v.data(), count * sizeof(T));
  return v;
}

}  // namespace

int explain_command(const std::vector<std::string>& words) {
  auto names = datapath_option_names();
  for (const char* o : {"x", "y", "a", "b", "splits"}) names.insert(o);
  const Arguments args(words, names, {"help"});
  if (args.flag("help")) {
    std::cout << kUsage << datapath_options_help();
    return 0;
  }
  std::int64_t m = 1, n = 1;
  std::vector<double> a, b;  // A m x k row major, B k x n column major
  if (args.value("a") || args.value("b")) {
    if (args.value("x") || args.value("y")) throw UsageError("give --x/--y or --a/--b");
    a = numbers("a", args.value_or("a", ""));
    const std::vector<double> b_rows = numbers("b", args.value_or("b", ""));
    if (a.size() != 4 || b_rows.size() != 4) throw UsageError("--a and --b take 4 numbers each");
    m = n = 2;
    b = {b_rows[0], b_rows[2], b_rows[1], b_rows[3]};
  } else {
    a = numbers("x", args.value_or("x", "1e16, 1, -1e16, 0.1"));
    b = numbers("y", args.value_or("y", "1, 1, 1, 3"));
    if (a.size() != b.size() || a.empty())
      throw UsageError("--x and --y need the same length >= 1");
  }
  const std::int64_t k = static_cast<std::int64_t>(a.size()) / m;
  for (double v : a) {
    if (!std::isfinite(v)) throw UsageError("explain takes finite numbers");
  }
  for (double v : b) {
    if (!std::isfinite(v)) throw UsageError("explain takes finite numbers");
  }
  const Datapath dp = datapath_from(args);
  const ozaki::Products products = ozaki::TensorCoreProducts{dp};
  const int p_bits = ozaki::exact_product_bits(products);
  const int bits = ozaki::slice_bits(products, k);
  const int max_levels = static_cast<int>(args.integer("splits").value_or(64));
  if (max_levels < 1 || max_levels > 64) throw UsageError("--splits must be in [1, 64]");

  std::cout << "Ozaki scheme on " << m << " x " << k << " times " << k << " x " << n
            << ", products on " << dp.input.name << " tensor cores with an " << dp.accumulator.name
            << " accumulator.\n\n"
            << "1. Slice width. A product of two slices is a sum of k = " << k
            << " products of integers of magnitude <= 2^b. It is exact on this datapath when\n"
            << "   k 2^(2b) < 2^P with P = " << p_bits
            << " (the bits a block result keeps, and the alignment grid is then <= 1):\n"
            << "   b = " << bits << " gives " << k << " * 2^" << 2 * bits << " = "
            << static_cast<double>(k) * std::ldexp(1.0, 2 * bits) << " < 2^" << p_bits << " = "
            << std::ldexp(1.0, p_bits) << ".\n\n";

  auto backend = host::make_emulator_backend(1);
  Buffer a_buf = backend->allocate(a.size() * 8), b_buf = backend->allocate(b.size() * 8);
  backend->copy_in(a.data(), a_buf, a.size() * 8);
  backend->copy_in(b.data(), b_buf, b.size() * 8);
  const RealMatrix ra{&a_buf, 0, Real::fp64, m, k, k, Layout::row_major};
  const RealMatrix rb{&b_buf, 0, Real::fp64, k, n, k, Layout::column_major};
  const std::size_t element = container_bytes(dp.input);

  struct Level {
    Buffer slice;
    Buffer exponent;
    BufferMatrix view;
    std::vector<std::int32_t> e;
  };
  // The value of a slice element (an integer) and its bits in the slice format.
  auto slice_value = [&](const std::vector<unsigned char>& bytes, const BufferMatrix& view,
                         std::int64_t i, std::int64_t j) {
    const ConstMatrixView host{bytes.data(), view.format, view.rows,
                               view.cols,    view.ld,     view.layout};
    const std::uint32_t bits32 = host.get(i, j);
    const float value =
        std::bit_cast<float>(convert(dp.input, formats::fp32, bits32, Rounding::nearest_even));
    return std::pair{static_cast<double>(value), to_hex(dp.input, bits32)};
  };
  // Splits x (the rows of A or the columns of B) level by level, printing each level.
  auto split = [&](const RealMatrix& x, SplitAxis axis, const char* what) {
    const bool rows = axis == SplitAxis::rows;
    const std::int64_t vectors = rows ? x.rows : x.cols;
    std::vector<Level> levels;
    std::cout << "   " << what << ":\n";
    for (int level = 1; level <= max_levels; ++level) {
      Level l{backend->allocate(static_cast<std::size_t>(k * vectors) * element),
              backend->allocate(static_cast<std::size_t>(vectors) * 4),
              {},
              std::vector<std::int32_t>(static_cast<std::size_t>(vectors))};
      l.view = {&l.slice, 0, dp.input, x.rows, x.cols, k, x.layout};
      backend->split_level(x, axis, bits, l.view, {&l.exponent, 0, vectors});
      backend->copy_out(l.exponent, l.e.data(), l.e.size() * 4);
      std::vector<unsigned char> bytes(l.slice.bytes());
      backend->copy_out(l.slice, bytes.data(), bytes.size());
      std::vector<double> rem(static_cast<std::size_t>(k * vectors));
      backend->copy_out(*x.buffer, rem.data(), rem.size() * 8);
      for (std::int64_t v = 0; v < vectors; ++v) {
        std::cout << "     level " << level << (rows ? ", row " : ", column ") << v << ": u = 2^"
                  << l.e[v] << ", slice / u =";
        for (std::int64_t p = 0; p < k; ++p) {
          const auto [value, hex] = slice_value(bytes, l.view, rows ? v : p, rows ? p : v);
          std::cout << ' ' << value << " [" << hex << ']';
        }
        std::cout << "\n       remainder:";
        for (std::int64_t p = 0; p < k; ++p) {
          std::cout << ' ' << std::hexfloat << rem[static_cast<std::size_t>(v * k + p)]
                    << std::defaultfloat;
        }
        std::cout << '\n';
      }
      levels.push_back(std::move(l));
      if (backend->all_zero(x)) {
        std::cout << "     the remainder is zero: " << what << " is exactly the sum of its "
                  << level << " scaled slices\n";
        break;
      }
    }
    // The views point at the buffers' final places (a vector's elements stay put when the
    // vector itself is moved).
    for (Level& l : levels) l.view.buffer = &l.slice;
    return levels;
  };
  std::cout
      << "2. Split (Algorithm 1). Per vector: E = exponent of the largest remainder "
         "magnitude (read from its bits),\n"
         "   u = 2^(E + 1 - b), slice = (x + sigma) - sigma with sigma = 1.5 * 2^(E + 53 - b): "
         "x rounded to a\n"
         "   multiple of u (an integer of <= b bits times u), stored as slice / u in "
      << dp.input.name << "; remainder x - slice, exact.\n";
  std::vector<Level> la = split(ra, SplitAxis::rows, m == 1 ? "x" : "rows of A");
  std::vector<Level> lb = split(rb, SplitAxis::columns, m == 1 ? "y" : "columns of B");

  std::cout << "\n3. Products of slices on the emulated tensor cores (" << dp.input.name << " x "
            << dp.input.name << " -> " << dp.accumulator.name
            << "), in level order p + q = 2, 3, ...:\n"
               "   each is an integer sum of k products of integers <= 2^"
            << bits << " in magnitude, below 2^" << p_bits
            << ": exact in any order. Scaled by 2^(e_A + e_B) it is exact in binary64.\n";
  Buffer product = backend->allocate(static_cast<std::size_t>(m * n) * 4);
  const BufferMatrix product_view{&product, 0, formats::fp32, m, n, m, Layout::column_major};
  const RealMatrix product_real{&product, 0, Real::fp32, m, n, m, Layout::column_major};
  const std::size_t stride = static_cast<std::size_t>(m * n) * 8;
  const std::size_t pairs = la.size() * lb.size();
  Buffer stack = backend->allocate(pairs * stride);
  Buffer dp_sum = backend->allocate(stride);
  const RealMatrix dp_view{&dp_sum, 0, Real::fp64, m, n, m, Layout::column_major};
  const OuterExponents base{{&la[0].exponent, 0, m}, {&lb[0].exponent, 0, n}};
  std::int64_t issued = 0;
  for (std::size_t level = 2; level <= la.size() + lb.size(); ++level) {
    for (std::size_t p = 1; p < level; ++p) {
      const std::size_t q = level - p;
      if (p > la.size() || q > lb.size()) continue;
      backend->mma_gemm(dp, {.alpha = 1.0f, .beta = 0.0f}, la[p - 1].view, lb[q - 1].view,
                        std::nullopt, product_view);
      std::vector<float> values(static_cast<std::size_t>(m * n));
      backend->copy_out(product, values.data(), values.size() * 4);
      const RealMatrix layer{&stack,
                             static_cast<std::size_t>(issued) * stride,
                             Real::fp64,
                             m,
                             n,
                             m,
                             Layout::column_major};
      const OuterExponents scale{{&la[p - 1].exponent, 0, m}, {&lb[q - 1].exponent, 0, n}};
      backend->accumulate_scaled(product_real, scale, base, layer, true);
      backend->accumulate_scaled(product_real, scale, base, dp_view, issued == 0);
      std::cout << "   A" << p << " B" << q << ":";
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
          const double term =
              std::ldexp(static_cast<double>(values[j * m + i]), la[p - 1].e[i] + lb[q - 1].e[j]);
          std::cout << "  (" << i << "," << j << ") " << values[j * m + i] << " [fp32 "
                    << to_hex(formats::fp32, std::bit_cast<std::uint32_t>(values[j * m + i]))
                    << "] * 2^" << la[p - 1].e[i] + lb[q - 1].e[j] << " = " << std::hexfloat << term
                    << std::defaultfloat;
        }
      }
      std::cout << '\n';
      ++issued;
    }
  }
  Buffer cr_sum = backend->allocate(stride);
  const RealMatrix cr_view{&cr_sum, 0, Real::fp64, m, n, m, Layout::column_major};
  backend->exact_sum({{&stack, 0, Real::fp64, m, n, m, Layout::column_major}, issued, stride}, base,
                     cr_view);
  Buffer dp_out = backend->allocate(stride);
  const RealMatrix dp_out_view{&dp_out, 0, Real::fp64, m, n, m, Layout::column_major};
  backend->epilogue(dp_view, base, 1.0, 0.0, std::nullopt, std::nullopt, std::nullopt, dp_out_view);
  std::vector<double> dp_result(static_cast<std::size_t>(m * n)), cr_result(dp_result.size());
  backend->copy_out(dp_out, dp_result.data(), stride);
  backend->copy_out(cr_sum, cr_result.data(), stride);

  // Column-major copies for the oracle and the plain product.
  std::vector<double> a_cm(static_cast<std::size_t>(m * k));
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t p = 0; p < k; ++p) a_cm[p * m + i] = a[i * k + p];
  }
  const std::vector<double> exact = reference::correctly_rounded_gemm(m, n, k, a_cm, b, false, 1);
  std::cout << "\n4. Summation of the " << issued
            << " scaled products (each exact, relative to 2^(e_A1 + e_B1)):\n";
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double plain = 0.0;
      for (std::int64_t p = 0; p < k; ++p) plain = plain + a[i * k + p] * b[j * k + p];
      const auto e = static_cast<std::size_t>(j * m + i);
      std::cout << "   (" << i << "," << j << ")\n"
                << "     FP64 in level order (DP mode):    " << show(dp_result[e]) << '\n'
                << "     exact sum rounded once (CR mode): " << show(cr_result[e]) << '\n'
                << "     correctly rounded (MPFR):         " << show(exact[e]) << '\n'
                << "     plain FP64 dot product:           " << show(plain) << '\n';
    }
  }
  std::cout << "   bits: CR " << hex64(cr_result[0]) << ", MPFR " << hex64(exact[0]) << '\n';
  return 0;
}

}  // namespace tcemu::cli
