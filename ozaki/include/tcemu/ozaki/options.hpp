// What an Ozaki handle is configured with, and what each call reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <variant>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/fp64_bits.hpp>

namespace tcemu::ozaki {

// The modes of Mukunoki, Ozaki, Ogita and Imamura (ISC 2020).
enum class Mode {
  dp,       // DGEMM-TC: FP64-equivalent accuracy; d = the levels after which the remainders are
            // zero, fast mode; operands needing more than max_splits levels are an error (a
            // result missing their low bits would not be FP64-accurate)
  cr,       // correctly rounded to C's format, fp64 or fp32 (alpha = 1, beta = 0; the direction:
            // Options::rounding): split until the remainders are zero, sum every partial
            // product exactly and round once (Backend::exact_sum, NearSum's bits).
            // Each partial product is held relative to the first slices' scale, p 2^r with p an
            // integer and r = (e_A1 - e_Ap) + (e_B1 - e_Bq) <= 0 (slice units); it is exact while
            // r >= -1074, i.e. while the slice units of one row of A and one column of B span
            // fewer than 1074 binary orders of magnitude together (inputs whose nonzero
            // magnitudes in a row and a column spread over less than about 2^960 in all).
            // Beyond that the deepest terms underflow and correct rounding is not guaranteed.
  sp,       // SGEMM-TC: fp32 operands, d chosen as in dp, fast mode
  tunable,  // the user's d, fast mode on or off
};

// The mode called `name` ("dp", "cr", "sp", "tunable"), or nothing: the words of `tcemu gemm
// --mode` and of the Python package's ozaki_gemm(mode=...).
constexpr std::optional<Mode> mode_by_name(std::string_view name) {
  if (name == "dp") return Mode::dp;
  if (name == "cr") return Mode::cr;
  if (name == "sp") return Mode::sp;
  if (name == "tunable") return Mode::tunable;
  return std::nullopt;
}

// The word of mode_by_name for m.
constexpr const char* mode_name(Mode m) {
  switch (m) {
    case Mode::dp:
      return "dp";
    case Mode::cr:
      return "cr";
    case Mode::sp:
      return "sp";
    case Mode::tunable:
      return "tunable";
  }
  return "?";
}

// The direction called `name` ("nearest", "upward", "downward", "toward-zero"), or nothing: the
// words of `tcemu gemm --rounding`, the Python package's ozaki_gemm(rounding=...) and
// TCEMU_PRELOAD_ROUNDING.
constexpr std::optional<fp64::Direction> rounding_by_name(std::string_view name) {
  if (name == "nearest") return fp64::Direction::nearest_even;
  if (name == "upward") return fp64::Direction::upward;
  if (name == "downward") return fp64::Direction::downward;
  if (name == "toward-zero") return fp64::Direction::toward_zero;
  return std::nullopt;
}

// The word of rounding_by_name for d.
constexpr const char* rounding_name(fp64::Direction d) {
  switch (d) {
    case fp64::Direction::nearest_even:
      return "nearest";
    case fp64::Direction::upward:
      return "upward";
    case fp64::Direction::downward:
      return "downward";
    case fp64::Direction::toward_zero:
      return "toward-zero";
    case fp64::Direction::to_odd:  // internal, not a word of rounding_by_name
      return "to-odd";
  }
  return "?";
}

// Products on tensor cores through a datapath: slices are stored in datapath.input, products
// come out in datapath.accumulator (fp32), and the slice width makes every product exact
// (split_rule.hpp).
struct TensorCoreProducts {
  Datapath datapath;
};
// Products by Backend::fp64_gemm on binary64 slices (the OzBLAS DGEMM-DP-CR of the paper's
// Table 1, the "cpu64" backend).
struct Fp64Products {};
// Products on integer tensor cores (ozIMMU-style Ozaki-I): slices stored as int8 (bits <= 6, so
// that an int8 holds every slice integer of magnitude <= 2^bits), products by
// Backend::integer_gemm (s8 x s8 -> s32: every sum of k < 2^(31 - 2 bits) products exact),
// widened to binary64 (the "dgemm-int8" / "sgemm-int8" schemes).
struct IntegerProducts {};
// Ozaki scheme II (Ozaki, Uchino, Imamura 2025; GEMMul8-style) instead of slices: A and B scaled
// to integers, one int8 GEMM (Backend::integer_gemm) per modulus of crt_moduli.hpp, and the
// product rebuilt by the Chinese remainder theorem and rounded once ("dgemm-crt" / "sgemm-crt").
// Mode cr: the moduli chosen from the inputs so that the scaled integers hold A and B exactly:
// the result is the correctly rounded product (alpha = 1, beta = 0) whatever the exponent
// spread; refused (std::runtime_error) when that needs more than crt_elements::kMaxModuli
// moduli. sp: the same for fp32 operands, rounded to fp32. tunable: Options::splits moduli and
// the norm scaling (Backend::crt_norm_scale: every row of A and column of B to the largest
// Euclidean norm the moduli allow, |C'| bounded by Cauchy-Schwarz). dp: the norm scaling with
// the fewest moduli (15 or more) whose norms keep every element within DGEMM's classical bound
// gamma_k (|A||B|)_ij, judged from a certified lower bound of |A||B| (one more int8 GEMM;
// crt_bounds.hpp, bound_need, states the criterion and its proof; for k >= 4096 on the
// leading k / 16 terms where those ask for at most one modulus more than the least, which
// costs less than the bound over all of k), or cr's exact scaling when
// that takes no more moduli (then correctly rounded); where the bound cannot be certified, cr's
// scaling if it fits, else all 48 moduli with Report::dp_bound_met false.
struct CrtProducts {};
using Products = std::variant<TensorCoreProducts, Fp64Products, IntegerProducts, CrtProducts>;

struct Options {
  Mode mode = Mode::dp;
  int splits = 0;    // tunable: d >= 1 slices of A and of B
  bool fast = true;  // tunable: only the pairs p + q <= d + 1 (d(d+1)/2 products)
  // dp, sp, cr: slices per matrix the workspace is sized for; cr and dp needing more is an error
  // (std::runtime_error naming max_splits and the levels needed), sp stops there.
  int max_splits = 48;
  // Bytes of backend memory allocated once by the handle for remainders, slices, exponents,
  // products and sums; m and n are blocked to stay inside it.
  std::size_t workspace_bytes = std::size_t{512} << 20;
  // Mode cr: the direction in which the exact product is rounded, once, to C's format (binary64:
  // fp64::round; binary32: fp64::narrow_bits of its round to odd, fp64::Direction::to_odd): to
  // nearest even, or upward, downward or toward zero (to_odd itself is refused). Two calls,
  // downward and upward, give the tightest enclosure [lo, hi] of the exact product that C's
  // format holds (lo <= A B <= hi elementwise, lo = hi where A B is representable): what an
  // interval matrix product needs. A directed rounding is for mode cr and C := A B (alpha = 1,
  // beta = 0), since the BLAS epilogue's own operations round to nearest; anything else is
  // refused (std::invalid_argument, naming it).
  fp64::Direction rounding = fp64::Direction::nearest_even;
  // When set, called on the calling thread after each slice product with the fraction of the
  // call's products done, in (0, 1] (each block of C counts equally). Tensor-core products then
  // go to the backend one per Backend::mma_gemm_batch call instead of a stack at a time: the
  // same bits, but no batching on a backend that batches (the GPU's cuBLAS engine).
  std::function<void(double fraction)> progress = {};
};

// What one call did. Phase times are wall-clock seconds with the backend synchronised at each
// phase boundary.
struct Report {
  int slice_bits = 0;           // integer bits per slice (split_rule.hpp)
  int slices_a = 0;             // the largest number of slices of any block of A
  int slices_b = 0;             // the same for B
  std::int64_t gemms = 0;       // slice products issued, over all blocks
  std::int64_t blocks = 0;      // (m block, n block) pairs
  std::int64_t block_rows = 0;  // rows of A and columns of B per block
  std::int64_t block_cols = 0;
  // The workspace bytes with which this call would have run in one block (m x n) with the
  // counts it took: a caller whose calls run in many blocks can size a handle's workspace by it.
  std::size_t one_block_workspace = 0;
  double seconds_split_a = 0;
  double seconds_split_b = 0;
  double seconds_products = 0;
  double seconds_summation = 0;  // accumulation / exact sums and the epilogue
  // Ozaki-II dp (crt_scheme.cpp): the norm bits gamma_A that its bound of |A||B| asked for
  // (crt_elements::kNoNeed or kBoundUncertified as bound_need gives them), and whether the count
  // used meets that bound (false: the bound was uncertified or asked for more than the 48 moduli
  // hold, and cr's exact scaling does not fit either: the largest count was used).
  int dp_bound_bits = 0;
  bool dp_bound_met = true;
  // The terms of the inner dimension that the bound behind dp_bound_bits summed: the leading
  // k / 16 where those asked for at most one modulus more than the least count (for k >= 4096;
  // then dp_bound_bits is their need, at least the whole bound's), otherwise k. 0 where no bound
  // was computed (other modes, or cr's exact scaling taken before it; dp_bound_bits is then 0 too).
  std::int64_t dp_bound_terms = 0;
  // Ozaki-II: whether the products stayed int32 sums until the reconstruction reduced them (where
  // the workspace holds them in the blocks that int8 residues take), rather than being reduced
  // to int8 residues modulus by modulus; the bits are the same either way.
  bool crt_product_sums = false;
};

}  // namespace tcemu::ozaki
