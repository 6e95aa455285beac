// Runs body(begin, end) over [0, count) in chunks on `threads` threads (0: every hardware
// thread). Chunks are handed out dynamically; each index is processed exactly once, so results
// that depend only on the index are independent of the thread count. The threads are the
// process's persistent workers (worker_pool.hpp), or threads of this call's own when those are
// busy. Each of them runs its chunks in the default floating-point state
// (floating_point_scope.hpp), whatever state the caller or the thread's creator had.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <tcemu/emulator/floating_point_scope.hpp>
#include <tcemu/emulator/worker_pool.hpp>

namespace tcemu::detail {

// The threads `threads` asks for: itself when positive, otherwise every hardware thread.
inline int thread_count(int threads) {
  return threads > 0 ? threads
                     : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

template <typename Body>
void parallel_for(int threads, std::int64_t count, std::int64_t chunk, Body body) {
  const std::int64_t chunks = (count + chunk - 1) / chunk;
  const int workers = static_cast<int>(
      std::min<std::int64_t>(thread_count(threads), std::max<std::int64_t>(chunks, 1)));
  std::atomic<std::int64_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    const FloatingPointScope scope;
    try {
      for (std::int64_t c; (c = next.fetch_add(1)) < chunks;) {
        body(c * chunk, std::min(count, (c + 1) * chunk));
      }
    } catch (...) {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  const auto call = [](void* context) { (*static_cast<decltype(work)*>(context))(); };
  if (workers <= 1) {
    work();
  } else if (!run_on_workers(workers - 1, call, &work)) {
    std::vector<std::jthread> pool;
    pool.reserve(static_cast<std::size_t>(workers - 1));
    for (int t = 1; t < workers; ++t) pool.emplace_back(work);
    work();
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace tcemu::detail
