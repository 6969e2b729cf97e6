// parallel.cpp: a persistent pool of worker threads behind ParallelFor (see parallel.h).
#include "attnlab/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace attnlab {
namespace {

constexpr int kMaxThreads = 256;

std::atomic<int> g_override{0};  // SetThreadCount; 0 = default

int DefaultThreadCount() {
  static const int count = [] {
    if (const char* env = std::getenv("ATTNLAB_THREADS")) {
      char* end = nullptr;
      const long n = std::strtol(env, &end, 10);
      if (end != env && *end == '\0' && n > 0) return static_cast<int>(std::min<long>(n, kMaxThreads));
    }
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : static_cast<int>(std::min<unsigned>(hw, kMaxThreads));
  }();
  return count;
}

thread_local bool t_inside_task = false;  // nested ParallelFor runs inline

// Workers sleep on a condition variable between jobs; one job at a time (job_mutex_). The
// caller takes tasks too, so a job with k threads wakes k - 1 workers.
class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  // Returns false (nothing run) when another job holds the pool.
  bool TryRun(int64_t n, const std::function<void(int64_t)>& task, int threads) {
    std::unique_lock<std::mutex> job(job_mutex_, std::try_to_lock);
    if (!job.owns_lock()) return false;
    const int helpers = static_cast<int>(std::min<int64_t>(threads, n)) - 1;
    while (static_cast<int>(workers_.size()) < helpers)
      workers_.emplace_back([this, id = static_cast<int>(workers_.size())] { WorkerLoop(id); });
    {
      std::lock_guard<std::mutex> lock(mutex_);
      task_ = &task;
      n_ = n;
      next_.store(0);
      helpers_ = helpers;
      running_ = helpers;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    Work();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return running_ == 0; });
    task_ = nullptr;
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return true;
  }

 private:
  void WorkerLoop(int id) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || (generation_ != seen && id < helpers_); });
      if (stop_) return;
      seen = generation_;
      lock.unlock();
      Work();
      lock.lock();
      if (--running_ == 0) done_.notify_one();
    }
  }

  // Takes tasks in increasing order until none is left (or one has thrown).
  void Work() {
    t_inside_task = true;
    for (int64_t i; (i = next_.fetch_add(1)) < n_;) {
      try {
        (*task_)(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
        next_.store(n_);  // skip the tasks not yet started
      }
    }
    t_inside_task = false;
  }

  std::mutex job_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(int64_t)>* task_ = nullptr;
  int64_t n_ = 0;
  std::atomic<int64_t> next_{0};
  int helpers_ = 0;
  int running_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

Pool& ThePool() {
  static Pool pool;
  return pool;
}

}  // namespace

int ThreadCount() {
  const int n = g_override.load();
  return n > 0 ? n : DefaultThreadCount();
}

void SetThreadCount(int n) { g_override.store(n > 0 ? std::min(n, kMaxThreads) : 0); }

void ParallelFor(int64_t n, const std::function<void(int64_t)>& task) {
  if (n <= 0) return;
  const int threads = ThreadCount();
  if (threads > 1 && n > 1 && !t_inside_task && ThePool().TryRun(n, task, threads)) return;
  for (int64_t i = 0; i < n; ++i) task(i);
}

int64_t RowBlock(int64_t T) {
  const int64_t block = (T / 16 + 15) / 16 * 16;
  return std::clamp<int64_t>(block, 32, 128);
}

}  // namespace attnlab
