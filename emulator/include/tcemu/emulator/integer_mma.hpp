// Integer Tensor Core MMA (IMMA): d = a . b + c over K terms with 8- or 4-bit integer operands and
// a 32-bit integer accumulator, as PTX's mma.sync with .s8/.u8/.s4/.u4 operands and .s32
// accumulator computes it, with or without .satfinite.
//
// Values travel as int32_t: an operand holds a value of its format (s8: -128..127, u8: 0..255,
// s4: -8..7, u4: 0..15), the accumulator any int32_t. Bit patterns (case files) convert with
// integer_from_bits / integer_to_bits.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include <tcemu/emulator/host_device.hpp>

namespace tcemu {

struct IntegerFormat {
  std::string_view name;
  int bits;  // 4, 8 or 32
  bool is_signed;

  constexpr std::int64_t min_value() const {
    return is_signed ? -(std::int64_t{1} << (bits - 1)) : 0;
  }
  constexpr std::int64_t max_value() const {
    return is_signed ? (std::int64_t{1} << (bits - 1)) - 1 : (std::int64_t{1} << bits) - 1;
  }
  constexpr bool holds(std::int64_t value) const {
    return value >= min_value() && value <= max_value();
  }
  friend constexpr bool operator==(const IntegerFormat& a, const IntegerFormat& b) {
    return a.bits == b.bits && a.is_signed == b.is_signed;
  }
};

namespace integer_formats {
inline constexpr IntegerFormat s8{"s8", 8, true};
inline constexpr IntegerFormat u8{"u8", 8, false};
inline constexpr IntegerFormat s4{"s4", 4, true};
inline constexpr IntegerFormat u4{"u4", 4, false};
inline constexpr IntegerFormat s32{"s32", 32, true};  // the accumulator
}  // namespace integer_formats

// The integer format called `name` (s8, u8, s4, u4, s32), or nothing.
std::optional<IntegerFormat> integer_format_by_name(std::string_view name);

// Hex digits of a bit pattern of this format in a case file (s8: 2, s4: 1, s32: 8).
constexpr int hex_digits(const IntegerFormat& f) {
  return f.bits / 4;
}

// The value of the low f.bits bits of `bits` (two's complement when signed). Throws
// std::invalid_argument when a bit above them is set.
std::int32_t integer_from_bits(const IntegerFormat& f, std::uint32_t bits);
// The f.bits-bit pattern of `value`. Throws std::invalid_argument when f does not hold it.
std::uint32_t integer_to_bits(const IntegerFormat& f, std::int64_t value);

// What an instruction does with a result outside int32.
enum class IntegerOverflow {
  wrap,      // two's complement modulo 2^32 (mma without .satfinite)
  saturate,  // clamped to [INT32_MIN, INT32_MAX] (.satfinite)
};

constexpr std::string_view name_of(IntegerOverflow o) {
  return o == IntegerOverflow::wrap ? "wrap" : "saturate";
}

struct IntegerDatapath {
  IntegerFormat a_format;  // s8, u8, s4 or u4
  IntegerFormat b_format;  // of the same width as a_format; signedness may differ (s8 x u8)
  int instruction_k;       // K of one instruction, 1..kMaxIntegerInstructionK
  IntegerOverflow overflow;

  friend constexpr bool operator==(const IntegerDatapath&, const IntegerDatapath&) = default;
};

// The largest instruction_k accepted. Every product of two operands lies in [-32640, 65025]
// (s8 x u8: -128 * 255; u8 x u8: 255 * 255), so |product| < 2^16 and the sum of one instruction's
// products has magnitude < 2^15 * 2^16 = 2^31: it is exact in int32 (the GEMM's inner loop
// relies on it), and with c (|c| <= 2^31) exact in int64 with room to spare.
inline constexpr int kMaxIntegerInstructionK = 1 << 15;

// Throws std::invalid_argument naming the offending field: an operand format that is not s8, u8,
// s4 or u4, operands of different widths, instruction_k outside 1..kMaxIntegerInstructionK.
void validate(const IntegerDatapath& datapath);

// The result of one instruction whose exact sum c + sum(a_i b_i) is `exact` (the int64 of which is
// exact by the bound above): wrapped modulo 2^32 or clamped to int32.
TCEMU_HOST_DEVICE constexpr std::int32_t integer_instruction_result(IntegerOverflow overflow,
                                                                    std::int64_t exact) {
  if (overflow == IntegerOverflow::saturate) {
    return exact > INT32_MAX   ? INT32_MAX
           : exact < INT32_MIN ? INT32_MIN
                               : static_cast<std::int32_t>(exact);
  }
  // Conversion of an out-of-range value to a signed type is modulo 2^32 since C++20.
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(exact)));
}

// d = a . b + c for one output element. a and b hold K values (K >= 0) of the datapath's operand
// formats. K larger than instruction_k runs as a chain of instructions in k order, each taking
// the previous result as its c; a last partial instruction has fewer terms. Each instruction
// computes c + its products exactly (no intermediate result can overflow int64: see
// kMaxIntegerInstructionK; c is an int32 at the start of every instruction) and then wraps or
// saturates once. Hence every K is accepted. K = 0: d = c. Throws std::invalid_argument when a
// and b differ in length, a value lies outside its format, or the datapath is invalid.
std::int32_t integer_mma_element(const IntegerDatapath& datapath, std::span<const std::int32_t> a,
                                 std::span<const std::int32_t> b, std::int32_t c);

}  // namespace tcemu
