// Runs MMA cases through one warp-level mma.sync instruction of the present GPU, one case per
// instruction: a is row 0 of A, b column 0 of B, c element (0, 0) of C, everything else zero, and
// the result is D(0, 0). This is how the GPU's own bits are captured for `tcemu probe`.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/emulator/format.hpp>

namespace tcemu::gpu {

// K of the mma.sync instruction for an input format: 16 (fp16, bf16: m16n8k16), 8 (tf32:
// m16n8k8), 32 (e4m3, e5m2: m16n8k32).
int mma_sync_k(const FloatFormat& input);

// The (input, accumulator) pairs mma.sync offers on a GPU of this compute capability (x10):
// fp16 -> fp32/fp16, bf16 -> fp32, tf32 -> fp32, and from sm_89 e4m3/e5m2 -> fp32/fp16.
std::vector<std::pair<FloatFormat, FloatFormat>> mma_sync_pairs(int compute_capability);

// Throws std::invalid_argument naming the first case whose a or b does not hold K =
// mma_sync_k(input) operands (`instruction` names the instruction in the message).
void check_case_k(const FloatFormat& input, std::span<const MmaCase> cases,
                  const char* instruction);

// Throws unless the present GPU has mma.sync for this pair: std::invalid_argument for a format
// pair no mma.sync takes, std::runtime_error without a device or below sm_89 for fp8.
void check_mma_sync(const FloatFormat& input, const FloatFormat& accumulator);

// D(0, 0) of one mma.sync per case, in the accumulator format. Every case must have
// K == mma_sync_k(input). Throws std::runtime_error when there is no device, when the device
// lacks the instruction (fp8 needs sm_89), or when a CUDA call fails; std::invalid_argument for
// a case of the wrong K or an unsupported format pair.
std::vector<std::uint32_t> run_mma_sync(const FloatFormat& input, const FloatFormat& accumulator,
                                        std::span<const MmaCase> cases);

// The same through one warpgroup-level wgmma.mma_async (m64nNkK, A and B in shared memory,
// K-major; K as mma_sync_k), which only sm_90a devices have: wgmma_pairs is empty elsewhere and
// run_wgmma throws std::runtime_error on any other device, std::invalid_argument for an N not in
// wgmma_probe_n() (8, 16, 64, 128 and 256 for every pair).
std::vector<std::pair<FloatFormat, FloatFormat>> wgmma_pairs(int compute_capability);
std::vector<int> wgmma_probe_n();
std::vector<std::uint32_t> run_wgmma(const FloatFormat& input, const FloatFormat& accumulator,
                                     std::span<const MmaCase> cases, int n = 8);

// Every instruction shape the probe runners issue on a GPU of this compute capability (x10, sm_80
// or newer): the mma.sync shapes m8n8k4, m16n8k4, m16n8k8, m16n8k16 (and m16n8k32 from sm_89),
// the WMMA shapes m16n16k16, m32n8k16, m8n32k16 and m16n16k8, and wgmma on sm_90a. Names as
// presets.hpp spells them.
std::vector<std::string_view> probe_instructions(int compute_capability);

// The wgmma shapes of N other than 8 the runner issues on that GPU (sm_90a; fp32 and fp16
// accumulators): wgmma.m64nNkK for N = 16, 64, 128, 256 and K = 8 (tf32), 16 (fp16, bf16), 32
// (e4m3, e5m2). Not in probe_instructions() (`tcemu probe --instr all` runs wgmma at N = 8 only);
// the functions below take them.
std::vector<std::string_view> wide_wgmma_instructions(int compute_capability);

// The (input, accumulator) pairs the named instruction takes on that GPU (the sm90 preset table's
// pairs of the shape, within mma_sync_pairs(); wgmma_pairs() for wgmma).
std::vector<std::pair<FloatFormat, FloatFormat>> instruction_pairs(std::string_view instruction,
                                                                   int compute_capability);

// D(0, 0) of one instruction of the named shape per case (probe_instructions() names them;
// "mma.sync" is run_mma_sync). Every case must have the shape's K. Throws as run_mma_sync, and
// std::invalid_argument for an instruction or format pair the runners do not cover.
std::vector<std::uint32_t> run_instruction(std::string_view instruction, const FloatFormat& input,
                                           const FloatFormat& accumulator,
                                           std::span<const MmaCase> cases);

}  // namespace tcemu::gpu
