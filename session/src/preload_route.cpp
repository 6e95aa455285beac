// The DGEMM check, route and log of the LD_PRELOAD libraries (preload_route.hpp).
#include <tcemu/session/preload_route.hpp>

#include <algorithm>
#include <cfenv>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include <tcemu/backend/crt_moduli.hpp>
#include <tcemu/emulator/presets.hpp>
#include <tcemu/session/products.hpp>
#include <tcemu/session/tunable_count.hpp>

namespace tcemu::session {
namespace {

constexpr const char* kPrefix = "tcemu preload: ";

std::mutex& stderr_mutex() {
  static std::mutex m;
  return m;
}

std::optional<std::string_view> variable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string_view(value);
}

// The integer `text` in [lo, hi], or nothing.
std::optional<std::int64_t> integer_in(std::string_view text, std::int64_t lo, std::int64_t hi) {
  std::int64_t v = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (error != std::errc() || end != text.data() + text.size() || v < lo || v > hi) {
    return std::nullopt;
  }
  return v;
}

// The reason calls fall through for a bad value of `name`.
std::string bad_value(const char* name, std::string_view value, const std::string& expected) {
  return std::string(name) + "='" + std::string(value) + "' is not " + expected +
         "; calls fall through to the BLAS";
}

}  // namespace

const char* scheme_name(Scheme s) {
  switch (s) {
    case Scheme::dgemm_tc:
      return "dgemm-tc";
    case Scheme::dgemm_int8:
      return "dgemm-int8";
    case Scheme::dgemm_crt:
      return "dgemm-crt";
  }
  return "?";
}

std::optional<Routing> routing_from_environment(std::string& why) {
  bool bad = false;
  std::optional<Routing> r = routing_from_variables(variable, why, bad);
  if (bad) warn(why);
  return r;
}

std::optional<Routing> routing_from_variables(const PreloadVariables& variable, std::string& why,
                                              bool& bad_flag) {
  bad_flag = false;
  // The reason for a bad value of `name`, flagged for the report.
  const auto bad = [&](const char* name, std::string_view value, const std::string& expected) {
    bad_flag = true;
    return bad_value(name, value, expected);
  };
  Routing r;
  const auto scheme = variable("TCEMU_PRELOAD_SCHEME");
  if (!scheme || *scheme == "off") {
    why = scheme ? "TCEMU_PRELOAD_SCHEME=off" : "TCEMU_PRELOAD_SCHEME unset";
    return std::nullopt;
  }
  if (*scheme == "dgemm-tc") {
    r.scheme = Scheme::dgemm_tc;
  } else if (*scheme == "dgemm-int8") {
    r.scheme = Scheme::dgemm_int8;
  } else if (*scheme == "dgemm-crt") {
    r.scheme = Scheme::dgemm_crt;
  } else {
    why = bad("TCEMU_PRELOAD_SCHEME", *scheme, "dgemm-tc, dgemm-int8, dgemm-crt or off");
    return std::nullopt;
  }
  if (const auto mode = variable("TCEMU_PRELOAD_MODE")) {
    const auto named = ozaki::mode_by_name(*mode);
    if (!named || *named == ozaki::Mode::sp) {
      why = bad("TCEMU_PRELOAD_MODE", *mode, "dp, cr or tunable");
      return std::nullopt;
    }
    r.mode = *named;
  }
  // The count of tunable mode: slices for Ozaki-I, moduli for Ozaki-II; the other variable, or
  // either outside tunable mode, is a configuration the library would otherwise ignore.
  const bool crt = r.scheme == Scheme::dgemm_crt;
  const char* count_name = crt ? "TCEMU_PRELOAD_MODULI" : "TCEMU_PRELOAD_SPLITS";
  const char* other_name = crt ? "TCEMU_PRELOAD_SPLITS" : "TCEMU_PRELOAD_MODULI";
  if (const auto other = variable(other_name)) {
    why = bad(other_name, *other,
              std::string("used by ") + scheme_name(r.scheme) + " (it takes " + count_name + ")");
    return std::nullopt;
  }
  const auto count = variable(count_name);
  std::string count_expected;
  const auto tunable =
      tunable_count(r.mode, crt, count, "TCEMU_PRELOAD_MODE=tunable", count_expected);
  if (!tunable) {
    why = bad(count_name, count.value_or("(unset)"), count_expected);
    return std::nullopt;
  }
  r.count = *tunable;
  // An optional integer variable in [lo, hi] into *to; false (and why) for a bad value.
  const auto optional_integer = [&](const char* name, std::int64_t lo, std::int64_t hi,
                                    const char* expected, std::int64_t* to) {
    const auto text = variable(name);
    if (!text) return true;
    const auto n = integer_in(*text, lo, hi);
    if (!n) {
      why = bad(name, *text, expected);
      return false;
    }
    *to = *n;
    return true;
  };
  if (!optional_integer("TCEMU_PRELOAD_MIN_SIZE", 0, std::int64_t{1} << 62,
                        "a non-negative integer", &r.min_size) ||
      !optional_integer("TCEMU_PRELOAD_WORKSPACE_MIB", 1, std::int64_t{1} << 20,
                        "an integer in [1, 1048576] (MiB)", &r.workspace_mib)) {
    return std::nullopt;
  }
  std::int64_t grows = 1;
  if (!optional_integer("TCEMU_PRELOAD_WORKSPACE_GROW", 0, 1, "0 or 1", &grows)) {
    return std::nullopt;
  }
  r.workspace_grows = grows == 1;
  if (const auto rounding = variable("TCEMU_PRELOAD_ROUNDING")) {
    const auto named = ozaki::rounding_by_name(*rounding);
    if (!named) {
      why = bad("TCEMU_PRELOAD_ROUNDING", *rounding, "nearest, upward, downward or toward-zero");
      return std::nullopt;
    }
    r.rounding = *named;
    if (r.rounding != fp64::Direction::nearest_even) r.mode = ozaki::Mode::cr, r.count = 0;
  }
  return r;
}

Routing with_caller_rounding(Routing r, int caller_mode) {
  const fp64::Direction d = caller_mode == FE_UPWARD       ? fp64::Direction::upward
                            : caller_mode == FE_DOWNWARD   ? fp64::Direction::downward
                            : caller_mode == FE_TOWARDZERO ? fp64::Direction::toward_zero
                                                           : fp64::Direction::nearest_even;
  if (d == fp64::Direction::nearest_even) return r;
  r.mode = ozaki::Mode::cr;
  r.count = 0;
  r.rounding = d;
  r.rounding_from_caller = true;
  return r;
}

Routing for_single_precision(const Routing& r) {
  Routing single = r;
  if (single.mode == ozaki::Mode::dp) single.mode = ozaki::Mode::sp;
  return single;
}

std::unique_ptr<ozaki::Handle> make_handle(Backend& backend, const Routing& r,
                                           const std::string& tensor_core_arch) {
  ozaki::Options options;
  options.mode = r.mode;
  options.rounding = r.rounding;
  options.splits = r.count;
  options.workspace_bytes = static_cast<std::size_t>(r.workspace_mib) << 20;
  // Both libraries' backends (the emulator, the GPU) multiply floating-point slices on tensor
  // cores.
  const ozaki::Products products =
      ozaki_products(SliceProducts::tensor_cores,
                     r.scheme == Scheme::dgemm_crt    ? OzakiSlices::crt
                     : r.scheme == Scheme::dgemm_int8 ? OzakiSlices::int8
                                                      : OzakiSlices::floating,
                     [&] {
                       if (tensor_core_arch.empty())
                         throw std::runtime_error("no emulator preset for this device");
                       return preset(tensor_core_arch, formats::fp16, formats::fp32, "mma.sync");
                     });
  return std::make_unique<ozaki::Handle>(backend, products, options);
}

HandleCache::Entry& HandleCache::entry(const Routing& r) {
  return entries_[{r.scheme, r.mode, r.count, r.workspace_mib, r.workspace_grows, r.rounding}];
}

ozaki::Handle& HandleCache::handle(Backend& backend, const Routing& r,
                                   const std::string& tensor_core_arch) {
  Entry& e = entry(r);
  if (!e.handle) {
    e.handle = make_handle(backend, r, tensor_core_arch);
    e.workspace_mib = r.workspace_mib;
  }
  return *e.handle;
}

std::string HandleCache::after_call(Backend& backend, const Routing& r,
                                    const std::string& tensor_core_arch, std::size_t available) {
  Entry& e = entry(r);
  if (!e.handle || !r.workspace_grows || e.handle->report().blocks <= 1) return "";
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  const std::size_t wanted = e.handle->report().one_block_workspace;
  const auto wanted_mib = static_cast<std::int64_t>((wanted + kMiB - 1) / kMiB);
  if (wanted_mib <= e.workspace_mib) return "";
  if (wanted > available) {
    return "workspace kept at " + std::to_string(e.workspace_mib) + " MiB: one block takes " +
           std::to_string(wanted_mib) + " MiB, more than the " + std::to_string(available / kMiB) +
           " MiB it may take";
  }
  Routing grown = r;
  grown.workspace_mib = wanted_mib;
  e.handle.reset();  // the old workspace is freed before the new one is allocated
  try {
    e.handle = make_handle(backend, grown, tensor_core_arch);
  } catch (const std::exception& error) {  // handle() makes the first size again at the next call
    return "workspace not grown to " + std::to_string(wanted_mib) + " MiB (" + error.what() + ")";
  }
  e.workspace_mib = wanted_mib;
  return "workspace grown to " + std::to_string(wanted_mib) + " MiB for the next calls";
}

std::optional<std::string> refusal(const DgemmCall& c, const Routing& r, bool null_scalars) {
  if (c.transa == 0 || c.transb == 0) return "an operation other than N, T, C";
  if (c.m < 0 || c.n < 0 || c.k < 0) return "a negative dimension";
  const std::int64_t a_rows = c.transa == 'N' ? c.m : c.k;
  const std::int64_t b_rows = c.transb == 'N' ? c.k : c.n;
  if (c.lda < std::max<std::int64_t>(1, a_rows) || c.ldb < std::max<std::int64_t>(1, b_rows) ||
      c.ldc < std::max<std::int64_t>(1, c.m)) {
    return "a leading dimension too small";
  }
  if (null_scalars) return "a null alpha or beta";
  if (c.m < r.min_size || c.n < r.min_size || c.k < r.min_size) {
    return "below TCEMU_PRELOAD_MIN_SIZE=" + std::to_string(r.min_size);
  }
  return std::nullopt;
}

std::string call_shape(const DgemmCall& c) {
  std::ostringstream s;
  s << c.entry << " " << (c.transa ? c.transa : '?') << (c.transb ? c.transb : '?') << " m " << c.m
    << " n " << c.n << " k " << c.k << " lda " << c.lda << " ldb " << c.ldb << " ldc " << c.ldc;
  return s.str();
}

std::string routed_line(const DgemmCall& call, const Routing& r, const std::string& where,
                        const ozaki::Report& report, std::complex<double> alpha,
                        std::complex<double> beta, double seconds, const std::string& note) {
  const auto scalar = [](std::complex<double> x) {
    std::ostringstream s;
    if (x.imag() == 0) {
      s << x.real();
    } else {
      s << "(" << x.real() << ", " << x.imag() << ")";
    }
    return s.str();
  };
  std::ostringstream line;
  line << call_shape(call) << ": routed to " << scheme_name(r.scheme) << " mode "
       << ozaki::mode_name(r.mode);
  if (r.mode == ozaki::Mode::tunable) line << " count " << r.count;
  if (r.rounding != fp64::Direction::nearest_even) {
    line << " rounding " << ozaki::rounding_name(r.rounding)
         << (r.rounding_from_caller ? " (the caller's rounding mode)"
                                    : " (TCEMU_PRELOAD_ROUNDING)");
  }
  line << where << " (" << (r.scheme == Scheme::dgemm_crt ? "moduli " : "slices ")
       << report.slices_a;
  if (r.scheme != Scheme::dgemm_crt) line << "/" << report.slices_b;
  line << ", GEMMs " << report.gemms << ", blocks " << report.blocks << "), alpha " << scalar(alpha)
       << " beta " << scalar(beta) << ", " << seconds << " s";
  if (!note.empty()) line << "; " << note;
  return line.str();
}

std::string fell_through_line(const DgemmCall& call, const std::string& target,
                              const std::string& why) {
  return call_shape(call) + ": fell through to " + target + " (" + why + ")";
}

void warn(const std::string& message) {
  static std::set<std::string> seen;
  std::lock_guard lock(stderr_mutex());
  if (!seen.insert(message).second) return;
  std::fprintf(stderr, "%s%s\n", kPrefix, message.c_str());
  std::fflush(stderr);
}

void log_line(const std::string& line) {
  const auto target = variable("TCEMU_PRELOAD_LOG");
  if (!target || target->empty()) return;
  if (*target == "stderr") {
    std::lock_guard lock(stderr_mutex());
    std::fprintf(stderr, "%s%s\n", kPrefix, line.c_str());
    std::fflush(stderr);
    return;
  }
  static std::mutex file_mutex;
  std::lock_guard lock(file_mutex);
  std::FILE* f = std::fopen(std::string(*target).c_str(), "a");
  if (f == nullptr) {
    warn("TCEMU_PRELOAD_LOG='" + std::string(*target) + "' cannot be opened for appending");
    return;
  }
  std::fprintf(f, "%s\n", line.c_str());
  std::fclose(f);
}

}  // namespace tcemu::session
