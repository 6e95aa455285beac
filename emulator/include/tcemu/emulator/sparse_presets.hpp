// Sparse MMA presets (PTX mma.sp.mMnNkK, 2:4 structured sparsity of A): a sparse instruction of K
// computes the K/2 kept products; its datapath is a dense datapath over those K/2 terms in the
// order of their positions, which runs on the dense case of the kept products (tcemu::cases'
// sparse_case.hpp: dense_case, sparse_mma_element). docs/presets.md gives the measurement behind
// each row.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/format.hpp>
#include <tcemu/emulator/presets.hpp>

namespace tcemu {

// Every (architecture, mma.sp shape, input, accumulator) row; `datapath` is over the K/2 kept
// products (instruction_k = K/2).
std::vector<PresetEntry> all_sparse_presets();

// The mma.sp shapes of an architecture, by increasing K (empty where it has none).
std::vector<std::string_view> sparse_instruction_names(std::string_view arch);

// K of a sparse shape's name (16 for mma.sp.m16n8k16): the dense K of A's row and B's column.
// Throws std::invalid_argument for a name that is no mma.sp.mMnNkK.
int sparse_instruction_k(std::string_view instruction);

// The datapath of the kept products, or std::invalid_argument naming what the architecture has.
Datapath sparse_preset(std::string_view arch, const FloatFormat& input,
                       const FloatFormat& accumulator, std::string_view instruction);

}  // namespace tcemu
