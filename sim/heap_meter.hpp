#pragma once
/// The heap meter: the live bytes of this process's heap, counted as they are allocated, and the
/// budget that an allocation inside a run may not pass (docs/reliability.md "Budgets").
///
/// The counting is done by a replaced global operator new/delete that lives in the binaries
/// (app/heap_new.cpp, linked into `cubesim` and the test binary, not into any library, and left
/// out of the sanitizer build whose allocator is ASan's). A binary without it still builds and
/// runs: metered() is then false, the counts stay 0, and only the readings of resident memory
/// (sim/engine.cpp `check_budgets`) keep the budget.
///
/// An allocation is refused only on a thread inside a HeapBudgetScope (a run: the engine's set-up,
/// its events, the check of its data), never elsewhere, so that the report, the logs and the
/// progress line are never refused their few bytes. A refusal throws HeapBudgetExceeded (a
/// std::bad_alloc) or, where a handler is set (the SimGrid child, whose run is SimGrid's, not
/// ours to unwind), calls that handler, which does not return.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

namespace cubesim::heap {

/// The counters the replaced operator new keeps; constant-initialized, so valid before any
/// static constructor runs.
struct Counters {
  std::atomic<std::int64_t> live{0};          ///< bytes allocated and not yet freed (usable size + chunk header)
  std::atomic<std::int64_t> limit{0};         ///< the most `live` may reach inside a scope; 0: none
  std::atomic<bool> metered{false};           ///< a replaced operator new counts into these
  std::atomic<std::int64_t> refused{0};       ///< the size of the last allocation refused
  std::atomic<std::int64_t> refused_live{0};  ///< what the heap held when it was refused
  std::atomic<std::int64_t> peak{0};          ///< the most `live` reached, to within kFlushBytes a thread (reset_peak)
};
inline Counters g_counters;

/// Called on a refusal instead of throwing, where set (never returns). The meter stops refusing
/// on this thread before it calls the handler, which may therefore allocate.
using ExceedHandler = void (*)(std::int64_t live, std::int64_t asked, std::int64_t limit);

/// Per thread: whether allocations are refused past the limit, and how; and the bytes this thread
/// allocated (less what it freed) that are not yet added to `live`. A thread adds them once they
/// pass kFlushBytes either way, so that the counting costs no atomic operation an allocation (the
/// engine allocates and frees its messages' payloads at a high rate in data mode); `live` then
/// lags the truth by less than kFlushBytes a thread, and what a thread leaves unflushed when it
/// ends (less than kFlushBytes) is never added.
struct ThreadState {
  int depth = 0;                    ///< HeapBudgetScope nesting
  ExceedHandler handler = nullptr;  ///< null: throw HeapBudgetExceeded
  std::int64_t pending = 0;         ///< not yet in Counters::live
};
inline thread_local ThreadState t_state;
inline constexpr std::int64_t kFlushBytes = std::int64_t{256} << 10;

/// Counts `bytes` (negative: freed) into this thread's pending bytes, and those into `live` once
/// they pass kFlushBytes.
inline void charge(std::int64_t bytes) {
  ThreadState& t = t_state;
  t.pending += bytes;
  if (t.pending > kFlushBytes || t.pending < -kFlushBytes) [[unlikely]] {
    const std::int64_t live = g_counters.live.fetch_add(t.pending, std::memory_order_relaxed) + t.pending;
    t.pending = 0;
    // The peak is kept here, where the count moves by kFlushBytes, not at every allocation.
    if (live > g_counters.peak.load(std::memory_order_relaxed)) g_counters.peak.store(live, std::memory_order_relaxed);
  }
}

/// A std::bad_alloc that says it was the budget, not the machine.
class HeapBudgetExceeded : public std::bad_alloc {
 public:
  [[nodiscard]] const char* what() const noexcept override { return "the memory budget is spent"; }
};

/// Whether this binary counts its heap.
inline bool metered() { return g_counters.metered.load(std::memory_order_relaxed); }
/// The live heap bytes: what every thread has flushed, and this thread's pending bytes.
inline std::int64_t live_bytes() { return g_counters.live.load(std::memory_order_relaxed) + t_state.pending; }
inline std::int64_t limit() { return g_counters.limit.load(std::memory_order_relaxed); }
/// The most the heap held since the last reset_peak(), to within kFlushBytes a thread.
inline std::int64_t peak_bytes() { return g_counters.peak.load(std::memory_order_relaxed); }
inline void reset_peak() { g_counters.peak.store(live_bytes(), std::memory_order_relaxed); }
/// The size of the last allocation refused (0 before any).
inline std::int64_t refused_bytes() { return g_counters.refused.load(std::memory_order_relaxed); }
/// What the heap held when the last allocation was refused.
inline std::int64_t refused_live_bytes() { return g_counters.refused_live.load(std::memory_order_relaxed); }
/// Sets the limit on live heap bytes (0: none).
inline void set_limit(std::int64_t bytes) { g_counters.limit.store(bytes > 0 ? bytes : 0, std::memory_order_relaxed); }

/// While one lives on a thread, that thread's allocations are refused past the limit.
class HeapBudgetScope {
 public:
  explicit HeapBudgetScope(ExceedHandler handler = nullptr) : saved_(t_state.handler) {
    ++t_state.depth;
    if (handler != nullptr) t_state.handler = handler;
  }
  ~HeapBudgetScope() {
    --t_state.depth;
    t_state.handler = saved_;
  }
  HeapBudgetScope(const HeapBudgetScope&) = delete;
  HeapBudgetScope& operator=(const HeapBudgetScope&) = delete;

 private:
  ExceedHandler saved_;
};

/// What operator new calls before it allocates `size` bytes: refuses (throws or calls the
/// handler) when this thread is in a scope and the live bytes plus `size` pass the limit.
inline void admit(std::size_t size) {
  if (t_state.depth == 0) return;
  const std::int64_t lim = g_counters.limit.load(std::memory_order_relaxed);
  if (lim <= 0) return;
  const std::int64_t live = live_bytes();
  const auto asked = static_cast<std::int64_t>(size);
  if (live + asked > lim) [[unlikely]] {
    g_counters.refused.store(asked, std::memory_order_relaxed);
    g_counters.refused_live.store(live, std::memory_order_relaxed);
    if (ExceedHandler h = t_state.handler) {
      t_state.depth = 0;  // the handler may allocate
      h(live, asked, lim);
    }
    throw HeapBudgetExceeded();
  }
}

}  // namespace cubesim::heap
