// Fragment layouts and the mma.sync instructions, shared by the one-case runner and the GEMM
// kernel. The layouts are those of the PTX ISA ("Matrix fragments for mma.m16n8k16 / m16n8k8 /
// m16n8k32"): in a warp, lane = 4 * group + tig, and every element of A, B, C and D has one
// owning lane and register slot.
#pragma once

#include <cstdint>
#include <type_traits>

#include <tcemu/emulator/format.hpp>

namespace tcemu::gpu::detail {

struct Coordinate {
  int row;
  int col;
};

// Shapes: K, elements per 32-bit register, A/B/C elements per lane, and the element owned by a
// lane's e-th slot.
struct Shape16x8x16 {  // fp16, bf16 (2 per register)
  static constexpr int k = 16, per_register = 2, a_elements = 8, b_elements = 4;
  __device__ static Coordinate a(int group, int tig, int e) {
    return {group + 8 * ((e >> 1) & 1), tig * 2 + (e & 1) + 8 * (e >> 2)};
  }
  __device__ static Coordinate b(int group, int tig, int e) {
    return {tig * 2 + (e & 1) + 8 * (e >> 1), group};
  }
};
struct Shape16x8x8 {  // tf32 (1 per register)
  static constexpr int k = 8, per_register = 1, a_elements = 4, b_elements = 2;
  __device__ static Coordinate a(int group, int tig, int e) {
    return {group + 8 * (e & 1), tig + 4 * (e >> 1)};
  }
  __device__ static Coordinate b(int group, int tig, int e) { return {tig + 4 * e, group}; }
};
struct Shape16x8x32 {  // e4m3, e5m2 (4 per register)
  static constexpr int k = 32, per_register = 4, a_elements = 16, b_elements = 8;
  __device__ static Coordinate a(int group, int tig, int e) {
    return {group + 8 * ((e >> 2) & 1), tig * 4 + (e & 3) + 16 * (e >> 3)};
  }
  __device__ static Coordinate b(int group, int tig, int e) {
    return {tig * 4 + (e & 3) + 16 * (e >> 2), group};
  }
};
// C and D (16 x 8) for every shape: slot e of a lane is (group + 8 * (e >> 1), 2 * tig + (e & 1)).

enum class Instruction {
  f16_f32,
  f16_f16,
  bf16_f32,
  tf32_f32,
  e4m3_f32,
  e4m3_f16,
  e5m2_f32,
  e5m2_f16
};

template <Instruction I>
__device__ void mma(const unsigned (&a)[4], const unsigned (&b)[2], const unsigned (&c)[4],
                    unsigned (&d)[4]) {
  if constexpr (I == Instruction::f16_f32) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%10,%11,%12,%13};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]),
          "r"(c[2]), "r"(c[3]));
  } else if constexpr (I == Instruction::f16_f16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, "
        "{%8,%9};\n"
        : "=r"(d[0]), "=r"(d[1])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]));
  } else if constexpr (I == Instruction::bf16_f32) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%10,%11,%12,%13};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]),
          "r"(c[2]), "r"(c[3]));
  } else if constexpr (I == Instruction::tf32_f32) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%10,%11,%12,%13};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]),
          "r"(c[2]), "r"(c[3]));
  } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    if constexpr (I == Instruction::e4m3_f32) {
      asm volatile(
          "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
          "{%8,%9}, {%10,%11,%12,%13};\n"
          : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]),
            "r"(c[2]), "r"(c[3]));
    } else if constexpr (I == Instruction::e5m2_f32) {
      asm volatile(
          "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
          "{%8,%9}, {%10,%11,%12,%13};\n"
          : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]),
            "r"(c[2]), "r"(c[3]));
    } else if constexpr (I == Instruction::e4m3_f16) {
      asm volatile(
          "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, "
          "{%8,%9};\n"
          : "=r"(d[0]), "=r"(d[1])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]));
    } else {
      asm volatile(
          "mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, "
          "{%8,%9};\n"
          : "=r"(d[0]), "=r"(d[1])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]));
    }
#else
    __trap();  // the host refuses fp8 below sm_89 before launching
#endif
  }
}

// Bytes per input element, and the instruction's K: every shape reads 32 bytes of k per row.
__host__ __device__ constexpr int input_bytes(Instruction i) {
  return i == Instruction::tf32_f32                                                             ? 4
         : i == Instruction::f16_f32 || i == Instruction::f16_f16 || i == Instruction::bf16_f32 ? 2
                                                                                                : 1;
}
__host__ __device__ constexpr int instruction_k(Instruction i) {
  return 32 / input_bytes(i);
}

__host__ __device__ constexpr bool fp16_accumulator(Instruction i) {
  return i == Instruction::f16_f16 || i == Instruction::e4m3_f16 || i == Instruction::e5m2_f16;
}

}  // namespace tcemu::gpu::detail

namespace tcemu::gpu::detail {

// f(std::integral_constant<Instruction, I>{}) for the run-time `instruction`: the one place that
// turns it into a template argument.
template <class F>
decltype(auto) with_instruction(Instruction instruction, F&& f) {
  switch (instruction) {
    case Instruction::f16_f32:
      return f(std::integral_constant<Instruction, Instruction::f16_f32>{});
    case Instruction::f16_f16:
      return f(std::integral_constant<Instruction, Instruction::f16_f16>{});
    case Instruction::bf16_f32:
      return f(std::integral_constant<Instruction, Instruction::bf16_f32>{});
    case Instruction::tf32_f32:
      return f(std::integral_constant<Instruction, Instruction::tf32_f32>{});
    case Instruction::e4m3_f32:
      return f(std::integral_constant<Instruction, Instruction::e4m3_f32>{});
    case Instruction::e4m3_f16:
      return f(std::integral_constant<Instruction, Instruction::e4m3_f16>{});
    case Instruction::e5m2_f32:
      return f(std::integral_constant<Instruction, Instruction::e5m2_f32>{});
    default:
      return f(std::integral_constant<Instruction, Instruction::e5m2_f16>{});
  }
}

// The mma.sync instruction for a format pair that check_mma_sync (mma_runner.hpp) accepted.
inline Instruction mma_sync_instruction(const FloatFormat& input, const FloatFormat& accumulator) {
  const bool fp32 = accumulator == formats::fp32;
  if (input == formats::fp16) return fp32 ? Instruction::f16_f32 : Instruction::f16_f16;
  if (input == formats::bf16) return Instruction::bf16_f32;
  if (input == formats::tf32) return Instruction::tf32_f32;
  if (input == formats::e4m3) return fp32 ? Instruction::e4m3_f32 : Instruction::e4m3_f16;
  return fp32 ? Instruction::e5m2_f32 : Instruction::e5m2_f16;
}

}  // namespace tcemu::gpu::detail
