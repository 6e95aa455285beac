// Backend::inner_products on the host: the element functions of dot2.hpp, exact_dot.hpp and
// blas_epilogue.hpp (the ones the GPU kernels run) over packed operands. A GEMM or GEMV gives
// each thread whole output elements; a DOT (1 x 1) splits its terms: Dot2 by lanes, whose order
// dot2.hpp fixes, the exact sum by chunks whose accumulators add exactly. Either way the bits do
// not depend on the thread count.
#include "inner_product_steps.hpp"

#include <algorithm>
#include <vector>

#include <tcemu/backend/blas_epilogue.hpp>
#include <tcemu/backend/dot2.hpp>
#include <tcemu/backend/exact_dot.hpp>

#include <tcemu/emulator/parallel_for.hpp>
#include "host_real_view.hpp"

namespace tcemu::detail {
namespace {

// Row i of A (m x k) at [i * k, (i + 1) * k) when rows_of_a, else column j of B at [j * k, ...).
template <RealType T>
std::vector<T> pack(const RealMatrix& x, bool rows_of_a, int threads) {
  const HostReal in(x);
  const std::int64_t vectors = rows_of_a ? x.rows : x.cols, k = rows_of_a ? x.cols : x.rows;
  std::vector<T> out(static_cast<std::size_t>(vectors * k));
  parallel_for(threads, vectors, 64, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t v = begin; v < end; ++v) {
      for (std::int64_t p = 0; p < k; ++p) {
        out[static_cast<std::size_t>(v * k + p)] =
            static_cast<T>(rows_of_a ? in.get(v, p) : in.get(p, v));
      }
    }
  });
  return out;
}

template <RealType T>
T dot2_dot(const T* x, const T* y, std::int64_t k, int threads) {
  std::vector<Dot2<T>> lanes(static_cast<std::size_t>(kDot2Lanes));
  // Each worker owns a range of lanes and walks the blocks of kDot2Lanes terms in order, so every
  // lane adds its terms in index order.
  parallel_for(threads, kDot2Lanes, 1024, [&](std::int64_t l0, std::int64_t l1) {
    for (std::int64_t block = 0; block < k; block += kDot2Lanes) {
      const std::int64_t end = std::min(l1, k - block);
      for (std::int64_t l = l0; l < end; ++l) {
        lanes[static_cast<std::size_t>(l)].add(x[block + l], y[block + l]);
      }
    }
  });
  dot2_merge_lanes(lanes.data(), kDot2Lanes);
  return lanes[0].result();
}

template <RealType T>
T exact_dot(const T* x, const T* y, std::int64_t k, int threads) {
  constexpr std::int64_t kChunk = std::int64_t{1} << 16;
  std::vector<ExactDot<T>> parts(static_cast<std::size_t>((k + kChunk - 1) / kChunk));
  parallel_for(threads, k, kChunk, [&](std::int64_t begin, std::int64_t end) {
    ExactDot<T>& part = parts[static_cast<std::size_t>(begin / kChunk)];
    for (std::int64_t p = begin; p < end; ++p) part.add(x[p], y[p]);
  });
  for (std::size_t i = 1; i < parts.size(); ++i) parts[0].add(parts[i]);  // exact
  return parts[0].result();
}

template <RealType T>
T element(InnerProduct method, const T* x, const T* y, std::int64_t k) {
  if (method == InnerProduct::dot2) {
    Dot2<T> d;
    for (std::int64_t p = 0; p < k; ++p) d.add(x[p], y[p]);
    return d.result();
  }
  ExactDot<T> e;
  for (std::int64_t p = 0; p < k; ++p) e.add(x[p], y[p]);
  return e.result();
}

template <RealType T>
void run(InnerProduct method, const RealMatrix& a, const RealMatrix& b, T alpha, T beta,
         const RealMatrix& c, int threads) {
  const std::int64_t m = a.rows, k = a.cols, n = b.cols;
  const std::vector<T> rows = pack<T>(a, true, threads), cols = pack<T>(b, false, threads);
  const HostReal out(c);
  auto finish = [&](std::int64_t i, std::int64_t j, T s) {
    const T old = beta != 0 ? static_cast<T>(out.get(i, j)) : T(0);
    out.set(i, j, blas_epilogue(alpha, s, beta, old));
  };
  if (m == 1 && n == 1) {
    finish(0, 0,
           method == InnerProduct::dot2 ? dot2_dot(rows.data(), cols.data(), k, threads)
                                        : exact_dot(rows.data(), cols.data(), k, threads));
    return;
  }
  parallel_for(threads, m * n, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t e = begin; e < end; ++e) {
      const std::int64_t i = e % m, j = e / m;
      finish(i, j, element(method, rows.data() + i * k, cols.data() + j * k, k));
    }
  });
}

}  // namespace

void host_inner_products(InnerProduct method, const RealMatrix& a, const RealMatrix& b,
                         double alpha, double beta, const RealMatrix& c, int threads) {
  if (a.format == Real::fp64) {
    run<double>(method, a, b, alpha, beta, c, threads);
  } else {
    run<float>(method, a, b, static_cast<float>(alpha), static_cast<float>(beta), c, threads);
  }
}

}  // namespace tcemu::detail
