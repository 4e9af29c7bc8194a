#pragma once
/// The budgets and the stop flag a run checks as it goes (EngineOptions; docs/reliability.md
/// "Budgets"), in one place for the two simulators that check them: the event engine
/// (Engine::check_budgets, every 4,096 events, resumes and awaits) and the lockstep simulator
/// (between two steps, every 4,096 node-steps).
#include <atomic>
#include <cstdint>
#include <string>

#include "sim/errors.hpp"
#include "sim/kernel/backend.hpp"
#include "sim/resources.hpp"

namespace cubesim::detail {

/// What a run has done, for its budget: the counts compared with max_events (an await count of
/// -1: the simulator has none).
struct RunCounts {
  std::int64_t events = 0;
  std::int64_t resumes = 0;
  std::int64_t awaits = -1;
};

/// Adds the events taken since the last call (`published`) to the progress counter, if any. The
/// counter only goes forward: a simulator never publishes counts it may take back (the lockstep
/// simulator's step timed from extrapolated records), and one that starts a run again (the
/// engine after a relay train's abort) starts `published` again from 0.
inline void publish_progress(const EngineOptions& o, std::int64_t events, std::int64_t& published) {
  if (o.progress == nullptr) return;
  check_invariant(events >= published, "the progress counter would go back");
  o.progress->fetch_add(events - published, std::memory_order_relaxed);
  published = events;
}

/// Throws Interrupted if the stop flag is set, BudgetError if a count has passed max_events or
/// (when `read_memory`: a reading costs about 6 us) this process's resident memory has passed
/// max_resident_bytes. `when()` gives where the run is (" by t=..."), `still_runs()` what has not
/// finished (": ... still run", or nothing); both are only called for the message of an error.
template <class When, class StillRuns>
void check_run_budgets(const EngineOptions& o, const RunCounts& c, bool read_memory, When&& when,
                       StillRuns&& still_runs) {
  if (o.stop != nullptr)
    if (const int sig = o.stop->load(std::memory_order_relaxed); sig != 0) throw Interrupted(sig);
  const std::int64_t max = o.max_events;
  if (max > 0 && (c.events > max || c.resumes > max || c.awaits > max)) {
    const std::string spent = c.events > max    ? std::to_string(c.events) + " events"
                              : c.resumes > max ? std::to_string(c.resumes) + " resumes"
                                                : std::to_string(c.awaits) + " awaited operations";
    throw BudgetError(BudgetError::Budget::events,
                      "the budget of " + std::to_string(max) + " events is spent (" + spent + when() + "), " +
                          (c.awaits >= 0 ? "a livelock or " : "") + "a run longer than the budget" + still_runs());
  }
  if (read_memory && o.max_resident_bytes > 0)
    if (const std::int64_t rss = resident_bytes(); rss > o.max_resident_bytes)
      throw BudgetError(BudgetError::Budget::memory, "the memory budget of " + format_bytes(o.max_resident_bytes) +
                                                         " is spent (" + format_bytes(rss) + " resident after " +
                                                         std::to_string(c.events) + " events" + when() + ")" +
                                                         still_runs());
}

}  // namespace cubesim::detail
