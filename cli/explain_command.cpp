// tcemu explain: the topics (explain/topics.hpp) and the first of them, the Ozaki scheme's
// error-free steps on a small product, one step at a time, run through the same Backend steps the
// scheme uses (split_level, mma_gemm, accumulate_scaled, exact_sum) on the emulator. Without a
// topic, `tcemu explain` is `tcemu explain ozaki`.
#include <algorithm>
#include <bit>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <tcemu/backend/backend.hpp>
#include <tcemu/cases/case_file.hpp>
#include <tcemu/cases/printable.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/matrix.hpp>
#include <tcemu/host/host_backends.hpp>
#include <tcemu/ozaki/level_order.hpp>
#include <tcemu/ozaki/split_rule.hpp>
#include <tcemu/reference/exact_gemm.hpp>

#include "commands.hpp"
#include "datapath_options.hpp"
#include "explain/document.hpp"
#include "explain/topics.hpp"
#include "explain/values.hpp"

namespace tcemu::cli {
namespace {

constexpr const char* kUsage =
    R"(usage: tcemu explain [ozaki] [--x LIST --y LIST | --a LIST --b LIST] [--splits d]
                             [datapath options] [--format F]

Shows each error-free step of the Ozaki scheme on a dot product x . y (--x, --y: k numbers,
comma or space separated) or on a 2 x 2 product A B (--a, --b: 4 numbers each, row major): the
slices of every row of A and column of B with their bits, each slice product on the emulated
tensor cores and why it is exact, and the summation, in FP64 (DP mode) and exactly rounded once
(CR mode), then why the slice width (rho) is what it is, for fp16 and int8 slices. Without --splits the split runs until the
remainders are zero. Default: x = (1e16, 1, -1e16, 0.1), y = (1, 1, 1, 3), where the plain
FP64 dot product loses the 1 to cancellation.

)";

std::string show(double v) {
  std::ostringstream s;
  s << std::setprecision(17) << v << " (" << std::hexfloat << v << ")";
  return s.str();
}

// The product A B to explain: A m x k row major, B k x n column major, every number finite.
struct Operands {
  std::int64_t m = 1, n = 1, k = 0;
  std::vector<double> a, b;
};

// The operands of --x and --y (a dot product: 1 x k times k x 1; by default the cancelling
// example of the usage text) or of --a and --b (2 x 2 times 2 x 2, both row major). Throws
// UsageError for a malformed, missing or non-finite number or mismatched lengths.
Operands read_operands(const session::Arguments& args) {
  Operands x;
  if (args.value("a") || args.value("b")) {
    if (args.value("x") || args.value("y")) throw session::UsageError("give --x/--y or --a/--b");
    x.a = explain::numbers("--a", args.value_or("a", ""));
    const std::vector<double> b_rows = explain::numbers("--b", args.value_or("b", ""));
    if (x.a.size() != 4 || b_rows.size() != 4)
      throw session::UsageError("--a and --b take 4 numbers each");
    x.m = x.n = 2;
    x.b = {b_rows[0], b_rows[2], b_rows[1], b_rows[3]};
  } else {
    x.a = explain::numbers("--x", args.value_or("x", "1e16, 1, -1e16, 0.1"));
    x.b = explain::numbers("--y", args.value_or("y", "1, 1, 1, 3"));
    if (x.a.size() != x.b.size() || x.a.empty())
      throw session::UsageError("--x and --y need the same length >= 1");
  }
  x.k = static_cast<std::int64_t>(x.a.size()) / x.m;
  for (double v : x.a) {
    if (!std::isfinite(v)) throw session::UsageError("explain takes finite numbers");
  }
  for (double v : x.b) {
    if (!std::isfinite(v)) throw session::UsageError("explain takes finite numbers");
  }
  return x;
}

// What the steps run on: the emulator backend, the datapath of the products, the inner
// dimension, the bits P a product keeps and the slice width b (split_rule.hpp).
struct Setting {
  std::ostream& out;
  Backend& backend;
  const Datapath& dp;
  std::int64_t k;
  int p_bits;
  int bits;
};

// Step 1: prints why b bits per slice make every slice product exact on the datapath.
void show_slice_width(const Setting& s, const Operands& x) {
  s.out << "Ozaki scheme on " << x.m << " x " << s.k << " times " << s.k << " x " << x.n
        << ", products on " << s.dp.input.name << " tensor cores with an " << s.dp.accumulator.name
        << " accumulator.\n\n"
        << "1. Slice width. A product of two slices is a sum of k = " << s.k
        << " products of integers of magnitude <= 2^b. It is exact on this datapath when\n"
        << "   k 2^(2b) < 2^P with P = " << s.p_bits
        << " (the bits a block result keeps, and the alignment grid is then <= 1):\n"
        << "   b = " << s.bits << " gives " << s.k << " * 2^" << 2 * s.bits << " = "
        << static_cast<double>(s.k) * std::ldexp(1.0, 2 * s.bits) << " < 2^" << s.p_bits << " = "
        << std::ldexp(1.0, s.p_bits) << ".\n\n";
}

// One level of the split of the rows of A or the columns of B: the slice (integers, in the
// datapath's input format) and the exponent of its unit per vector, on the backend, with a
// host copy of the exponents.
struct Level {
  Buffer slice;
  Buffer exponent;
  BufferMatrix view;
  std::vector<std::int32_t> e;
};

// The value of element (i, j) of a slice (an integer) and its bits in the slice format, from
// the slice's bytes copied to the host.
std::pair<double, std::string> slice_value(const Setting& s,
                                           const std::vector<unsigned char>& bytes,
                                           const BufferMatrix& view, std::int64_t i,
                                           std::int64_t j) {
  const ConstMatrixView host{bytes.data(), view.format, view.rows, view.cols, view.ld, view.layout};
  const std::uint32_t bits32 = host.get(i, j);
  const float value =
      std::bit_cast<float>(convert(s.dp.input, formats::fp32, bits32, Rounding::nearest_even));
  return {static_cast<double>(value), to_hex(s.dp.input, bits32)};
}

// Step 2, for x (the rows of A or the columns of B, by `axis`): splits x level by level with
// Backend::split_level, x becoming the remainder, and prints each level's units, slices and
// remainders, until the remainder is zero or after max_levels levels. Returns the levels.
std::vector<Level> split_levels(const Setting& s, const RealMatrix& x, SplitAxis axis,
                                const char* what, int max_levels) {
  const bool rows = axis == SplitAxis::rows;
  const std::int64_t vectors = rows ? x.rows : x.cols;
  const std::int64_t k = s.k;
  std::vector<Level> levels;
  s.out << "   " << what << ":\n";
  for (int level = 1; level <= max_levels; ++level) {
    Level l{s.backend.allocate(static_cast<std::size_t>(k * vectors) * container_bytes(s.dp.input)),
            s.backend.allocate(static_cast<std::size_t>(vectors) * 4),
            {},
            std::vector<std::int32_t>(static_cast<std::size_t>(vectors))};
    l.view = {&l.slice, 0, s.dp.input, x.rows, x.cols, k, x.layout};
    s.backend.split_level(x, axis, s.bits, l.view, {&l.exponent, 0, vectors});
    s.backend.copy_out(l.exponent, l.e.data(), l.e.size() * 4);
    std::vector<unsigned char> bytes(l.slice.bytes());
    s.backend.copy_out(l.slice, bytes.data(), bytes.size());
    std::vector<double> rem(static_cast<std::size_t>(k * vectors));
    s.backend.copy_out(*x.buffer, rem.data(), rem.size() * 8);
    for (std::int64_t v = 0; v < vectors; ++v) {
      s.out << "     level " << level << (rows ? ", row " : ", column ") << v << ": u = 2^"
            << l.e[v] << ", slice / u =";
      for (std::int64_t p = 0; p < k; ++p) {
        const auto [value, hex] = slice_value(s, bytes, l.view, rows ? v : p, rows ? p : v);
        s.out << ' ' << value << " [" << hex << ']';
      }
      s.out << "\n       remainder:";
      for (std::int64_t p = 0; p < k; ++p) {
        s.out << ' ' << std::hexfloat << rem[static_cast<std::size_t>(v * k + p)]
              << std::defaultfloat;
      }
      s.out << '\n';
    }
    levels.push_back(std::move(l));
    if (s.backend.all_zero(x)) {
      s.out << "     the remainder is zero: " << what << " is exactly the sum of its " << level
            << " scaled slices\n";
      break;
    }
  }
  // The views point at the buffers' final places (a vector's elements stay put when the
  // vector itself is moved).
  for (Level& l : levels) l.view.buffer = &l.slice;
  return levels;
}

// The products of step 3, each scaled relative to 2^(e_A1 + e_B1) (`base`): one per m x n
// layer of `stack` (column major, `stride` bytes apart) in the order issued, and their FP64 sum
// in that order (`dp_sum`).
struct ScaledProducts {
  Buffer stack;
  Buffer dp_sum;
  std::size_t stride = 0;
  std::int64_t issued = 0;
  OuterExponents base{};
};

// Step 3: multiplies the slice pairs of `order` (ozaki::product_levels: the scheme's level
// order, CR mode's pairs) on the emulated tensor cores, printing each product, its bits and its
// scaled value; scales each into its own layer (CR's input) and adds those of `dp_order` (DP
// mode's pairs) to the FP64 sum (DP's).
ScaledProducts multiply_levels(const Setting& s, std::int64_t m, std::int64_t n,
                               const std::vector<Level>& la, const std::vector<Level>& lb,
                               const std::vector<std::vector<ozaki::SlicePair>>& order,
                               const std::vector<std::vector<ozaki::SlicePair>>& dp_order) {
  // DP mode's pairs are a subset of `order`, in the same level order, so summing the pairs of
  // `order` that DP takes, as they come, is DP's sum in DP's own order.
  const auto in_dp = [&](ozaki::SlicePair pair) {
    for (const auto& level : dp_order) {
      for (const ozaki::SlicePair x : level) {
        if (x.p == pair.p && x.q == pair.q) return true;
      }
    }
    return false;
  };
  bool dp_started = false;
  Backend& backend = s.backend;
  Buffer product = backend.allocate(static_cast<std::size_t>(m * n) * 4);
  const BufferMatrix product_view{&product, 0, formats::fp32, m, n, m, Layout::column_major};
  const RealMatrix product_real{&product, 0, Real::fp32, m, n, m, Layout::column_major};
  ScaledProducts out;
  out.stride = static_cast<std::size_t>(m * n) * 8;
  out.stack = backend.allocate(la.size() * lb.size() * out.stride);
  out.dp_sum = backend.allocate(out.stride);
  const RealMatrix dp_view{&out.dp_sum, 0, Real::fp64, m, n, m, Layout::column_major};
  out.base = {{&la[0].exponent, 0, m}, {&lb[0].exponent, 0, n}};
  for (const std::vector<ozaki::SlicePair>& level : order) {
    for (const auto [p, q] : level) {
      const Level& a = la[static_cast<std::size_t>(p - 1)];
      const Level& b = lb[static_cast<std::size_t>(q - 1)];
      backend.mma_gemm(s.dp, {.alpha = 1.0f, .beta = 0.0f}, a.view, b.view, std::nullopt,
                       product_view);
      std::vector<float> values(static_cast<std::size_t>(m * n));
      backend.copy_out(product, values.data(), values.size() * 4);
      const RealMatrix layer{&out.stack,
                             static_cast<std::size_t>(out.issued) * out.stride,
                             Real::fp64,
                             m,
                             n,
                             m,
                             Layout::column_major};
      const OuterExponents scale{{&a.exponent, 0, m}, {&b.exponent, 0, n}};
      backend.accumulate_scaled(product_real, scale, out.base, layer, true);
      const bool dp_takes = in_dp({p, q});
      if (dp_takes) {
        backend.accumulate_scaled(product_real, scale, out.base, dp_view, !dp_started);
        dp_started = true;
      }
      s.out << "   A" << p << " B" << q << (dp_takes ? "" : " (CR only)") << ":";
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
          const float value = values[static_cast<std::size_t>(j * m + i)];
          const int e = a.e[static_cast<std::size_t>(i)] + b.e[static_cast<std::size_t>(j)];
          const double term = std::ldexp(static_cast<double>(value), e);
          s.out << "  (" << i << "," << j << ") " << value << " [fp32 "
                << to_hex(formats::fp32, std::bit_cast<std::uint32_t>(value)) << "] * 2^" << e
                << " = " << std::hexfloat << term << std::defaultfloat;
        }
      }
      s.out << '\n';
      ++out.issued;
    }
  }
  return out;
}

// Step 4: the exact sum of the scaled products rounded once (Backend::exact_sum, CR mode) and
// their FP64 sum scaled back (Backend::epilogue, DP mode's summation), printed beside MPFR's
// correctly rounded product and the plain FP64 dot product.
void show_summation(const Setting& s, const Operands& x, const ScaledProducts& products) {
  Backend& backend = s.backend;
  const std::int64_t m = x.m, n = x.n, k = x.k;
  const std::size_t stride = products.stride;
  const OuterExponents& base = products.base;
  Buffer cr_sum = backend.allocate(stride);
  const RealMatrix cr_view{&cr_sum, 0, Real::fp64, m, n, m, Layout::column_major};
  backend.exact_sum(
      {{&products.stack, 0, Real::fp64, m, n, m, Layout::column_major}, products.issued, stride},
      base, cr_view);
  Buffer dp_out = backend.allocate(stride);
  const RealMatrix dp_view{&products.dp_sum, 0, Real::fp64, m, n, m, Layout::column_major};
  const RealMatrix dp_out_view{&dp_out, 0, Real::fp64, m, n, m, Layout::column_major};
  backend.epilogue(dp_view, base, 1.0, 0.0, std::nullopt, std::nullopt, std::nullopt, dp_out_view);
  std::vector<double> dp_result(static_cast<std::size_t>(m * n)), cr_result(dp_result.size());
  backend.copy_out(dp_out, dp_result.data(), stride);
  backend.copy_out(cr_sum, cr_result.data(), stride);

  // Column-major copies for the oracle and the plain product.
  std::vector<double> a_cm(static_cast<std::size_t>(m * k));
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t p = 0; p < k; ++p) a_cm[p * m + i] = x.a[i * k + p];
  }
  const std::vector<double> exact = reference::correctly_rounded_gemm(m, n, k, a_cm, x.b, false, 1);
  s.out << "\n4. Summation of the " << products.issued
        << " scaled products (each exact, relative to 2^(e_A1 + e_B1)):\n";
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double plain = 0.0;
      for (std::int64_t p = 0; p < k; ++p) plain = plain + x.a[i * k + p] * x.b[j * k + p];
      const auto e = static_cast<std::size_t>(j * m + i);
      s.out << "   (" << i << "," << j << ")\n"
            << "     FP64 in level order (DP mode):    " << show(dp_result[e]) << '\n'
            << "     exact sum rounded once (CR mode): " << show(cr_result[e]) << '\n'
            << "     correctly rounded (MPFR):         " << show(exact[e]) << '\n'
            << "     plain FP64 dot product:           " << show(plain) << '\n';
    }
  }
  s.out << "   bits: CR " << explain::hex64(cr_result[0]) << ", MPFR " << explain::hex64(exact[0])
        << '\n';
}

// Why the slice width b (rho = 53 - b in the split's sigma) is what it is: the rule of
// split_rule.hpp on this datapath for several k, and the same rule for int8 slices.
void show_rho(explain::Document& d, const Datapath& dp, std::int64_t k, int p_bits) {
  d.heading("Why rho (the slice width) is what it is");
  d.paragraph(
      "The split adds sigma = 0.75 x 2^(tau + rho), tau = ceil(log2 max|x|), rho = 53 - b: "
      "(x + sigma) - sigma keeps the bits of x from 2^tau down to 2^(tau - b) and the "
      "remainder is exact (Ozaki, "
      "Ogita, Oishi and Rump 2012). b is the widest slice whose products stay exact: k "
      "products of integers <= 2^b sum to at most k 2^(2b), which must stay below 2^P, "
      "the bits a product keeps (ozaki/split_rule.hpp: b = floor((P - bit_width(k)) / 2), "
      "capped by what the slice format holds).");
  const ozaki::Products products = ozaki::TensorCoreProducts{dp};
  explain::Table t{
      {"k",
       std::string(dp.input.name) + " slices on this datapath (P = " + std::to_string(p_bits) + ")",
       "rho", "int8 slices, int32 sums (P = 31, b <= 6)", "rho"},
      {}};
  std::vector<std::int64_t> ks{1, 16, 256, 4096, 65536, 1 << 20, 1 << 24};
  if (std::find(ks.begin(), ks.end(), k) == ks.end()) ks.push_back(k);
  std::sort(ks.begin(), ks.end());
  for (const std::int64_t n : ks) {
    // The int8 column is the same rule with P = 31 (an int32 sum is exact below 2^31) and the
    // cap 6 (|q| <= 2^b must fit int8's 127), as in the int8 Ozaki schemes (Ootomo, Ozaki and
    // Yokota 2024; Ozaki, Uchino and Imamura 2025); there is no int8 backend to ask.
    const int width = static_cast<int>(std::bit_width(static_cast<std::uint64_t>(n)));
    const int int8_bits = std::min((31 - width) / 2, 6);
    std::string tc = "-", tc_rho = "-";
    try {
      const int b = ozaki::slice_bits(products, n);
      tc = "b = " + std::to_string(b);
      tc_rho = std::to_string(53 - b);
    } catch (const std::invalid_argument&) {
      tc = "none (k too large)";
    }
    t.rows.push_back({std::to_string(n) + (n == k ? " (this k)" : ""), tc, tc_rho,
                      int8_bits >= 1 ? "b = " + std::to_string(int8_bits) : "none",
                      int8_bits >= 1 ? std::to_string(53 - int8_bits) : "-"});
  }
  d.table(t);
  d.why(
      "with k 2^(2b) < 2^P every partial sum of a slice product is an integer below 2^P: no "
      "alignment truncation, no rounding, any order (split_rule.hpp). Each factor 4 in k costs "
      "a bit of b, and a narrower slice means more slices for the 53 bits of binary64: rho "
      "grows with k.");
}

explain::Document ozaki_document(const session::Arguments& args) {
  const Operands x = read_operands(args);
  const Datapath dp = datapath_from(args);
  require_one_format_without_scales(dp, "the Ozaki scheme");
  const ozaki::Products products = ozaki::TensorCoreProducts{dp};
  const int p_bits = ozaki::exact_product_bits(products);
  const int bits = ozaki::slice_bits(products, x.k);
  const long long splits = args.integer("splits").value_or(64);
  if (splits < 1 || splits > 64) {
    throw session::UsageError("--splits must be in [1, 64], got " + std::to_string(splits));
  }
  const int max_levels = static_cast<int>(splits);

  std::ostringstream out;
  auto backend = host::make_emulator_backend(1);
  const Setting s{out, *backend, dp, x.k, p_bits, bits};
  show_slice_width(s, x);
  Buffer a_buf = backend->allocate(x.a.size() * 8), b_buf = backend->allocate(x.b.size() * 8);
  backend->copy_in(x.a.data(), a_buf, x.a.size() * 8);
  backend->copy_in(x.b.data(), b_buf, x.b.size() * 8);
  const RealMatrix ra{&a_buf, 0, Real::fp64, x.m, x.k, x.k, Layout::row_major};
  const RealMatrix rb{&b_buf, 0, Real::fp64, x.k, x.n, x.k, Layout::column_major};
  s.out << "2. Split (Algorithm 1). Per vector: tau = ceil(log2 of the largest remainder "
           "magnitude) (read from its bits),\n"
           "   u = 2^(tau - b), slice = (x + sigma) - sigma with sigma = 0.75 * 2^(tau + 53 - b): "
           "x rounded to a\n"
           "   multiple of u (an integer of <= b bits times u), stored as slice / u in "
        << dp.input.name << "; remainder x - slice, exact.\n";
  const std::vector<Level> la =
      split_levels(s, ra, SplitAxis::rows, x.m == 1 ? "x" : "rows of A", max_levels);
  const std::vector<Level> lb =
      split_levels(s, rb, SplitAxis::columns, x.m == 1 ? "y" : "columns of B", max_levels);

  // The pairs in CR mode's order (every pair, level by level) for the slices split above, and
  // DP mode's: its rule with d lowered, as the scheme lowers it, to the levels after which both
  // remainders are zero (the split above stops there, or at --splits).
  const int slices_a = static_cast<int>(la.size()), slices_b = static_cast<int>(lb.size());
  const auto order = ozaki::product_levels(
      slices_a, slices_b, ozaki::pair_rule({.mode = ozaki::Mode::cr, .max_splits = max_levels}));
  ozaki::PairRule dp_rule = ozaki::pair_rule({.mode = ozaki::Mode::dp, .max_splits = max_levels});
  dp_rule.d = std::min(std::max(slices_a, slices_b), dp_rule.d);
  const auto dp_order = ozaki::product_levels(slices_a, slices_b, dp_rule);
  s.out << "\n3. Products of slices on the emulated tensor cores (" << dp.input.name << " x "
        << dp.input.name << " -> " << dp.accumulator.name
        << "), in level order p + q = 2, 3, ...:\n"
           "   each is an integer sum of k products of integers <= 2^"
        << bits << " in magnitude, below 2^" << p_bits
        << ": exact in any order. Scaled by 2^(e_A + e_B) it is exact in binary64.\n";
  const ScaledProducts scaled = multiply_levels(s, x.m, x.n, la, lb, order, dp_order);
  show_summation(s, x, scaled);
  explain::Document d("The Ozaki scheme, step by step");
  d.preformatted(out.str());
  show_rho(d, dp, x.k, p_bits);
  return d;
}

constexpr const char* kTopicsUsage =
    R"(usage: tcemu explain [TOPIC] [values] [options] [--format text|markdown|html]

Shows an error-free transformation or a tensor-core block step by step, every step computed by
the library code, with one line saying why it is exact. Topics:
)";

std::vector<explain::Topic> topics() {
  auto ozaki_options = datapath_option_names();
  for (const char* o : {"x", "y", "a", "b", "splits"}) ozaki_options.insert(o);
  return {{"ozaki", "the Ozaki scheme's split, products and summation; why rho is what it is",
           std::string(kUsage) + datapath_options_help(), ozaki_options, ozaki_document},
          explain::twosum_topic(),
          explain::twoprod_topic(),
          explain::dot2_topic(),
          explain::long_accumulator_topic(),
          explain::markidis_topic(),
          explain::block_topic(),
          explain::block_scaled_topic()};
}

}  // namespace

int explain_command(const std::vector<std::string>& words) {
  const std::vector<explain::Topic> all = topics();
  // A first word that is not an option names the topic; without one the topic is ozaki.
  const bool named = !words.empty() && !words[0].starts_with("-");
  if (!named && std::find(words.begin(), words.end(), "--help") != words.end()) {
    std::cout << kTopicsUsage;
    for (const explain::Topic& t : all) {
      std::cout << "  " << t.name << std::string(18 - t.name.size(), ' ') << t.summary << '\n';
    }
    std::cout << "\n'tcemu explain TOPIC --help' explains a topic's options. Without a topic, "
                 "tcemu explain is tcemu explain ozaki:\n\n"
              << all[0].usage << explain::kCommonOptions;
    return 0;
  }
  const std::string name = named ? words[0] : "ozaki";
  const auto topic =
      std::find_if(all.begin(), all.end(), [&](const explain::Topic& t) { return t.name == name; });
  if (topic == all.end()) {
    std::string names;
    for (const explain::Topic& t : all) names += (names.empty() ? "" : ", ") + t.name;
    throw session::UsageError("unknown topic '" + printable(name) + "' (topics: " + names + ")");
  }
  auto options = topic->value_options;
  options.insert("format");
  try {
    const session::Arguments args(
        std::vector<std::string>(words.begin() + (named ? 1 : 0), words.end()), options, {"help"});
    if (args.flag("help")) {
      std::cout << topic->usage << explain::kCommonOptions;
      return 0;
    }
    if (!topic->takes_values && !args.positional().empty()) {
      throw session::UsageError("unexpected value '" + printable(args.positional()[0]) + "'");
    }
    const explain::Format format = explain::format_named(args.value_or("format", "text"));
    std::cout << topic->run(args).render(format);
    return 0;
  } catch (const session::UsageError& e) {
    // Named in the message, so that the error says which topic's options it is about.
    if (!named) throw;
    throw session::UsageError(name + ": " + e.what());
  }
}

}  // namespace tcemu::cli
