#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <tcemu/cases/capture_set.hpp>
#include <tcemu/cases/input_error.hpp>
#include <tcemu/cases/line_reader.hpp>
#include <tcemu/cases/printable.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/mma.hpp>

namespace tcemu {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void malformed(const fs::path& file, std::size_t line, const std::string& what) {
  throw InputError(file.string() + ":" + std::to_string(line) + ": " + what);
}

std::vector<std::string> read_lines(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw InputError("cannot open " + file.string());
  std::vector<std::string> lines;
  LineReader reader(in, file.string());
  for (std::string line; reader.next(line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

std::uint32_t parse_word(const fs::path& file, std::size_t line, const std::string& word,
                         int base) {
  const std::size_t digits = base == 16 ? 8 : 32;
  if (word.size() != digits) {
    malformed(file, line,
              "expected " + std::to_string(digits) + " digits, got '" + printable(word) + "'");
  }
  std::uint32_t value = 0;
  for (char ch : word) {
    int v;
    if (ch >= '0' && ch <= '9')
      v = ch - '0';
    else if (ch >= 'a' && ch <= 'f')
      v = ch - 'a' + 10;
    else if (ch >= 'A' && ch <= 'F')
      v = ch - 'A' + 10;
    else
      v = base;
    if (v >= base) malformed(file, line, "bad digit in '" + printable(word) + "'");
    value = value * static_cast<std::uint32_t>(base) + static_cast<std::uint32_t>(v);
  }
  return value;
}

// fp32 bits known to hold a value of `format`, as that format's container bits.
std::uint32_t narrow_exactly(const fs::path& file, std::size_t line, std::uint32_t fp32_bits,
                             const FloatFormat& format) {
  if (!converts_exactly(formats::fp32, format, fp32_bits)) {
    std::ostringstream msg;
    msg << "fp32 0x" << std::hex << fp32_bits << " is not exactly representable in " << format.name;
    malformed(file, line, msg.str());
  }
  return convert(formats::fp32, format, fp32_bits, Rounding::nearest_even);
}

fs::path only_file(const fs::path& dir, const std::string& prefix, const std::string& suffix) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(prefix) && name.ends_with(suffix)) return entry.path();
  }
  return {};
}

FloatFormat input_format_of(const std::string& dir_name) {
  std::string lower = dir_name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return std::tolower(ch); });
  if (auto f = format_by_name(lower)) return *f;
  throw InputError("capture directory '" + dir_name + "' names no input format");
}

}  // namespace

std::string instruction_of_capture(const CaptureSet& set) {
  const bool hopper = set.gpu == "H100" || set.gpu == "H200";
  const bool fp8 = set.input == formats::e4m3 || set.input == formats::e5m2;
  return hopper && fp8 && set.accumulator == formats::fp32 ? "wgmma" : "mma.sync";
}

std::string arch_of_gpu(const std::string& gpu) {
  if (gpu == "V100") return "sm70";
  if (gpu == "T4") return "sm75";
  if (gpu == "A100" || gpu == "A30" || gpu == "A2") return "sm80";
  if (gpu == "Ada" || gpu == "L40S") return "sm89";
  if (gpu == "H100" || gpu == "H200") return "sm90";
  if (gpu == "B200") return "sm100";
  throw InputError("unknown GPU '" + gpu + "' in the captures");
}

std::vector<CaptureSet> load_capture_sets(const fs::path& root) {
  if (!fs::is_directory(root)) throw InputError("no capture directory " + root.string());
  std::vector<CaptureSet> sets;
  for (const auto& gpu_dir : fs::directory_iterator(root)) {
    if (!gpu_dir.is_directory()) continue;
    const std::string gpu = gpu_dir.path().filename().string();
    for (const auto& format_dir : fs::directory_iterator(gpu_dir.path())) {
      if (!format_dir.is_directory()) continue;
      const fs::path dir = format_dir.path();
      const FloatFormat input = input_format_of(dir.filename().string());
      const fs::path a_file = only_file(dir, "a_", ".txt");
      const fs::path b_file = only_file(dir, "b_", ".txt");
      const fs::path c_file = only_file(dir, "c_", "_fp32.txt");
      if (a_file.empty() || b_file.empty() || c_file.empty()) {
        throw InputError(dir.string() + ": missing a_, b_ or c_ file");
      }
      const auto a_lines = read_lines(a_file);
      const auto b_lines = read_lines(b_file);
      const auto c_lines = read_lines(c_file);
      for (const FloatFormat& accumulator : {formats::fp32, formats::fp16}) {
        const fs::path d_file = only_file(dir, "d_", "_" + std::string(accumulator.name) + ".txt");
        if (d_file.empty()) continue;
        const auto d_lines = read_lines(d_file);
        if (a_lines.size() != b_lines.size() || a_lines.size() != c_lines.size() ||
            a_lines.size() != d_lines.size()) {
          throw InputError(dir.string() + ": a, b, c and d files differ in row count");
        }
        CaptureSet set{gpu, input, accumulator, {}};
        set.cases.reserve(a_lines.size());
        for (std::size_t row = 0; row < a_lines.size(); ++row) {
          CaptureCase cc;
          std::istringstream as(a_lines[row]), bs(b_lines[row]);
          for (std::string w; as >> w;)
            cc.a.push_back(
                narrow_exactly(a_file, row + 1, parse_word(a_file, row + 1, w, 16), input));
          for (std::string w; bs >> w;)
            cc.b.push_back(
                narrow_exactly(b_file, row + 1, parse_word(b_file, row + 1, w, 16), input));
          if (cc.a.size() != cc.b.size() || cc.a.empty()) {
            malformed(b_file, row + 1, "a and b rows differ in length or are empty");
          }
          // The README: fp16-output rows used c rounded to fp16 (round to nearest even); the
          // H100/H200 fp8 sets with fp32 output ran with c = 0 whatever the c file says.
          const bool zero_c = (gpu == "H100" || gpu == "H200") &&
                              (input == formats::e4m3 || input == formats::e5m2) &&
                              accumulator == formats::fp32;
          const std::uint32_t c_bits = parse_word(c_file, row + 1, c_lines[row], 2);
          cc.c = zero_c ? 0 : convert(formats::fp32, accumulator, c_bits, Rounding::nearest_even);
          cc.d = narrow_exactly(d_file, row + 1, parse_word(d_file, row + 1, d_lines[row], 2),
                                accumulator);
          set.cases.push_back(std::move(cc));
        }
        sets.push_back(std::move(set));
      }
    }
  }
  std::sort(sets.begin(), sets.end(), [](const CaptureSet& x, const CaptureSet& y) {
    return std::tie(x.gpu, x.input.name, x.accumulator.name) <
           std::tie(y.gpu, y.input.name, y.accumulator.name);
  });
  return sets;
}

ReplayResult replay(const CaptureSet& set, const Datapath& datapath, std::size_t keep) {
  ReplayResult result;
  for (std::size_t row = 0; row < set.cases.size(); ++row) {
    const CaptureCase& cc = set.cases[row];
    const std::uint32_t got = mma_element(datapath, cc.a, cc.b, cc.c);
    ++result.cases;
    if (got == cc.d) continue;
    ++result.mismatches;
    if (result.first.size() < keep) result.first.push_back({row, cc.d, got});
  }
  return result;
}

}  // namespace tcemu
