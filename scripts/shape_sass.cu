// One kernel per MMA instruction shape of the floating-point formats, for scripts/shape_sass.sh:
// compiled for each architecture, `cuobjdump -sass` shows which SASS instruction(s) each PTX
// mma.sync shape and WMMA fragment shape becomes (docs/presets.md records the result).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#define MMA4(NAME, PTX)                                                                          \
  extern "C" __global__ void NAME(unsigned* p) {                                                 \
    unsigned d[4];                                                                               \
    asm volatile(PTX                                                                             \
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])                                \
                 : "r"(p[0]), "r"(p[1]), "r"(p[2]), "r"(p[3]), "r"(p[4]), "r"(p[5]), "r"(p[6])); \
    p[threadIdx.x] = d[0] + d[1] + d[2] + d[3];                                                  \
  }
// Operands %4-%7: A registers, %8-%9: B, %10: C in every accumulator register.
MMA4(mma_m8n8k4_f32_f16,
     "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%0,%1,%2,%3,%0,%1,%2,%3}, {%4,%5}, {%8,%9}, "
     "{%10,%10,%10,%10,%10,%10,%10,%10};")
MMA4(mma_m8n8k4_f16_f16,
     "mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16 {%0,%1,%2,%3}, {%4,%5}, {%8,%9}, "
     "{%10,%10,%10,%10};")
MMA4(mma_m16n8k8_f16_f16,
     "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0,%1}, {%4,%5}, {%8}, {%10,%10};")
MMA4(mma_m16n8k8_f32_f16,
     "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%8}, "
     "{%10,%10,%10,%10};")
#if __CUDA_ARCH__ >= 800
MMA4(mma_m16n8k16_f32_f16,
     "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
     "{%10,%10,%10,%10};")
MMA4(
    mma_m16n8k16_f16_f16,
    "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10};")
MMA4(mma_m16n8k8_f32_bf16,
     "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5}, {%8}, "
     "{%10,%10,%10,%10};")
MMA4(mma_m16n8k16_f32_bf16,
     "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
     "{%10,%10,%10,%10};")
MMA4(mma_m16n8k4_f32_tf32,
     "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%8}, "
     "{%10,%10,%10,%10};")
MMA4(mma_m16n8k8_f32_tf32,
     "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
     "{%10,%10,%10,%10};")
#endif
#if __CUDA_ARCH__ >= 890
MMA4(mma_m16n8k16_f32_e4m3,
     "mma.sync.aligned.m16n8k16.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5}, {%8}, "
     "{%10,%10,%10,%10};")
MMA4(mma_m16n8k16_f16_e4m3,
     "mma.sync.aligned.m16n8k16.row.col.f16.e4m3.e4m3.f16 {%0,%1}, {%4,%5}, {%8}, {%10,%10};")
MMA4(mma_m16n8k32_f32_e4m3,
     "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
     "{%10,%10,%10,%10};")
MMA4(mma_m16n8k32_f16_e4m3,
     "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%0,%1}, {%4,%5,%6,%7}, {%8,%9}, "
     "{%10,%10};")
MMA4(mma_m16n8k32_f32_e5m2,
     "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
     "{%10,%10,%10,%10};")
#endif

namespace w = nvcuda::wmma;
template <class T, int M, int N, int K, class Acc, class Load = T>
__device__ void wmma_one(const Load* a, const Load* b, Acc* c) {
  w::fragment<w::matrix_a, M, N, K, T, w::row_major> fa;
  w::fragment<w::matrix_b, M, N, K, T, w::col_major> fb;
  w::fragment<w::accumulator, M, N, K, Acc> fc;
  w::load_matrix_sync(fa, a, K);
  w::load_matrix_sync(fb, b, K);
  w::load_matrix_sync(fc, c, N, w::mem_row_major);
  w::mma_sync(fc, fa, fb, fc);
  w::store_matrix_sync(c, fc, N, w::mem_row_major);
}
#define WMMA(NAME, T, M, N, K, ACC)                                 \
  extern "C" __global__ void NAME(const T* a, const T* b, ACC* c) { \
    wmma_one<T, M, N, K, ACC>(a, b, c);                             \
  }
WMMA(wmma_m16n16k16_f32_f16, __half, 16, 16, 16, float)
WMMA(wmma_m16n16k16_f16_f16, __half, 16, 16, 16, __half)
WMMA(wmma_m32n8k16_f32_f16, __half, 32, 8, 16, float)
WMMA(wmma_m8n32k16_f32_f16, __half, 8, 32, 16, float)
#if __CUDA_ARCH__ >= 800
WMMA(wmma_m16n16k16_f32_bf16, __nv_bfloat16, 16, 16, 16, float)
WMMA(wmma_m32n8k16_f32_bf16, __nv_bfloat16, 32, 8, 16, float)
WMMA(wmma_m8n32k16_f32_bf16, __nv_bfloat16, 8, 32, 16, float)
extern "C" __global__ void wmma_m16n16k8_f32_tf32(const float* a, const float* b, float* c) {
  wmma_one<w::precision::tf32, 16, 16, 8, float, float>(a, b, c);
}
#endif
