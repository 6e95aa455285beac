#include <charconv>
#include <limits>
#include <sstream>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/cases/printable.hpp>
#include <tcemu/emulator/mma.hpp>

#include "case_words.hpp"

namespace tcemu {
namespace {

// A field of `format`: its hex digits, and no bit above code_bits (an e2m3 code in two digits
// could otherwise carry a bit the decoder drops; a scale is the byte the hardware reads).
std::uint32_t parse_hex(std::string_view word, const FloatFormat& format, const char* role,
                        std::size_t index, std::size_t line) {
  const std::string field = detail::case_field_name(role, index);
  const std::uint32_t value =
      detail::parse_hex_field(word, hex_digits(format), format.name, field, line);
  const int bits = code_bits(format);
  if (bits < 32 && value >> bits != 0) {
    throw CaseFileError(line, field + " '" + printable(word) + "' is not a bit pattern of " +
                                  std::string(format.name) + " (" + std::to_string(bits) +
                                  " bits: at most " +
                                  to_hex(format, (std::uint32_t{1} << bits) - 1) + ")");
  }
  return value;
}

// The formats of a case line's fields; scale_block 0: no scales.
struct LineFormats {
  FloatFormat input, input_b, accumulator;
  std::size_t scale_block = 0;
  FloatFormat scale_a{}, scale_b{};
};

std::optional<MmaCase> parse_line(std::string_view text, std::size_t line, const LineFormats& f) {
  const auto words = detail::split_case_words(text);
  if (words.empty() || words.front().front() == '#') return std::nullopt;
  std::size_t k = 0;
  const auto [end, error] =
      std::from_chars(words[0].data(), words[0].data() + words[0].size(), k, 10);
  if (error != std::errc() || end != words[0].data() + words[0].size()) {
    throw CaseFileError(line, "K '" + printable(words[0]) + "' is not a non-negative integer");
  }
  // A K above words.size() / 2 cannot fit, and 2 + 2K would wrap for K near 2^63: check it first.
  // Then S <= K, so 2 + 2K + 2S <= 2 + 4 words.size() does not wrap either.
  const bool fits = k <= words.size() / 2;
  const std::size_t s = f.scale_block == 0 || !fits ? 0 : (k + f.scale_block - 1) / f.scale_block;
  const std::size_t expected = fits ? 2 + 2 * k + 2 * s : 0;
  if (!fits || (words.size() != expected && words.size() != expected + 1)) {
    // The counts as numbers where 3 + 2K + 2S cannot wrap (S <= K), as formulas otherwise.
    const std::size_t most = std::numeric_limits<std::size_t>::max() - 3;
    const bool small = k <= (f.scale_block == 0 ? most / 2 : most / 4);
    const std::size_t scales = f.scale_block == 0 ? 0 : (k + f.scale_block - 1) / f.scale_block;
    const std::string count = f.scale_block == 0 ? "" : small ? std::to_string(scales) : "S";
    const std::string fields =
        "(K, " + std::to_string(k) + " a, " + std::to_string(k) + " b, c" +
        (f.scale_block == 0 ? std::string()
                            : ", " + count + " scales of A and " + count + " of B, one per " +
                                  std::to_string(f.scale_block) + " k") +
        ")";
    const std::string formula = f.scale_block == 0 ? "2K + " : "2K + 2S + ";
    throw CaseFileError(line, "K = " + std::to_string(k) + " needs " +
                                  (small ? std::to_string(2 + 2 * k + 2 * scales) : formula + "2") +
                                  " fields " + fields + " or " +
                                  (small ? std::to_string(3 + 2 * k + 2 * scales) : formula + "3") +
                                  " with a recorded d, found " + std::to_string(words.size()));
  }
  MmaCase c;
  for (std::size_t i = 0; i < k; ++i) {
    c.a.push_back(parse_hex(words[1 + i], f.input, "a", i, line));
  }
  for (std::size_t i = 0; i < k; ++i) {
    c.b.push_back(parse_hex(words[1 + k + i], f.input_b, "b", i, line));
  }
  c.c = parse_hex(words[1 + 2 * k], f.accumulator, "c", std::string_view::npos, line);
  for (std::size_t j = 0; j < s; ++j) {
    c.scale_a.push_back(parse_hex(words[2 + 2 * k + j], f.scale_a, "sa", j, line));
  }
  for (std::size_t j = 0; j < s; ++j) {
    c.scale_b.push_back(parse_hex(words[2 + 2 * k + s + j], f.scale_b, "sb", j, line));
  }
  if (words.size() == expected + 1) {
    c.d = parse_hex(words.back(), f.accumulator, "d", std::string_view::npos, line);
  }
  return c;
}

LineFormats line_formats(const Datapath& dp) {
  const BlockScaling& s = dp.block_scaling;
  return {dp.input,       dp.b_format(),
          dp.accumulator, dp.block_scaled() ? static_cast<std::size_t>(s.scale_block) : 0,
          s.scale_a,      s.scale_b};
}

}  // namespace

std::optional<MmaCase> parse_case_line(std::string_view text, std::size_t line,
                                       const FloatFormat& input, const FloatFormat& accumulator) {
  return parse_line(text, line, {input, input, accumulator});
}

std::optional<MmaCase> parse_case_line(std::string_view text, std::size_t line,
                                       const Datapath& datapath) {
  return parse_line(text, line, line_formats(datapath));
}

std::uint32_t mma_case_element(const Datapath& datapath, const MmaCase& c) {
  return datapath.block_scaled() ? mma_element(datapath, c.a, c.b, c.c, c.scale_a, c.scale_b)
                                 : mma_element(datapath, c.a, c.b, c.c);
}

std::string to_hex(const FloatFormat& format, std::uint32_t bits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(static_cast<std::size_t>(hex_digits(format)), '0');
  for (std::size_t i = out.size(); i-- > 0; bits >>= 4) out[i] = kDigits[bits & 0xF];
  return out;
}

std::string format_case_line(const MmaCase& c, const FloatFormat& input,
                             const FloatFormat& accumulator) {
  Datapath formats{};
  formats.input = input;
  formats.accumulator = accumulator;
  return format_case_line(c, formats);
}

std::string format_case_line(const MmaCase& c, const Datapath& datapath) {
  const BlockScaling& s = datapath.block_scaling;
  std::ostringstream out;
  out << c.a.size();
  for (std::uint32_t x : c.a) out << ' ' << to_hex(datapath.input, x);
  for (std::uint32_t x : c.b) out << ' ' << to_hex(datapath.b_format(), x);
  out << ' ' << to_hex(datapath.accumulator, c.c);
  for (std::uint32_t x : c.scale_a) out << ' ' << to_hex(s.scale_a, x);
  for (std::uint32_t x : c.scale_b) out << ' ' << to_hex(s.scale_b, x);
  if (c.d) out << ' ' << to_hex(datapath.accumulator, *c.d);
  return out.str();
}

}  // namespace tcemu
