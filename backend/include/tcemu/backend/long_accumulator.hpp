// Kulisch's long accumulator, for host and device: an exact fixed-point sum of binary64 numbers
// (and, in the wide range, of exact products of two binary64 numbers), rounded once at the end to
// binary64 or binary32 (to nearest, ties to even). Every exact sum of binary64 numbers or
// products in the project is this one: Backend::exact_sum on every backend (ozaki_elements.hpp),
// the ExBLAS-style exact inner products (exact_dot.hpp) on every backend, and the fast reference
// oracle (reference/accumulator_gemm.hpp). (The MPFR oracle, reference/exact_gemm.cpp, stays
// independent of it on purpose: the tests cross-check the two.)
//
// Invariant: the value is the two's-complement integer held in kLimbs little-endian 64-bit limbs
// times 2^kLsbExponent. Every add is exact (no bit falls off either end) in the two ranges below:
//
//   LongAccumulator (kLsbExponent = -2148, 67 limbs = 4288 bits): numbers and exact products. A
//     finite binary64 is M 2^e with M < 2^53 and e >= -1074, so the product of two is a 106-bit
//     integer times 2^(e_a + e_b) with e_a + e_b >= -2148, and below 2^2048. The sign bit is
//     reached only after 2^(4287 - 2048 - 2148) = 2^91 terms of the largest magnitude.
//   Binary64Accumulator (kLsbExponent = -1074, 34 limbs = 2176 bits): numbers only, half the
//     memory (a GPU thread of the exact_sum kernel keeps its limbs in shared memory). A finite
//     binary64 is a multiple of 2^-1074 below 2^1024; the sign bit is reached only after
//     2^(2175 - 1024 - 1074) = 2^77 terms of the largest magnitude.
//
// The limbs live where the Storage says: in the object (ArrayLimbs: the host's memory, a GPU
// thread's registers or local memory) or anywhere else, e.g. a GPU thread's column of a
// shared-memory array (StridedLimbs).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

#include <tcemu/emulator/fp64_bits.hpp>
#include <tcemu/emulator/host_device.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu {

namespace detail {

// hi:lo = a * b, the exact 128-bit product.
TCEMU_HOST_DEVICE inline void multiply_64x64(std::uint64_t a, std::uint64_t b, std::uint64_t& hi,
                                             std::uint64_t& lo) {
#if defined(__CUDA_ARCH__)
  lo = a * b;
  hi = __umul64hi(a, b);
#else
  __extension__ using Uint128 = unsigned __int128;
  const Uint128 p = static_cast<Uint128>(a) * b;
  lo = static_cast<std::uint64_t>(p);
  hi = static_cast<std::uint64_t>(p >> 64);
#endif
}

}  // namespace detail

// N limbs in the object, zero when constructed.
template <int N>
struct ArrayLimbs {
  std::uint64_t limb[N] = {};
  TCEMU_HOST_DEVICE std::uint64_t& operator[](int i) { return limb[i]; }
  TCEMU_HOST_DEVICE std::uint64_t operator[](int i) const { return limb[i]; }
};

// Limbs at base[0], base[stride], ...: a GPU thread's column of a shared-memory array (limb l of
// thread t at [l * threads + t]: a warp's accesses to one limb are consecutive words, free of
// bank conflicts).
struct StridedLimbs {
  std::uint64_t* base;
  int stride;
  TCEMU_HOST_DEVICE std::uint64_t& operator[](int i) const { return base[i * stride]; }
};

// The accumulator with its last bit of weight 2^LsbExponent, Limbs limbs wide, the limbs where
// Storage says. Use one of the two ranges at the end of this file.
template <int LsbExponent, int Limbs, class Storage = ArrayLimbs<Limbs>>
class BasicLongAccumulator {
 public:
  static constexpr int kLimbs = Limbs;
  static constexpr int kLsbExponent = LsbExponent;
  // Exact products need the bits down to 2^-2148 (the widths at the top of this file).
  static constexpr bool kTakesProducts = LsbExponent <= -2148;
  // The largest term is below 2^kTopExponent; at least 2^64 of them fit below the sign bit.
  static constexpr int kTopExponent = kTakesProducts ? 2048 : 1024;
  static_assert(LsbExponent <= -1074, "every finite binary64 must be a multiple of the last bit");
  static_assert(Limbs * 64 - 1 - (kTopExponent - LsbExponent) >= 64, "too few limbs");

  // Zero, the limbs in the object.
  BasicLongAccumulator() = default;
  // Zero, the limbs where `storage` says (what was there is overwritten).
  TCEMU_HOST_DEVICE explicit BasicLongAccumulator(Storage storage) : limbs_(storage) {
    for (int i = 0; i < kLimbs; ++i) limbs_[i] = 0;
  }

  // += x (finite). Zeros change nothing.
  TCEMU_HOST_DEVICE void add(double x) {
    const fp64::Fields f = fp64::fields(x);
    add_shifted(f.negative, f.significand, 0, f.exponent - kLsbExponent);
  }

  // += a * b exactly (a, b finite).
  TCEMU_HOST_DEVICE void add_product(double a, double b) requires kTakesProducts {
    const fp64::Fields fa = fp64::fields(a), fb = fp64::fields(b);
    std::uint64_t hi = 0, lo = 0;
    detail::multiply_64x64(fa.significand, fb.significand, hi, lo);  // < 2^106
    add_shifted(fa.negative != fb.negative, lo, hi, fa.exponent + fb.exponent - kLsbExponent);
  }

  // += other (exact: two's-complement addition of the limbs).
  template <class OtherStorage>
  TCEMU_HOST_DEVICE void add(const BasicLongAccumulator<LsbExponent, Limbs, OtherStorage>& other) {
    std::uint64_t carry = 0;
    for (int i = 0; i < kLimbs; ++i) {
      const std::uint64_t addend = other.limb(i);
      const std::uint64_t sum = limbs_[i] + addend;
      const std::uint64_t out = sum + carry;
      carry = static_cast<std::uint64_t>(sum < addend) + static_cast<std::uint64_t>(out < sum);
      limbs_[i] = out;
    }
  }

  // Limb i of the two's-complement integer (for merging many accumulators limb by limb).
  TCEMU_HOST_DEVICE std::uint64_t limb(int i) const { return limbs_[i]; }

  // The accumulator whose integer is sum_i (low[i] + high[i] 2^64) 2^(64 i) modulo 2^(64
  // kLimbs): the sum of accumulators whose limbs i were added up column by column as 128-bit
  // numbers. Two's-complement addition is addition modulo 2^(64 kLimbs), and the true sum fits.
  TCEMU_HOST_DEVICE static BasicLongAccumulator from_limb_sums(const std::uint64_t* low,
                                                               const std::uint64_t* high) {
    BasicLongAccumulator out;
    std::uint64_t carry = 0;  // < 2^64: high[i] + 1 never wraps for the counts we merge
    for (int i = 0; i < kLimbs; ++i) {
      out.limbs_[i] = low[i] + carry;
      carry = high[i] + static_cast<std::uint64_t>(out.limbs_[i] < carry);
    }
    return out;
  }

  TCEMU_HOST_DEVICE bool negative() const { return (limbs_[kLimbs - 1] >> 63) != 0; }

  // |value| * 2^shift as its leading 64 bits, the weight of their last bit and a sticky flag for
  // the bits below; exact (sticky clear) when fewer than 64 bits are significant. The exponent
  // arithmetic stays in int: |shift| must be below 2^30. Reads the limbs only (no copy).
  TCEMU_HOST_DEVICE ExactMagnitude magnitude(int shift = 0) const {
    // A negative value's magnitude is its two's-complement negation ~x + 1, taken limb by limb:
    // the + 1 carries into limb i exactly when every limb below i is zero. With `lowest` the
    // lowest nonzero limb (a negative value has one), limb i of the magnitude is 0 below it,
    // ~x_i + 1 = -x_i at it and ~x_i above it.
    const bool neg = negative();
    int lowest = 0;
    if (neg) {
      while (limbs_[lowest] == 0) ++lowest;
    }
    const auto m = [&](int i) -> std::uint64_t {
      if (!neg) return limbs_[i];
      return i < lowest ? 0 : i == lowest ? ~limbs_[i] + 1 : ~limbs_[i];
    };
    int top = kLimbs - 1;
    while (top > 0 && m(top) == 0) --top;
    const int lsb = kLsbExponent + shift;
    if (top == 0) return {m(0), lsb, false};
    const int lead = detail::bit_width(m(top)) - 1;
    const int low_bit = top * 64 + lead - 63;  // the last of the 64 bits taken
    const int limb = low_bit / 64, bit = low_bit % 64;
    const std::uint64_t taken = bit == 0 ? m(limb) : (m(limb) >> bit) | (m(limb + 1) << (64 - bit));
    bool sticky = bit != 0 && (m(limb) & ((std::uint64_t{1} << bit) - 1)) != 0;
    for (int i = 0; i < limb && !sticky; ++i) sticky = m(i) != 0;
    return {taken, lsb + low_bit, sticky};
  }

  // The value times 2^shift rounded once in direction d (fp64::round; to nearest, overflow gives
  // Inf of the sign); an exact zero gives +0. Any shift: the value is below 2^(64 kLimbs +
  // kLsbExponent) <= 2^2140 and, when nonzero, at least 2^kLsbExponent >= 2^-2148, so beyond +-2^14
  // every nonzero value overflows or rounds to a zero, as it does at +-2^14; the clamp keeps
  // magnitude()'s int arithmetic safe.
  TCEMU_HOST_DEVICE double round_to_double(
      std::int64_t shift = 0, fp64::Direction d = fp64::Direction::nearest_even) const {
    constexpr std::int64_t kLimit = std::int64_t{1} << 14;
    const auto s = static_cast<int>(std::clamp(shift, -kLimit, kLimit));
    return fp64::round(negative(), magnitude(s), d);
  }
  TCEMU_HOST_DEVICE float round_to_float() const {
    constexpr FloatFormat fp32 = formats::fp32;  // a local copy: device code reads it
    const std::uint32_t bits =
        round_pack(fp32, negative(), magnitude(), Rounding::nearest_even, Overflow::ieee);
#if defined(__CUDA_ARCH__)
    return __uint_as_float(bits);
#else
    return std::bit_cast<float>(bits);
#endif
  }

 private:
  // += (-1)^negative (hi 2^64 + lo) 2^position, hi < 2^42, 0 <= position, and position + 106
  // below the sign bit (see the widths above). The shifted value spans three limbs at most
  // (106 + 63 bits < 192); the carry or borrow then runs on while it is nonzero.
  TCEMU_HOST_DEVICE void add_shifted(bool negative, std::uint64_t lo, std::uint64_t hi,
                                     int position) {
    if (lo == 0 && hi == 0) return;
    const int limb = position / 64, offset = position % 64;
    // Three named parts rather than an array: a GPU thread keeps them in registers.
    const std::uint64_t part0 = lo << offset;
    const std::uint64_t part1 = (hi << offset) | (offset == 0 ? 0 : lo >> (64 - offset));
    const std::uint64_t part2 = offset == 0 ? 0 : hi >> (64 - offset);
    std::uint64_t carry = 0;
    for (int i = limb; i < kLimbs; ++i) {
      const std::uint64_t term = i == limb       ? part0
                                 : i == limb + 1 ? part1
                                 : i == limb + 2 ? part2
                                                 : 0;
      const std::uint64_t before = limbs_[i];
      if (!negative) {
        const std::uint64_t sum = before + term;
        limbs_[i] = sum + carry;
        carry =
            static_cast<std::uint64_t>(sum < term) + static_cast<std::uint64_t>(limbs_[i] < sum);
      } else {
        const std::uint64_t diff = before - term;
        limbs_[i] = diff - carry;
        carry =
            static_cast<std::uint64_t>(before < term) + static_cast<std::uint64_t>(diff < carry);
      }
      if (carry == 0 && i >= limb + 2) break;
    }
  }

  Storage limbs_;
};

// Binary64 numbers and exact products of two (exact_dot.hpp, the reference oracle).
using LongAccumulator = BasicLongAccumulator<-2148, 67>;

// Binary64 numbers only (Backend::exact_sum), limbs where Storage says.
template <class Storage = ArrayLimbs<34>>
using Binary64Accumulator = BasicLongAccumulator<-1074, 34, Storage>;

}  // namespace tcemu
