#pragma once
/// Kernel: the queue of pending events, smallest (Event order, sim/kernel/event.hpp) first
/// (engine internals; sim/engine.hpp).
///
/// The collectives move all nodes in step: on a large run a million events are pending at a
/// handful of instants, and a binary heap over all of them misses the cache on its lower levels at
/// every push and pop (14 % of `allgather.sbt` all-port on 2^16 nodes). Events pushed for one
/// instant mostly come in order (the push time never decreases, the sequence numbers grow), so
/// this queue keeps, per instant, a *run*: a vector of events in increasing order, appended at its
/// end and read from its front. A small binary heap orders the runs by their first event. An event
/// that does not come after its instant's run (a packet train's key, made earlier), and every event
/// once more than kMaxRuns instants are pending, goes to a plain binary heap beside them. top() is
/// the smaller of the two heaps' tops: the order is exactly the binary heap's (a total order: no
/// two events have the same key), whatever the mix.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/kernel/event.hpp"

namespace cubesim::detail {

class EventQueue {
 public:
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::size_t size() const { return size_; }
  /// Events the runs and the heap beside them have room for (their memory, in events).
  [[nodiscard]] std::size_t capacity() const {
    std::size_t c = spill_.capacity();
    for (const Run& r : runs_) c += r.events.capacity();
    return c;
  }
  /// The smallest pending event (not empty()).
  [[nodiscard]] const Event& top() const {
    const Event* best = nullptr;
    if (!run_heap_.empty()) best = &front(run_heap_.front());
    if (!spill_.empty() && (best == nullptr || before(spill_.front(), *best))) best = &spill_.front();
    return *best;
  }
  void push(const Event& e) {
    ++size_;
    if (Run* r = run_for(e.time)) {
      if (r->head == r->events.size() || before(r->events.back(), e)) {
        const bool was_empty = r->head == r->events.size();
        // A run that is added to while it is read (events at one instant that keep making more
        // there) would keep every event it gave: past half given, the rest moves to the front.
        // Its first event stays the same, so the heap of runs stays as it is.
        if (r->head >= kCompactAfter && r->head * 2 >= r->events.size()) {
          r->events.erase(r->events.begin(), r->events.begin() + static_cast<std::ptrdiff_t>(r->head));
          r->head = 0;
        }
        r->events.push_back(e);
        if (was_empty) push_run(static_cast<std::uint32_t>(r - runs_.data()));
        return;
      }
    }
    spill_.push_back(e);
    std::push_heap(spill_.begin(), spill_.end(), later);
  }
  /// Removes and returns the smallest pending event (not empty()).
  Event pop() {
    --size_;
    if (!run_heap_.empty() && (spill_.empty() || before(front(run_heap_.front()), spill_.front()))) {
      const std::uint32_t ri = run_heap_.front();
      Run& r = runs_[ri];
      const Event e = r.events[r.head++];
      if (r.head == r.events.size()) {
        pop_run();
        close(ri);
      } else {
        sift_down(0);
      }
      return e;
    }
    std::pop_heap(spill_.begin(), spill_.end(), later);
    const Event e = spill_.back();
    spill_.pop_back();
    return e;
  }
  void clear() {
    for (Run& r : runs_) {
      r.events.clear();
      r.head = 0;
    }
    free_runs_.clear();
    for (std::uint32_t i = 0; i < runs_.size(); ++i) free_runs_.push_back(i);
    open_.clear();
    run_heap_.clear();
    spill_.clear();
    size_ = 0;
  }

 private:
  /// At most this many instants have runs at once; events at further instants go to spill_.
  static constexpr std::size_t kMaxRuns = 64;
  /// A run's given events are dropped once this many and half of it (see push()).
  static constexpr std::size_t kCompactAfter = 4096;
  struct Run {
    std::int64_t time = 0;
    std::vector<Event> events;  ///< increasing; events[head..] pending
    std::size_t head = 0;
  };
  struct Open {
    std::int64_t time;
    std::uint32_t run;
  };
  static bool later(const Event& a, const Event& b) { return before(b, a); }
  [[nodiscard]] const Event& front(std::uint32_t ri) const { return runs_[ri].events[runs_[ri].head]; }

  /// The run of instant t, made if there is none and room for one; null otherwise.
  Run* run_for(std::int64_t t) {
    if (last_ < open_.size() && open_[last_].time == t) return &runs_[open_[last_].run];  // as the push before
    for (std::size_t i = 0; i < open_.size(); ++i)  // few instants pend at once: a scan beats a hash
      if (open_[i].time == t) {
        last_ = i;
        return &runs_[open_[i].run];
      }
    if (open_.size() >= kMaxRuns) return nullptr;
    std::uint32_t ri = 0;
    if (!free_runs_.empty()) {
      ri = free_runs_.back();
      free_runs_.pop_back();
    } else {
      ri = static_cast<std::uint32_t>(runs_.size());
      runs_.emplace_back();
    }
    Run& r = runs_[ri];
    r.time = t;
    r.events.clear();
    r.head = 0;
    last_ = open_.size();
    open_.push_back(Open{t, ri});
    return &r;
  }
  /// Run ri is used up: its instant may start a new run later.
  void close(std::uint32_t ri) {
    for (std::size_t i = 0; i < open_.size(); ++i)
      if (open_[i].run == ri) {
        open_[i] = open_.back();
        open_.pop_back();
        break;
      }
    runs_[ri].events.clear();
    runs_[ri].head = 0;
    free_runs_.push_back(ri);
  }
  void push_run(std::uint32_t ri) {
    run_heap_.push_back(ri);
    std::size_t i = run_heap_.size() - 1;
    while (i > 0) {
      const std::size_t p = (i - 1) / 2;
      if (!before(front(run_heap_[i]), front(run_heap_[p]))) break;
      std::swap(run_heap_[i], run_heap_[p]);
      i = p;
    }
  }
  void pop_run() {
    run_heap_.front() = run_heap_.back();
    run_heap_.pop_back();
    if (!run_heap_.empty()) sift_down(0);
  }
  void sift_down(std::size_t i) {
    const std::size_t n = run_heap_.size();
    for (;;) {
      std::size_t m = i;
      const std::size_t l = 2 * i + 1, r = l + 1;
      if (l < n && before(front(run_heap_[l]), front(run_heap_[m]))) m = l;
      if (r < n && before(front(run_heap_[r]), front(run_heap_[m]))) m = r;
      if (m == i) return;
      std::swap(run_heap_[i], run_heap_[m]);
      i = m;
    }
  }

  std::vector<Run> runs_;
  std::vector<std::uint32_t> free_runs_;
  std::vector<Open> open_;               ///< the instants with a run, and their runs
  std::size_t last_ = 0;                 ///< open_'s entry the last push found
  std::vector<std::uint32_t> run_heap_;  ///< runs with pending events, by their first event
  std::vector<Event> spill_;             ///< a binary heap of the rest
  std::size_t size_ = 0;
};

}  // namespace cubesim::detail
