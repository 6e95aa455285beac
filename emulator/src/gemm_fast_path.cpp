// Vectorised MMA chain for a whole GEMM, bit-identical to mma_element_decoded: the block
// arithmetic is binary64_block.hpp's (where the proof of exactness is), on eight columns of D per
// AVX-512 vector. B is decoded in its own format (kind::f8f6f4 pairs), and a block-scaled datapath
// with group_terms == 1 (kind::mxf8f6f4) has each operand scaled at packing time (scaled_operand).
#include <algorithm>
#if defined(__AVX512DQ__)
#include <immintrin.h>
#endif
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include <tcemu/emulator/binary64_block.hpp>
#include <tcemu/emulator/block_fma.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/round.hpp>
#include <tcemu/emulator/scaled_groups.hpp>

#include <tcemu/emulator/parallel_for.hpp>
#include "gemm_fast_path.hpp"

namespace tcemu::detail {
namespace {

constexpr int kTile = 8;  // columns of D handled together: the lanes of one vector
constexpr int kRows = 4;  // rows of D per pass of the micro-kernel: each B load serves them all

// GCC/Clang vector extensions: elementwise arithmetic on kTile lanes, compiled to the widest
// vector unit the build targets.
using F64 = double __attribute__((vector_size(kTile * 8)));
using I64 = std::int64_t __attribute__((vector_size(kTile * 8)));
using U64 = std::uint64_t __attribute__((vector_size(kTile * 8)));
using U16 = std::uint16_t __attribute__((vector_size(kTile * 8)));

// The exponent pass on kGroup rows at once: 16-bit lanes, lane kGroup * j + q holding row q's
// column j. An operand's alignment exponent e (a scaled operand's: its scale's added) is stored
// biased, e + kExponentBias, and a zero's as 0. Operands have |e| < 2^12 (fast_path_applies checks
// the formats' ranges, scales included), so for a product of
// two nonzero factors the biased sum is ea + eb + 2 * kExponentBias, in (2^15 - 2^13, 2^15 + 2^13),
// and for a product with a zero factor it is below 2^14 + 2^12: every sum fits its 16-bit field
// (adding 64-bit words adds the four fields without a carry between them) and, compared unsigned,
// every zero product lies below every nonzero one, as kZeroExponent does in the scalar pass.
constexpr int kGroup = 4;
constexpr std::uint64_t kExponentBias = 1 << 14;
constexpr int kExponentLimit = 1 << 12;
constexpr int kChunkSlots = 128;  // k slots of B (16 KiB) kept in L1 while all rows pass over them
constexpr std::int64_t kBlockRows = 256;
constexpr std::int64_t kGroupTiles = 16;  // column tiles per thread's task (fast_mma_chain)

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

// True when every lane of a comparison result is set: one mask extraction with AVX-512DQ, else a
// tree of lane shuffles.
bool every_lane(I64 mask) {
  static_assert(kTile == 8);
#if defined(__AVX512DQ__)
  return _mm512_movepi64_mask(std::bit_cast<__m512i>(mask)) == 0xFF;
#else
  mask &= __builtin_shufflevector(mask, mask, 4, 5, 6, 7, 0, 1, 2, 3);
  mask &= __builtin_shufflevector(mask, mask, 2, 3, 0, 1, 6, 7, 4, 5);
  mask &= __builtin_shufflevector(mask, mask, 1, 0, 3, 2, 5, 4, 7, 6);
  return mask[0] != 0;
#endif
}

using F32 = float __attribute__((vector_size(kTile * 4)));
using U32 = std::uint32_t __attribute__((vector_size(kTile * 4)));

// The accumulator values of kTile consecutive columns (width of them present, the others +0) as
// the kernel holds them: doubles, exact. An fp32 accumulator converts all lanes at once through
// float (every fp32 value, NaN aside, is a double exactly; a NaN stays a NaN, which is all the
// kernel and accumulator_bits read of it) unless a lane is subnormal, which a caller's
// denormals-are-zero mode would flush in the conversion; any other case element by element.
F64 load_accumulators(const Datapath& dp, const std::uint32_t* bits, int width) {
  if (width == kTile && dp.accumulator == formats::fp32) {
    U32 raw;
    std::memcpy(&raw, bits, sizeof raw);
    const auto subnormal = ((raw & 0x7F80'0000u) == 0) & ((raw & 0x007F'FFFFu) != 0);
    bool any_subnormal = false;
    for (int w = 0; w < kTile; ++w) any_subnormal |= subnormal[w] != 0;
    if (!any_subnormal) return __builtin_convertvector(std::bit_cast<F32>(raw), F64);
  }
  F64 v{};
  for (int w = 0; w < width; ++w) v[w] = to_double(dp.accumulator, bits[w]);
  return v;
}

// accumulator_bits of width lanes. For an fp32 accumulator the lanes whose value float holds
// exactly (every non-NaN accumulator value) take the float's bits, which are the encoding
// accumulator_bits builds (zeros and infinities with their signs included); the others, NaN
// among them (and subnormals that a caller's flush-to-zero mode flushed), go through
// accumulator_bits.
void store_accumulators(const Datapath& dp, F64 v, std::uint32_t* bits, int width) {
  if (width == kTile && dp.accumulator == formats::fp32) {
    const F32 narrow = __builtin_convertvector(v, F32);
    if (every_lane(__builtin_convertvector(narrow, F64) == v)) {
      std::memcpy(bits, &narrow, sizeof narrow);
      return;
    }
  }
  for (int w = 0; w < width; ++w) bits[w] = accumulator_bits(dp, v[w]);
}

struct Packed {
  // Slot s of instruction t holds k = slot_k[t * instruction_k + s], or -1 for padding.
  std::int64_t slots = 0;
  // A is stored chunk by chunk (chunk, row, slot in chunk) so that the rows of one chunk are read
  // in address order; B tile by tile (tile, slot), kTile columns each.
  std::int64_t chunk_instructions = 0;
  std::int64_t chunk_slots = 0;
  // Rows are padded to a multiple of kGroup (padding a = -0, never stored back). a_exponents holds
  // the biased exponents of rows kGroup g .. kGroup g + 3 in the 16-bit fields of one word,
  // (chunk, g, slot in chunk); b_exponents each column's biased exponent in all kGroup fields.
  // Allocated without a fill: pack writes every element, padding included, in its parallel
  // loops (a serial fill of about 14 n^2 bytes held up every thread, page faults included).
  std::int64_t padded_rows = 0;
  std::unique_ptr<double[]> a_value;
  std::unique_ptr<std::uint64_t[]> a_exponents;
  std::unique_ptr<F64[]> b_value;
  std::unique_ptr<U64[]> b_exponents;

  std::size_t a_index(std::int64_t i, std::int64_t slot) const {
    return static_cast<std::size_t>(((slot / chunk_slots) * padded_rows + i) * chunk_slots +
                                    slot % chunk_slots);
  }
  std::size_t a_group_index(std::int64_t i, std::int64_t slot) const {
    return static_cast<std::size_t>(((slot / chunk_slots) * (padded_rows / kGroup) + i / kGroup) *
                                        chunk_slots +
                                    slot % chunk_slots);
  }
  std::vector<char> block_present;
  bool finite = true;  // false when A or B holds an Inf or NaN (the kernel does not apply)
};

class Kernel {
 public:
  Kernel(const Datapath& dp, const Packed& packed)
      : dp_(dp), packed_(packed), grid_(binary64_grid(dp)), run_(specialised(dp)) {}

  // One block for Rows consecutive rows (a multiple of kGroup) and kTile columns: chain[r] <-
  // block(a row r, b, chain[r]); row r's values start at a_value + r * a_stride, the exponents of
  // rows group g at a_exponents + g * a_stride. Each B vector loaded serves all the rows. Terms is
  // the block size when known at compile time (the loops unroll), 0 for any other.
  template <int Terms, int Rows, bool ZeroSignIeee, KnownRounding Rounding>
  [[gnu::flatten]] void block(const double* a_value, const std::uint64_t* a_exponents,
                              std::size_t a_stride, const F64* b_value, const U64* b_exponents,
                              F64* chain) const {
    static_assert(Rows % kGroup == 0);
    constexpr int groups = Rows / kGroup;
    const int terms = Terms > 0 ? Terms : dp_.block_terms;
    U16 product_emax[groups] = {};  // 0: below every biased sum (all products zero)
    for (int r = 0; r < terms; ++r) {
      const U64 be = b_exponents[r];
      for (int g = 0; g < groups; ++g) {
        product_emax[g] = raise_alignment(product_emax[g],
                                          std::bit_cast<U16>(be + a_exponents[g * a_stride + r]));
      }
    }
    // Row q of group g: its field less the two biases is the largest ea + eb of the block exactly
    // when some product is nonzero. When all are zero it is below 2^14 + 2^12 - 2^15 < kLowestGrid
    // (-600) instead of kZeroExponent; either way c's alignment (at least the floor) or, below
    // kLowestGrid, start_block's clamp decides, so emax after start_block is the same.
    Sum s[Rows];
    for (int row = 0; row < Rows; ++row) {
      const U64 fields = std::bit_cast<U64>(product_emax[row / kGroup]);
      const I64 emax = std::bit_cast<I64>((fields >> (16 * (row % kGroup))) & 0xFFFF) -
                       static_cast<std::int64_t>(2 * kExponentBias);
      s[row].emax = raise_alignment(c_alignment<VectorLanes>(grid_, chain[row]), emax);
    }
    F64 scale[Rows];
    for (int row = 0; row < Rows; ++row) scale[row] = start_block(grid_, s[row], chain[row]);
    for (int r = 0; r < terms; ++r) {
      const F64 b = b_value[r];
      for (int row = 0; row < Rows; ++row) {
        add_product<ZeroSignIeee>(s[row], a_value[row * a_stride + r] * b, scale[row]);
      }
    }
    for (int row = 0; row < Rows; ++row) {
      const RoundedBlock<VectorLanes> rounded =
          round_block<ZeroSignIeee, Rounding>(grid_, s[row], chain[row]);
      chain[row] = every_lane(rounded.fast)
                       ? rounded.result
                       : exceptional_lanes(rounded.result, rounded.exact, rounded.fast, s[row].sum,
                                           s[row].emax, chain[row]);
    }
  }

  // The lanes round_block leaves to round_pack; rare, so kept out of the vector code. Its
  // arguments are vectors passed by value (in registers), so that the caller keeps its block's
  // state in registers instead of storing it for every call that might happen.
  [[gnu::noinline]] F64 exceptional_lanes(F64 result, F64 exact, I64 fast, I64 sum, I64 emax,
                                          F64 chain) const {
    for (int w = 0; w < kTile; ++w) {
      if (fast[w] != 0) continue;
      result[w] = exceptional_block_result(dp_, grid_, chain[w], sum[w], emax[w], exact[w]);
    }
    return result;
  }

  // Rows [i0, i1) of one column tile over the instructions of one chunk; c[i - i0] holds row i's
  // accumulator values.
  void run(std::int64_t tile, std::int64_t chunk, std::int64_t instructions, std::int64_t i0,
           std::int64_t i1, F64* c) const {
    (this->*run_)(tile, chunk, instructions, i0, i1, c);
  }

 private:
  using Run = void (Kernel::*)(std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                               F64*) const;

  // The kernel compiled for the datapath's block size, zero-sign rule and block rounding, chosen
  // once per call (binary64_grid's `nearest`: round to nearest even, else toward zero).
  template <bool ZeroSignIeee, KnownRounding Rounding>
  static Run specialised_for(int block_terms) {
    switch (block_terms) {
      case 4:
        return &Kernel::run_with<4, ZeroSignIeee, Rounding>;
      case 8:
        return &Kernel::run_with<8, ZeroSignIeee, Rounding>;
      case 16:
        return &Kernel::run_with<16, ZeroSignIeee, Rounding>;
      case 32:
        return &Kernel::run_with<32, ZeroSignIeee, Rounding>;
      default:
        return &Kernel::run_with<0, ZeroSignIeee, Rounding>;
    }
  }
  template <bool ZeroSignIeee>
  static Run specialised_for(const Datapath& dp) {
    return binary64_grid(dp).nearest
               ? specialised_for<ZeroSignIeee, KnownRounding::nearest_even>(dp.block_terms)
               : specialised_for<ZeroSignIeee, KnownRounding::toward_zero>(dp.block_terms);
  }
  static Run specialised(const Datapath& dp) {
    return dp.zero_sign == ZeroSign::ieee ? specialised_for<true>(dp) : specialised_for<false>(dp);
  }

  // i0 and i1 are multiples of kGroup (or i1 the padded row count).
  template <int Terms, bool ZeroSignIeee, KnownRounding Rounding>
  void run_with(std::int64_t tile, std::int64_t chunk, std::int64_t instructions, std::int64_t i0,
                std::int64_t i1, F64* c) const {
    const std::int64_t first = chunk * packed_.chunk_instructions;
    const std::int64_t last = std::min(instructions, first + packed_.chunk_instructions);
    std::int64_t i = i0;
    for (; i + kRows <= i1; i += kRows) {
      rows<Terms, kRows, ZeroSignIeee, Rounding>(tile, first, last, i, c + (i - i0));
    }
    for (; i < i1; i += kGroup)
      rows<Terms, kGroup, ZeroSignIeee, Rounding>(tile, first, last, i, c + (i - i0));
  }

  // Rows [i, i + Rows) over the instructions [first, last); c[r] holds row i + r's accumulators.
  template <int Terms, int Rows, bool ZeroSignIeee, KnownRounding Rounding>
  void rows(std::int64_t tile, std::int64_t first, std::int64_t last, std::int64_t i,
            F64* c) const {
    const std::int64_t k_instr = dp_.instruction_k;
    const int blocks = dp_.instruction_k / dp_.block_terms;
    const bool aligned = dp_.c_entry == AccumulatorEntry::aligned_in_first_block;
    const std::size_t row = packed_.a_index(i, first * k_instr);
    const std::size_t group = packed_.a_group_index(i, first * k_instr);
    const auto stride = static_cast<std::size_t>(packed_.chunk_slots);
    for (std::int64_t t = first; t < last; ++t) {
      F64 chain[Rows];
      for (int r = 0; r < Rows; ++r) chain[r] = aligned ? c[r] : F64{};
      for (int q = 0; q < blocks; ++q) {
        if (!packed_.block_present[t * blocks + q]) continue;
        const std::int64_t slot = t * k_instr + q * dp_.block_terms;
        const auto offset = static_cast<std::size_t>(slot - first * k_instr);
        block<Terms, Rows, ZeroSignIeee, Rounding>(
            packed_.a_value.get() + row + offset, packed_.a_exponents.get() + group + offset,
            stride, packed_.b_value.get() + tile * packed_.slots + slot,
            packed_.b_exponents.get() + tile * packed_.slots + slot, chain);
      }
      for (int r = 0; r < Rows; ++r) {
        if (aligned) {
          c[r] = chain[r];
          continue;
        }
        for (int w = 0; w < kTile; ++w) {
          c[r][w] =
              to_double(dp_.accumulator, accumulator_add(dp_, accumulator_bits(dp_, chain[r][w]),
                                                         accumulator_bits(dp_, c[r][w])));
        }
      }
    }
  }

  const Datapath& dp_;
  const Packed& packed_;
  Binary64Grid grid_;
  Run run_;
};

// Column tiles per task when `tiles` are split into about four groups per thread (at least one
// tile, at most `most`), handed out dynamically so that a slow thread does not hold up the rest.
std::int64_t tiles_per_group(std::int64_t tiles, int threads, std::int64_t most) {
  return std::clamp<std::int64_t>(tiles / (4 * std::int64_t{thread_count(threads)}), 1, most);
}

// An operand's exponent as the 16-bit exponent pass holds it (kExponentBias above).
std::uint64_t biased_exponent(const Binary64Operand& x) {
  return x.exponent == kZeroExponent ? 0 : static_cast<std::uint64_t>(x.exponent + kExponentBias);
}

// binary64_operand of an input's bits, from a table of every bit pattern when the inputs are at
// most 16 bits wide and outnumber the patterns. The table is made once per format for the
// process (rebuilding it took a quarter of a 16-thread product of n = 256) and never changes.
class OperandTable {
 public:
  OperandTable(const FloatFormat& input, std::int64_t inputs, int threads) : input_(input) {
    const int bits = input.container_bits();
    if (bits <= 16 && inputs > (std::int64_t{1} << bits)) {
      table_ = &table_of(input, threads);
      mask_ = (std::uint32_t{1} << bits) - 1;
    }
  }
  // decode() reads the low container_bits() of `bits` and ignores the rest (an FP6 or FP4 code in
  // a byte with stray high bits), so the table is indexed by those bits alone.
  Binary64Operand operator()(std::uint32_t bits) const {
    return table_ == nullptr ? binary64_operand(input_, bits) : (*table_)[bits & mask_];
  }

 private:
  static const std::vector<Binary64Operand>& table_of(const FloatFormat& input, int threads) {
    static std::mutex mutex;
    // The formats' tables; a table's address stays put when the list grows.
    static std::vector<std::pair<FloatFormat, std::unique_ptr<std::vector<Binary64Operand>>>>
        tables;
    std::lock_guard lock(mutex);
    for (const auto& [format, table] : tables) {
      if (format == input) return *table;
    }
    auto table =
        std::make_unique<std::vector<Binary64Operand>>(std::size_t{1} << input.container_bits());
    parallel_for(threads, static_cast<std::int64_t>(table->size()), 4096,
                 [&](std::int64_t begin, std::int64_t end) {
                   for (std::int64_t x = begin; x < end; ++x) {
                     (*table)[static_cast<std::size_t>(x)] =
                         binary64_operand(input, static_cast<std::uint32_t>(x));
                   }
                 });
    FloatFormat key = input;
    key.name = {};  // the caller's name may not outlive the call; == does not read it
    tables.emplace_back(key, std::move(table));
    return *tables.back().second;
  }

  const FloatFormat& input_;
  const std::vector<Binary64Operand>* table_ = nullptr;
  std::uint32_t mask_ = 0;
};

// Lays A and B out in slot order: the terms of each block contiguous, padding where an
// instruction is partial (a = -0, b = +0: their product is IEEE addition's neutral -0), each
// operand times the scale that covers its k where there are scales. Every input and scale is read
// once here, so this is also where an Inf or NaN operand or a NaN scale (a NaN scaled value) is
// found: `finite` tells.
Packed pack(const Datapath& dp, ConstMatrixView a, ConstMatrixView b, const BlockScales* scales,
            int threads) {
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
  const OperandTable a_operands(dp.input, m * k, threads);
  const OperandTable b_operands(dp.b_format(), n * k, threads);
  const std::int64_t scale_block = dp.block_scaling.scale_block;
  // Operand (i, kk) of A and (kk, j) of B as the kernel reads them.
  const auto a_operand = [&](std::int64_t i, std::int64_t kk) {
    const Binary64Operand x = a_operands(a.get(i, kk));
    return scales == nullptr
               ? x
               : scaled_operand(x, binary64_scale(dp.block_scaling.scale_a,
                                                  scales->a.get(i, kk / scale_block)));
  };
  const auto b_operand = [&](std::int64_t kk, std::int64_t j) {
    const Binary64Operand x = b_operands(b.get(kk, j));
    return scales == nullptr
               ? x
               : scaled_operand(x, binary64_scale(dp.block_scaling.scale_b,
                                                  scales->b.get(kk / scale_block, j)));
  };
  p.padded_rows = (m + kGroup - 1) / kGroup * kGroup;
  p.a_value = std::make_unique_for_overwrite<double[]>(
      static_cast<std::size_t>(chunks * p.padded_rows * p.chunk_slots));
  p.a_exponents = std::make_unique_for_overwrite<std::uint64_t[]>(
      static_cast<std::size_t>(chunks * p.padded_rows / kGroup * p.chunk_slots));
  // An operand's value is a double Inf or NaN exactly when the input is one (to_double).
  std::atomic<bool> all_finite{true};
  // Groups of kGroup rows: each slot's kGroup values and their exponent word at once; rows past
  // m and padding slots hold -0 with exponent field 0 (a zero's).
  parallel_for(threads, p.padded_rows / kGroup, 4, [&](std::int64_t begin, std::int64_t end) {
    bool finite = true;
    for (std::int64_t g = begin; g < end; ++g) {
      const std::int64_t i0 = g * kGroup;
      for (std::int64_t first = 0; first < p.slots; first += p.chunk_slots) {
        // Row i's slots of one chunk (the last may be short) lie contiguous from a_index(i, first),
        // the group's exponent words from a_group_index(i0, first).
        std::uint64_t* const exponents = p.a_exponents.get() + p.a_group_index(i0, first);
        const std::int64_t count = std::min(p.chunk_slots, p.slots - first);
        double* value[kGroup];
        for (int r = 0; r < kGroup; ++r) value[r] = p.a_value.get() + p.a_index(i0 + r, first);
        for (std::int64_t t = 0; t < count; ++t) {
          const std::int64_t k_of_slot = slot_k[static_cast<std::size_t>(first + t)];
          std::uint64_t word = 0;
          for (int r = 0; r < kGroup; ++r) {
            if (k_of_slot < 0 || i0 + r >= m) {
              value[r][t] = -0.0;
              continue;
            }
            const Binary64Operand x = a_operand(i0 + r, k_of_slot);
            finite &= std::isfinite(x.value);
            value[r][t] = x.value;
            word |= biased_exponent(x) << (16 * r);
          }
          exponents[t] = word;
        }
      }
    }
    if (!finite) all_finite = false;
  });
  p.b_value = std::make_unique_for_overwrite<F64[]>(static_cast<std::size_t>(tiles * p.slots));
  p.b_exponents = std::make_unique_for_overwrite<U64[]>(static_cast<std::size_t>(tiles * p.slots));
  // Column tiles in groups (about four per thread), slot by slot over the group's tiles: a slot's
  // columns of the group are read from one row of B and each tile's vector is written after the
  // tile's previous slot (writing each element where it goes, a slot at a time over every tile,
  // cost a TLB miss per element). Padding slots and the lanes past n hold +0 with exponent 0.
  parallel_for(threads, tiles, tiles_per_group(tiles, threads, 8),
               [&](std::int64_t begin, std::int64_t end) {
                 bool finite = true;
                 for (std::int64_t s = 0; s < p.slots; ++s) {
                   const std::int64_t k_of_slot = slot_k[static_cast<std::size_t>(s)];
                   for (std::int64_t tile = begin; tile < end; ++tile) {
                     const std::int64_t j0 = tile * kTile;
                     const int width = static_cast<int>(std::min<std::int64_t>(kTile, n - j0));
                     F64 value{};
                     U64 exponents{};
                     for (int w = 0; w < width && k_of_slot >= 0; ++w) {
                       const Binary64Operand x = b_operand(k_of_slot, j0 + w);
                       finite &= std::isfinite(x.value);
                       value[w] = x.value;
                       exponents[w] = biased_exponent(x) * 0x0001'0001'0001'0001;  // each field
                     }
                     p.b_value[static_cast<std::size_t>(tile * p.slots + s)] = value;
                     p.b_exponents[static_cast<std::size_t>(tile * p.slots + s)] = exponents;
                   }
                 }
                 if (!finite) all_finite = false;
               });
  p.finite = all_finite;
  return p;
}

}  // namespace

bool fast_path_applies(const Datapath& dp) {
  // The alignment exponents of A's and B's operands, their scales' added.
  const auto fits = [&](const FloatFormat& f, const FloatFormat* scale) {
    const int low = f.min_exponent() + (scale ? scale->min_exponent() : 0);
    const int high = f.max_exponent() + (scale ? scale->max_exponent() : 0);
    return low > -kExponentLimit && high < kExponentLimit;
  };
  const bool scaled = dp.block_scaled();
  return binary64_applies(dp) && fits(dp.input, scaled ? &dp.block_scaling.scale_a : nullptr) &&
         fits(dp.b_format(), scaled ? &dp.block_scaling.scale_b : nullptr);
}

bool fast_mma_chain(const Datapath& dp, ConstMatrixView a, ConstMatrixView b,
                    const BlockScales* scales, std::span<std::uint32_t> acc, int threads) {
  const std::int64_t m = a.rows, n = b.cols;
  const Packed packed = pack(dp, a, b, scales, threads);
  if (!packed.finite) return false;
  const Kernel kernel(dp, packed);
  const std::int64_t instructions = packed.slots / dp.instruction_k;
  const std::int64_t chunks =
      (instructions + packed.chunk_instructions - 1) / packed.chunk_instructions;
  const std::int64_t tiles = (n + kTile - 1) / kTile;
  // Each thread takes a group of up to kGroupTiles column tiles at a time, its rows in blocks of
  // kBlockRows, so that the block's part of one chunk of A (kBlockRows x kChunkSlots values and
  // exponents) is read from L3 once and stays in L2 while every tile of the group passes over it.
  // Groups of tiles / (4 threads) (at least one tile): about four groups per thread, handed out
  // dynamically, so that a thread slowed by others on its core does not hold up the product
  // (one group per thread measured 7x on 16 threads at n = 2048 where the old one-tile tasks
  // gave 11x to 12x, H100 host).
  const std::int64_t group_tiles = tiles_per_group(tiles, threads, kGroupTiles);
  parallel_for(threads, tiles, group_tiles, [&](std::int64_t begin, std::int64_t end) {
    const std::int64_t padded = packed.padded_rows;
    std::vector<F64> c(static_cast<std::size_t>((end - begin) * std::min(padded, kBlockRows)));
    for (std::int64_t i0 = 0; i0 < padded; i0 += kBlockRows) {
      const std::int64_t i1 = std::min(padded, i0 + kBlockRows);
      F64* const tile_c = c.data();
      const std::int64_t height = i1 - i0;
      // Row by row, so that each row's part of acc is read and written in address order.
      for (std::int64_t i = i0; i < i1; ++i) {
        for (std::int64_t tile = begin; tile < end; ++tile) {
          const std::int64_t j0 = tile * kTile;
          const int width = i < m ? static_cast<int>(std::min<std::int64_t>(kTile, n - j0)) : 0;
          tile_c[(tile - begin) * height + (i - i0)] =
              load_accumulators(dp, acc.data() + i * n + j0, width);
        }
      }
      for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
        for (std::int64_t tile = begin; tile < end; ++tile) {
          kernel.run(tile, chunk, instructions, i0, i1, tile_c + (tile - begin) * height);
        }
      }
      for (std::int64_t i = i0; i < std::min(m, i1); ++i) {
        for (std::int64_t tile = begin; tile < end; ++tile) {
          const std::int64_t j0 = tile * kTile;
          store_accumulators(dp, tile_c[(tile - begin) * height + (i - i0)],
                             acc.data() + i * n + j0,
                             static_cast<int>(std::min<std::int64_t>(kTile, n - j0)));
        }
      }
    }
  });
  return true;
}

void fast_group_chain(const Datapath& dp, ConstMatrixView a, ConstMatrixView b,
                      const BlockScales& scales, std::span<std::uint32_t> acc, int threads) {
  const std::int64_t m = a.rows, k = a.cols, n = b.cols;
  const int group = dp.block_scaling.group_terms;
  const std::int64_t scale_block = dp.block_scaling.scale_block;
  const std::int64_t groups = (k + group - 1) / group;  // along k; the last may be partial
  // Each row of A's groups and each column of B's, decoded once (group_operand).
  const auto operands = [&](bool is_a) {
    const std::int64_t lines = is_a ? m : n;
    std::vector<GroupOperand> out(static_cast<std::size_t>(lines * groups));
    parallel_for(threads, lines, 16, [&](std::int64_t begin, std::int64_t end) {
      std::uint32_t bits[kMaxScaledGroup];
      for (std::int64_t l = begin; l < end; ++l) {
        for (std::int64_t q = 0; q < groups; ++q) {
          const std::int64_t k0 = q * group;
          const int count = static_cast<int>(std::min<std::int64_t>(group, k - k0));
          for (int e = 0; e < count; ++e) bits[e] = is_a ? a.get(l, k0 + e) : b.get(k0 + e, l);
          const std::uint32_t scale =
              is_a ? scales.a.get(l, k0 / scale_block) : scales.b.get(k0 / scale_block, l);
          out[static_cast<std::size_t>(l * groups + q)] = group_operand(
              dp, is_a ? dp.input : dp.b_format(),
              is_a ? dp.block_scaling.scale_a : dp.block_scaling.scale_b, bits, count, scale, is_a);
        }
      }
    });
    return out;
  };
  const std::vector<GroupOperand> rows = operands(true), cols = operands(false);
  const Binary64Grid g = binary64_grid(dp);
  const std::int64_t k_instr = dp.instruction_k;
  const int blocks = dp.instruction_k / dp.block_terms;
  const int block_groups = dp.block_terms / group;
  const bool aligned = dp.c_entry == AccumulatorEntry::aligned_in_first_block;
  // exact_mma_chain's steps: blocks hold k in order (k_group == block_terms), so block q of
  // instruction t holds the groups from (t * k_instr + q * block_terms) / group on, those with a
  // term below k; a block with none (past a partial instruction's terms) is skipped.
  parallel_for(threads, m, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        std::uint32_t& d = acc[static_cast<std::size_t>(i * n + j)];
        for (std::int64_t first = 0; first < k; first += k_instr) {
          double chain = aligned ? to_double(dp.accumulator, d) : 0.0;
          for (int q = 0; q < blocks && first + q * dp.block_terms < k; ++q) {
            const std::int64_t g0 = (first + q * dp.block_terms) / group;
            const int count = static_cast<int>(std::min<std::int64_t>(block_groups, groups - g0));
            chain = group_block(dp, g, &rows[static_cast<std::size_t>(i * groups + g0)],
                                &cols[static_cast<std::size_t>(j * groups + g0)], count, chain);
          }
          d = aligned ? accumulator_bits(dp, chain)
                      : exact_accumulator_add(dp, accumulator_bits(dp, chain), d);
        }
      }
    }
  });
}

}  // namespace tcemu::detail
