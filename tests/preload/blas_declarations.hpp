// The two BLAS routines the test programs call, declared as the Fortran BLAS and CBLAS export
// them (the programs link the system BLAS, which libtcemu_blas_preload.so interposes).
#pragma once

#include <cstddef>

extern "C" {
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc, std::size_t transa_length,
            std::size_t transb_length);
// cblas.h's enumerations as int: order 101 row-major, 102 column-major; 111 N, 112 T, 113 C.
void cblas_dgemm(int order, int transa, int transb, int m, int n, int k, double alpha,
                 const double* a, int lda, const double* b, int ldb, double beta, double* c,
                 int ldc);
}
