// Named datapaths: one preset per GPU generation, MMA instruction shape, input format and
// accumulator format, plus the idealised datapaths of Ootomo and Yokota. Where each value comes
// from is written next to it in presets.cpp and in docs/presets.md.
//
// Instruction names (docs/presets.md lists them per architecture, with the SASS each compiles to):
//   mma.sync.mMnNkK   a PTX mma.sync shape, e.g. mma.sync.m16n8k16 (SASS HMMA.16816)
//   mma.sync          the largest-K mma.sync shape of the input format (the default)
//   wmma.mMnNkK       a WMMA fragment shape; it has the datapath of the mma.sync shape it
//                     compiles to on that architecture (wmma_target())
//   wgmma, wgmma.m64nNkK   sm90's warpgroup MMA (the same datapath for every N)
//   tcgen05           sm100's MMA: kind::f16, kind::tf32, kind::f8f6f4 (by the input formats)
//   tcgen05.KIND.blockS[.SCALE]   sm100's block-scaled MMA: tcgen05.mxf8f6f4.block32,
//                     tcgen05.mxf4.block32, tcgen05.mxf4nvf4.block32 (ue8m0 scales),
//                     tcgen05.mxf4nvf4.block16.ue8m0 and .ue4m3 (NVFP4)
//   mma.sync.mMnNkK.KIND.blockS[.SCALE]   sm120's block-scaled mma.sync, the same kinds
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/format.hpp>

namespace tcemu {

// Architecture presets: sm70 (V100), sm75 (T4), sm80 (A100/A30/A2), sm89 (Ada/L40S),
// sm90 (H100/H200), sm100 (B200), sm120 (RTX 50, RTX PRO 6000 Blackwell); idealised: exact-rn and
// exact-rz (the exact block sum of all K terms and c, rounded once to nearest or toward zero).
std::vector<std::string_view> preset_names();

// Every instruction name an architecture accepts, in the order above: "mma.sync", its
// mma.sync.mMnNkK shapes by increasing K, its wmma.mMnNkK shapes, "wgmma" (sm90), "tcgen05"
// (sm100). (wgmma.m64nNkK is accepted for every N the PTX ISA allows and is not listed.) These are
// the floating-point datapaths' names; the integer and fp64 shapes have their own tables
// (integer_presets.hpp; fp64_instruction_names in fp64_presets.hpp).
std::vector<std::string_view> instruction_names(std::string_view arch);

// The same, restricted to the instructions that take `input` with an `accumulator` accumulator
// (and b in `input_b`: kind::f8f6f4 takes any pair of e5m2, e4m3, e3m2, e2m3, e2m1).
std::vector<std::string_view> instruction_names(std::string_view arch, const FloatFormat& input,
                                                const FloatFormat& accumulator);
std::vector<std::string_view> instruction_names(std::string_view arch, const FloatFormat& input,
                                                const FloatFormat& input_b,
                                                const FloatFormat& accumulator);

// The mma.sync shape a WMMA shape compiles to on `arch` for `input` (e.g. "mma.sync.m16n8k16"
// for wmma.m16n16k16 fp16 on sm90), or "" where the architecture has no such WMMA.
std::string_view wmma_target(std::string_view arch, std::string_view wmma,
                             const FloatFormat& input);

// K of the named instruction as a kernel issues it: the k of its mMnNkK name (16 for
// wmma.m16n16k16 even where it compiles to k4 instructions), else the datapath's instruction_k.
// Throws as preset() does for a name the architecture lacks.
int instruction_shape_k(std::string_view arch, const FloatFormat& input,
                        const FloatFormat& accumulator, std::string_view instruction);

// Throws std::invalid_argument unless k is a multiple of instruction_shape_k() for a named shape
// (mMnNkK); the plain names (mma.sync, wgmma, tcgen05) accept any K. The message names the
// instruction, its K and the shapes the architecture has for the formats.
void check_shape_k(std::string_view arch, const FloatFormat& input, const FloatFormat& accumulator,
                   std::string_view instruction, std::size_t k);

// The datapath of `arch` running `instruction` on `input` with an `accumulator` (fp32 or fp16)
// accumulator. Throws std::invalid_argument naming the combination that the hardware lacks.
Datapath preset(std::string_view arch, const FloatFormat& input, const FloatFormat& accumulator,
                std::string_view instruction = "mma.sync");
// The same with b in `input_b` (a in `input`), for the instructions that take two formats.
Datapath preset(std::string_view arch, const FloatFormat& input, const FloatFormat& input_b,
                const FloatFormat& accumulator, std::string_view instruction = "mma.sync");

// Every (architecture, instruction, input, accumulator) combination the hardware has, with its
// datapath, in the order of preset_names() and instruction_names(): the rows of the one preset
// table in presets.cpp (mma.sync.mMnNkK shapes, wgmma, tcgen05, and the idealised presets' plain
// mma.sync), which preset(), preset_names() and instruction_names() also read. The alias names
// (mma.sync, wmma.*, wgmma.m64nNkK) resolve to these rows.
struct PresetEntry {
  std::string_view arch;
  std::string_view instruction;
  Datapath datapath;
  std::string_view source;  // lit, cap, ours, inferred, idealised (docs/presets.md)
};
std::vector<PresetEntry> all_presets();

// The common shape every architecture preset starts from: c aligned with the products in
// k-ordered blocks, RZ block results for fp32 and RN for fp16 at full precision, floor -126,
// IEEE zero signs, overflow to Inf, NaN 0x7FFFFFFF / 0x7FFF (the literature's defaults; sm90
// overrides the floor and the zero sign with what we measured).
Datapath block_datapath(const FloatFormat& input, const FloatFormat& accumulator, int instruction_k,
                        int block_terms, int fraction_bits);

// One line describing every field, for printing and for error messages.
std::string describe(const Datapath& datapath);

}  // namespace tcemu
