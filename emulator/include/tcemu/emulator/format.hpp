// Binary floating-point formats that Tensor Cores read and write.
//
// A format is described by its field widths, its sign and how it encodes Inf and NaN; nothing
// about a format is hidden in an enum value. Bit patterns travel as uint32_t in the low bits; TF32
// lives in an fp32 container whose low 13 bits the hardware ignores (`padding_bits`). The narrow
// formats of Blackwell's tensor cores follow the OCP Microscaling spec v1.0 and the PTX ISA: the
// elements e2m1 (FP4), e2m3 and e3m2 (FP6) have no Inf or NaN; the scale formats are unsigned:
// ue8m0 (a power of two 2^(field - 127), no zero, 0xFF NaN) and ue4m3 (e4m3 without its sign bit).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tcemu {

// How the all-ones exponent field is used.
enum class SpecialEncoding {
  ieee,     // exponent all ones: Inf (fraction 0) or NaN (fraction != 0)
  fn_e4m3,  // OCP E4M3: no Inf; only S.1111.111 is NaN, other all-ones exponents are finite
  finite,   // OCP FP6 and FP4: no Inf, no NaN; every bit pattern is a number
  e8m0,     // OCP E8M0: 2^(field - bias) for every field, no zero or subnormal; all ones is NaN
};

struct FloatFormat {
  std::string_view name;
  int exponent_bits;
  int fraction_bits;  // stored fraction bits, without the implicit bit
  int padding_bits;   // low container bits ignored on input and zero on output (TF32: 13)
  SpecialEncoding special;
  bool is_signed = true;  // false: no sign bit (the scale formats ue8m0 and ue4m3)

  constexpr int storage_bits() const { return (is_signed ? 1 : 0) + exponent_bits + fraction_bits; }
  constexpr int container_bits() const { return storage_bits() + padding_bits; }
  constexpr int bias() const { return (1 << (exponent_bits - 1)) - 1; }
  // Exponent of the leading bit of the smallest normal number (E8M0: of field 0, 2^-bias).
  constexpr int min_exponent() const {
    return special == SpecialEncoding::e8m0 ? -bias() : 1 - bias();
  }
  // Exponent of the leading bit of the largest finite number.
  constexpr int max_exponent() const {
    const int all_ones = (1 << exponent_bits) - 1;
    const bool all_ones_special =
        special == SpecialEncoding::ieee || special == SpecialEncoding::e8m0;
    return (all_ones_special ? all_ones - 1 : all_ones) - bias();
  }
  // Largest finite significand (with implicit bit) at max_exponent().
  constexpr std::uint64_t max_significand() const {
    const std::uint64_t all = (std::uint64_t{2} << fraction_bits) - 1;
    return special == SpecialEncoding::fn_e4m3 ? all - 1 : all;  // S.1111.111 is NaN
  }
  // The sign bit in the stored bits; 0 for an unsigned format.
  constexpr std::uint32_t sign_mask() const {
    return is_signed ? std::uint32_t{1} << (storage_bits() - 1) : 0;
  }
  // True for the formats with no Inf (fn_e4m3, finite, e8m0).
  constexpr bool has_infinity() const { return special == SpecialEncoding::ieee; }
  friend constexpr bool operator==(const FloatFormat& a, const FloatFormat& b) {
    return a.exponent_bits == b.exponent_bits && a.fraction_bits == b.fraction_bits &&
           a.padding_bits == b.padding_bits && a.special == b.special && a.is_signed == b.is_signed;
  }
};

namespace formats {
inline constexpr FloatFormat fp32{"fp32", 8, 23, 0, SpecialEncoding::ieee};
inline constexpr FloatFormat fp16{"fp16", 5, 10, 0, SpecialEncoding::ieee};
inline constexpr FloatFormat bf16{"bf16", 8, 7, 0, SpecialEncoding::ieee};
inline constexpr FloatFormat tf32{"tf32", 8, 10, 13, SpecialEncoding::ieee};
inline constexpr FloatFormat e4m3{"e4m3", 4, 3, 0, SpecialEncoding::fn_e4m3};
inline constexpr FloatFormat e5m2{"e5m2", 5, 2, 0, SpecialEncoding::ieee};
// OCP MX v1.0 elements: FP6 e3m2 (bias 3, max 28), FP6 e2m3 (bias 1, max 7.5), FP4 e2m1 (bias 1:
// 0, 0.5, 1, 1.5, 2, 3, 4, 6).
inline constexpr FloatFormat e3m2{"e3m2", 3, 2, 0, SpecialEncoding::finite};
inline constexpr FloatFormat e2m3{"e2m3", 2, 3, 0, SpecialEncoding::finite};
inline constexpr FloatFormat e2m1{"e2m1", 2, 1, 0, SpecialEncoding::finite};
// Scale formats: ue8m0 (OCP E8M0, PyTorch float8_e8m0fnu) and ue4m3 (NVFP4's scale: e4m3 read
// without its sign bit, as the PTX ISA defines it).
inline constexpr FloatFormat ue8m0{"ue8m0", 8, 0, 0, SpecialEncoding::e8m0, false};
inline constexpr FloatFormat ue4m3{"ue4m3", 4, 3, 0, SpecialEncoding::fn_e4m3, false};
}  // namespace formats

// The format called `name` (fp32, fp16, bf16, tf32, e4m3, e5m2, e3m2, e2m3, e2m1, ue8m0, ue4m3),
// or nothing.
std::optional<FloatFormat> format_by_name(std::string_view name);

// True for the formats a block scale may have (ue8m0, ue4m3).
constexpr bool is_scale_format(const FloatFormat& f) {
  return f == formats::ue8m0 || f == formats::ue4m3;
}

// The bits a code of this format may have where a case line or a file gives one: its container,
// but a scale's whole byte, as the hardware reads it (ue4m3's bit 7, the sign of the
// float8_e4m3fn a kernel stores it as, is ignored: MMA-Sim 2.1.1; the extreme-scale evidence
// cases of cases/src/mmasim_evidence.cpp set it).
constexpr int code_bits(const FloatFormat& f) {
  return is_scale_format(f) ? 8 : f.container_bits();
}

// Number of hex digits of a container of this format (fp16: 4, tf32: 8, e4m3: 2, e2m1: 1).
constexpr int hex_digits(const FloatFormat& f) {
  return (f.container_bits() + 3) / 4;
}

}  // namespace tcemu
