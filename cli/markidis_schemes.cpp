// The error-corrected SGEMM schemes (markidis/presets.hpp) for `tcemu gemm`: markidis, halfhalf,
// tf32tf32, 3xtf32, bf16x3, bf16x9, ... on fp32 operands. The products run on the datapath the
// datapath options describe, with the scheme's part format as the input format.
#include <algorithm>
#include <climits>
#include <sstream>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/markidis/gemm.hpp>
#include <tcemu/markidis/presets.hpp>

#include "datapath_options.hpp"
#include "gemm_schemes.hpp"

namespace tcemu::cli {
namespace {

GemmScheme markidis_entry(const std::string& name) {
  GemmScheme s;
  s.name = name;
  const markidis::Scheme scheme = markidis::scheme_by_name(name);
  s.summary = "error-corrected SGEMM: " + markidis::describe(scheme);
  s.element = Real::fp32;
  s.options = datapath_option_names();
  s.options.insert("takeout");
  s.options_help = R"(Error-corrected SGEMM options:
  --takeout N            the accumulators that leave the Tensor Core (halfhalf's, tf32tf32's
                         hi*hi) do so every N instructions of k instead of the scheme's interval
The products run on the datapath the datapath options below describe; --type defaults to the
scheme's part format (fp16, tf32 or bf16, as in the list of schemes).
)";
  s.run = [scheme](const session::Arguments& args, Backend& backend, const session::BackendChoice&,
                   GemmProblem& p, const ProgressHook&) {
    markidis::Scheme chosen = scheme;
    const Datapath dp = datapath_from(args, std::string(scheme.part_format.name));
    require_one_format_without_scales(dp, "scheme " + scheme.name);
    std::vector<float> a(p.a.begin(), p.a.end()), b(p.b.begin(), p.b.end()),
        c(p.c.begin(), p.c.end());
    try {
      if (const auto takeout = args.integer("takeout")) {
        if (*takeout < 1) {
          throw session::UsageError("--takeout must be >= 1 (instructions), got " +
                                    std::to_string(*takeout));
        }
        // Saturated to int: every 2^31 - 1 instructions is never, in every GEMM that fits.
        chosen = markidis::with_takeout_interval(
            chosen, static_cast<int>(std::min<long long>(*takeout, INT_MAX)));
      }
      markidis::sgemm(backend, chosen, dp, 'N', 'N', p.m, p.n, p.k, static_cast<float>(p.alpha),
                      a.data(), std::max<std::int64_t>(1, p.m), b.data(),
                      std::max<std::int64_t>(1, p.k), static_cast<float>(p.beta), c.data(),
                      std::max<std::int64_t>(1, p.m));
    } catch (const std::invalid_argument& e) {
      throw session::UsageError(e.what());
    }
    p.c.assign(c.begin(), c.end());
    return std::vector<std::string>{markidis::describe(chosen),
                                    "products on " + tcemu::describe(dp)};
  };
  return s;
}

}  // namespace

std::vector<GemmScheme> markidis_schemes() {
  std::vector<GemmScheme> out;
  for (const std::string_view name : markidis::scheme_names()) {
    out.push_back(markidis_entry(std::string(name)));
  }
  return out;
}

}  // namespace tcemu::cli
