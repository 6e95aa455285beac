// parallel_for on the persistent worker pool (worker_pool.hpp): every index exactly once, on
// the requested number of threads, also when the pool is busy (nested calls, concurrent callers,
// a forked child), and a body's exception reaching the caller.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <tcemu/emulator/parallel_for.hpp>

namespace tcemu::detail {
namespace {

// Runs parallel_for and returns how often each index was visited.
std::vector<int> visits(int threads, std::int64_t count, std::int64_t chunk) {
  std::vector<std::atomic<int>> seen(static_cast<std::size_t>(count));
  parallel_for(threads, count, chunk, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) seen[static_cast<std::size_t>(i)].fetch_add(1);
  });
  std::vector<int> out;
  for (const auto& s : seen) out.push_back(s.load());
  return out;
}

TEST(ParallelFor, EveryIndexOnceForManyShapes) {
  for (const int threads : {0, 1, 2, 3, 8, 17}) {
    for (const std::int64_t count : {0, 1, 5, 64, 1000, 4097}) {
      for (const std::int64_t chunk : {1, 3, 64, 5000}) {
        EXPECT_EQ(visits(threads, count, chunk),
                  std::vector<int>(static_cast<std::size_t>(count), 1))
            << threads << " threads, count " << count << ", chunk " << chunk;
      }
    }
  }
}

// Chunks run by this thread in RunsTheRequestedThreadsAtOnceOnTheSameThreads: a thread started
// for one call would start at 0 every round.
thread_local int chunks_served = 0;

// With 4 threads and chunks that each wait until 4 threads have arrived, the call can only finish
// if 4 threads run chunks at the same time, one chunk each; the same threads serve every round
// (the pool's, not threads started per call), so each has served round + 1 chunks.
TEST(ParallelFor, RunsTheRequestedThreadsAtOnceOnTheSameThreads) {
  for (int round = 0; round < 50; ++round) {
    std::mutex mutex;
    std::vector<int> served;
    std::atomic<int> arrived{0};
    parallel_for(4, 4, 1, [&](std::int64_t, std::int64_t) {
      {
        std::lock_guard lock(mutex);
        served.push_back(++chunks_served);
      }
      arrived.fetch_add(1);
      while (arrived.load() < 4) std::this_thread::yield();
    });
    ASSERT_EQ(served, std::vector<int>(4, round + 1)) << "round " << round;
  }
}

TEST(ParallelFor, NestedCallsRunOnThreadsOfTheirOwn) {
  std::atomic<std::int64_t> total{0};
  parallel_for(3, 6, 1, [&](std::int64_t, std::int64_t) {
    parallel_for(3, 100, 7,
                 [&](std::int64_t begin, std::int64_t end) { total.fetch_add(end - begin); });
  });
  EXPECT_EQ(total.load(), 600);
}

TEST(ParallelFor, ConcurrentCallersEachGetEveryIndexOnce) {
  std::vector<std::vector<int>> results(4);
  std::vector<std::jthread> callers;
  for (std::size_t c = 0; c < results.size(); ++c) {
    callers.emplace_back([&results, c] {
      for (int round = 0; round < 20; ++round) results[c] = visits(4, 3000, 11);
    });
  }
  callers.clear();  // joins
  for (const auto& r : results) EXPECT_EQ(r, std::vector<int>(3000, 1));
}

TEST(ParallelFor, ABodysExceptionReachesTheCaller) {
  EXPECT_THROW(parallel_for(4, 100, 1,
                            [](std::int64_t begin, std::int64_t) {
                              if (begin == 37) throw std::runtime_error("index 37");
                            }),
               std::runtime_error);
  EXPECT_EQ(visits(4, 100, 1), std::vector<int>(100, 1));  // the pool still works
}

// A child forked after the pool has threads has none of them: parallel_for must still finish.
TEST(ParallelFor, AForkedChildFinishes) {
  EXPECT_EQ(visits(4, 1000, 1), std::vector<int>(1000, 1));  // the pool now has threads
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(60);  // a child that hangs is killed and the test fails instead of hanging
    _exit(visits(4, 1000, 1) == std::vector<int>(1000, 1) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child did not exit (status " << status << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace tcemu::detail
