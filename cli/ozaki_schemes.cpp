// dgemm-tc and sgemm-tc for `tcemu gemm`: the Ozaki handle (ozaki/handle.hpp) on the chosen
// backend, with the slice products the backend choice implies (tcemu/session/backends.hpp):
// binary64 slices (DGEMM-DP-CR, --backend cpu64) or tensor-core products through the datapath the
// datapath options describe. dgemm-int8 and sgemm-int8: the same handle with int8 slices and
// integer tensor-core products (ozaki::IntegerProducts) on any backend; dgemm-crt and sgemm-crt:
// Ozaki scheme II (ozaki::CrtProducts).
#include <iomanip>
#include <limits>
#include <sstream>

#include <tcemu/backend/crt_bounds.hpp>
#include <tcemu/backend/crt_moduli.hpp>
#include <tcemu/cases/printable.hpp>
#include <tcemu/ozaki/handle.hpp>
#include <tcemu/session/products.hpp>
#include <tcemu/session/tunable_count.hpp>

#include "datapath_options.hpp"
#include "gemm_schemes.hpp"

namespace tcemu::cli {
namespace {

using session::OzakiSlices;

ozaki::Options ozaki_options(const session::Arguments& args, Real element, OzakiSlices kind) {
  ozaki::Options o;
  const std::string mode = args.value_or("mode", element == Real::fp64 ? "dp" : "sp");
  const std::optional<ozaki::Mode> named = ozaki::mode_by_name(mode);
  if (!named)
    throw session::UsageError("--mode must be dp, cr, sp or tunable, got '" + printable(mode) +
                              "'");
  o.mode = *named;
  // Tunable mode's count: required there, refused in the modes that choose their own.
  const bool crt = kind == OzakiSlices::crt;
  const std::string count = crt ? "moduli" : "splits";
  const auto text = args.value(count);
  std::string expected;
  const auto d = session::tunable_count(o.mode, crt, text, "--mode tunable", expected);
  if (!d) {
    throw session::UsageError(text ? "--" + count + " " + printable(*text) + " is not " + expected
                                   : "--" + count + " is missing: " + expected);
  }
  o.splits = *d;
  if (const auto word = args.value("rounding")) {
    const auto direction = ozaki::rounding_by_name(*word);
    if (!direction) {
      throw session::UsageError(
          "--rounding must be nearest, upward, downward or toward-zero, got '" + printable(*word) +
          "'");
    }
    o.rounding = *direction;
    if (o.rounding != fp64::Direction::nearest_even &&
        (o.mode != ozaki::Mode::cr || args.number_or("alpha", 1.0) != 1.0 ||
         args.number_or("beta", 0.0) != 0.0)) {
      throw session::UsageError("--rounding " + *word +
                                " needs --mode cr and C := A B (--alpha 1, --beta 0)");
    }
  }
  const std::string fast = args.value_or("fast", "on");
  if (fast != "on" && fast != "off") throw session::UsageError("--fast must be on or off");
  o.fast = fast == "on";
  if (const auto s = args.integer("max-splits")) {
    if (*s < 1 || *s > 10000) throw session::UsageError("--max-splits must be in [1, 10000]");
    o.max_splits = static_cast<int>(*s);
  }
  if (const auto mib = args.integer("workspace-mib")) {
    // In bytes it must stay below 2^63 (sizes and offsets are added in 64 bits): at most
    // 2^43 - 1 MiB.
    constexpr long long kMaxMib =
        static_cast<long long>(std::numeric_limits<std::size_t>::max() >> 20 >> 1);
    if (*mib < 1 || *mib > kMaxMib) {
      throw session::UsageError("--workspace-mib must be in [1, " + std::to_string(kMaxMib) +
                                "], got " + std::to_string(*mib));
    }
    o.workspace_bytes = static_cast<std::size_t>(*mib) << 20;
  }
  return o;
}

std::vector<std::string> describe(const ozaki::Report& r, OzakiSlices kind) {
  std::ostringstream line;
  if (kind == OzakiSlices::crt) {
    line << "moduli: " << r.slices_a << ", integers of up to " << r.slice_bits
         << " bits, int8 GEMMs: " << r.gemms << ", blocks: " << r.blocks;
    if (r.dp_bound_terms != 0) {
      line << ", dp's bound of |A||B|: ";
      if (r.dp_bound_bits == crt_elements::kBoundUncertified) {
        line << "uncertified (some element's quanta do not meet)";
      } else if (r.dp_bound_bits == crt_elements::kNoNeed) {
        line << "no element needs any";
      } else {
        line << "norm bits " << r.dp_bound_bits << " (on " << r.dp_bound_terms << " of k's terms)";
      }
    }
    if (!r.dp_bound_met) line << " NOT MET: the 48 moduli do not reach it";
  } else {
    line << "slices of A: " << r.slices_a << ", of B: " << r.slices_b << " (" << r.slice_bits
         << " bits each), GEMMs: " << r.gemms << ", blocks: " << r.blocks;
  }
  std::ostringstream times;
  times << std::setprecision(3) << "time (s): split A " << r.seconds_split_a << ", split B "
        << r.seconds_split_b << ", products " << r.seconds_products << ", summation "
        << r.seconds_summation;
  return {line.str(), times.str()};
}

GemmScheme ozaki_entry(const std::string& name, Real element, OzakiSlices kind) {
  GemmScheme s;
  s.name = name;
  s.element = element;
  if (kind == OzakiSlices::crt) {
    s.summary = element == Real::fp64
                    ? "Ozaki scheme II (CRT, GEMMul8-style) on int8 integer tensor cores: modes dp "
                      "(FP64 accuracy), cr (correctly rounded), tunable (--moduli N)"
                    : "Ozaki scheme II (CRT) for fp32 operands: modes sp, cr (correctly rounded "
                      "to fp32), tunable (--moduli N)";
  } else if (kind == OzakiSlices::int8) {
    s.summary = element == Real::fp64 ? "Ozaki-I on int8 slices and integer tensor cores "
                                        "(ozIMMU-style): modes dp, cr, tunable"
                                      : "Ozaki-I on int8 slices for fp32 operands: modes sp, "
                                        "cr, tunable";
  } else {
    s.summary = element == Real::fp64
                    ? "Ozaki scheme DGEMM-TC (Mukunoki et al. 2020): modes dp, cr, tunable"
                    : "Ozaki scheme SGEMM-TC on fp32 operands: modes sp, cr, tunable";
  }
  if (kind == OzakiSlices::floating) s.options = datapath_option_names();
  if (kind == OzakiSlices::crt) {
    for (const char* o : {"mode", "moduli", "workspace-mib"}) s.options.insert(o);
    s.options.insert("rounding");
    s.options_help = R"(Ozaki scheme II options:
  --mode M               cr: as many moduli as hold A and B exactly (the correctly rounded
                         product, in C's format); sp (default for sgemm-crt): the same,
                         rounded to binary64, then to fp32 (twice);
                         dp (default for dgemm-crt): rows of A and columns of B scaled by
                         their Euclidean norms, with the fewest moduli (15 or more) that keep
                         every element within DGEMM's classical bound k 2^-53 (|A||B|)_ij,
                         judged from a lower bound of |A||B| by one more int8 GEMM (on the
                         leading k / 16 terms where those ask for at most one modulus more;
                         more moduli for widely spread inputs); cr's moduli when fewer; when the
                         bound cannot be certified, cr's if they fit, else all 48 (reported);
                         tunable: --moduli N, scaled to the widest norms they allow
  --moduli N             tunable mode: N of the 48 moduli (a fixed count; refused in the others)
  --rounding R           --mode cr: the exact product rounded once nearest (default), upward,
                         downward or toward-zero: downward and upward give the tightest
                         binary64 (sgemm-crt: binary32) bounds of A B (C := A B only:
                         --alpha 1, --beta 0)
  --workspace-mib N      backend workspace (default 512); m and n are blocked to fit
One int8 GEMM per modulus (the GPU: cublasGemmEx int8 -> int32; the emulator: its integer MMA),
the product rebuilt by the Chinese remainder theorem and rounded once.
)";
  } else {
    for (const char* o : {"mode", "splits", "fast", "max-splits", "workspace-mib"})
      s.options.insert(o);
    s.options.insert("rounding");
    s.options_help = std::string(R"(Ozaki options:
  --mode M               dp (default for dgemm-*), cr (correctly rounded), sp (default for
                         sgemm-*), tunable
  --splits d             slices of A and of B in tunable mode (refused in the others)
  --fast on|off          tunable mode: only the pairs p + q <= d + 1 (default on)
  --max-splits N         dp, sp, cr: the most slices per matrix (default 48); dp and cr
                         refuse operands that need more, sp stops there
  --rounding R           --mode cr: the exact product rounded once nearest (default), upward,
                         downward or toward-zero: downward and upward give the tightest
                         binary64 (sgemm-*: binary32) bounds of A B (C := A B only: --alpha 1,
                         --beta 0)
  --workspace-mib N      backend workspace (default 512); m and n are blocked to fit
)") + (kind == OzakiSlices::int8
           ? R"(Slices are int8 integers of 6 bits (and sign), multiplied exactly by the backend's
integer GEMM (the GPU: cublasGemmEx int8 -> int32; the emulator: its integer MMA).
)"
           : R"(The tensor-core slice products run on the datapath the datapath options below describe
(--type default fp16); --backend cpu64 multiplies binary64 slices instead and ignores them.
)");
  }
  s.run = [element, kind](const session::Arguments& args, Backend& backend,
                          const session::BackendChoice& choice, GemmProblem& p,
                          const ProgressHook& progress) {
    const ozaki::Products products = session::ozaki_products(choice.products, kind, [&] {
      const Datapath dp = datapath_from(args);
      require_one_format_without_scales(dp, "the Ozaki scheme");
      return dp;
    });
    ozaki::Options options = ozaki_options(args, element, kind);
    options.progress = progress;
    ozaki::Handle h(backend, products, options);
    if (element == Real::fp64) {
      h.dgemm('N', 'N', p.m, p.n, p.k, p.alpha, p.a.data(), std::max<std::int64_t>(1, p.m),
              p.b.data(), std::max<std::int64_t>(1, p.k), p.beta, p.c.data(),
              std::max<std::int64_t>(1, p.m));
    } else {
      std::vector<float> a(p.a.begin(), p.a.end()), b(p.b.begin(), p.b.end()),
          c(p.c.begin(), p.c.end());
      h.sgemm('N', 'N', p.m, p.n, p.k, static_cast<float>(p.alpha), a.data(),
              std::max<std::int64_t>(1, p.m), b.data(), std::max<std::int64_t>(1, p.k),
              static_cast<float>(p.beta), c.data(), std::max<std::int64_t>(1, p.m));
      p.c.assign(c.begin(), c.end());
    }
    return describe(h.report(), kind);
  };
  return s;
}

}  // namespace

std::vector<GemmScheme> ozaki_schemes() {
  return {ozaki_entry("dgemm-tc", Real::fp64, OzakiSlices::floating),
          ozaki_entry("sgemm-tc", Real::fp32, OzakiSlices::floating),
          ozaki_entry("dgemm-int8", Real::fp64, OzakiSlices::int8),
          ozaki_entry("sgemm-int8", Real::fp32, OzakiSlices::int8),
          ozaki_entry("dgemm-crt", Real::fp64, OzakiSlices::crt),
          ozaki_entry("sgemm-crt", Real::fp32, OzakiSlices::crt)};
}

}  // namespace tcemu::cli
