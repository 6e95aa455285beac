// The papers' test matrices, plain DGEMM on the host, and the accuracy of a computed product
// against the correctly rounded one as the Ozaki papers measure it: the largest relative error over
// the elements whose reference is nonzero, and the number of elements whose bits differ from the
// correctly rounded result.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include <tcemu/reference/phi_values.hpp>
#include <tcemu/reference/plain_gemm.hpp>

namespace tcemu::experiments {

using reference::phi_values;
using reference::plain_dgemm;

// `count` values (rand - 0.5) exp(phi randn) (a matrix's elements in any order), drawn in 64
// chunks, chunk c from reference::phi_values with seed `seed` + c, on every hardware thread: the
// values do not depend on the thread count.
inline std::vector<double> parallel_phi_values(std::int64_t count, double phi, std::uint64_t seed) {
  constexpr int kChunks = 64;
  const std::int64_t per = (count + kChunks - 1) / kChunks;
  std::vector<double> x(static_cast<std::size_t>(count));
  std::vector<std::thread> workers;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int c = static_cast<int>(t); c < kChunks; c += static_cast<int>(threads)) {
        const std::int64_t begin = c * per, end = std::min(count, begin + per);
        if (begin >= end) continue;
        const auto v = phi_values(end - begin, phi, seed + static_cast<std::uint64_t>(c));
        std::copy(v.begin(), v.end(), x.begin() + begin);
      }
    });
  }
  for (std::thread& w : workers) w.join();
  return x;
}

struct Accuracy {
  double max_relative_error = 0;
  std::int64_t not_correctly_rounded = 0;
};

inline Accuracy accuracy(const std::vector<double>& x, const std::vector<double>& exact) {
  Accuracy a;
  for (std::size_t e = 0; e < x.size(); ++e) {
    if (std::bit_cast<std::uint64_t>(x[e]) != std::bit_cast<std::uint64_t>(exact[e])) {
      ++a.not_correctly_rounded;
    }
    if (exact[e] != 0.0) {
      a.max_relative_error =
          std::fmax(a.max_relative_error, std::fabs(x[e] - exact[e]) / std::fabs(exact[e]));
    }
  }
  return a;
}

}  // namespace tcemu::experiments
