// worker_pool.hpp's pool. A job is published under `mutex` with a new generation number; every
// worker wakes, and those with index < helpers run it once and count down `remaining`. The
// caller returns when `remaining` is 0, so the job's context (on the caller's stack) outlives
// every use. Workers not needed for a job only record its generation.
#include <tcemu/emulator/worker_pool.hpp>

#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

namespace tcemu::detail {
namespace {

// True on a thread while it runs a job's work: a parallel_for inside it starts its own threads
// (the pool is busy, and try_lock on a mutex the thread holds is undefined).
thread_local bool in_job = false;

void run_marked(void (*work)(void*), void* context) {
  in_job = true;
  work(context);
  in_job = false;
}

class WorkerPool {
 public:
  ~WorkerPool() {
    for (std::jthread& worker : workers_) worker.request_stop();
    wake_.notify_all();
    // The jthreads join here.
  }

  bool run(int helpers, void (*work)(void*), void* context) {
    if (in_job || getpid() != owner_) return false;  // a forked child has no parent's threads
    std::unique_lock job(job_mutex_, std::try_to_lock);
    if (!job.owns_lock()) return false;
    {
      std::lock_guard lock(mutex_);
      while (static_cast<int>(workers_.size()) < helpers) {
        const int index = static_cast<int>(workers_.size());
        workers_.emplace_back([this, index](std::stop_token stop) { serve(stop, index); });
      }
      work_ = work;
      context_ = context;
      helpers_ = helpers;
      remaining_ = helpers;
      ++generation_;
    }
    wake_.notify_all();
    run_marked(work, context);
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return remaining_ == 0; });
    return true;
  }

 private:
  void serve(std::stop_token stop, int index) {
    std::uint64_t seen = 0;
    for (;;) {
      void (*work)(void*) = nullptr;
      void* context = nullptr;
      {
        std::unique_lock lock(mutex_);
        // A worker made for a job starts at that job's generation minus one, so it runs it.
        if (seen == 0) seen = generation_ - 1;
        if (!wake_.wait(lock, stop, [&] { return generation_ != seen; })) return;
        seen = generation_;
        if (index >= helpers_) continue;
        work = work_;
        context = context_;
      }
      run_marked(work, context);
      std::lock_guard lock(mutex_);
      if (--remaining_ == 0) done_.notify_one();
    }
  }

  const pid_t owner_ = getpid();
  std::mutex job_mutex_;  // held by the caller for the whole job
  std::mutex mutex_;      // guards the fields below
  std::condition_variable_any wake_;
  std::condition_variable done_;
  std::uint64_t generation_ = 1;
  void (*work_)(void*) = nullptr;
  void* context_ = nullptr;
  int helpers_ = 0;
  int remaining_ = 0;
  std::vector<std::jthread> workers_;  // last member: the threads stop before the rest is gone
};

}  // namespace

bool run_on_workers(int helpers, void (*work)(void*), void* context) {
  static WorkerPool pool;
  return pool.run(helpers, work, context);
}

}  // namespace tcemu::detail
