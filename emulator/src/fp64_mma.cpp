#include <tcemu/emulator/fp64_mma.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include <tcemu/emulator/floating_point_scope.hpp>
#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/rounded_arithmetic.hpp>

#include "element_checks.hpp"

namespace tcemu {
namespace {

bool is_nan(std::uint64_t bits) {
  return (bits & fp64::kExponentMask) == fp64::kExponentMask && (bits & fp64::kFractionMask) != 0;
}

constexpr std::uint64_t kQuietBit = std::uint64_t{1} << 51;

// One step of the chain: d = a b + d through `dp`, NaNs as its rule says.
double step(const Fp64Datapath& dp, std::uint64_t a, std::uint64_t b, double d) {
  if (dp.nan == Fp64Nan::propagated) {
    for (const std::uint64_t operand : {b, fp64::bits(d), a}) {
      if (is_nan(operand)) return fp64::value(operand | kQuietBit);
    }
  }
  const double x = fp64::value(a), y = fp64::value(b);
  const double r = dp.step == Fp64Step::fused ? fma_rn(x, y, d) : add_rn(mul_rn(x, y), d);
  return std::isnan(r) ? fp64::value(dp.nan_bits) : r;
}

std::string hex16(std::uint64_t bits) {
  std::ostringstream out;
  out << std::hex;
  out.width(16);
  out.fill('0');
  out << bits;
  return out.str();
}

}  // namespace

std::optional<Fp64Order> fp64_order_by_name(std::string_view name) {
  for (const Fp64Order o : {Fp64Order::ascending, Fp64Order::descending}) {
    if (name_of(o) == name) return o;
  }
  return std::nullopt;
}

std::optional<Fp64Nan> fp64_nan_by_name(std::string_view name) {
  for (const Fp64Nan n : {Fp64Nan::propagated, Fp64Nan::replaced}) {
    if (name_of(n) == name) return n;
  }
  return std::nullopt;
}

std::optional<Fp64Step> fp64_step_by_name(std::string_view name) {
  for (const Fp64Step s : {Fp64Step::fused, Fp64Step::unfused}) {
    if (name_of(s) == name) return s;
  }
  return std::nullopt;
}

void validate(const Fp64Datapath& dp) {
  detail::check_instruction_k("fp64", dp.instruction_k, kMaxFp64InstructionK);
  if (!is_nan(dp.nan_bits)) {
    throw std::invalid_argument("fp64 datapath: nan_bits " + hex16(dp.nan_bits) +
                                " is not a binary64 NaN (exponent field 7ff, fraction nonzero)");
  }
}

std::uint64_t fp64_mma_element(const Fp64Datapath& dp, std::span<const std::uint64_t> a,
                               std::span<const std::uint64_t> b, std::uint64_t c) {
  const FloatingPointScope scope;
  validate(dp);
  detail::check_same_length("fp64_mma_element", a.size(), b.size());
  // K = 0 leaves c; a NaN c is then returned as the rule returns an operand NaN.
  double d = is_nan(c) && dp.nan == Fp64Nan::replaced ? fp64::value(dp.nan_bits)
                                                      : fp64::value(is_nan(c) ? c | kQuietBit : c);
  const std::size_t k = a.size(), per = static_cast<std::size_t>(dp.instruction_k);
  for (std::size_t first = 0; first < k; first += per) {
    const std::size_t terms = std::min(per, k - first);
    for (std::size_t i = 0; i < terms; ++i) {
      const std::size_t p = first + (dp.order == Fp64Order::ascending ? i : terms - 1 - i);
      d = step(dp, a[p], b[p], d);
    }
  }
  return fp64::bits(d);
}

std::string describe(const Fp64Datapath& dp) {
  std::ostringstream out;
  out << "fp64 x fp64 -> fp64, K = " << dp.instruction_k << " per instruction: a chain of K "
      << (dp.step == Fp64Step::fused ? "fused multiply-adds (one rounding each)"
                                     : "multiplies and adds (two roundings each)")
      << " from c in " << name_of(dp.order) << " k order, round to nearest even, "
      << (dp.nan == Fp64Nan::propagated
              ? "NaN operands propagated quieted (b, then d, then a), invalid operations "
              : "every NaN ")
      << hex16(dp.nan_bits);
  return out.str();
}

}  // namespace tcemu
