// The accumulator operands of a wgmma.mma_async in inline PTX (gemm/wgmma_gemm.cu, probe/
// wgmma_runner.cu): TCEMU_WGMMA_ACC64(C, i) lists d[i..i+63] as read-write operands of constraint C
// ("+f" or "+r"), and TCEMU_WGMMA_REGS<n> the placeholders %0..%<n-1> of the first n operands,
// the brace list of an m64nN instruction's n = N / 2 fp32 accumulators (n = N / 4 registers of
// two fp16 accumulators each).
#pragma once

#define TCEMU_WGMMA_ACC4(C, i) C(d[i]), C(d[i + 1]), C(d[i + 2]), C(d[i + 3])
#define TCEMU_WGMMA_ACC8(C, i) \
  C(d[i]), C(d[i + 1]), C(d[i + 2]), C(d[i + 3]), C(d[i + 4]), C(d[i + 5]), C(d[i + 6]), C(d[i + 7])
#define TCEMU_WGMMA_ACC16(C, i) TCEMU_WGMMA_ACC8(C, i), TCEMU_WGMMA_ACC8(C, i + 8)
#define TCEMU_WGMMA_ACC32(C, i)                                                    \
  TCEMU_WGMMA_ACC8(C, i), TCEMU_WGMMA_ACC8(C, i + 8), TCEMU_WGMMA_ACC8(C, i + 16), \
      TCEMU_WGMMA_ACC8(C, i + 24)
#define TCEMU_WGMMA_ACC64(C, i) TCEMU_WGMMA_ACC32(C, i), TCEMU_WGMMA_ACC32(C, i + 32)

#define TCEMU_WGMMA_REGS4 "%0, %1, %2, %3"
#define TCEMU_WGMMA_REGS8 "%0, %1, %2, %3, %4, %5, %6, %7"
#define TCEMU_WGMMA_REGS16 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define TCEMU_WGMMA_REGS32                                                           \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, " \
  "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define TCEMU_WGMMA_REGS64                                                           \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, " \
  "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, " \
  "%34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, " \
  "%50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define TCEMU_WGMMA_REGS128                                                          \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, " \
  "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, " \
  "%34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, " \
  "%50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, " \
  "%66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, " \
  "%82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, " \
  "%98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, "     \
  "%111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, "   \
  "%124, %125, %126, %127"
