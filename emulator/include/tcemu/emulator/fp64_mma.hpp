// Double-precision Tensor Core MMA (DMMA): d = a . b + c over K binary64 terms with a binary64
// accumulator, as PTX's mma.sync .f64.f64.f64.f64 computes it (fp64_presets.hpp has the shapes).
//
// The model is MMA-Sim 2.1.1's (mmasim/arithmetic/fma.py, class MMA_FMA, which nv_ptx/sim.py
// uses for every .f64 mma): one instruction is a chain of IEEE 754 fused multiply-adds,
//   d = c;  for k = 0 .. K-1:  d = fma(a_k, b_k, d)      (round to nearest even each step),
// that is c enters first and k runs in ascending order. The order and the fusion are fields, so
// that a probe of the hardware (`tcemu probe --instr dmma`) can tell the chain MMA-Sim validated
// from its nearest alternatives: descending k, or a product rounded before its addition.
//
// Values travel as binary64 bit patterns (std::uint64_t), as the float MMA's do in 32 bits, so
// that the NaN a datapath produces is part of the model. With Fp64Nan::propagated (measured on the
// H200, 2026-11-29: `tcemu probe --instr dmma`, 0 mismatches in 8e5 cases, docs/presets.md) a step
// with a NaN operand returns that NaN quieted (its quiet bit set, sign and payload kept), taking
// b_k's before the running d's before a_k's where several are NaN; an invalid operation
// (0 x Inf, Inf - Inf) returns `nan_bits` (fff8000000000000 there). With Fp64Nan::replaced every
// NaN result is `nan_bits`. Everything else is the IEEE operations' result, subnormals and signed
// zeros included (no flush to zero).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tcemu {

// The order in which one instruction's chain visits its K terms.
enum class Fp64Order {
  ascending,   // k = 0, 1, ..., K-1 (MMA-Sim 2.1.1)
  descending,  // k = K-1, ..., 1, 0
};

// What one step of the chain rounds.
enum class Fp64Step {
  fused,    // d = fma(a_k, b_k, d): one rounding (MMA-Sim 2.1.1)
  unfused,  // d = (a_k * b_k rounded) + d rounded: two roundings
};

constexpr std::string_view name_of(Fp64Order o) {
  return o == Fp64Order::ascending ? "ascending" : "descending";
}
constexpr std::string_view name_of(Fp64Step s) {
  return s == Fp64Step::fused ? "fused" : "unfused";
}
std::optional<Fp64Order> fp64_order_by_name(std::string_view name);
std::optional<Fp64Step> fp64_step_by_name(std::string_view name);

// Which NaN a step with a NaN result returns.
enum class Fp64Nan {
  propagated,  // a NaN operand's, quieted (b_k, then d, then a_k); nan_bits for an invalid one
  replaced,    // nan_bits, whatever made the NaN
};

constexpr std::string_view name_of(Fp64Nan n) {
  return n == Fp64Nan::propagated ? "propagate" : "replace";
}
std::optional<Fp64Nan> fp64_nan_by_name(std::string_view name);

struct Fp64Datapath {
  int instruction_k;  // K of one instruction, 1..kMaxFp64InstructionK
  Fp64Order order;
  Fp64Step step;
  std::uint64_t nan_bits;  // the NaN of an invalid operation (every NaN, if replaced); a NaN
  Fp64Nan nan = Fp64Nan::propagated;

  friend constexpr bool operator==(const Fp64Datapath&, const Fp64Datapath&) = default;
};

// The largest instruction_k accepted (no arithmetic depends on it: a bound for user input).
inline constexpr int kMaxFp64InstructionK = 1 << 16;

// Throws std::invalid_argument naming the field: instruction_k outside 1..kMaxFp64InstructionK,
// nan_bits that is not a binary64 NaN (exponent field all ones, fraction nonzero).
void validate(const Fp64Datapath& datapath);

// d = a . b + c for one output element (bit patterns). K larger than instruction_k runs as a chain
// of instructions in k order, each taking the previous result as its c; a last partial
// instruction has fewer terms (its chain visits them in the datapath's order). K = 0: d = c
// (a NaN c becomes nan_bits). Throws std::invalid_argument when a and b differ in length or the
// datapath is invalid. The host's floating-point environment is set for the call
// (FloatingPointScope: round to nearest, no flush to zero) and restored.
std::uint64_t fp64_mma_element(const Fp64Datapath& datapath, std::span<const std::uint64_t> a,
                               std::span<const std::uint64_t> b, std::uint64_t c);

// One line describing the datapath ("fp64 x fp64 -> fp64, K = 16 per instruction, ...").
std::string describe(const Fp64Datapath& datapath);

}  // namespace tcemu
