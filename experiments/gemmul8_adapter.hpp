// GEMMul8 (Ozaki, Uchino, Imamura: Ozaki scheme II on int8 tensor cores; github RIKEN-RCCS/GEMMul8)
// for int8_ozaki_table, when the build is given a GEMMul8 checkout built beside the project
// (cmake -DTCEMU_GEMMUL8_DIR=DIR, DIR/lib/libgemmul8.a and DIR/include/gemmul8.hpp; its code is
// not part of this repository). GEMMul8's header declares its GEMM for nvcc only, so the call
// sits in gemmul8_adapter.cu.
#pragma once

#include <cublas_v2.h>

#include <cstddef>
#include <cstdint>

namespace tcemu::experiments {

// Device bytes of GEMMul8's workspace for an n x n x n product with `moduli` moduli.
std::size_t gemmul8_workspace_bytes(std::int64_t n, int moduli);

// c = a b for n x n fp64 column-major device matrices by GEMMul8's INT8 backend with `moduli`
// moduli (2 to 20), its fast mode or its accurate mode.
void gemmul8_dgemm(cublasHandle_t handle, std::int64_t n, const double* a, const double* b,
                   double* c, int moduli, bool fast, void* workspace);

}  // namespace tcemu::experiments
