// Vectorised MMA chain for a whole GEMM, bit-identical to mma_element_decoded: the block
// arithmetic is binary64_block.hpp's (where the proof of exactness is), on eight columns of D per
// AVX-512 vector.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>

#include <tcemu/emulator/binary64_block.hpp>
#include <tcemu/emulator/block_fma.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/decode.hpp>
#include <tcemu/emulator/exact_block.hpp>
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

// kTile lanes of the binary64 block functions (binary64_block.hpp).
struct VectorLanes {
  using F = F64;
  using I = I64;
  using U = U64;
  static U bits(F x) { return std::bit_cast<U>(x); }
  static F value(U b) { return std::bit_cast<F>(b); }
  static I to_signed(U x) { return std::bit_cast<I>(x); }
  static U to_unsigned(I x) { return std::bit_cast<U>(x); }
  using S = I64;  // the sum of the truncated terms, exact (binary64_block.hpp)
  // trunc(x * scale): the conversion rounds toward zero (AVX-512 vcvttpd2qq).
  static S truncated(F x, F scale) { return __builtin_convertvector(x * scale, I); }
  static F sum_value(S sum) { return __builtin_convertvector(sum, F); }
};
using Sum = BlockSum<VectorLanes>;

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
      : dp_(dp), packed_(packed), grid_(binary64_grid(dp)) {}

  // One block for Rows consecutive rows and kTile columns: chain[r] <- block(a row r, b,
  // chain[r]); row r's operands start at a_value + r * a_stride. Sharing each B load between the
  // rows halves the load traffic. Terms is the block size when known at compile time (the loops
  // unroll), 0 for any other.
  template <int Terms, int Rows>
  void block(const double* a_value, const std::int64_t* a_exponent, std::size_t a_stride,
             const F64* b_value, const I64* b_exponent, F64* chain) const {
    const int terms = Terms > 0 ? Terms : dp_.block_terms;
    Sum s[Rows];
    for (int row = 0; row < Rows; ++row) s[row].emax = c_alignment<VectorLanes>(grid_, chain[row]);
    for (int r = 0; r < terms; ++r) {
      const I64 be = b_exponent[r];
      for (int row = 0; row < Rows; ++row) {
        s[row].emax = raise_alignment(s[row].emax, a_exponent[row * a_stride + r] + be);
      }
    }
    F64 scale[Rows];
    for (int row = 0; row < Rows; ++row) scale[row] = start_block(grid_, s[row], chain[row]);
    for (int r = 0; r < terms; ++r) {
      const F64 b = b_value[r];
      for (int row = 0; row < Rows; ++row) {
        add_product(s[row], a_value[row * a_stride + r] * b, scale[row]);
      }
    }
    for (int row = 0; row < Rows; ++row) {
      const RoundedBlock<VectorLanes> rounded = round_block(grid_, s[row], chain[row]);
      chain[row] = every_lane(rounded.fast) ? rounded.result
                                            : exceptional_lanes(rounded, s[row], chain[row]);
    }
  }

  // The lanes round_block leaves to round_pack; rare, so kept out of the vector code.
  [[gnu::noinline]] F64 exceptional_lanes(const RoundedBlock<VectorLanes>& rounded, const Sum& s,
                                          const F64& chain) const {
    F64 result = rounded.result;
    for (int w = 0; w < kTile; ++w) {
      if (rounded.fast[w] != 0) continue;
      result[w] =
          exceptional_block_result(dp_, grid_, chain[w], s.sum[w], s.emax[w], rounded.exact[w]);
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
          c[i + r][w] =
              to_double(dp_.accumulator, accumulator_add(dp_, accumulator_bits(dp_, chain[r][w]),
                                                         accumulator_bits(dp_, c[i + r][w])));
        }
      }
    }
  }

  const Datapath& dp_;
  const Packed& packed_;
  Binary64Grid grid_;
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
        const std::int64_t j = term_of_slot(dp, q, r);
        if (j >= terms) continue;
        slot_k[t * k_instr + q * dp.block_terms + r] = t * k_instr + j;
        p.block_present[t * blocks + q] = 1;
      }
    }
  }
  p.a_value.assign(static_cast<std::size_t>(chunks * m * p.chunk_slots), -0.0);
  p.a_exponent.assign(static_cast<std::size_t>(chunks * m * p.chunk_slots), kZeroExponent);
  parallel_for(threads, m, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      for (std::int64_t s = 0; s < p.slots; ++s) {
        if (slot_k[s] < 0) continue;
        const Binary64Operand x = binary64_operand(dp.input, a.get(i, slot_k[s]));
        p.a_value[p.a_index(m, i, s)] = x.value;
        p.a_exponent[p.a_index(m, i, s)] = x.exponent;
      }
    }
  });
  p.b_value.assign(static_cast<std::size_t>(tiles * p.slots), F64{});
  p.b_exponent.assign(static_cast<std::size_t>(tiles * p.slots), I64{} + kZeroExponent);
  parallel_for(threads, p.slots, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t s = begin; s < end; ++s) {
      if (slot_k[s] < 0) continue;
      for (std::int64_t j = 0; j < n; ++j) {
        const Binary64Operand x = binary64_operand(dp.input, b.get(slot_k[s], j));
        const std::size_t at = static_cast<std::size_t>((j / kTile) * p.slots + s);
        p.b_value[at][j % kTile] = x.value;
        p.b_exponent[at][j % kTile] = x.exponent;
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
  return binary64_applies(dp) && finite(dp.input, a, threads) && finite(dp.input, b, threads);
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
        for (int w = 0; w < width; ++w) acc[i * n + j0 + w] = accumulator_bits(dp, c[i][w]);
      }
    }
  });
}

}  // namespace tcemu::detail
