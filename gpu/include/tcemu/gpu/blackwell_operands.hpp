// How the Blackwell probe runners lay out one row of A (one column of B): the 32 bytes of k that
// one instruction reads, built on the host so that a test checks them without a GPU. Element e of
// the row sits in 16-byte chunk e / per_chunk, at bit (e % per_chunk) * bits + shift of the chunk,
// the lowest k in the lowest bits (the PTX ISA's "elements low to high" of every fragment):
//
//   sm_120a mma.sync .kind::f8f6f4 and .kind::mxf8f6f4 (m16n8k32): one element per 8-bit
//     container; e2m1 in the central 4 bits (bits 2-5), e3m2 / e2m3 in the low 6 bits (PTX ISA
//     9.7.14.5.14 "mma", the paragraph on .kind::f8f6f4 containers).
//   sm_120a mma.sync .kind::mxf4 / .kind::mxf4nvf4 (m16n8k64): e2m1 packed two a byte, no padding
//     (same paragraph).
//   sm_100a tcgen05.mma in shared memory: fp16 / bf16 two bytes, tf32 four; .kind::f8f6f4 and
//     .kind::mxf8f6f4 read 16 elements per 16-byte chunk: e4m3 / e5m2 a byte each, 16 FP6 packed
//     in the chunk's first 12 bytes (then a 4-byte gap), 16 FP4 in its first 8 bytes (then an
//     8-byte gap): the "unpacked" shared-memory form that TMA's
//     CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B and 16U4_ALIGN16B write (cuda.h: "There are 4 [8] byte
//     gaps between every 12 [8] byte chunk of packed values"), which CUTLASS's *_unpacksmem_t types
//     feed to kind::f8f6f4; .kind::mxf4 / .kind::mxf4nvf4 read e2m1 packed two a byte.
//
// In the mma.sync fragments ("Matrix fragments for mma.m16n8k32" with .kind::f8f6f4 and "for
// mma.m16n8k64"), row 0 of A and column 0 of B belong to lanes 0-3 (groupID 0): lane t holds
// bytes 4t to 4t + 3 of the row in a0 (b0) and bytes 16 + 4t to 16 + 4t + 3 in a2 (b1), for both
// shapes (4 bytes are 4 k of m16n8k32, 8 k of m16n8k64); so the row as 8 little-endian words is
// what the kernels hand out: word t and word 4 + t to lane t.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <stdexcept>

#include <tcemu/emulator/format.hpp>

namespace tcemu::gpu {

struct RowPacking {
  int bits;       // bits of one element's slot
  int per_chunk;  // elements in one 16-byte chunk
  int shift;      // the element's lowest bit within its slot
};

// kind::f8f6f4 / mxf8f6f4 of mma.sync (8-bit containers) or mxf4 / mxf4nvf4 (packed e2m1).
constexpr RowPacking sm120_packing(const FloatFormat& format, bool packed_e2m1) {
  if (packed_e2m1) return {4, 32, 0};
  return {8, 16, format == formats::e2m1 ? 2 : 0};
}

// tcgen05.mma's shared-memory rows (the block above), by format; packed_e2m1 for mxf4 /
// mxf4nvf4.
constexpr RowPacking tcgen05_packing(const FloatFormat& format, bool packed_e2m1) {
  if (packed_e2m1) return {4, 32, 0};
  if (format == formats::tf32) return {32, 4, 0};
  if (format == formats::fp16 || format == formats::bf16) return {16, 8, 0};
  if (format == formats::e2m1) return {4, 16, 0};
  if (format == formats::e3m2 || format == formats::e2m3) return {6, 16, 0};
  return {8, 16, 0};
}

// The 32-byte row (8 little-endian words) of `elements` (bit patterns in the low bits, at most
// 2 * per_chunk of them), each masked to `value_bits` (the format's container bits) before it is
// placed. Throws std::invalid_argument when they do not fit in 32 bytes.
constexpr std::array<std::uint32_t, 8> pack_row(const RowPacking& p, int value_bits,
                                                std::span<const std::uint32_t> elements) {
  if (elements.size() > static_cast<std::size_t>(2 * p.per_chunk)) {
    throw std::invalid_argument("pack_row: more elements than one 32-byte row holds");
  }
  std::array<std::uint32_t, 8> row{};
  const std::uint64_t mask = (std::uint64_t{1} << value_bits) - 1;
  for (std::size_t e = 0; e < elements.size(); ++e) {
    const int chunk = static_cast<int>(e) / p.per_chunk;
    const int bit = 128 * chunk + (static_cast<int>(e) % p.per_chunk) * p.bits + p.shift;
    // A slot of at most 32 bits starting at `bit` spans words bit / 32 and the next one.
    const std::uint64_t placed = (elements[e] & mask) << (bit % 32);
    row[static_cast<std::size_t>(bit / 32)] |= static_cast<std::uint32_t>(placed);
    if ((placed >> 32) != 0) {
      row[static_cast<std::size_t>(bit / 32 + 1)] |= static_cast<std::uint32_t>(placed >> 32);
    }
  }
  return row;
}

// The scales of one row of A (column of B) as one 32-bit word, scale j in byte j: the word every
// lane passes as scale-a-data / scale-b-data of mma.sync (selectors byte-id 0, thread-id 0: byte
// 0 for .scale_vec::1X, bytes 0-1 for 2X, 0-3 for 4X, "Block Scaling for mma.sync") and every
// Tensor Memory column of tcgen05.mma's scale matrices holds (scale byte 0 of the instruction
// descriptor). At most 4 scales.
constexpr std::uint32_t scale_word(std::span<const std::uint32_t> scales) {
  if (scales.size() > 4) throw std::invalid_argument("scale_word: at most 4 scales");
  std::uint32_t word = 0;
  for (std::size_t j = 0; j < scales.size(); ++j) word |= (scales[j] & 0xFFu) << (8 * j);
  return word;
}

}  // namespace tcemu::gpu
