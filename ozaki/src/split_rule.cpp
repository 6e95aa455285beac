#include <tcemu/ozaki/split_rule.hpp>

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

namespace tcemu::ozaki {

int exact_product_bits(const Products& products) {
  if (std::holds_alternative<IntegerProducts>(products) ||
      std::holds_alternative<CrtProducts>(products)) {
    return 31;  // int32 sums below 2^31
  }
  const auto* tc = std::get_if<TensorCoreProducts>(&products);
  if (tc == nullptr) return 53;
  const Datapath& dp = tc->datapath;
  if (!(dp.accumulator == formats::fp32)) {
    throw std::invalid_argument("ozaki: the datapath's accumulator must be fp32, not " +
                                std::string(dp.accumulator.name));
  }
  const int nf = dp.alignment_fraction_bits.value_or(1000);
  const int p = std::min(dp.block_result_precision, nf + 1);
  if (dp.alignment_fraction_bits && dp.alignment_floor > nf) {
    throw std::invalid_argument(
        "ozaki: alignment floor " + std::to_string(dp.alignment_floor) +
        " puts the grid above 1 for integer slices (nf = " + std::to_string(nf) + ")");
  }
  if (p < 3) throw std::invalid_argument("ozaki: the datapath keeps too few bits");
  return p;
}

int slice_bits(const Products& products, std::int64_t k) {
  const int p = exact_product_bits(products);
  const auto* tc = std::get_if<TensorCoreProducts>(&products);
  // The slice format holds every integer up to 2^b (split_level's check).
  // int8: -128 .. 127 holds every integer of magnitude <= 2^6.
  const int cap = std::holds_alternative<IntegerProducts>(products) ? 6
                  : tc == nullptr                                   ? 51
                                  : std::min(tc->datapath.input.fraction_bits + 1,
                                             tc->datapath.input.max_exponent());
  const auto kk = static_cast<std::uint64_t>(std::max<std::int64_t>(k, 1));
  // Every product kind but binary64 (tensor cores, int32): k 2^(2b) < 2^P; with w = bit_width(k),
  // k in [2^(w-1), 2^w): k < 2^(P - 2b) <=> w <= P - 2b. Binary64: k 2^(2b) <= 2^53 (the rule of
  // Ozaki et al. behind Algorithm 1's rho = ceil((log2 u^-1 + log2 k) / 2), u = 2^-53, b = 53 -
  // rho); with c = ceil(log2 k) = bit_width(k - 1): k <= 2^(53 - 2b) <=> c <= 53 - 2b.
  const bool binary64 = std::holds_alternative<Fp64Products>(products);
  const int width = static_cast<int>(binary64 ? std::bit_width(kk - 1) : std::bit_width(kk));
  const int b = std::min((p - width) / 2, cap);
  if (b < 1) {
    throw std::invalid_argument(
        "ozaki: k = " + std::to_string(k) +
        " is too large for exact slice products with P = " + std::to_string(p));
  }
  return b;
}

}  // namespace tcemu::ozaki
