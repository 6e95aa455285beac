// dot2 and exblas for `tcemu gemm`: the accurate handle (accurate/handle.hpp) on the chosen
// backend (cpu64 or emulator: the host; gpu: the CUDA kernels), fp64 operands.
#include <tcemu/accurate/handle.hpp>

#include "gemm_schemes.hpp"

namespace tcemu::cli {
namespace {

GemmScheme accurate_entry(const std::string& name, InnerProduct method, const std::string& what) {
  GemmScheme s;
  s.name = name;
  s.summary = what;
  s.element = Real::fp64;
  s.options_help = "dot2 and exblas take no options of their own.\n";
  s.run = [method](const Arguments&, Backend& backend, const std::string&, GemmProblem& p) {
    accurate::Handle h(backend, method);
    h.dgemm('N', 'N', p.m, p.n, p.k, p.alpha, p.a.data(), std::max<std::int64_t>(1, p.m),
            p.b.data(), std::max<std::int64_t>(1, p.k), p.beta, p.c.data(),
            std::max<std::int64_t>(1, p.m));
    return std::vector<std::string>{};
  };
  return s;
}

}  // namespace

std::vector<GemmScheme> accurate_schemes() {
  return {accurate_entry("dot2", InnerProduct::dot2,
                         "Dot2 (Ogita, Rump, Oishi 2005): every element as if in twice binary64's "
                         "precision, in k order"),
          accurate_entry("exblas", InnerProduct::exact,
                         "ExBLAS-style: every element's exact sum rounded once (correctly "
                         "rounded for alpha = 1, beta = 0)")};
}

}  // namespace tcemu::cli
