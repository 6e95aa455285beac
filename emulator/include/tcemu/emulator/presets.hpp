// Named datapaths: one preset per GPU generation, MMA instruction path, input format and
// accumulator format, plus the idealised datapaths of Ootomo and Yokota. Where each value comes
// from is written next to it in presets.cpp and in docs/presets.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/format.hpp>

namespace tcemu {

// Architecture presets: sm70 (V100), sm75 (T4), sm80 (A100/A30/A2), sm89 (Ada/L40S),
// sm90 (H100/H200), sm100 (B200); idealised: exact-rn and exact-rz (the exact block sum of
// all K terms and c, rounded once to nearest or toward zero).
std::vector<std::string_view> preset_names();

// Instruction paths of an architecture: "mma.sync" (the default; WMMA compiles to it) for every
// generation, "wgmma" on sm90, "tcgen05" on sm100.
std::vector<std::string_view> instruction_names(std::string_view arch);

// The datapath of `arch` running `instruction` on `input` with an `accumulator` (fp32 or fp16)
// accumulator. Throws std::invalid_argument naming the combination that the hardware lacks.
Datapath preset(std::string_view arch, const FloatFormat& input, const FloatFormat& accumulator,
                std::string_view instruction = "mma.sync");

// Every (architecture, instruction, input, accumulator) combination the hardware has, with its
// datapath, in the order of preset_names() and instruction_names(): the rows of the one preset
// table in presets.cpp, which preset(), preset_names() and instruction_names() also read.
struct PresetEntry {
  std::string_view arch;
  std::string_view instruction;
  Datapath datapath;
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
