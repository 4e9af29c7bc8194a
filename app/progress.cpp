#include "app/progress.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>

namespace cubesim {

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::size_t points, bool enabled) : points_(points), enabled_(enabled && points > 0) {
  if (enabled_) thread_ = std::thread([this] { loop(); });
}

Progress::~Progress() {
  if (!enabled_) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::string Progress::line(std::size_t done, std::size_t points, double events_per_s, double elapsed_s) {
  char buf[160];
  std::string s = "cubesim: ";
  if (points > 1) {
    std::snprintf(buf, sizeof buf, "%zu/%zu points", done, points);
    s += buf;
  } else {
    s += "1 run";
  }
  const char* unit = events_per_s >= 1e6 ? "M" : "k";
  std::snprintf(buf, sizeof buf, " · %.1f %s events/s", events_per_s / (events_per_s >= 1e6 ? 1e6 : 1e3), unit);
  s += buf;
  if (points > 1 && done > 0 && done < points) {
    const double left = elapsed_s * static_cast<double>(points - done) / static_cast<double>(done);
    if (left >= 120)
      std::snprintf(buf, sizeof buf, " · about %.0f min left", std::ceil(left / 60));
    else
      std::snprintf(buf, sizeof buf, " · about %.0f s left", std::ceil(left));
    s += buf;
  }
  return s;
}

void Progress::loop() {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  auto last = t0;
  std::int64_t last_events = 0;
  double rate = 0;
  bool shown = false;
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stop_; })) {
    const auto now = clock::now();
    const double elapsed = std::chrono::duration<double>(now - t0).count();
    const std::int64_t ev = events.load(std::memory_order_relaxed);
    const double dt = std::chrono::duration<double>(now - last).count();
    if (dt > 0) rate = static_cast<double>(ev - last_events) / dt;
    last = now;
    last_events = ev;
    if (elapsed < 2.0) continue;
    const std::string s = line(done_.load(std::memory_order_relaxed), points_, rate, elapsed);
    std::fprintf(stderr, "\r\033[K%s", s.c_str());
    std::fflush(stderr);
    shown = true;
  }
  if (shown) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
}

}  // namespace cubesim
