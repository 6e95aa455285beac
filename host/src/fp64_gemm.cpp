// The cpu64 backend's FP64 GEMM: A packed by rows and B by columns (each contiguous, k padded to
// a multiple of the vector width with zeros), then 4 x 4 tiles of dot products, each lane of an
// 8-wide vector accumulating every eighth k, blocked so that a 64-row panel of A and a 64-column
// panel of B (kKc terms each) stay in L2 while the tiles run. Row panels are spread over the
// threads. The summation order is fixed by k, the tiling and the lane count, not by the thread
// count; the Ozaki scheme only relies on exactness (tcemu/backend/ozaki_steps.hpp, fp64_gemm).
#include <algorithm>
#include <vector>

#include <tcemu/emulator/parallel_for.hpp>
#include "host_real_view.hpp"
#include "ozaki_steps.hpp"

namespace tcemu::detail {
namespace {

constexpr int kLanes = 8;
using F64 = double __attribute__((vector_size(kLanes * 8)));
constexpr std::int64_t kPanel = 64;  // rows of A / columns of B per panel
constexpr std::int64_t kKc = 256;    // k per pass over a pair of panels (multiple of kLanes)
constexpr int kTile = 4;

double horizontal_sum(F64 v) {
  double s = 0.0;
  for (int l = 0; l < kLanes; ++l) s += v[l];
  return s;
}

F64 load(const double* p) {
  F64 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

// c[r][q] += dot(a row r, b column q) over [k0, k1) for rows/cols of the tile present.
template <int Rows, int Cols>
void tile(const double* a, const double* b, std::int64_t kp, std::int64_t k0, std::int64_t k1,
          double (&c)[kTile][kTile]) {
  F64 acc[Rows][Cols] = {};
  for (std::int64_t p = k0; p < k1; p += kLanes) {
    F64 bv[Cols];
    for (int q = 0; q < Cols; ++q) bv[q] = load(b + q * kp + p);
    for (int r = 0; r < Rows; ++r) {
      const F64 av = load(a + r * kp + p);
      for (int q = 0; q < Cols; ++q) acc[r][q] += av * bv[q];
    }
  }
  for (int r = 0; r < Rows; ++r) {
    for (int q = 0; q < Cols; ++q) c[r][q] += horizontal_sum(acc[r][q]);
  }
}

}  // namespace

void host_fp64_gemm(const RealMatrix& a_matrix, const RealMatrix& b_matrix,
                    const RealMatrix& c_matrix, int threads) {
  const HostReal a(a_matrix), b(b_matrix), c(c_matrix);
  const std::int64_t m = a.rows, k = a.cols, n = b.cols;
  const std::int64_t kp = (k + kLanes - 1) / kLanes * kLanes;
  std::vector<double> ap(static_cast<std::size_t>(m * kp), 0.0);
  std::vector<double> bp(static_cast<std::size_t>(n * kp), 0.0);
  parallel_for(threads, m, 64, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      for (std::int64_t p = 0; p < k; ++p) ap[i * kp + p] = a.get(i, p);
    }
  });
  parallel_for(threads, n, 64, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t j = begin; j < end; ++j) {
      for (std::int64_t p = 0; p < k; ++p) bp[j * kp + p] = b.get(p, j);
    }
  });
  parallel_for(threads, (m + kPanel - 1) / kPanel, 1, [&](std::int64_t begin, std::int64_t end) {
    std::vector<double> out(static_cast<std::size_t>(kPanel * n));
    for (std::int64_t panel = begin; panel < end; ++panel) {
      const std::int64_t i0 = panel * kPanel, i1 = std::min(m, i0 + kPanel);
      std::fill(out.begin(), out.end(), 0.0);
      for (std::int64_t j0 = 0; j0 < n; j0 += kPanel) {
        const std::int64_t j1 = std::min(n, j0 + kPanel);
        for (std::int64_t k0 = 0; k0 < kp; k0 += kKc) {
          const std::int64_t k1 = std::min(kp, k0 + kKc);
          for (std::int64_t i = i0; i < i1; i += kTile) {
            for (std::int64_t j = j0; j < j1; j += kTile) {
              double acc[kTile][kTile] = {};
              const double* at = ap.data() + i * kp;
              const double* bt = bp.data() + j * kp;
              if (i + kTile <= i1 && j + kTile <= j1) {
                tile<kTile, kTile>(at, bt, kp, k0, k1, acc);
              } else {
                for (std::int64_t r = 0; r < std::min<std::int64_t>(kTile, i1 - i); ++r) {
                  for (std::int64_t q = 0; q < std::min<std::int64_t>(kTile, j1 - j); ++q) {
                    double one[kTile][kTile] = {};
                    tile<1, 1>(at + r * kp, bt + q * kp, kp, k0, k1, one);
                    acc[r][q] = one[0][0];
                  }
                }
              }
              for (std::int64_t r = 0; r < std::min<std::int64_t>(kTile, i1 - i); ++r) {
                for (std::int64_t q = 0; q < std::min<std::int64_t>(kTile, j1 - j); ++q) {
                  out[static_cast<std::size_t>((i - i0 + r) * n + j + q)] += acc[r][q];
                }
              }
            }
          }
        }
      }
      for (std::int64_t i = i0; i < i1; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
          *c.fp64_at(i, j) = out[static_cast<std::size_t>((i - i0) * n + j)];
        }
      }
    }
  });
}

}  // namespace tcemu::detail
