#include "fp64_commands.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <tcemu/cases/fp64_case_file.hpp>
#include <tcemu/cases/fp64_probe_cases.hpp>
#include <tcemu/cases/printable.hpp>
#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/fp64_presets.hpp>
#include <tcemu/emulator/parallel_for.hpp>
#include <tcemu/session/output_file.hpp>
#if TCEMU_WITH_GPU
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/dmma_runner.hpp>
#endif

#include "case_lines.hpp"
#include "input_file.hpp"

namespace tcemu::cli {
namespace {

constexpr std::string_view kFp64 = "fp64";

// Datapath options of the float and integer MMA that fp64 MMA has no field for.
constexpr const char* kOtherOptions[] = {
    "block-terms",     "k-group",        "alignment-bits", "alignment-floor", "block-rounding",
    "block-precision", "c-entry",        "overflow",       "zero-sign",       "scale-block",
    "scale-format",    "scale-format-a", "scale-format-b", "group-terms",     "nan-scale"};

#if TCEMU_WITH_GPU
// A binary64 NaN (the probe counts the mismatches that are NaN bits alone).
bool is_nan(std::uint64_t bits) {
  return (bits & fp64::kExponentMask) == fp64::kExponentMask && (bits & fp64::kFractionMask) != 0;
}
#endif

bool names_fp64(const session::Arguments& args, const char* option) {
  return args.value(option) == kFp64;
}

// Throws CaseFileError unless a case of K terms fits the instruction the arguments name.
void check_case_k(const session::Arguments& args, std::size_t k, std::size_t line) {
  try {
    check_fp64_shape_k(args.value_or("arch", "sm90"), args.value_or("instr", "mma.sync"), k);
  } catch (const std::invalid_argument& e) {
    throw CaseFileError(line, e.what());
  }
}

bool mma_stream(std::istream& in, const std::string& name, const session::Arguments& args,
                const Fp64Datapath& dp) {
  return for_each_case_line(
      in, "mma", name, args.flag("allow-empty"), [&](const std::string& text, std::size_t line) {
        const auto c = parse_fp64_case_line(text, line);
        if (!c) return false;
        refuse_recorded_d(c->d.has_value(), c->a.size(), 2 + 2 * c->a.size(), line);
        check_case_k(args, c->a.size(), line);
        std::cout << fp64_hex(fp64_mma_element(dp, c->a, c->b, c->c)) << '\n';
        return true;
      });
}

}  // namespace

std::set<std::string> fp64_value_option_names() {
  return {"fp64-order", "fp64-step", "fp64-nan"};
}

std::string fp64_options_help() {
  return R"(fp64 MMA (DMMA; chosen by --type fp64 or --acc fp64):
  --type fp64            binary64 operands, c and d: 16 hex digits each in case files
  --arch ARCH            sm80 sm89 sm90 sm100 sm120 (default sm90; sm86/sm87 GPUs are sm80)
  --instr NAME           mma.sync (the largest-K shape), mma.sync.m8n8k4 (sm_80+),
                         mma.sync.m16n8k4, mma.sync.m16n8k8, mma.sync.m16n8k16 (sm_90+)
  --instruction-k N      K of one instruction (override)
  --fp64-order ORDER     ascending (the presets) or descending: the k order of the chain
  --fp64-step STEP       fused (the presets: one fma per k) or unfused (product rounded, then
                         added)
  --fp64-nan RULE        propagate (the presets: a step with a NaN operand returns it quieted,
                         b_k's before d's before a_k's) or replace (every NaN is --nan-bits)
  --nan-bits HEX         the NaN of an invalid operation, 0 x Inf or Inf - Inf (default
                         fff8000000000000); with --fp64-nan replace, of every NaN result
  An instruction is a chain of IEEE fused multiply-adds from c in ascending k order,
  d = fma(a_k, b_k, d), rounded to nearest even each step (MMA-Sim 2.1.1's model, and the H200's
  bits, NaNs included: `tcemu probe --instr dmma`, 2026-11-29); a longer K is a chain of
  instructions in k order.
)";
}

bool fp64_requested(const session::Arguments& args) {
  return names_fp64(args, "type") || names_fp64(args, "acc") || names_fp64(args, "b-type");
}

Fp64Datapath fp64_datapath_from(const session::Arguments& args) {
  for (const char* option : {"type", "b-type", "acc"}) {
    const auto value = args.value(option);
    if (option != std::string_view("type") && !value) continue;
    if (value != kFp64) {
      throw session::UsageError("fp64 MMA takes fp64 operands, c and d: --" + std::string(option) +
                                " must be fp64, got '" + printable(value.value_or("(none)")) + "'");
    }
  }
  for (const char* option : kOtherOptions) {
    if (args.value(option)) {
      throw session::UsageError("--" + std::string(option) +
                                " is not a field of the fp64 datapath (fp64 MMA has "
                                "--instruction-k, --fp64-order, --fp64-step, --fp64-nan, "
                                "--nan-bits)");
    }
  }
  if (args.flag("satfinite")) throw session::UsageError("--satfinite applies to integer MMA");
  Fp64Datapath dp = [&] {
    try {
      return fp64_preset(args.value_or("arch", "sm90"), args.value_or("instr", "mma.sync"));
    } catch (const std::invalid_argument& e) {
      throw session::UsageError(e.what());
    }
  }();
  if (args.value("instruction-k")) {
    dp.instruction_k =
        static_cast<int>(args.integer_or("instruction-k", 0, 1, kMaxFp64InstructionK));
  }
  if (const auto order = args.value("fp64-order")) {
    const auto o = fp64_order_by_name(*order);
    if (!o) {
      throw session::UsageError("--fp64-order: '" + printable(*order) +
                                "' is not ascending or descending");
    }
    dp.order = *o;
  }
  if (const auto step = args.value("fp64-step")) {
    const auto s = fp64_step_by_name(*step);
    if (!s) {
      throw session::UsageError("--fp64-step: '" + printable(*step) + "' is not fused or unfused");
    }
    dp.step = *s;
  }
  if (const auto rule = args.value("fp64-nan")) {
    const auto n = fp64_nan_by_name(*rule);
    if (!n) {
      throw session::UsageError("--fp64-nan: '" + printable(*rule) +
                                "' is not propagate or replace");
    }
    dp.nan = *n;
  }
  if (const auto nan = args.value("nan-bits")) {
    std::uint64_t bits = 0;
    const auto [end, error] = std::from_chars(nan->data(), nan->data() + nan->size(), bits, 16);
    if (nan->size() > 16 || error != std::errc() || end != nan->data() + nan->size()) {
      throw session::UsageError("--nan-bits expects at most 16 hex digits (a binary64 NaN), got '" +
                                printable(*nan) + "'");
    }
    dp.nan_bits = bits;
  }
  try {
    validate(dp);
  } catch (const std::invalid_argument& e) {
    throw session::UsageError(e.what());
  }
  return dp;
}

int fp64_mma(const session::Arguments& args) {
  const Fp64Datapath dp = fp64_datapath_from(args);
  return run_each_input(args.positional(), [&](std::istream& in, const std::string& name) {
    return mma_stream(in, name, args, dp);
  });
}

int fp64_validate(const session::Arguments& args, std::size_t show) {
  const Fp64Datapath dp = fp64_datapath_from(args);
  if (args.value("d"))
    throw session::UsageError("--d (whole matrices) takes fp16 to fp32 formats only");
  if (args.positional().empty()) throw session::UsageError("no case file given");
  std::cout << "datapath: " << describe(dp) << '\n';
  return validate_each_file(args, [&](std::istream& in, const std::string& file) {
    return validate_case_lines(
        in, file, show, [&](const std::string& text, std::size_t line) -> std::optional<Verdict> {
          const std::optional<Fp64MmaCase> c = parse_fp64_case_line(text, line);
          if (!c) return std::nullopt;
          if (!c->d) throw CaseFileError(line, "no recorded result d to validate against");
          check_case_k(args, c->a.size(), line);
          const std::uint64_t got = fp64_mma_element(dp, c->a, c->b, c->c);
          if (got == *c->d) return Verdict{true, {}};
          return Verdict{false, "recorded " + fp64_hex(*c->d) + ", emulated " + fp64_hex(got) +
                                    "\n  " + format_fp64_case_line(*c)};
        });
  });
}

void print_fp64_presets() {
  for (const Fp64Instruction& r : fp64_instructions()) {
    std::cout << r.arch << ' ' << r.name << " (m" << r.m << "n" << r.n << "k" << r.k
              << ".f64): " << describe(fp64_preset(r.arch, r.name)) << " (MMA-Sim 2.1.1)\n";
  }
  for (const std::string_view arch : {"sm80", "sm89", "sm90", "sm100", "sm120"}) {
    std::cout << arch << " mma.sync fp64 -> fp64 = " << fp64_instruction(arch).name << '\n';
  }
}

int fp64_probe(const session::Arguments& args) {
  // The usage errors first, in every build.
  const auto dir = args.value("out-dir");
  if (!dir) throw session::UsageError("--out-dir is required");
  if (args.value("b-type") && args.value("b-type") != kFp64) {
    throw session::UsageError("fp64 MMA takes fp64 operands, got --b-type " +
                              printable(*args.value("b-type")));
  }
  for (const char* option : {"type", "acc"}) {
    if (args.value(option) && args.value(option) != kFp64) {
      throw session::UsageError("--instr dmma probes fp64 MMA: --" + std::string(option) +
                                " must be fp64, got '" + printable(*args.value(option)) + "'");
    }
  }
#if TCEMU_WITH_GPU
  const long long random = args.integer_or("random", 100000, 0, 100'000'000);
  const long long keep_option = args.integer_or("keep", -1, -1, 100'000'000);
  const long long show = args.integer_or("show", 3, 0, 1000);
  const auto seed = static_cast<std::uint64_t>(args.integer("seed").value_or(1));
  const gpu::DeviceInfo device = gpu::require_device();
  const int cc = device.compute_major * 10 + device.compute_minor;
  const std::string device_words = device.name + " (sm_" + std::to_string(device.compute_major) +
                                   std::to_string(device.compute_minor) + ")";
  // The shape: --shape, or an --instr other than dmma (tcemu probe --type fp64 --instr SHAPE).
  std::optional<std::string> only_shape = args.value("shape");
  if (!only_shape && args.value("instr") && args.value("instr") != "dmma") {
    only_shape = args.value("instr");
  }
  const std::vector<std::string_view> shapes =
      only_shape ? std::vector<std::string_view>{*only_shape} : gpu::dmma_sync_shapes(cc);
  if (shapes.empty()) {
    throw std::runtime_error(device_words +
                             " has no fp64 mma.sync: m8n8k4 .f64 needs sm_80, m16n8k4/8/16 .f64 "
                             "sm_90");
  }
  const std::string arch = device.arch_preset();
  if (arch.empty()) throw std::runtime_error(device_words + " has no architecture preset");
  std::string gpu_name;
  for (char ch : device.name) gpu_name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  std::filesystem::create_directories(*dir);
  std::size_t total_mismatches = 0;
  for (const std::string_view shape : shapes) {
    const Fp64Datapath dp = [&] {
      try {
        return fp64_preset(arch, shape);
      } catch (const std::invalid_argument& e) {
        throw session::UsageError(e.what());
      }
    }();
    const Fp64ProbeCases probe =
        fp64_probe_cases(dp.instruction_k, static_cast<std::size_t>(random), seed);
    const std::vector<std::uint64_t> d = gpu::run_dmma_sync(shape, probe.cases);
    // The preset and its neighbours: each order with each step (variant 0 is the preset).
    std::vector<Fp64Datapath> variants;
    for (const Fp64Order order :
         {dp.order,
          dp.order == Fp64Order::ascending ? Fp64Order::descending : Fp64Order::ascending}) {
      for (const Fp64Step step :
           {dp.step, dp.step == Fp64Step::fused ? Fp64Step::unfused : Fp64Step::fused}) {
        Fp64Datapath v = dp;
        v.order = order;
        v.step = step;
        variants.push_back(v);
      }
    }
    // differs[v][i]: variant v's result differs from the GPU's on case i.
    std::vector<std::vector<char>> differs(variants.size(), std::vector<char>(d.size(), 0));
    std::vector<char> nan_only(d.size(), 0);
    detail::parallel_for(0, static_cast<std::int64_t>(d.size()), 4096,
                         [&](std::int64_t begin, std::int64_t end) {
                           for (std::int64_t i = begin; i < end; ++i) {
                             const Fp64MmaCase& c = probe.cases[static_cast<std::size_t>(i)];
                             for (std::size_t v = 0; v < variants.size(); ++v) {
                               const std::uint64_t e = fp64_mma_element(variants[v], c.a, c.b, c.c);
                               differs[v][i] = e != d[i];
                               if (v == 0)
                                 nan_only[i] = e != d[i] && e == dp.nan_bits && is_nan(d[i]);
                             }
                           }
                         });
    const auto count = [](const std::vector<char>& flags, std::size_t from) {
      return static_cast<std::size_t>(
          std::count(flags.begin() + static_cast<std::ptrdiff_t>(from), flags.end(), 1));
    };
    const std::size_t mismatches = count(differs[0], 0);
    total_mismatches += mismatches;
    const std::size_t crafted = probe.cases.size() - static_cast<std::size_t>(random);
    const std::string stem(shape.substr(shape.rfind('.') + 1));
    const std::filesystem::path path =
        std::filesystem::path(*dir) / ("probe-" + gpu_name + "-dmma-" + stem + ".txt");
    const std::size_t keep =
        keep_option < 0 ? probe.cases.size() : static_cast<std::size_t>(keep_option);
    const std::size_t random_kept = std::min<std::size_t>(keep, static_cast<std::size_t>(random));
    const std::size_t crafted_kept = std::min(keep, crafted);
    session::OutputFile file(path);
    std::ostream& out = file.stream();
    out << "# tcemu probe: " << device_words << ", " << shape << ".row.col.f64.f64.f64.f64, "
        << random << " random cases (seed " << seed << ") and " << crafted << " crafted, "
        << mismatches << " mismatches against the emulator; this file keeps " << random_kept
        << " random and " << crafted_kept << " crafted\n"
        << "# validate: tcemu validate --arch " << arch << " --instr " << shape << " --type fp64 "
        << path.filename().string() << '\n';
    const auto write = [&](std::size_t i) {
      if (!probe.names[i].empty()) out << "# crafted: " << probe.names[i] << '\n';
      Fp64MmaCase c = probe.cases[i];
      c.d = d[i];
      out << format_fp64_case_line(c) << '\n';
    };
    for (std::size_t i = 0; i < random_kept; ++i) write(i);
    for (std::size_t j = 0; j < crafted_kept; ++j) {
      write(static_cast<std::size_t>(random) + j * crafted / crafted_kept);  // evenly spaced
    }
    file.close();
    std::cout << path.string() << ": " << probe.cases.size() << " cases (" << random << " random, "
              << crafted << " crafted), " << mismatches << " mismatches against " << arch << " "
              << shape << ": " << describe(dp) << " (" << count(nan_only, 0)
              << " of them NaN results whose bits alone differ)\n";
    for (std::size_t v = 0; v < variants.size(); ++v) {
      std::cout << "  " << name_of(variants[v].order) << " " << name_of(variants[v].step)
                << (v == 0 ? " (the preset)" : "") << ": " << count(differs[v], 0)
                << " mismatches, " << count(differs[v], static_cast<std::size_t>(random))
                << " of them crafted\n";
    }
    long long shown = 0;
    for (std::size_t i = 0; i < d.size() && shown < show; ++i) {
      if (!differs[0][i]) continue;
      ++shown;
      const Fp64MmaCase& c = probe.cases[i];
      std::cout << "  " << (probe.names[i].empty() ? "random" : probe.names[i]) << ": GPU "
                << fp64_hex(d[i]) << ", emulated " << fp64_hex(fp64_mma_element(dp, c.a, c.b, c.c))
                << "\n    " << format_fp64_case_line(c) << '\n';
    }
  }
  return total_mismatches == 0 ? 0 : 1;
#else
  throw std::runtime_error("this tcemu was built without the CUDA backend (no CUDA toolkit found)");
#endif
}

}  // namespace tcemu::cli
