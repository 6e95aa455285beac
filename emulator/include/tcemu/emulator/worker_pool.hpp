// The process's persistent worker threads, on which parallel_for (parallel_for.hpp) runs its
// chunks: a product of n = 256 takes a few milliseconds, and starting and joining 15 threads for
// each of its five parallel passes cost as much as the work on 16 cores.
//
// Invariants: one job at a time (a second caller, a caller inside a job, or a forked child of the
// process that made the pool gets `false` and starts its own threads as before); a job's
// `helpers` workers each call it once, and run_on_workers returns only after they all returned.
#pragma once

namespace tcemu::detail {

// Calls work(context) on `helpers` pool threads (made on first need) and once on the calling
// thread, and waits for all of them. Returns false, calling nothing, when the pool is busy with
// another job or belongs to another process (after fork). `work` must not throw.
bool run_on_workers(int helpers, void (*work)(void*), void* context);

}  // namespace tcemu::detail
