#include <tcemu/emulator/integer_mma.hpp>

#include <array>
#include <stdexcept>
#include <string>

#include <tcemu/emulator/floating_point_scope.hpp>

#include "element_checks.hpp"

namespace tcemu {
namespace {

constexpr std::array kIntegerFormats{integer_formats::s8, integer_formats::u8, integer_formats::s4,
                                     integer_formats::u4, integer_formats::s32};

bool is_operand_format(const IntegerFormat& f) {
  return f.bits == 4 || f.bits == 8;
}

void check_values(const char* name, const IntegerFormat& f, std::span<const std::int32_t> x) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!f.holds(x[i])) {
      throw std::invalid_argument(
          "integer_mma_element: " + std::string(name) + "[" + std::to_string(i) +
          "] = " + std::to_string(x[i]) + " is not an " + std::string(f.name) + " value (" +
          std::to_string(f.min_value()) + ".." + std::to_string(f.max_value()) + ")");
    }
  }
}

}  // namespace

std::optional<IntegerFormat> integer_format_by_name(std::string_view name) {
  for (const IntegerFormat& f : kIntegerFormats) {
    if (f.name == name) return f;
  }
  return std::nullopt;
}

std::int32_t integer_from_bits(const IntegerFormat& f, std::uint32_t bits) {
  if (f.bits < 32 && (bits >> f.bits) != 0) {
    throw std::invalid_argument("integer_from_bits: " + std::to_string(bits) +
                                " has bits above the " + std::to_string(f.bits) + " of " +
                                std::string(f.name));
  }
  if (!f.is_signed || f.bits == 32) {
    return static_cast<std::int32_t>(bits);  // s32: two's complement modulo 2^32
  }
  const std::uint32_t sign = std::uint32_t{1} << (f.bits - 1);
  // (bits ^ sign) - sign sign-extends a two's complement field of f.bits bits.
  return static_cast<std::int32_t>(bits ^ sign) - static_cast<std::int32_t>(sign);
}

std::uint32_t integer_to_bits(const IntegerFormat& f, std::int64_t value) {
  if (!f.holds(value)) {
    throw std::invalid_argument("integer_to_bits: " + std::to_string(value) + " is not an " +
                                std::string(f.name) + " value");
  }
  const std::uint64_t mask = (std::uint64_t{1} << f.bits) - 1;
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(value) & mask);
}

void validate(const IntegerDatapath& dp) {
  const auto refuse = [](const std::string& what) {
    throw std::invalid_argument("integer datapath: " + what);
  };
  if (!is_operand_format(dp.a_format)) {
    refuse("a_format " + std::string(dp.a_format.name) + " is not s8, u8, s4 or u4");
  }
  if (!is_operand_format(dp.b_format)) {
    refuse("b_format " + std::string(dp.b_format.name) + " is not s8, u8, s4 or u4");
  }
  if (dp.a_format.bits != dp.b_format.bits) {
    refuse("a_format " + std::string(dp.a_format.name) + " and b_format " +
           std::string(dp.b_format.name) + " differ in width (PTX mixes s8/u8 or s4/u4 only)");
  }
  detail::check_instruction_k("integer", dp.instruction_k, kMaxIntegerInstructionK);
}

std::int32_t integer_mma_element(const IntegerDatapath& dp, std::span<const std::int32_t> a,
                                 std::span<const std::int32_t> b, std::int32_t c) {
  const FloatingPointScope scope;
  validate(dp);
  detail::check_same_length("integer_mma_element", a.size(), b.size());
  check_values("a", dp.a_format, a);
  check_values("b", dp.b_format, b);
  std::int32_t d = c;
  const std::size_t k = a.size(), step = static_cast<std::size_t>(dp.instruction_k);
  for (std::size_t first = 0; first < k; first += step) {
    // |d| <= 2^31 and at most 2^15 products of magnitude < 2^16: |exact| < 2^32, exact in int64.
    std::int64_t exact = d;
    for (std::size_t p = first; p < k && p < first + step; ++p) {
      exact += std::int64_t{a[p]} * b[p];
    }
    d = integer_instruction_result(dp.overflow, exact);
  }
  return d;
}

}  // namespace tcemu
