#include "values.hpp"

#include <bit>
#include <charconv>
#include <sstream>

#include <tcemu/cases/printable.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/round.hpp>
#include <tcemu/session/arguments.hpp>

#include "topics.hpp"

namespace tcemu::cli::explain {
namespace {

// "bits:HEX" as an integer of at most `bits` bits, or false when `word` is not a bit pattern.
bool bit_pattern(const std::string& what, const std::string& word, int bits, std::uint64_t& out) {
  if (!word.starts_with("bits:")) return false;
  const char* first = word.data() + 5;
  const char* last = word.data() + word.size();
  const auto [end, error] = std::from_chars(first, last, out, 16);
  if (first == last || error != std::errc() || end != last || (bits < 64 && out >> bits != 0)) {
    throw session::UsageError(what + ": '" + printable(word) + "' is not a " +
                              std::to_string(bits) + "-bit pattern in hex");
  }
  return true;
}

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    std::istringstream words(item);
    for (std::string w; words >> w;) out.push_back(w);
  }
  return out;
}

}  // namespace

double number(const std::string& what, const std::string& word) {
  if (std::uint64_t bits = 0; bit_pattern(what, word, 64, bits)) return std::bit_cast<double>(bits);
  double x = 0;
  // An optional '-', then "0x" for a hex float, then the digits: one sign at most (from_chars
  // would read a second one after ours).
  const char* first = word.data();
  const char* last = word.data() + word.size();
  const bool negative = first != last && *first == '-';
  if (negative) ++first;
  const bool hex = last - first > 2 && first[0] == '0' && (first[1] == 'x' || first[1] == 'X');
  if (hex) first += 2;
  const auto [end, error] =
      first == last || *first == '-' || *first == '+'
          ? std::from_chars_result{first, std::errc::invalid_argument}
          : std::from_chars(first, last, x,
                            hex ? std::chars_format::hex : std::chars_format::general);
  if (error != std::errc() || end != last) {
    throw session::UsageError(what + ": not a number: '" + printable(word) + "'");
  }
  return negative ? -x : x;
}

std::vector<double> numbers(const std::string& what, const std::string& text) {
  std::vector<double> v;
  for (const std::string& w : words_of(text)) v.push_back(number(what, w));
  return v;
}

std::uint32_t value_bits(const std::string& what, const std::string& word,
                         const FloatFormat& format) {
  if (std::uint64_t bits = 0; bit_pattern(what, word, format.container_bits(), bits)) {
    return static_cast<std::uint32_t>(bits);
  }
  const double x = number(what, word);
  // NaN and Inf through fp32, whose encodings every format's convert() maps.
  if (!fp64::is_finite(fp64::bits(x))) {
    return convert(formats::fp32, format, fp64::narrow_bits(x), Rounding::nearest_even);
  }
  const fp64::Fields f = fp64::fields(x);
  if (f.significand == 0) return encode_zero(format, f.negative);
  return round_pack(format, f.negative, {f.significand, f.exponent, false}, Rounding::nearest_even,
                    Overflow::ieee);
}

std::vector<std::uint32_t> values_bits(const std::string& what, const std::string& text,
                                       const FloatFormat& format) {
  std::vector<std::uint32_t> v;
  for (const std::string& w : words_of(text)) v.push_back(value_bits(what, w, format));
  return v;
}

std::vector<std::string> positional_values(const session::Arguments& args, std::size_t count,
                                           const std::vector<std::string>& fallback) {
  const std::vector<std::string>& words = args.positional();
  if (words.empty()) return fallback;
  if (words.size() != count) {
    throw session::UsageError("give " + std::to_string(count) +
                              " values or none (the example), got " + std::to_string(words.size()));
  }
  return words;
}

}  // namespace tcemu::cli::explain
