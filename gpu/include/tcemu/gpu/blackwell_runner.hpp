// The Blackwell probe runners: one case per instruction, like mma_runner.hpp (a is row 0 of A, b
// column 0 of B, c element (0, 0) of C, the scales those of row 0 and column 0, everything else
// zero; the result is D(0, 0)), through
//   sm_100a  tcgen05.mma.cta_group::1 (M = 128, N = 16; A and B in shared memory, D in Tensor
//            Memory): kind::f16, kind::tf32, kind::f8f6f4 ("tcgen05"), and the block-scaled
//            kind::mxf8f6f4, kind::mxf4, kind::mxf4nvf4 with their scales copied into Tensor
//            Memory ("tcgen05.mxf8f6f4.block32", ...);
//   sm_120a  mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4 ("mma.sync.m16n8k32", every pair of
//            e5m2, e4m3, e3m2, e2m3, e2m1, fp32 or fp16 results) and the block-scaled
//            m16n8k32 kind::mxf8f6f4 and m16n8k64 kind::mxf4 / kind::mxf4nvf4
//            ("mma.sync.m16n8k32.mxf8f6f4.block32", "mma.sync.m16n8k64.mxf4nvf4.block16.ue4m3",
//            ...).
// The names are those of the presets (presets.hpp); a datapath from preset() with the name gives
// the formats, the scale formats and the scale block. Their kernels are built only for sm_100a /
// sm_120a (gpu/CMakeLists.txt, TCEMU_BLACKWELL_PROBES); on any other GPU the runners refuse
// before launching anything.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tcemu/cases/case_file.hpp>
#include <tcemu/emulator/datapath.hpp>

namespace tcemu::gpu {

// What `instruction` needs, or "" when it names no Blackwell runner: "an sm_100a GPU (B200,
// GB200; compute capability 10.0)" for the tcgen05 names, "an sm_120a GPU (RTX 50, RTX PRO 6000
// Blackwell; compute capability 12.0)" for the sm_120 names.
std::string_view blackwell_requirement(std::string_view instruction);

// The Blackwell names the runners issue on a GPU of this compute capability (x10): the tcgen05
// names on 10.0, the sm_120 names on 12.0, none elsewhere.
std::vector<std::string_view> blackwell_instructions(int compute_capability);

// Throws std::runtime_error unless device 0 is the GPU `instruction` (a Blackwell runner's name)
// needs: "tcgen05.mxf4.block32 needs an sm_100a GPU (B200, GB200; compute capability 10.0);
// this is NVIDIA H200 (compute capability 9.0)", or "...; there is no CUDA device (REASON)";
// std::invalid_argument for a name no Blackwell runner has.
void check_blackwell_device(std::string_view instruction);

// D(0, 0) of one `instruction` per case, on `datapath` = preset(arch, a, b, accumulator,
// instruction): a in datapath.input, b in datapath.b_format(), c and d in the accumulator, and on
// a block-scaled datapath scale_count(datapath, K) scales of each. Every case must have K =
// datapath.instruction_k terms. Throws std::invalid_argument for a case of the wrong K or scale
// count or a datapath the instruction does not take, then as check_blackwell_device, and
// std::runtime_error in a build without the kernels (TCEMU_BLACKWELL_PROBES=OFF) or for the one
// instruction the toolkit could not build (mma.sync .scale_vec::4X with ue8m0 scales before
// CUDA 13.1).
std::vector<std::uint32_t> run_blackwell(std::string_view instruction, const Datapath& datapath,
                                         std::span<const MmaCase> cases);

}  // namespace tcemu::gpu
