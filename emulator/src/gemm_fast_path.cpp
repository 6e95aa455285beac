// Vectorised MMA chain for a whole GEMM, bit-identical to mma_element_decoded.
//
// Why binary64 arithmetic gives the exact bits (for the datapaths fast_path_applies accepts):
//  * Operands. An input significand has at most 11 bits (fp16, bf16, tf32, fp8), so a product
//    has at most 22 and is exact in binary64; its exponent lies in [-266, 256], inside binary64's
//    normal range. Accumulator values (fp32 or fp16) are exact in binary64 as well.
//  * Alignment. The block's alignment exponent e is computed in integers from the bit fields,
//    exactly as block_fma does (zeros excluded, floor applied). scale = 2^(nf - e) is built from
//    its bits; multiplying by a power of two is exact because no result leaves binary64's normal
//    range (|term| * scale lies in [2^-560, 2^(nf+2)]). trunc() then drops exactly the bits
//    below the grid 2^(e - nf) from the magnitude: the truncation of the model.
//  * Summation. Every truncated term is an integer below 2^(nf+2) and there are at most
//    block_terms + 1 of them, so every partial sum is an integer below 2^52 when
//    nf + 2 + bit_width(block_terms + 1) <= 52: binary64 adds them exactly, in any order.
//  * Signed zero. IEEE addition of exact values gives -0 only when every addend is -0, and trunc
//    keeps the sign of a term truncated to zero: the ZeroSign::ieee rule of block_fma. Padding
//    products are -0 * +0 = -0, the neutral element of IEEE addition, so partial blocks are exact.
//  * Rounding. v = S * 2^(e - nf) is exact. When v is in the accumulator's normal range, rounding
//    to p significant bits only touches v's 52-bit binary64 fraction: RZ clears its low 53 - p
//    bits; RN adds (half - 1) plus the last kept bit, then clears them (a carry into the exponent
//    field is the correct renormalisation). Subnormal, overflowing or infinite results go through
//    round_pack, the routine every other result goes through.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>

#include <tcemu/emulator/block_fma.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/round.hpp>

#include <tcemu/emulator/parallel_for.hpp>
#include "gemm_fast_path.hpp"

namespace tcemu::detail {
namespace {

constexpr int kTile = 8;  // columns of D handled together: the lanes of one vector

// GCC/Clang vector extensions: elementwise arithmetic on kTile lanes, compiled to the widest
// vector unit the build targets.
using F64 = double __attribute__((vector_size(kTile * 8)));
using I64 = std::int64_t __attribute__((vector_size(kTile * 8)));
using U64 = std::uint64_t __attribute__((vector_size(kTile * 8)));
constexpr int kChunkSlots = 128;  // k slots of B (16 KiB) kept in L1 while all rows pass over them
constexpr int kZeroExponent = -1'000'000;  // alignment exponent of a zero: below every floor
constexpr int kLowestGrid = -600;          // emax never needs to be lower (all terms are zero then)

double power_of_two(int e) {  // 2^e for e in binary64's normal range, built from the bits
  return std::bit_cast<double>(static_cast<std::uint64_t>(e + 1023) << 52);
}

// Bits of an accumulator value held exactly in a double; a NaN is the datapath's NaN.
std::uint32_t bits_of(const Datapath& dp, double v) {
  const FloatFormat& f = dp.accumulator;
  if (std::isnan(v)) return dp.nan_bits;
  if (std::isinf(v)) return encode_infinity(f, std::signbit(v));
  const double magnitude = std::fabs(v);
  if (magnitude == 0.0) return encode_zero(f, std::signbit(v));
  // magnitude = mantissa * 2^(exponent - 52) with a 53-bit integer mantissa.
  const auto raw = std::bit_cast<std::uint64_t>(magnitude);
  const int field = static_cast<int>(raw >> 52);
  const std::uint64_t mantissa = (raw & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1} << 52);
  return round_pack(f, std::signbit(v), {mantissa, field - 1023 - 52, false}, Rounding::toward_zero,
                    Overflow::infinity);
}

// True when every lane of a comparison result is set (a tree of lane shuffles).
bool every_lane(I64 mask) {
  static_assert(kTile == 8);
  mask &= __builtin_shufflevector(mask, mask, 4, 5, 6, 7, 0, 1, 2, 3);
  mask &= __builtin_shufflevector(mask, mask, 2, 3, 0, 1, 6, 7, 4, 5);
  mask &= __builtin_shufflevector(mask, mask, 1, 0, 3, 2, 5, 4, 7, 6);
  return mask[0] != 0;
}

struct Packed {
  // Slot s of instruction t holds k = slot_k[t * instruction_k + s], or -1 for padding.
  std::int64_t slots = 0;
  // A is stored chunk by chunk (chunk, row, slot in chunk) so that the rows of one chunk are read
  // in address order; B tile by tile (tile, slot), kTile columns each.
  std::int64_t chunk_instructions = 0;
  std::int64_t chunk_slots = 0;
  std::vector<double> a_value;
  std::vector<std::int64_t> a_exponent;
  std::vector<F64> b_value;
  std::vector<I64> b_exponent;

  std::size_t a_index(std::int64_t m, std::int64_t i, std::int64_t slot) const {
    return static_cast<std::size_t>(((slot / chunk_slots) * m + i) * chunk_slots +
                                    slot % chunk_slots);
  }
  std::vector<char> block_present;
};

class Kernel {
 public:
  Kernel(const Datapath& dp, const Packed& packed)
      : dp_(dp),
        packed_(packed),
        nf_(*dp.alignment_fraction_bits),
        drop_(53 - dp.block_result_precision),
        low_((std::uint64_t{1} << drop_) - 1),
        min_exponent_(dp.accumulator.min_exponent()),
        floor_(dp.alignment_floor),
        negative_zero_mask_(dp.zero_sign == ZeroSign::ieee ? sign_bit_ : 0),
        min_normal_(power_of_two(dp.accumulator.min_exponent())),
        max_finite_(to_double(dp.accumulator, encode_max_finite(dp.accumulator, false))) {}

  // One block for Rows consecutive rows and kTile columns: chain[r] <- block(a row r, b,
  // chain[r]); row r's operands start at a_value + r * a_stride. Sharing each B load between the
  // rows halves the load traffic. Terms is the block size when known at compile time (the loops
  // unroll), 0 for any other.
  template <int Terms, int Rows>
  void block(const double* a_value, const std::int64_t* a_exponent, std::size_t a_stride,
             const F64* b_value, const I64* b_exponent, F64* chain) const {
    const int terms = Terms > 0 ? Terms : dp_.block_terms;
    I64 emax[Rows];
    for (int row = 0; row < Rows; ++row) {
      // Alignment exponent of c: its binary64 exponent, at least the format's minimum; a zero c
      // takes no part.
      const U64 c_raw = std::bit_cast<U64>(chain[row]);
      I64 c_exponent = std::bit_cast<I64>((c_raw >> 52) & 0x7FF) - 1023;
      c_exponent = c_exponent > min_exponent_ ? c_exponent : min_exponent_;
      c_exponent = chain[row] == 0.0 ? I64{} + kZeroExponent : c_exponent;
      emax[row] = c_exponent > floor_ ? c_exponent : floor_;
    }
    for (int r = 0; r < terms; ++r) {
      const I64 be = b_exponent[r];
      for (int row = 0; row < Rows; ++row) {
        const I64 e = a_exponent[row * a_stride + r] + be;
        emax[row] = e > emax[row] ? e : emax[row];
      }
    }
    F64 scale[Rows];
    I64 sum[Rows];
    U64 all_negative[Rows];
    for (int row = 0; row < Rows; ++row) {
      emax[row] = emax[row] > kLowestGrid ? emax[row] : I64{} + kLowestGrid;
      scale[row] = std::bit_cast<F64>(std::bit_cast<U64>(1023 + nf_ - emax[row]) << 52);
      // Conversion to an integer rounds toward zero: the truncation to the grid.
      sum[row] = __builtin_convertvector(chain[row] * scale[row], I64);
      all_negative[row] = std::bit_cast<U64>(chain[row]);
    }
    for (int r = 0; r < terms; ++r) {
      const F64 b = b_value[r];
      for (int row = 0; row < Rows; ++row) {
        const F64 product = a_value[row * a_stride + r] * b;
        all_negative[row] &= std::bit_cast<U64>(product);
        sum[row] += __builtin_convertvector(product * scale[row], I64);
      }
    }
    for (int row = 0; row < Rows; ++row) round(emax[row], sum[row], all_negative[row], chain[row]);
  }

  // chain <- sum * 2^(emax - nf) rounded to the block result's precision.
  void round(const I64& emax, const I64& sum, const U64& all_negative, F64& chain) const {
    // v is exact; an exactly zero sum is -0 when every term was negative.
    const F64 unit = std::bit_cast<F64>(std::bit_cast<U64>(1023 - nf_ + emax) << 52);
    U64 raw = std::bit_cast<U64>(__builtin_convertvector(sum, F64) * unit);
    raw |= sum == 0 ? all_negative & negative_zero_mask_ : U64{};
    const F64 v = std::bit_cast<F64>(raw);
    // Round to nearest, ties to even, on the pattern of a normal binary64 v (every lane that keeps
    // this result is one): adding 2^(drop - 1) - 1 plus the last kept significand bit carries into
    // the kept bits exactly when the dropped part exceeds half an ulp, or equals it with that bit
    // odd. The last kept bit is bit `drop` of the pattern, except at block_result_precision 1
    // (drop = 52), where no fraction bit is kept and it is the implicit bit, always 1: a tie
    // rounds up to the next power of two, as round_pack (round.hpp) rounds it.
    if (dp_.block_rounding == Rounding::nearest_even) {
      const U64 kept_lsb = drop_ < 52 ? (raw >> drop_) & 1 : U64{} + 1;
      raw += (low_ >> 1) + kept_lsb;
    }
    const F64 rounded = std::bit_cast<F64>(raw & ~low_);
    const F64 magnitude = std::bit_cast<F64>(std::bit_cast<U64>(v) & ~sign_bit_);
    const F64 rounded_magnitude = std::bit_cast<F64>(std::bit_cast<U64>(rounded) & ~sign_bit_);
    const F64 c_magnitude = std::bit_cast<F64>(std::bit_cast<U64>(chain) & ~sign_bit_);
    const I64 fast = (magnitude >= min_normal_) & (rounded_magnitude <= max_finite_) &
                     (c_magnitude <= max_finite_);
    chain = every_lane(fast) ? rounded : exceptional_lanes(fast, chain, sum, emax, v, rounded);
  }

  // The lanes the binary64 shortcut does not cover (subnormal, overflowing or non-finite
  // results), rounded by round_pack; rare, so kept out of the vector code.
  [[gnu::noinline]] F64 exceptional_lanes(const I64& fast, const F64& chain, const I64& sum,
                                          const I64& emax, const F64& v, F64 result) const {
    for (int w = 0; w < kTile; ++w) {
      if (fast[w] != 0) continue;
      if (!std::isfinite(chain[w])) {
        result[w] = chain[w];  // finite products with c = Inf or NaN: c propagates
      } else if (sum[w] == 0) {
        result[w] = v[w];  // signed zero, already decided
      } else {
        const std::uint32_t bits =
            round_pack(dp_.accumulator, sum[w] < 0,
                       {static_cast<std::uint64_t>(sum[w] < 0 ? -sum[w] : sum[w]),
                        static_cast<int>(emax[w] - nf_), false},
                       dp_.block_rounding, dp_.overflow, dp_.block_result_precision);
        // As block_fma: under ZeroSign::positive a result that rounds to zero is +0.
        const bool positive_zero =
            dp_.zero_sign == ZeroSign::positive && bits == encode_zero(dp_.accumulator, true);
        result[w] = positive_zero ? 0.0 : to_double(dp_.accumulator, bits);
      }
    }
    return result;
  }

  // Rows [0, m) of one column tile over the instructions of one chunk; c holds each row's
  // accumulator values.
  void run(std::int64_t tile, std::int64_t chunk, std::int64_t instructions,
           std::vector<F64>& c) const {
    switch (dp_.block_terms) {
      case 4:
        return run_with<4>(tile, chunk, instructions, c);
      case 8:
        return run_with<8>(tile, chunk, instructions, c);
      case 16:
        return run_with<16>(tile, chunk, instructions, c);
      case 32:
        return run_with<32>(tile, chunk, instructions, c);
      default:
        return run_with<0>(tile, chunk, instructions, c);
    }
  }

 private:
  template <int Terms>
  void run_with(std::int64_t tile, std::int64_t chunk, std::int64_t instructions,
                std::vector<F64>& c) const {
    const std::int64_t m = static_cast<std::int64_t>(c.size());
    const std::int64_t first = chunk * packed_.chunk_instructions;
    const std::int64_t last = std::min(instructions, first + packed_.chunk_instructions);
    std::int64_t i = 0;
    for (; i + 2 <= m; i += 2) rows<Terms, 2>(tile, first, last, i, c);
    for (; i < m; ++i) rows<Terms, 1>(tile, first, last, i, c);
  }

  // Rows [i, i + Rows) over the instructions [first, last).
  template <int Terms, int Rows>
  void rows(std::int64_t tile, std::int64_t first, std::int64_t last, std::int64_t i,
            std::vector<F64>& c) const {
    const std::int64_t k_instr = dp_.instruction_k;
    const int blocks = dp_.instruction_k / dp_.block_terms;
    const bool aligned = dp_.c_entry == AccumulatorEntry::aligned_in_first_block;
    const std::int64_t m = static_cast<std::int64_t>(c.size());
    const std::size_t row = packed_.a_index(m, i, first * k_instr);
    const auto stride = static_cast<std::size_t>(packed_.chunk_slots);
    for (std::int64_t t = first; t < last; ++t) {
      F64 chain[Rows];
      for (int r = 0; r < Rows; ++r) chain[r] = aligned ? c[i + r] : F64{};
      for (int q = 0; q < blocks; ++q) {
        if (!packed_.block_present[t * blocks + q]) continue;
        const std::int64_t slot = t * k_instr + q * dp_.block_terms;
        const std::size_t a_at = row + static_cast<std::size_t>(slot - first * k_instr);
        block<Terms, Rows>(packed_.a_value.data() + a_at, packed_.a_exponent.data() + a_at, stride,
                           packed_.b_value.data() + tile * packed_.slots + slot,
                           packed_.b_exponent.data() + tile * packed_.slots + slot, chain);
      }
      for (int r = 0; r < Rows; ++r) {
        if (aligned) {
          c[i + r] = chain[r];
          continue;
        }
        for (int w = 0; w < kTile; ++w) {
          c[i + r][w] = to_double(dp_.accumulator, accumulator_add(dp_, bits_of(dp_, chain[r][w]),
                                                                   bits_of(dp_, c[i + r][w])));
        }
      }
    }
  }

  static constexpr std::uint64_t sign_bit_ = std::uint64_t{1} << 63;
  const Datapath& dp_;
  const Packed& packed_;
  std::int64_t nf_;
  int drop_;
  std::uint64_t low_;
  std::int64_t min_exponent_;
  std::int64_t floor_;
  std::uint64_t negative_zero_mask_;
  double min_normal_;
  double max_finite_;
};

// Lays A and B out in slot order: the terms of each block contiguous, padding where an
// instruction is partial (a = -0, b = +0: their product is IEEE addition's neutral -0).
Packed pack(const Datapath& dp, ConstMatrixView a, ConstMatrixView b, int threads) {
  const std::int64_t m = a.rows, k = a.cols, n = b.cols;
  const std::int64_t k_instr = dp.instruction_k;
  const std::int64_t instructions = (k + k_instr - 1) / k_instr;
  const int blocks = dp.instruction_k / dp.block_terms;
  const std::int64_t tiles = (n + kTile - 1) / kTile;
  Packed p;
  p.slots = instructions * k_instr;
  p.chunk_instructions = std::max<std::int64_t>(1, kChunkSlots / k_instr);
  p.chunk_slots = p.chunk_instructions * k_instr;
  const std::int64_t chunks = (instructions + p.chunk_instructions - 1) / p.chunk_instructions;
  std::vector<std::int64_t> slot_k(static_cast<std::size_t>(p.slots), -1);
  p.block_present.assign(static_cast<std::size_t>(instructions * blocks), 0);
  for (std::int64_t t = 0; t < instructions; ++t) {
    const std::int64_t terms = std::min(k_instr, k - t * k_instr);
    for (int q = 0; q < blocks; ++q) {
      for (int r = 0; r < dp.block_terms; ++r) {
        // The r-th term (in k order) of block q: group (r / g) * blocks + q, offset r % g.
        const std::int64_t j = ((r / dp.k_group) * blocks + q) * dp.k_group + r % dp.k_group;
        if (j >= terms) continue;
        slot_k[t * k_instr + q * dp.block_terms + r] = t * k_instr + j;
        p.block_present[t * blocks + q] = 1;
      }
    }
  }
  auto value = [&](std::uint32_t bits) { return to_double(dp.input, bits); };
  auto exponent = [&](std::uint32_t bits) {
    const Decoded x = decode(dp.input, bits);
    return x.value_class == ValueClass::zero ? kZeroExponent : x.alignment_exponent(dp.input);
  };
  p.a_value.assign(static_cast<std::size_t>(chunks * m * p.chunk_slots), -0.0);
  p.a_exponent.assign(static_cast<std::size_t>(chunks * m * p.chunk_slots), kZeroExponent);
  parallel_for(threads, m, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      for (std::int64_t s = 0; s < p.slots; ++s) {
        if (slot_k[s] < 0) continue;
        const std::uint32_t bits = a.get(i, slot_k[s]);
        p.a_value[p.a_index(m, i, s)] = value(bits);
        p.a_exponent[p.a_index(m, i, s)] = exponent(bits);
      }
    }
  });
  p.b_value.assign(static_cast<std::size_t>(tiles * p.slots), F64{});
  p.b_exponent.assign(static_cast<std::size_t>(tiles * p.slots), I64{} + kZeroExponent);
  parallel_for(threads, p.slots, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t s = begin; s < end; ++s) {
      if (slot_k[s] < 0) continue;
      for (std::int64_t j = 0; j < n; ++j) {
        const std::uint32_t bits = b.get(slot_k[s], j);
        const std::size_t at = static_cast<std::size_t>((j / kTile) * p.slots + s);
        p.b_value[at][j % kTile] = value(bits);
        p.b_exponent[at][j % kTile] = exponent(bits);
      }
    }
  });
  return p;
}

bool finite(const FloatFormat& f, ConstMatrixView x, int threads) {
  std::atomic<bool> all_finite{true};
  parallel_for(threads, x.rows, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end && all_finite; ++i) {
      for (std::int64_t j = 0; j < x.cols; ++j) {
        const ValueClass vc = decode(f, x.get(i, j)).value_class;
        if (vc == ValueClass::infinity || vc == ValueClass::nan) all_finite = false;
      }
    }
  });
  return all_finite;
}

}  // namespace

bool fast_path_applies(const Datapath& dp, ConstMatrixView a, ConstMatrixView b, int threads) {
  if (!dp.alignment_fraction_bits || dp.input.fraction_bits > 10) return false;
  const int sum_bits = *dp.alignment_fraction_bits + 2 +
                       static_cast<int>(std::bit_width(static_cast<unsigned>(dp.block_terms + 1)));
  // A floor above every real exponent would push scale out of binary64's range.
  if (sum_bits > 52 || dp.alignment_floor > 300) return false;
  return finite(dp.input, a, threads) && finite(dp.input, b, threads);
}

void fast_mma_chain(const Datapath& dp, ConstMatrixView a, ConstMatrixView b,
                    std::vector<std::uint32_t>& acc, int threads) {
  const std::int64_t m = a.rows, n = b.cols;
  const Packed packed = pack(dp, a, b, threads);
  const Kernel kernel(dp, packed);
  const std::int64_t instructions = packed.slots / dp.instruction_k;
  const std::int64_t chunks =
      (instructions + packed.chunk_instructions - 1) / packed.chunk_instructions;
  const std::int64_t tiles = (n + kTile - 1) / kTile;
  parallel_for(threads, tiles, 1, [&](std::int64_t begin, std::int64_t end) {
    std::vector<F64> c(static_cast<std::size_t>(m));
    for (std::int64_t tile = begin; tile < end; ++tile) {
      const std::int64_t j0 = tile * kTile;
      const int width = static_cast<int>(std::min<std::int64_t>(kTile, n - j0));
      for (std::int64_t i = 0; i < m; ++i) {
        for (int w = 0; w < kTile; ++w) {
          c[i][w] = w < width ? to_double(dp.accumulator, acc[i * n + j0 + w]) : 0.0;
        }
      }
      for (std::int64_t chunk = 0; chunk < chunks; ++chunk)
        kernel.run(tile, chunk, instructions, c);
      for (std::int64_t i = 0; i < m; ++i) {
        for (int w = 0; w < width; ++w) acc[i * n + j0 + w] = bits_of(dp, c[i][w]);
      }
    }
  });
}

}  // namespace tcemu::detail
