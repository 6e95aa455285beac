// libFuzzer target: the block-scaled inputs, case lines (tcemu/cases/case_file.hpp on a
// block-scaled datapath: `tcemu mma`, `tcemu validate`) and scale files (--scale-a, --scale-b:
// cli/gemm_operands.hpp's check_scales after the matrix readers).
//
// Input: byte 0 chooses the datapath among the block-scaled presets (all_presets(), in order);
// byte 1 the input: bit 0 clear, the rest is case-file text, each line to parse_case_line; bit 0
// set, the rest is a scale file, of A (bit 1 clear) or B, .npy (bit 2) or hex text, with the
// scale format given on the command line (bit 3), expected to be R x C (byte 2: R bits 0-3, C bits
// 4-7). Properties: a parsed line has K a and b fields and scale_count(datapath, K) scales of
// each operand, every field a code of its format; it formats and parses back to the same bits and
// mma_case_element runs (or throws std::invalid_argument); an admitted scale file is R x C codes
// of the scale format, uint8 (or void items with the format given) or text, and round-trips
// through write_npy and write_text_matrix; every refusal names the file (and a line its number).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/emulator/mma.hpp>
#include <tcemu/emulator/presets.hpp>

#include "gemm_operands.hpp"
#include "matrix_file.hpp"
#include "npy_file.hpp"
#include "text_lines.hpp"

namespace {

using namespace tcemu;
using namespace tcemu::cli;

const std::vector<PresetEntry>& block_scaled_presets() {
  static const std::vector<PresetEntry> presets = [] {
    std::vector<PresetEntry> out;
    for (const PresetEntry& e : all_presets()) {
      if (e.datapath.block_scaled()) out.push_back(e);
    }
    if (out.empty()) std::abort();  // the preset table lost its block-scaled rows
    return out;
  }();
  return presets;
}

[[noreturn]] void finding(const PresetEntry& e, const std::string& what) {
  std::fprintf(stderr, "block-scaled (%.*s %.*s): %s\n", static_cast<int>(e.arch.size()),
               e.arch.data(), static_cast<int>(e.instruction.size()), e.instruction.data(),
               what.c_str());
  std::abort();
}

bool codes_of(const std::vector<std::uint32_t>& fields, const FloatFormat& format) {
  for (const std::uint32_t f : fields) {
    if (std::uint64_t{f} >> tcemu::code_bits(format) != 0) return false;
  }
  return true;
}

bool same(const MmaCase& x, const MmaCase& y) {
  return x.a == y.a && x.b == y.b && x.c == y.c && x.d == y.d && x.scale_a == y.scale_a &&
         x.scale_b == y.scale_b;
}

void case_lines(const PresetEntry& e, std::string_view text) {
  const Datapath& dp = e.datapath;
  tcemu_fuzz::for_each_line(text, [&](std::size_t line, std::string_view one) {
    std::optional<MmaCase> parsed;
    try {
      parsed = parse_case_line(one, line, dp);
    } catch (const CaseFileError& error) {
      if (error.line() != line) finding(e, "a refusal names another line: " + std::string(one));
      return;
    }
    if (!parsed) return;
    const std::size_t k = parsed->a.size(), s = scale_count(dp, k);
    if (parsed->b.size() != k || parsed->scale_a.size() != s || parsed->scale_b.size() != s) {
      finding(e, "a case without K b fields and S scales each: " + std::string(one));
    }
    if (!codes_of(parsed->a, dp.input) || !codes_of(parsed->b, dp.b_format()) ||
        !codes_of(parsed->scale_a, dp.block_scaling.scale_a) ||
        !codes_of(parsed->scale_b, dp.block_scaling.scale_b) ||
        !codes_of({parsed->c}, dp.accumulator) ||
        (parsed->d && !codes_of({*parsed->d}, dp.accumulator))) {
      finding(e, "a field above its format's bits: " + std::string(one));
    }
    const std::string again = format_case_line(*parsed, dp);
    const auto reparsed = parse_case_line(again, line, dp);
    if (!reparsed || !same(*parsed, *reparsed)) {
      finding(e, "round trip differs: '" + std::string(one) + "' -> '" + again + "'");
    }
    try {
      (void)mma_case_element(dp, *parsed);
    } catch (const std::invalid_argument&) {
    }
  });
}

void scale_file(const PresetEntry& e, std::uint8_t how, std::uint8_t shape,
                std::string_view bytes) {
  const bool of_a = (how & 2) == 0, npy = (how & 4) != 0, format_given = (how & 8) != 0;
  const FloatFormat& format =
      of_a ? e.datapath.block_scaling.scale_a : e.datapath.block_scaling.scale_b;
  const std::string option = of_a ? "scale-a" : "scale-b";
  const std::string path = npy ? "fuzz.npy" : "fuzz.txt";
  const std::int64_t rows = shape & 15, cols = shape >> 4;
  std::istringstream in{std::string(bytes)};
  BitMatrix m;
  try {
    m = npy ? read_npy(in, path, element_type(format))
            : read_text_matrix(in, path, element_type(format));
    check_scales(option, path, m, format, format_given, rows, cols, "fuzz");
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    if (message.find(path) == std::string::npos) {
      finding(e, "a refusal does not name the file: " + message);
    }
    return;
  }
  if (m.rows != rows || m.cols != cols || m.type.bits != 8 ||
      m.bytes.size() != static_cast<std::size_t>(rows * cols)) {
    finding(e, "admitted scales that are not R x C bytes");
  }
  if (!(m.npy_dtype.empty()
            ? !npy
            : m.npy_dtype == "|u1" || m.npy_dtype == "<u1" || m.npy_dtype == "=u1" ||
                  (format_given && m.npy_dtype.ends_with("V1")))) {
    finding(e, "admitted scales of dtype '" + m.npy_dtype + "'");
  }
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      if (m.get(i, j) >> tcemu::code_bits(format) != 0) finding(e, "admitted a non-code");
    }
  }
  // What the writers write reads back as the same codes.
  for (const bool as_npy : {false, true}) {
    std::stringstream out;
    as_npy ? write_npy(out, m) : write_text_matrix(out, m);
    const BitMatrix back = as_npy ? read_npy(out, "again", element_type(format))
                                  : read_text_matrix(out, "again", element_type(format));
    for (std::int64_t i = 0; i < rows; ++i) {
      for (std::int64_t j = 0; j < cols; ++j) {
        if (back.rows != rows || back.cols != cols || back.get(i, j) != m.get(i, j)) {
          finding(e, "the scales do not round-trip");
        }
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const auto& presets = block_scaled_presets();
  const PresetEntry& e = presets[data[0] % presets.size()];
  const std::string_view rest(reinterpret_cast<const char*>(data + 2), size - 2);
  if ((data[1] & 1) == 0) {
    case_lines(e, rest);
  } else {
    scale_file(e, data[1], data[2], rest.substr(1));
  }
  return 0;
}
