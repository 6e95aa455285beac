// The emulated GEMM: D = A B + C through a Tensor Core datapath, for whole matrices. The host
// backends' mma_gemm step runs it (host/src/tensor_core_steps.cpp); its result is bitwise
// independent of the thread count.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/matrix.hpp>

namespace tcemu {

// How C enters the product.
enum class CInput {
  // cuBLAS / CUTLASS: the tensor cores accumulate A B from +0, then
  // D = fma(alpha, acc, beta * C) in fp32 round-to-nearest (CUTLASS's LinearCombination), and D is
  // rounded to nearest into the accumulator format.
  epilogue,
  // A chain of mma instructions as a kernel writes it: C is the initial accumulator of the first
  // instruction along k. alpha and beta must be 1.
  initial_accumulator,
};

struct GemmOptions {
  float alpha = 1.0f;
  float beta = 0.0f;
  CInput c_input = CInput::epilogue;
  // Where the accumulation leaves the tensor core (Ootomo and Yokota's fix for the truncating
  // accumulation). 0: never, the whole of k is one chain of instructions. kb > 0: k is cut into
  // chunks of kb values (the last one may be shorter); each chunk is a chain of instructions from
  // an accumulator of +0, and its result is added to an fp32 register with one round-to-nearest
  // fp32 add, in k order. The register starts at +0 (epilogue) or at C (initial_accumulator).
  // kb must be a multiple of the datapath's instruction_k and the accumulator must be fp32.
  std::int64_t takeout_every_k = 0;
  int threads = 0;  // 0: every hardware thread
};

// Every element d_ij is the datapath's chain of MMA instructions over k = 0..K-1 in k order
// (mma.hpp; cut into chunks by takeout_every_k), so a k tail shorter than one instruction is a
// partial instruction, as a kernel that pads its operands with zeros computes it. A and B hold
// datapath.input bit patterns, C and D datapath.accumulator ones. C may be omitted when beta == 0
// in epilogue mode; C and D may alias exactly (same data, ld and layout).
//
// Throws std::invalid_argument naming the offending argument as BLAS's xerbla does (dimension,
// leading dimension, format, alpha/beta in initial_accumulator mode, takeout_every_k).
void emulated_gemm(const Datapath& datapath, const GemmOptions& options, ConstMatrixView a,
                   ConstMatrixView b, std::optional<ConstMatrixView> c, MatrixView d);

// The scales of a block-scaled product (datapath.block_scaled()): `a` is m x s, one scale per row
// of A and scale_block consecutive k, `b` is s x n, one per column of B, with s =
// scale_count(datapath, k) (mma.hpp), in the datapath's scale formats (one byte each).
struct BlockScales {
  ConstMatrixView a;
  ConstMatrixView b;
};

// The block-scaled GEMM: as above, each k of A and B times the scales that cover it.
// takeout_every_k must then also be a multiple of scale_block (it is one of instruction_k, which
// scale_block divides). The overload without scales refuses a block-scaled datapath.
void emulated_gemm(const Datapath& datapath, const GemmOptions& options, ConstMatrixView a,
                   ConstMatrixView b, const BlockScales& scales, std::optional<ConstMatrixView> c,
                   MatrixView d);

// The operand contract of the GEMM, written once for every caller: emulated_gemm and every
// backend's mma_gemm (tcemu/backend/tensor_core_steps.hpp) call it. Throws std::invalid_argument
// "<caller>: ..." naming the offending argument: a negative dimension; A (m x k), B (k x n), C or
// D (m x n) of another shape, or not holding the datapath's input (A: input, B: b_format()) or
// accumulator (C, D) format; scales missing for a block-scaled datapath, given to another, or of
// another shape or format than BlockScales says; a leading dimension too small; C missing where the
// options read it (beta != 0 or C as the initial accumulator); alpha or beta other than 1 with C as
// the initial accumulator. The views are not dereferenced (a backend passes its own addresses).
// takeout_every_k is checked by whoever computes the product, since its unit is the instruction the
// product runs on.
void check_gemm_operands(std::string_view caller, const Datapath& datapath,
                         const GemmOptions& options, const ConstMatrixView& a,
                         const ConstMatrixView& b, const std::optional<ConstMatrixView>& c,
                         const ConstMatrixView& d, const BlockScales* scales = nullptr);

namespace detail {

// The instruction sets the emulated GEMM's vectorised fast path is compiled for in this build and
// this CPU runs, fastest first: "avx512" (F, DQ, BW, VL), "avx2", "baseline" (the build's own
// target where it has neither). Every one gives the same bits.
std::vector<std::string_view> fast_path_isas();

// The one the fast path runs: use_fast_path_isa's choice, else the one the environment variable
// TCEMU_FAST_PATH_ISA names (read at the first call; a name not in fast_path_isas() makes the
// calls throw std::invalid_argument), else the fastest.
std::string_view fast_path_isa();

// For tests and measurements: the process's later fast-path calls run `isa`, one of
// fast_path_isas() (else std::invalid_argument); an empty name restores the default.
void use_fast_path_isa(std::string_view isa);

}  // namespace detail
}  // namespace tcemu
