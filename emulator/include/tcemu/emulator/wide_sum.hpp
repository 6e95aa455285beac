// An exact fixed-point sum of signed integers shifted left, wide enough for every datapath.
//
// Invariant: the value is the two's-complement integer held in `limbs_` (little endian) times
// 2^lsb, where lsb is chosen by the caller. Widths: a term is a 64-bit magnitude shifted left by at
// most kMaxShift bits; with kLimbs * 64 = 704 bits and kMaxShift = 576, a sum of up to 2^63 such
// terms cannot overflow (576 + 64 + 63 < 704). The widest span a datapath needs is the exact sum
// of bf16/tf32 products and an fp32 C: from 2^-266 (product of two smallest subnormals) up to
// 2^258, 524 bits, well inside kMaxShift. Host and device code (TCEMU_HOST_DEVICE) share it: the
// emulated GEMM's exact fallback runs it on the GPU.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>

#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu::detail {

class WideSum {
 public:
  static constexpr int kLimbs = 11;
  static constexpr int kMaxShift = 576;

  TCEMU_HOST_DEVICE void add(bool negative, std::uint64_t magnitude, int shift) {
    if (shift < 0 || shift > kMaxShift) {
#if defined(__CUDA_ARCH__)
      __trap();  // unreachable for a validated datapath; a kernel cannot throw
#else
      throw std::logic_error("WideSum: shift out of range");
#endif
    }
    const int limb = shift / 64;
    const int bit = shift % 64;
    std::array<std::uint64_t, 2> part{magnitude << bit, bit == 0 ? 0 : magnitude >> (64 - bit)};
    if (!negative) {
      std::uint64_t carry = 0;
      for (int i = limb; i < kLimbs; ++i) {
        const std::uint64_t addend = i - limb < 2 ? part[i - limb] : 0;
        const std::uint64_t s = limbs_[i] + addend;
        const std::uint64_t c1 = s < addend;
        limbs_[i] = s + carry;
        carry = c1 | (limbs_[i] < carry);
        if (i - limb >= 1 && carry == 0) break;
      }
    } else {
      std::uint64_t borrow = 0;
      for (int i = limb; i < kLimbs; ++i) {
        const std::uint64_t subtrahend = i - limb < 2 ? part[i - limb] : 0;
        const std::uint64_t d = limbs_[i] - subtrahend;
        const std::uint64_t b1 = limbs_[i] < subtrahend;
        const std::uint64_t d2 = d - borrow;
        borrow = b1 | (d < borrow);
        limbs_[i] = d2;
        if (i - limb >= 1 && borrow == 0) break;
      }
    }
  }

  TCEMU_HOST_DEVICE bool negative() const {
    return (limbs_[kLimbs - 1] >> 63) != 0;
  }
  TCEMU_HOST_DEVICE bool is_zero() const {
    for (std::uint64_t l : limbs_) {
      if (l != 0) return false;
    }
    return true;
  }

  // |value| as its leading 64 bits, the weight of their last bit (relative to the sum's lsb) and
  // a sticky flag for the rest. When fewer than 64 bits are significant, the result is exact.
  TCEMU_HOST_DEVICE ExactMagnitude magnitude(int lsb_exponent) const {
    std::array<std::uint64_t, kLimbs> m = limbs_;
    if (negative()) {  // two's-complement negate
      std::uint64_t carry = 1;
      for (std::uint64_t& l : m) {
        l = ~l + carry;
        carry = (carry != 0 && l == 0) ? 1 : 0;
      }
    }
    int top = kLimbs - 1;
    while (top > 0 && m[top] == 0) --top;
    if (top == 0) return {m[0], lsb_exponent, false};
    // Take 64 bits whose leading bit is the value's leading bit.
    const int lead = detail::bit_width(m[top]) - 1;  // in limb `top`
    const int low_bit = top * 64 + lead - 63;        // position of the last bit taken
    const int limb = low_bit / 64;
    const int bit = low_bit % 64;
    const std::uint64_t hi = limb + 1 < kLimbs ? m[limb + 1] : 0;
    const std::uint64_t taken = bit == 0 ? m[limb] : (m[limb] >> bit) | (hi << (64 - bit));
    bool sticky = bit != 0 && (m[limb] & ((std::uint64_t{1} << bit) - 1)) != 0;
    for (int i = 0; i < limb && !sticky; ++i) sticky = m[i] != 0;
    return {taken, lsb_exponent + low_bit, sticky};
  }

 private:
  std::array<std::uint64_t, kLimbs> limbs_{};
};

}  // namespace tcemu::detail
