// libFuzzer target: the LD_PRELOAD libraries' TCEMU_PRELOAD_* variables
// (session::routing_from_variables, the rule of routing_from_environment; docs/preload.md).
//
// Input: byte 0 says which of the eight variables are set (bit i: kNames[i]); the rest are their
// values in that order, each ended by a NUL byte (a value cannot hold one, as in the
// environment); a value the input runs out before is empty. Properties: a routing has the scheme
// the variable names, a mode of dp, cr or tunable, a count in [1, most_tunable_count] exactly in
// tunable mode, the minimum size and workspace in their documented ranges, and its variables
// written back as the documentation spells them give the same routing; a refusal says why, and a
// bad value's reason names its variable, quotes its value ("(unset)": the count tunable mode
// needs) and says that calls fall through.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include <tcemu/ozaki/options.hpp>
#include <tcemu/session/preload_route.hpp>
#include <tcemu/session/tunable_count.hpp>

namespace {

using namespace tcemu::session;

constexpr const char* kNames[] = {"TCEMU_PRELOAD_SCHEME",         "TCEMU_PRELOAD_MODE",
                                  "TCEMU_PRELOAD_SPLITS",         "TCEMU_PRELOAD_MODULI",
                                  "TCEMU_PRELOAD_MIN_SIZE",       "TCEMU_PRELOAD_WORKSPACE_MIB",
                                  "TCEMU_PRELOAD_WORKSPACE_GROW", "TCEMU_PRELOAD_ROUNDING"};
constexpr std::size_t kCount = std::size(kNames);

// Variable values by index into kNames (nothing: unset).
using Values = std::optional<std::string_view>[kCount];

std::optional<Routing> route(const Values& values, std::string& why, bool& bad) {
  return routing_from_variables(
      [&](const char* name) -> std::optional<std::string_view> {
        for (std::size_t i = 0; i < kCount; ++i) {
          if (std::string_view(name) == kNames[i]) return values[i];
        }
        std::fprintf(stderr, "preload env: read an undocumented variable %s\n", name);
        std::abort();
      },
      why, bad);
}

[[noreturn]] void finding(const std::string& what, const std::string& why) {
  std::fprintf(stderr, "preload env: %s (why: '%s')\n", what.c_str(), why.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  Values values;
  std::size_t at = 0;
  for (std::size_t i = 0; i < kCount; ++i) {
    if ((data[0] >> i & 1) == 0) continue;
    const std::size_t end = std::min(text.find('\0', at), text.size());
    values[i] = text.substr(std::min(at, text.size()), end - std::min(at, text.size()));
    at = end + 1;
  }
  std::string why;
  bool bad = true;
  const std::optional<Routing> r = route(values, why, bad);
  if (!r) {
    if (why.empty()) finding("a refusal without a reason", why);
    if (!bad) {
      if (values[0] && *values[0] != "off") finding("not routed for a set scheme, not bad", why);
      return 0;
    }
    // "NAME='VALUE' is not ...; calls fall through to the BLAS", NAME a variable that is set.
    const std::size_t eq = why.find("='");
    if (eq == std::string::npos || !why.ends_with("; calls fall through to the BLAS")) {
      finding("a bad value's reason is not NAME='VALUE' ...", why);
    }
    const std::string name = why.substr(0, eq);
    std::size_t i = 0;
    while (i < kCount && name != kNames[i]) ++i;
    if (i == kCount) finding("the reason names no variable", why);
    // An unset variable is bad only as the count tunable mode needs, quoted "(unset)".
    const std::string_view quoted = values[i] ? *values[i] : "(unset)";
    if (why.compare(eq + 2, quoted.size(), quoted) != 0 || why[eq + 2 + quoted.size()] != '\'') {
      finding("the reason does not quote the value", why);
    }
    if (!values[i] && (i != 2 && i != 3)) finding("an unset variable named bad", why);
    return 0;
  }
  if (bad) finding("routed with a bad value flagged", why);
  const bool crt = r->scheme == Scheme::dgemm_crt;
  const bool tunable = r->mode == tcemu::ozaki::Mode::tunable;
  if (!values[0] || *values[0] != scheme_name(r->scheme)) finding("another scheme", why);
  if (r->mode != tcemu::ozaki::Mode::dp && r->mode != tcemu::ozaki::Mode::cr && !tunable) {
    finding("a mode other than dp, cr, tunable", why);
  }
  if (tunable != (r->count > 0) || r->count > most_tunable_count(crt)) {
    finding("a count outside [1, most] in tunable mode or one outside it", why);
  }
  if (r->min_size < 0 || r->min_size > std::int64_t{1} << 62 || r->workspace_mib < 1 ||
      r->workspace_mib > std::int64_t{1} << 20) {
    finding("a minimum size or workspace out of range", why);
  }
  // Written back as docs/preload.md spells the variables: the same routing.
  const std::string count = std::to_string(r->count), min_size = std::to_string(r->min_size),
                    workspace = std::to_string(r->workspace_mib);
  Values again;
  again[0] = scheme_name(r->scheme);
  again[1] = tcemu::ozaki::mode_name(r->mode);
  if (tunable) again[crt ? 3 : 2] = count;
  again[4] = min_size;
  again[5] = workspace;
  again[6] = r->workspace_grows ? "1" : "0";
  again[7] = tcemu::ozaki::rounding_name(r->rounding);
  const std::optional<Routing> r2 = route(again, why, bad);
  if (!r2 || *r2 != *r) finding("the routing written back routes otherwise", why);
  return 0;
}
