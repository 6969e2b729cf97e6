// parallel.h: the engine's small thread pool (std::thread, no OpenMP) and its thread count.
//
// Work is split into a fixed list of tasks whose boundaries never depend on the number of
// threads (e.g. row blocks of a T x T matrix sized from T alone), and each task reduces its
// numbers in a fixed order, so results are bit-identical whatever the thread count.
#pragma once

#include <cstdint>
#include <functional>

namespace attnlab {

/// The number of threads ParallelFor uses (>= 1): the last SetThreadCount(n > 0), else the
/// environment variable ATTNLAB_THREADS when it holds a positive integer (capped at 256), else
/// std::thread::hardware_concurrency() (1 when unknown).
int ThreadCount();

/// Sets the thread count for the following ParallelFor calls; n <= 0 restores the default
/// (ATTNLAB_THREADS or the hardware threads). Safe to call from any thread between runs.
void SetThreadCount(int n);

/// Limits the ParallelFor calls made from the calling thread to n threads (n <= 0: no limit)
/// and returns the previous limit. The window's background recompute runs with one thread
/// fewer than the machine has, leaving a core to draw the frames.
int LimitThreadsOfThisThread(int n);

/// Runs task(i) for every i in [0, n), on up to ThreadCount() threads (the caller is one of
/// them), and returns when all are done. The tasks are dealt to the threads in a fixed order (in
/// rounds of one each, every other round backwards: 0 1 | 1 0 | 0 1 … on two threads); each
/// thread runs its own in increasing i, then helps with the others' remaining ones. So in calls
/// with the same n and thread count, task i mostly runs on the same thread, and what it writes
/// stays in that core's cache for the next call. Nested calls (from
/// inside a task) and calls made while another thread's ParallelFor is running run their tasks
/// on the calling thread alone. Errors: the first exception a task throws is rethrown here after
/// the other tasks have finished (tasks not yet started are skipped).
void ParallelFor(int64_t n, const std::function<void(int64_t)>& task);

/// Rows per task for splitting a T-row stage: about T / 16 rounded to a multiple of 16, within
/// [32, 128], so T = 1024 gives 16 blocks of 64 rows. Depends on T only (never on the thread
/// count), which keeps every result independent of the number of threads.
int64_t RowBlock(int64_t T);

}  // namespace attnlab
