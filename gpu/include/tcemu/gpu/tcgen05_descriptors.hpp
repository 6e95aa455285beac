// The descriptors of sm_100a's tcgen05.mma, built from the bit tables of the PTX ISA (9.7.16,
// "Tensor Core 5th Generation Family Instructions"): the 32-bit instruction descriptor
// ("Instruction descriptor", tables "Instruction descriptor format for .kind::f16, .kind::tf32,
// .kind::f8f6f4 and .kind::i8" and "... for .kind::mxf8f6f4, .kind::mxf4 and .kind::mxf4nvf4")
// and the 64-bit shared-memory matrix descriptor ("Matrix Descriptors", "Shared memory
// descriptor"). Plain C++20 and constexpr, so that the host tests check every field without a GPU;
// the probe runner (gpu/src/probe/tcgen05_runner.cu) passes the instruction descriptor to its
// kernel and builds the matrix descriptors on the device with the same function.
#pragma once

#include <cstdint>
#include <stdexcept>

#include <tcemu/emulator/format.hpp>

namespace tcemu::gpu::tcgen05 {

// The .kind qualifier of tcgen05.mma (the integer kind::i8 is imma's, not here).
enum class Kind { f16, tf32, f8f6f4, mxf8f6f4, mxf4, mxf4nvf4 };

constexpr bool block_scaled(Kind kind) {
  return kind == Kind::mxf8f6f4 || kind == Kind::mxf4 || kind == Kind::mxf4nvf4;
}

// K of one instruction: 32 bytes of inputs per row of A (kind::f16 16, kind::tf32 8,
// kind::f8f6f4 and mxf8f6f4 32 elements in 8-bit containers, mxf4 and mxf4nvf4 64 packed e2m1).
constexpr int instruction_k(Kind kind) {
  switch (kind) {
    case Kind::f16:
      return 16;
    case Kind::tf32:
      return 8;
    case Kind::f8f6f4:
    case Kind::mxf8f6f4:
      return 32;
    default:
      return 64;
  }
}

// The 3-bit atype / btype code of `format` under `kind` (the descriptor tables' "Matrix A/B type"
// rows): kind::f16: f16 0, bf16 1; kind::tf32: tf32 2; kind::f8f6f4 and mxf8f6f4: e4m3 0, e5m2 1,
// e2m3 3, e3m2 4, e2m1 5; kind::mxf4 and mxf4nvf4: e2m1 1. Throws std::invalid_argument for a
// format the kind does not take.
constexpr std::uint32_t format_code(Kind kind, const FloatFormat& format) {
  namespace f = formats;
  switch (kind) {
    case Kind::f16:
      if (format == f::fp16) return 0;
      if (format == f::bf16) return 1;
      break;
    case Kind::tf32:
      if (format == f::tf32) return 2;
      break;
    case Kind::f8f6f4:
    case Kind::mxf8f6f4:
      if (format == f::e4m3) return 0;
      if (format == f::e5m2) return 1;
      if (format == f::e2m3) return 3;
      if (format == f::e3m2) return 4;
      if (format == f::e2m1) return 5;
      break;
    case Kind::mxf4:
    case Kind::mxf4nvf4:
      if (format == f::e2m1) return 1;
      break;
  }
  throw std::invalid_argument("tcgen05.mma: the kind takes no such input format");
}

// The fields a probe sets; the others are zero: dense (bit 2), no saturation (bit 3), A and B
// not negated (bits 13, 14), both K-major (bits 15, 16: "transpose A/B" 0), no maximum shift
// (bits 30-31, the weight-stationary form only), and for the block-scaled kinds K = 32 / 64
// (bit 31: 0, the dense K of the kind).
struct InstructionFields {
  Kind kind;
  FloatFormat a;
  FloatFormat b;
  FloatFormat d;         // fp32, or fp16 for kind::f16 and kind::f8f6f4
  int m;                 // 64 or 128 (cta_group::1; the block-scaled kinds 128)
  int n;                 // 8 to 256 in steps of 8
  FloatFormat scale{};   // block-scaled kinds: ue8m0 or ue4m3 (both A's and B's)
  int a_scale_byte = 0;  // block-scaled kinds: the byte of A's scale column ("SF ID", 0-3)
  int b_scale_byte = 0;
};

// The instruction descriptor. Bit positions, unscaled kinds: [4,6) D type (f16 0, f32 1),
// [7,10) A type, [10,13) B type, [17,23) N >> 3, [24,29) M >> 4. Block-scaled kinds: [4,6) B's
// scale byte, [7,10) A type, [10,13) B type, [17,23) N >> 3, [23] scale type (ue4m3 0, ue8m0 1),
// [24,29) M >> 4, [29,31) A's scale byte. Throws std::invalid_argument for a field the ISA does
// not allow for a dense cta_group::1 instruction (the shapes of "Matrix Shape", Table 39: M = 64
// or 128, N = 8 to 256 in steps of 8; the block-scaled kinds M = 128).
constexpr std::uint32_t instruction_descriptor(const InstructionFields& f) {
  if (f.m != 128 && (f.m != 64 || block_scaled(f.kind))) {
    throw std::invalid_argument("tcgen05.mma: M must be 128 (or 64 for an unscaled kind)");
  }
  if (f.n < 8 || f.n > 256 || f.n % 8 != 0) {
    throw std::invalid_argument("tcgen05.mma: N must be 8 to 256 in steps of 8");
  }
  std::uint32_t bits = format_code(f.kind, f.a) << 7 | format_code(f.kind, f.b) << 10 |
                       static_cast<std::uint32_t>(f.n >> 3) << 17 |
                       static_cast<std::uint32_t>(f.m >> 4) << 24;
  if (!block_scaled(f.kind)) {
    const bool d16 = f.d == formats::fp16;
    if (!(f.d == formats::fp32) && !(d16 && (f.kind == Kind::f16 || f.kind == Kind::f8f6f4))) {
      throw std::invalid_argument("tcgen05.mma: the kind takes no such D type");
    }
    return bits | (d16 ? 0u : 1u) << 4;
  }
  if (!(f.d == formats::fp32)) throw std::invalid_argument("tcgen05.mma: block scaling gives f32");
  const bool ue8m0 = f.scale == formats::ue8m0;
  if (!ue8m0 && !(f.scale == formats::ue4m3 && f.kind == Kind::mxf4nvf4)) {
    throw std::invalid_argument("tcgen05.mma: the kind takes no such scale type");
  }
  if (f.a_scale_byte < 0 || f.a_scale_byte > 3 || f.b_scale_byte < 0 || f.b_scale_byte > 3) {
    throw std::invalid_argument("tcgen05.mma: a scale byte is 0 to 3");
  }
  return bits | static_cast<std::uint32_t>(f.b_scale_byte) << 4 | (ue8m0 ? 1u : 0u) << 23 |
         static_cast<std::uint32_t>(f.a_scale_byte) << 29;
}

// The shared-memory matrix descriptor of a matrix without swizzling: [0,14) start address >> 4,
// [16,30) leading-dimension byte offset >> 4, [32,46) stride-dimension byte offset >> 4,
// [46,49) the fixed constant 0b001 (tcgen05's descriptor version; wgmma's descriptor has 0
// there), [49,52) base offset 0, [52] absolute leading-offset mode 0, [61,64) swizzle mode 0
// (none). Addresses and offsets are shared-window byte addresses, 16-byte aligned, below 2^18.
constexpr std::uint64_t shared_memory_descriptor(std::uint32_t address,
                                                 std::uint32_t leading_byte_offset,
                                                 std::uint32_t stride_byte_offset) {
  for (std::uint32_t x : {address, leading_byte_offset, stride_byte_offset}) {
    if (x % 16 != 0 || x >= (1u << 18)) {
      throw std::invalid_argument("tcgen05 matrix descriptor: 16-byte aligned, below 2^18");
    }
  }
  return std::uint64_t{address >> 4} | std::uint64_t{leading_byte_offset >> 4} << 16 |
         std::uint64_t{stride_byte_offset >> 4} << 32 | std::uint64_t{1} << 46;
}

// Fields at the positions of the tables above, written out bit by bit:
// kind::f16 fp16 x fp16 -> fp32, M = 128, N = 16: D f32 1 << 4, N 2 << 17, M 8 << 24.
static_assert(instruction_descriptor({.kind = Kind::f16,
                                      .a = formats::fp16,
                                      .b = formats::fp16,
                                      .d = formats::fp32,
                                      .m = 128,
                                      .n = 16}) == 0x08040010u);
// kind::f16 bf16 x bf16 -> fp32, M = 64, N = 8: A and B 1 << 7 and 1 << 10, N 1 << 17, M 4 << 24.
static_assert(instruction_descriptor({.kind = Kind::f16,
                                      .a = formats::bf16,
                                      .b = formats::bf16,
                                      .d = formats::fp32,
                                      .m = 64,
                                      .n = 8}) == 0x04020490u);
// kind::f8f6f4 e4m3 x e2m1 -> fp16: A 0, B 5 << 10, D f16 0.
static_assert(instruction_descriptor({.kind = Kind::f8f6f4,
                                      .a = formats::e4m3,
                                      .b = formats::e2m1,
                                      .d = formats::fp16,
                                      .m = 128,
                                      .n = 16}) == 0x08041400u);
// kind::mxf4nvf4 with ue4m3 scales (scale type bit 23: 0): A and B e2m1 = 1.
static_assert(instruction_descriptor({.kind = Kind::mxf4nvf4,
                                      .a = formats::e2m1,
                                      .b = formats::e2m1,
                                      .d = formats::fp32,
                                      .m = 128,
                                      .n = 16,
                                      .scale = formats::ue4m3}) == 0x08040480u);
// kind::mxf8f6f4 e2m1 x e3m2, ue8m0 (1 << 23), A's scale byte 2 (2 << 29), B's 1 (1 << 4).
static_assert(instruction_descriptor({.kind = Kind::mxf8f6f4,
                                      .a = formats::e2m1,
                                      .b = formats::e3m2,
                                      .d = formats::fp32,
                                      .m = 128,
                                      .n = 16,
                                      .scale = formats::ue8m0,
                                      .a_scale_byte = 2,
                                      .b_scale_byte = 1}) == 0x48841290u);
// Start 0x400 (>> 4: 0x40), LBO 128 (8 << 16), SBO 256 (16 << 32), version 1 << 46.
static_assert(shared_memory_descriptor(0x400, 128, 256) == 0x0000401000080040ull);

// A Tensor Memory address: lane in bits 31-16, column in bits 15-0 ("Tensor Memory Addressing").
constexpr std::uint32_t tmem_address(std::uint32_t base, int lane, int column) {
  return base + (static_cast<std::uint32_t>(lane) << 16) + static_cast<std::uint32_t>(column);
}

}  // namespace tcemu::gpu::tcgen05
