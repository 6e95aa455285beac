// Vectorised MMA chain for a whole GEMM, bit-identical to mma_element_decoded: the block
// arithmetic is binary64_block.hpp's (where the proof of exactness is), on four or eight columns
// of D per vector. B is decoded in its own format (kind::f8f6f4 pairs), and a block-scaled
// datapath with group_terms == 1 (kind::mxf8f6f4) has each operand scaled at packing time
// (scaled_operand). The kernel (gemm_fast_path_kernel.inc) is compiled for the build's own
// instruction set and, with GCC on x86-64, also for AVX2 where the build's is below it; the
// faster one this CPU runs is chosen at the first call (fast_path_isas).
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <tcemu/emulator/binary64_block.hpp>
#include <tcemu/emulator/block_fma.hpp>
#include <tcemu/emulator/convert.hpp>
#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/round.hpp>
#include <tcemu/emulator/scaled_groups.hpp>

#include <tcemu/emulator/parallel_for.hpp>
#include "gemm_fast_path.hpp"

namespace tcemu::detail {
namespace {

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

}  // namespace

// The kernel for the build's own instruction set: level 2 with AVX-512 F, DQ, BW and VL, 1 with
// AVX2, 0 with anything else (x86-64's SSE2, a non-x86 machine).
#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define TCEMU_BUILD_LEVEL 2
#elif defined(__AVX2__)
#define TCEMU_BUILD_LEVEL 1
#else
#define TCEMU_BUILD_LEVEL 0
#endif
#define TCEMU_FAST_PATH_LEVEL TCEMU_BUILD_LEVEL
namespace build_isa {
#include "gemm_fast_path_kernel.inc"
}  // namespace build_isa
#undef TCEMU_FAST_PATH_LEVEL

// The same source at AVX2 where the build's level is below it: every function of it compiled for
// AVX2 by GCC's target pragma (the headers above stay at the build's level) and called only where
// __builtin_cpu_supports finds AVX2 (and the operating system saves its registers). No FMA: the
// kernel never contracts. GCC on x86-64 only (clang has no such pragma). No AVX-512 clone: the
// templates of binary64_block.hpp are instantiated at the baseline, where a vector comparison
// gives 64-bit lane masks; AVX-512 code compares into mask registers and rebuilt those lane by
// lane (the clone ran the sm90 benchmark at 2.0e9 MAC/s at n = 1024, against 4.5e9 for a
// -march=native build and 2.2e9 for the AVX2 clone, 2026-11-29), so a portable build runs the
// AVX2 kernel on AVX-512 machines and a native build there its own AVX-512 one.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && TCEMU_BUILD_LEVEL < 1
#define TCEMU_FAST_PATH_AVX2_CLONE 1
#pragma GCC push_options
#pragma GCC target("avx2")
#define TCEMU_FAST_PATH_LEVEL 1
namespace avx2_isa {
#include "gemm_fast_path_kernel.inc"
}  // namespace avx2_isa
#undef TCEMU_FAST_PATH_LEVEL
#pragma GCC pop_options
#endif

namespace {

using Chain = bool (*)(const Datapath&, ConstMatrixView, ConstMatrixView, const BlockScales*,
                       std::span<std::uint32_t>, int);
struct Isa {
  std::string_view name;
  Chain chain;
};
constexpr std::string_view kLevelNames[] = {"baseline", "avx2", "avx512"};

// The kernels this CPU runs, fastest first; the build's own last.
const std::vector<Isa>& runnable_isas() {
  static const std::vector<Isa> isas = [] {
    std::vector<Isa> out;
#if defined(TCEMU_FAST_PATH_AVX2_CLONE)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) out.push_back({kLevelNames[1], &avx2_isa::fast_mma_chain});
#endif
    out.push_back({kLevelNames[TCEMU_BUILD_LEVEL], &build_isa::fast_mma_chain});
    return out;
  }();
  return isas;
}

// The runnable kernel of that name; an empty name is the fastest.
const Isa& named_isa(std::string_view name) {
  const std::vector<Isa>& isas = runnable_isas();
  if (name.empty()) return isas.front();
  for (const Isa& isa : isas) {
    if (isa.name == name) return isa;
  }
  throw std::invalid_argument("fast path: '" + std::string(name) +
                              "' is not an instruction set of this build and CPU");
}

// use_fast_path_isa's choice; nullptr: the default.
std::atomic<const Isa*> chosen_isa{nullptr};

// The kernel fast_mma_chain calls: use_fast_path_isa's, else TCEMU_FAST_PATH_ISA's (read once),
// else the fastest.
const Isa& current_isa() {
  if (const Isa* isa = chosen_isa.load(std::memory_order_relaxed)) return *isa;
  static const Isa* const from_environment = [] {
    const char* name = std::getenv("TCEMU_FAST_PATH_ISA");
    return &named_isa(name == nullptr ? "" : name);
  }();
  return *from_environment;
}

}  // namespace

std::vector<std::string_view> fast_path_isas() {
  std::vector<std::string_view> names;
  for (const Isa& isa : runnable_isas()) names.push_back(isa.name);
  return names;
}

std::string_view fast_path_isa() {
  return current_isa().name;
}

void use_fast_path_isa(std::string_view name) {
  chosen_isa = name.empty() ? nullptr : &named_isa(name);
}

bool fast_mma_chain(const Datapath& dp, ConstMatrixView a, ConstMatrixView b,
                    const BlockScales* scales, std::span<std::uint32_t> acc, int threads) {
  return current_isa().chain(dp, a, b, scales, acc, threads);
}

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
