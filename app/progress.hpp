#pragma once
/// The live progress line of `cubesim run` (docs/performance.md "Sweeps on every core"): on
/// stderr, only when stderr is a terminal and the report does not go to stdout as JSON, and only
/// once the run has taken more than two seconds. It shows the points done, the engine's events
/// per second over all running points and, for sweeps, the time left estimated from the points
/// done. It is cleared when the run ends, so nothing of it stays in a log.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace cubesim {

class Progress {
 public:
  /// `points` to run; `enabled` false: does nothing (no thread).
  Progress(std::size_t points, bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// The engines add their events here (EngineOptions::progress).
  std::atomic<std::int64_t> events{0};
  void point_done() { done_.fetch_add(1, std::memory_order_relaxed); }

  /// The line for these figures (tests): "cubesim: 3/14 points · 12.3 M events/s · about 20 s left".
  static std::string line(std::size_t done, std::size_t points, double events_per_s, double elapsed_s);

 private:
  void loop();
  std::size_t points_;
  std::atomic<std::size_t> done_{0};
  bool enabled_;
  bool stop_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread thread_;
};

/// True when stderr is a terminal.
bool stderr_is_terminal();

}  // namespace cubesim
