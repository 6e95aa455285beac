// Binary floating-point formats that Tensor Cores read and write.
//
// A format is described by its field widths and by how it encodes Inf and NaN; nothing about a
// format is hidden in an enum value. Bit patterns travel as uint32_t in the low bits; TF32 lives
// in an fp32 container whose low 13 bits the hardware ignores (`padding_bits`).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tcemu {

// How the all-ones exponent field is used.
enum class SpecialEncoding {
  ieee,     // exponent all ones: Inf (fraction 0) or NaN (fraction != 0)
  fn_e4m3,  // OCP E4M3: no Inf; only S.1111.111 is NaN, other all-ones exponents are finite
};

struct FloatFormat {
  std::string_view name;
  int exponent_bits;
  int fraction_bits;  // stored fraction bits, without the implicit bit
  int padding_bits;   // low container bits ignored on input and zero on output (TF32: 13)
  SpecialEncoding special;

  constexpr int storage_bits() const { return 1 + exponent_bits + fraction_bits; }
  constexpr int container_bits() const { return storage_bits() + padding_bits; }
  constexpr int bias() const { return (1 << (exponent_bits - 1)) - 1; }
  // Exponent of the leading bit of the smallest normal number.
  constexpr int min_exponent() const { return 1 - bias(); }
  // Exponent of the leading bit of the largest finite number.
  constexpr int max_exponent() const {
    const int all_ones = (1 << exponent_bits) - 1;
    return (special == SpecialEncoding::ieee ? all_ones - 1 : all_ones) - bias();
  }
  // Largest finite significand (with implicit bit) at max_exponent().
  constexpr std::uint64_t max_significand() const {
    const std::uint64_t all = (std::uint64_t{2} << fraction_bits) - 1;
    return special == SpecialEncoding::fn_e4m3 ? all - 1 : all;  // S.1111.111 is NaN
  }
  constexpr std::uint32_t sign_mask() const { return std::uint32_t{1} << (storage_bits() - 1); }
  friend constexpr bool operator==(const FloatFormat& a, const FloatFormat& b) {
    return a.exponent_bits == b.exponent_bits && a.fraction_bits == b.fraction_bits &&
           a.padding_bits == b.padding_bits && a.special == b.special;
  }
};

namespace formats {
inline constexpr FloatFormat fp32{"fp32", 8, 23, 0, SpecialEncoding::ieee};
inline constexpr FloatFormat fp16{"fp16", 5, 10, 0, SpecialEncoding::ieee};
inline constexpr FloatFormat bf16{"bf16", 8, 7, 0, SpecialEncoding::ieee};
inline constexpr FloatFormat tf32{"tf32", 8, 10, 13, SpecialEncoding::ieee};
inline constexpr FloatFormat e4m3{"e4m3", 4, 3, 0, SpecialEncoding::fn_e4m3};
inline constexpr FloatFormat e5m2{"e5m2", 5, 2, 0, SpecialEncoding::ieee};
}  // namespace formats

// The format called `name` (fp32, fp16, bf16, tf32, e4m3, e5m2), or nothing.
std::optional<FloatFormat> format_by_name(std::string_view name);

// Number of hex digits of a container of this format (fp16: 4, tf32: 8, e4m3: 2).
constexpr int hex_digits(const FloatFormat& f) {
  return (f.container_bits() + 3) / 4;
}

}  // namespace tcemu
