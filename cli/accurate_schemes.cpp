// dot2 and exblas for `tcemu gemm`: the accurate handle (accurate/handle.hpp) on the chosen
// backend (cpu64 or emulator: the host; gpu: the CUDA kernels), on fp64 operands (dgemm) and, as
// dot2-fp32 and exblas-fp32, on fp32 operands (sgemm: the same methods in binary32).
#include <tcemu/accurate/handle.hpp>

#include "gemm_schemes.hpp"

namespace tcemu::cli {
namespace {

GemmScheme accurate_entry(const std::string& name, InnerProduct method, Real element,
                          const std::string& what) {
  GemmScheme s;
  s.name = name;
  s.summary = what;
  s.element = element;
  s.options_help = "dot2 and exblas take no options of their own.\n";
  s.run = [method, element](const session::Arguments&, Backend& backend,
                            const session::BackendChoice&, GemmProblem& p, const ProgressHook&) {
    accurate::Handle h(backend, method);
    const std::int64_t lda = std::max<std::int64_t>(1, p.m), ldb = std::max<std::int64_t>(1, p.k);
    if (element == Real::fp64) {
      h.dgemm('N', 'N', p.m, p.n, p.k, p.alpha, p.a.data(), lda, p.b.data(), ldb, p.beta,
              p.c.data(), lda);
    } else {
      std::vector<float> a(p.a.begin(), p.a.end()), b(p.b.begin(), p.b.end()),
          c(p.c.begin(), p.c.end());
      h.sgemm('N', 'N', p.m, p.n, p.k, static_cast<float>(p.alpha), a.data(), lda, b.data(), ldb,
              static_cast<float>(p.beta), c.data(), lda);
      p.c.assign(c.begin(), c.end());
    }
    return std::vector<std::string>{};
  };
  return s;
}

}  // namespace

std::vector<GemmScheme> accurate_schemes() {
  return {accurate_entry("dot2", InnerProduct::dot2, Real::fp64,
                         "Dot2 (Ogita, Rump, Oishi 2005): every element as if in twice binary64's "
                         "precision, in k order"),
          accurate_entry("exblas", InnerProduct::exact, Real::fp64,
                         "ExBLAS-style: every element's exact sum rounded once (correctly "
                         "rounded for alpha = 1, beta = 0)"),
          accurate_entry("dot2-fp32", InnerProduct::dot2, Real::fp32,
                         "Dot2 on fp32 operands: as if in twice binary32's precision"),
          accurate_entry("exblas-fp32", InnerProduct::exact, Real::fp32,
                         "ExBLAS-style on fp32 operands: the exact sum rounded once to binary32")};
}

}  // namespace tcemu::cli
