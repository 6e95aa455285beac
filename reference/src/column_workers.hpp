// The column loop of the reference GEMMs (exact_gemm.cpp, accumulator_gemm.cpp): each column of C
// is one piece of work, handed to whichever worker is free. Every element is computed on its own,
// so the result does not depend on the number of workers. Each worker runs in the default
// floating-point state (tcemu/emulator/floating_point_scope.hpp).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include <tcemu/emulator/floating_point_scope.hpp>

namespace tcemu::reference::detail {

// Calls column(j) for every j in [0, n), on `threads` workers (0: one per hardware thread), the
// calling thread among them; returns when all are done.
template <class Column>
void for_each_column(std::int64_t n, int threads, const Column& column) {
  std::atomic<std::int64_t> next{0};
  const auto work = [&] {
    const FloatingPointScope scope;
    for (std::int64_t j; (j = next.fetch_add(1)) < n;) column(j);
  };
  const int workers =
      threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::jthread> pool;
  for (int t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
}  // the pool's threads join here

}  // namespace tcemu::reference::detail
