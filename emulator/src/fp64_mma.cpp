#include <tcemu/emulator/fp64_mma.hpp>

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include <tcemu/emulator/floating_point_scope.hpp>
#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/rounded_arithmetic.hpp>

namespace tcemu {
namespace {

bool is_nan(std::uint64_t bits) {
  return (bits & fp64::kExponentMask) == fp64::kExponentMask && (bits & fp64::kFractionMask) != 0;
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

std::optional<Fp64Step> fp64_step_by_name(std::string_view name) {
  for (const Fp64Step s : {Fp64Step::fused, Fp64Step::unfused}) {
    if (name_of(s) == name) return s;
  }
  return std::nullopt;
}

void validate(const Fp64Datapath& dp) {
  if (dp.instruction_k < 1 || dp.instruction_k > kMaxFp64InstructionK) {
    throw std::invalid_argument(
        "fp64 datapath: instruction_k = " + std::to_string(dp.instruction_k) + " must be in 1.." +
        std::to_string(kMaxFp64InstructionK));
  }
  if (!is_nan(dp.nan_bits)) {
    throw std::invalid_argument("fp64 datapath: nan_bits " + hex16(dp.nan_bits) +
                                " is not a binary64 NaN (exponent field 7ff, fraction nonzero)");
  }
}

std::uint64_t fp64_mma_element(const Fp64Datapath& dp, std::span<const std::uint64_t> a,
                               std::span<const std::uint64_t> b, std::uint64_t c) {
  const FloatingPointScope scope;
  validate(dp);
  if (a.size() != b.size()) {
    throw std::invalid_argument("fp64_mma_element: a has " + std::to_string(a.size()) +
                                " values, b has " + std::to_string(b.size()));
  }
  double d = fp64::value(c);
  const std::size_t k = a.size(), step = static_cast<std::size_t>(dp.instruction_k);
  for (std::size_t first = 0; first < k; first += step) {
    const std::size_t terms = std::min(step, k - first);
    for (std::size_t i = 0; i < terms; ++i) {
      const std::size_t p = first + (dp.order == Fp64Order::ascending ? i : terms - 1 - i);
      const double x = fp64::value(a[p]), y = fp64::value(b[p]);
      d = dp.step == Fp64Step::fused ? fma_rn(x, y, d) : add_rn(mul_rn(x, y), d);
    }
  }
  // A NaN stays a NaN through every later fma or addition (IEEE 754 6.2), so replacing the final
  // NaN is replacing each step's.
  const std::uint64_t bits = fp64::bits(d);
  return is_nan(bits) ? dp.nan_bits : bits;
}

std::string describe(const Fp64Datapath& dp) {
  std::ostringstream out;
  out << "fp64 x fp64 -> fp64, K = " << dp.instruction_k << " per instruction: a chain of K "
      << (dp.step == Fp64Step::fused ? "fused multiply-adds (one rounding each)"
                                     : "multiplies and adds (two roundings each)")
      << " from c in " << name_of(dp.order) << " k order, round to nearest even, NaN "
      << hex16(dp.nan_bits);
  return out.str();
}

}  // namespace tcemu
