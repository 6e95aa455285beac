#include <algorithm>
#include <array>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <tcemu/emulator/block_fma.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/floating_point_scope.hpp>
#include <tcemu/emulator/mma.hpp>

namespace tcemu {
namespace {

[[noreturn]] void invalid(const std::string& what) {
  throw std::invalid_argument("invalid datapath: " + what);
}

// The widest datapath we accept keeps every grid shift inside the exact accumulator.
constexpr int kMaxAlignmentFractionBits = 400;
constexpr int kMaxInstructionK = 1024;

}  // namespace

void validate(const Datapath& dp) {
  if (!(dp.accumulator == formats::fp32) && !(dp.accumulator == formats::fp16)) {
    invalid("accumulator must be fp32 or fp16, got " + std::string(dp.accumulator.name));
  }
  if (dp.input.fraction_bits > 23 || dp.input.exponent_bits > 8) {
    invalid("input format " + std::string(dp.input.name) + " is wider than fp32");
  }
  if (dp.block_terms < 1 || dp.block_terms > kMaxBlockTerms) {
    invalid("block_terms must be in [1, " + std::to_string(kMaxBlockTerms) + "], got " +
            std::to_string(dp.block_terms));
  }
  if (dp.instruction_k < 1 || dp.instruction_k > kMaxInstructionK ||
      dp.instruction_k % dp.block_terms != 0) {
    invalid("instruction_k must be a positive multiple of block_terms, got " +
            std::to_string(dp.instruction_k));
  }
  if (dp.k_group < 1 || dp.block_terms % dp.k_group != 0) {
    invalid("k_group must divide block_terms, got " + std::to_string(dp.k_group));
  }
  if (dp.alignment_fraction_bits && (*dp.alignment_fraction_bits < 0 ||
                                     *dp.alignment_fraction_bits > kMaxAlignmentFractionBits)) {
    invalid("alignment_fraction_bits must be in [0, " + std::to_string(kMaxAlignmentFractionBits) +
            "], got " + std::to_string(*dp.alignment_fraction_bits));
  }
  if (dp.block_result_precision < 1 ||
      dp.block_result_precision > dp.accumulator.fraction_bits + 1) {
    invalid("block_result_precision must be in [1, " +
            std::to_string(dp.accumulator.fraction_bits + 1) + "], got " +
            std::to_string(dp.block_result_precision));
  }
  // The NaN a datapath writes must be a NaN of its accumulator format, in that format's width.
  const int width = dp.accumulator.container_bits();
  if ((width < 32 && (dp.nan_bits >> width) != 0) ||
      decode(dp.accumulator, dp.nan_bits).value_class != ValueClass::nan) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%X", static_cast<unsigned>(dp.nan_bits));
    invalid("nan_bits = " + std::string(hex) + " is not a NaN of the accumulator format " +
            std::string(dp.accumulator.name));
  }
}

std::uint32_t mma_element_decoded(const Datapath& dp, std::span<const Decoded> a,
                                  std::span<const Decoded> b, std::uint32_t c) {
  const FloatingPointScope scope;
  if (a.size() != b.size()) throw std::invalid_argument("mma_element: a and b differ in length");
  struct Pair {
    Decoded a, b;
  };
  return detail::exact_mma_chain(dp, static_cast<std::int64_t>(a.size()), c, [&](std::int64_t p) {
    return Pair{a[p], b[p]};
  });
}

std::uint32_t mma_element(const Datapath& dp, std::span<const std::uint32_t> a,
                          std::span<const std::uint32_t> b, std::uint32_t c) {
  const FloatingPointScope scope;
  if (a.size() != b.size()) throw std::invalid_argument("mma_element: a and b differ in length");
  std::vector<Decoded> da(a.size());
  std::vector<Decoded> db(b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    da[i] = decode(dp.input, a[i]);
    db[i] = decode(dp.input, b[i]);
  }
  return mma_element_decoded(dp, da, db, c);
}

}  // namespace tcemu
