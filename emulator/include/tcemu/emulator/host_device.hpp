// TCEMU_HOST_DEVICE marks the few exact-arithmetic routines (decode, round_pack, convert) that the
// GPU backend's kernels run as well, so that one implementation serves both backends (CUTLASS's
// CUTLASS_HOST_DEVICE, keyed on the compiler). Plain C++ compilers see nothing.
#pragma once

#if defined(__CUDACC__)
#define TCEMU_HOST_DEVICE __host__ __device__
#else
#define TCEMU_HOST_DEVICE
#endif

// TCEMU_UNROLL before a loop with a compile-time trip count: unrolled in device code, so that an
// array it indexes stays in registers (CUTLASS_PRAGMA_UNROLL); nothing for host compilers.
#if defined(__CUDA_ARCH__)
#define TCEMU_UNROLL _Pragma("unroll")
#else
#define TCEMU_UNROLL
#endif
