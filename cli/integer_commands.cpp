#include "integer_commands.hpp"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <tcemu/cases/integer_case_file.hpp>
#include <tcemu/cases/integer_probe_cases.hpp>
#include <tcemu/cases/printable.hpp>
#include <tcemu/emulator/integer_presets.hpp>
#include <tcemu/emulator/parallel_for.hpp>
#include <tcemu/session/output_file.hpp>
#if TCEMU_WITH_GPU
#include <tcemu/gpu/device.hpp>
#include <tcemu/gpu/imma_runner.hpp>
#endif

#include "case_lines.hpp"
#include "input_file.hpp"

namespace tcemu::cli {
namespace {

// The integer wgmma of the presets (probed as m64n8k32 on sm_90a).
constexpr std::string_view kWgmma = "wgmma.m64nNk32";

// Floating-point datapath options that mean nothing to an integer datapath.
constexpr const char* kFloatOnlyOptions[] = {
    "block-terms",    "k-group",         "alignment-bits", "alignment-floor",
    "block-rounding", "block-precision", "c-entry",        "overflow",
    "zero-sign",      "nan-bits",        "scale-block",    "scale-format",
    "scale-format-a", "scale-format-b",  "group-terms",    "nan-scale"};

bool is_integer_name(const std::optional<std::string>& name) {
  return name && integer_format_by_name(*name).has_value();
}

IntegerFormat operand_option(const session::Arguments& args, const std::string& name,
                             const std::string& fallback) {
  const std::string text = args.value_or(name, fallback);
  const auto f = integer_format_by_name(text);
  if (!f)
    throw session::UsageError("--" + name + ": unknown integer format '" + printable(text) + "'");
  if (f->bits == 32) {
    throw session::UsageError("--" + name +
                              " s32: s32 is the accumulator; operands are s8 u8 s4 u4");
  }
  return *f;
}

// Runs every case of `in` through the datapath, one result per line.
// Throws CaseFileError unless a case of K terms fits the instruction the arguments name
// (check_integer_shape_k).
void check_case_k(const session::Arguments& args, const IntegerDatapath& dp, std::size_t k,
                  std::size_t line) {
  try {
    check_integer_shape_k(args.value_or("arch", "sm90"), dp.a_format.bits,
                          args.value_or("instr", "mma.sync"), k);
  } catch (const std::invalid_argument& e) {
    throw CaseFileError(line, e.what());
  }
}

bool mma_stream(std::istream& in, const std::string& name, const session::Arguments& args,
                const IntegerDatapath& dp) {
  return for_each_case_line(
      in, "mma", name, args.flag("allow-empty"), [&](const std::string& text, std::size_t line) {
        const auto c = parse_integer_case_line(text, line, dp.a_format, dp.b_format);
        if (!c) return false;
        refuse_recorded_d(c->d.has_value(), c->a.size(), 2 + 2 * c->a.size(), line);
        check_case_k(args, dp, c->a.size(), line);
        std::cout << to_hex(integer_formats::s32, integer_mma_element(dp, c->a, c->b, c->c))
                  << '\n';
        return true;
      });
}

}  // namespace

std::set<std::string> integer_value_option_names() {
  return {"b-type"};
}

std::set<std::string> integer_flag_names() {
  return {"satfinite"};
}

std::string integer_options_help() {
  return R"(Integer MMA (IMMA; chosen by an integer --type or --acc s32):
  --type s8|u8|s4|u4     A's operand format (s4/u4: one hex digit per operand in case files)
  --b-type FORMAT        B's operand format (default: --type; PTX mixes s8/u8 or s4/u4)
  --acc s32              the accumulator (the default with an integer --type)
  --arch ARCH            sm75 sm80 sm89 sm90 sm100 (default sm90)
  --instr NAME           mma.sync (the largest-K shape of the width) or one of the names below;
                         `tcemu presets` lists what each architecture has
  --satfinite            PTX's .satfinite: each instruction clamps its result to int32 instead
                         of wrapping modulo 2^32
  --instruction-k N      K of one instruction (override)
  An instruction computes c + the exact sum of its K products and wraps (or clamps) once; a
  longer K is a chain of instructions in k order.

  PTX name            operands  SASS on sm_90a (cuobjdump -sass; measured on the H100)
  mma.sync.m8n8k16    s8/u8     IMMA.8816.S8.S8    (.satfinite: IMMA.8816.S8.S8.SAT)
  mma.sync.m16n8k16   s8/u8     IMMA.16816.S8.S8   (U8 in place of S8 for u8 operands)
  mma.sync.m16n8k32   s8/u8     IMMA.16832.S8.S8
  mma.sync.m8n8k32    s4/u4     2 x IMMA.8816.S8.S8 on operands widened to 8 bits, + adds
  mma.sync.m16n8k32   s4/u4     2 x IMMA.16816.S8.S8, + adds
  mma.sync.m16n8k64   s4/u4     2 x IMMA.16832.S8.S8, + adds
  wgmma.m64nNk32      s8/u8     IGMMA.64xNx32.S8.S8 (measured for N = 8)
  tcgen05.mma.kind::i8 s8/u8    sm_100a, no .satfinite (not probed)
  So IMMA.16832 in a kernel's SASS is mma.sync.m16n8k32 (s8/u8, or s4/u4 m16n8k64 when two of
  them from RZ meet integer adds), IMMA.16816 is m16n8k16, IMMA.8816 is m8n8k16. More in
  docs/presets.md.
)";
}

bool integer_requested(const session::Arguments& args) {
  const bool integer = is_integer_name(args.value("type")) || is_integer_name(args.value("acc"));
  // A float --b-type is the float datapath's (datapath_options.hpp).
  if (!integer) {
    if (args.flag("satfinite")) {
      throw session::UsageError(
          "--satfinite applies to integer MMA (--type s8 u8 s4 u4, --acc s32)");
    }
  }
  return integer;
}

IntegerDatapath integer_datapath_from(const session::Arguments& args) {
  const auto type = args.value("type");
  if (!is_integer_name(type)) {
    throw session::UsageError(
        "--acc s32 is the integer accumulator: --type must be s8 u8 s4 u4, got '" +
        type.value_or("(none)") + "'");
  }
  const IntegerFormat a = operand_option(args, "type", "s8");
  const IntegerFormat b = operand_option(args, "b-type", std::string(a.name));
  const std::string acc = args.value_or("acc", "s32");
  if (acc != "s32") {
    throw session::UsageError("--type " + std::string(a.name) +
                              " is an integer format: its accumulator is s32, got --acc " + acc);
  }
  for (const char* option : kFloatOnlyOptions) {
    if (args.value(option)) {
      throw session::UsageError("--" + std::string(option) +
                                " is a floating-point datapath option; integer MMA has none");
    }
  }
  IntegerDatapath dp = [&] {
    try {
      return integer_preset(args.value_or("arch", "sm90"), a, b, args.value_or("instr", "mma.sync"),
                            args.flag("satfinite"));
    } catch (const std::invalid_argument& e) {
      throw session::UsageError(e.what());
    }
  }();
  if (args.value("instruction-k")) {
    dp.instruction_k =
        static_cast<int>(args.integer_or("instruction-k", 0, 1, kMaxIntegerInstructionK));
  }
  return dp;
}

int integer_mma(const session::Arguments& args) {
  const IntegerDatapath dp = integer_datapath_from(args);
  return run_each_input(args.positional(), [&](std::istream& in, const std::string& name) {
    return mma_stream(in, name, args, dp);
  });
}

int integer_validate(const session::Arguments& args, std::size_t show) {
  const IntegerDatapath dp = integer_datapath_from(args);
  if (args.value("d"))
    throw session::UsageError("--d (whole matrices) takes floating-point formats only");
  if (args.positional().empty()) throw session::UsageError("no case file given");
  std::cout << "datapath: " << describe(dp) << '\n';
  return validate_each_file(args, [&](std::istream& in, const std::string& file) {
    return validate_case_lines(
        in, file, show, [&](const std::string& text, std::size_t line) -> std::optional<Verdict> {
          const std::optional<IntegerMmaCase> c =
              parse_integer_case_line(text, line, dp.a_format, dp.b_format);
          if (!c) return std::nullopt;
          if (!c->d) throw CaseFileError(line, "no recorded result d to validate against");
          check_case_k(args, dp, c->a.size(), line);
          const std::int32_t got = integer_mma_element(dp, c->a, c->b, c->c);
          if (got == *c->d) return Verdict{true, {}};
          return Verdict{false, "recorded " + to_hex(integer_formats::s32, *c->d) + ", emulated " +
                                    to_hex(integer_formats::s32, got) + "\n  " +
                                    format_integer_case_line(*c, dp.a_format, dp.b_format)};
        });
  });
}

void print_integer_presets() {
  for (const IntegerInstruction& r : integer_instructions()) {
    const std::string width = r.operand_bits == 8 ? "s8/u8" : "s4/u4";
    std::cout << r.arch << ' ' << r.name << ": " << width << " x " << width << " -> s32, m" << r.m
              << (r.n == 0 ? "nN" : "n" + std::to_string(r.n)) << "k" << r.k << ", K = " << r.k
              << " per instruction, wrap modulo 2^32"
              << (r.satfinite ? "; .satfinite: clamp to int32 once per instruction"
                              : "; no .satfinite")
              << (r.sass.empty() ? "" : "; SASS " + std::string(r.sass) + " (H100)") << '\n';
  }
}

int integer_probe(const session::Arguments& args) {
#if TCEMU_WITH_GPU
  const auto dir = args.value("out-dir");
  if (!dir) throw session::UsageError("--out-dir is required");
  const long long random = args.integer_or("random", 100000, 0, 100'000'000);
  const long long keep_option = args.integer_or("keep", -1, -1, 100'000'000);
  const long long show = args.integer_or("show", 3, 0, 1000);
  const auto seed = static_cast<std::uint64_t>(args.integer("seed").value_or(1));
  const gpu::DeviceInfo device = gpu::require_device();
  const std::string arch = device.arch_preset();
  if (arch.empty()) throw std::runtime_error(device.name + " has no architecture preset");
  const int cc = device.compute_major * 10 + device.compute_minor;
  if (args.value_or("acc", "s32") != "s32") {
    throw session::UsageError("integer MMA accumulates in s32, got --acc " + *args.value("acc"));
  }
  const std::optional<std::string> only_shape = args.value("shape");
  std::vector<std::pair<IntegerFormat, IntegerFormat>> pairs;
  if (args.value("type")) {
    const IntegerFormat a = operand_option(args, "type", "s8");
    pairs.emplace_back(a, operand_option(args, "b-type", std::string(a.name)));
  } else {
    using namespace integer_formats;
    pairs = {{s8, s8}, {s8, u8}, {u8, s8}, {u8, u8}, {s4, s4}, {s4, u4}, {u4, s4}, {u4, u4}};
  }
  std::string gpu_name;
  for (char ch : device.name) gpu_name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  std::filesystem::create_directories(*dir);
  std::size_t total_mismatches = 0, shapes_run = 0;
  for (const auto& [fa, fb] : pairs) {
    std::vector<std::string_view> shapes = gpu::imma_sync_shapes(cc, fa.bits);
    if (cc == 90 && fa.bits == 8) shapes.push_back(kWgmma);
    for (const std::string_view shape : shapes) {
      if (only_shape && *only_shape != shape) continue;
      ++shapes_run;
      for (const bool satfinite : {false, true}) {
        const IntegerDatapath dp = integer_preset(arch, fa, fb, shape, satfinite);
        const IntegerProbeCases probe =
            integer_probe_cases(fa, fb, dp.instruction_k, static_cast<std::size_t>(random), seed);
        const bool wgmma = shape == kWgmma;
        const std::vector<std::int32_t> d =
            wgmma ? gpu::run_imma_wgmma(fa, fb, satfinite, probe.cases)
                  : gpu::run_imma_sync(shape, fa, fb, satfinite, probe.cases);
        std::vector<char> differs(d.size(), 0);
        detail::parallel_for(0, static_cast<std::int64_t>(d.size()), 4096,
                             [&](std::int64_t begin, std::int64_t end) {
                               for (std::int64_t i = begin; i < end; ++i) {
                                 const IntegerMmaCase& c = probe.cases[i];
                                 differs[i] = integer_mma_element(dp, c.a, c.b, c.c) != d[i];
                               }
                             });
        const auto mismatches =
            static_cast<std::size_t>(std::count(differs.begin(), differs.end(), 1));
        total_mismatches += mismatches;
        // The PTX instruction of one case, and the file name's part for it.
        const std::string ptx =
            (wgmma ? std::string("wgmma.mma_async.m64n8k32") : std::string(shape) + ".row.col") +
            (satfinite ? ".satfinite" : "") + ".s32." + std::string(fa.name) + "." +
            std::string(fb.name) + (wgmma ? "" : ".s32");
        const std::string stem =
            wgmma ? "wgmma-m64n8k32" : std::string(shape.substr(shape.rfind('.') + 1));
        const std::filesystem::path path =
            std::filesystem::path(*dir) /
            ("probe-" + gpu_name + "-imma-" + stem + "-" + std::string(fa.name) + "-" +
             std::string(fb.name) + (satfinite ? "-satfinite" : "") + ".txt");
        const std::size_t crafted = probe.cases.size() - static_cast<std::size_t>(random);
        const std::size_t keep =
            keep_option < 0 ? probe.cases.size() : static_cast<std::size_t>(keep_option);
        const std::size_t random_kept =
            std::min<std::size_t>(keep, static_cast<std::size_t>(random));
        const std::size_t crafted_kept = std::min(keep, crafted);
        session::OutputFile file(path);
        std::ostream& out = file.stream();
        out << "# tcemu probe: " << device.name << " (sm_" << device.compute_major
            << device.compute_minor << "), " << ptx << ", " << random << " random cases (seed "
            << seed << ") and " << crafted << " crafted, " << mismatches
            << " mismatches against the emulator; this file keeps " << random_kept << " random and "
            << crafted_kept << " crafted\n"
            << "# validate: tcemu validate --arch " << arch << " --instr " << shape << " --type "
            << fa.name << " --b-type " << fb.name << " --acc s32"
            << (satfinite ? " --satfinite" : "") << " " << path.filename().string() << '\n';
        const auto write = [&](std::size_t i) {
          if (!probe.names[i].empty()) out << "# crafted: " << probe.names[i] << '\n';
          IntegerMmaCase c = probe.cases[i];
          c.d = d[i];
          out << format_integer_case_line(c, fa, fb) << '\n';
        };
        for (std::size_t i = 0; i < random_kept; ++i) write(i);
        for (std::size_t j = 0; j < crafted_kept; ++j) {
          write(static_cast<std::size_t>(random) + j * crafted / crafted_kept);  // evenly spaced
        }
        file.close();
        std::cout << path.string() << ": " << probe.cases.size() << " cases (" << random
                  << " random, " << crafted << " crafted), " << mismatches << " mismatches against "
                  << arch << " " << shape << ": " << describe(dp) << std::endl;
        long long shown = 0;
        for (std::size_t i = 0; i < d.size() && shown < show; ++i) {
          if (!differs[i]) continue;
          ++shown;
          const IntegerMmaCase& c = probe.cases[i];
          std::cout << "  " << (probe.names[i].empty() ? "random" : probe.names[i]) << ": GPU "
                    << to_hex(integer_formats::s32, d[i]) << ", emulated "
                    << to_hex(integer_formats::s32, integer_mma_element(dp, c.a, c.b, c.c))
                    << "\n    " << format_integer_case_line(c, fa, fb) << '\n';
        }
      }
    }
  }
  if (shapes_run == 0) {
    throw session::UsageError("--shape " + only_shape.value_or("") + ": " + device.name +
                              " has no such integer mma.sync shape for the formats asked");
  }
  return total_mismatches == 0 ? 0 : 1;
#else
  (void)args;
  throw std::runtime_error("this tcemu was built without the CUDA backend (no CUDA toolkit found)");
#endif
}

}  // namespace tcemu::cli
