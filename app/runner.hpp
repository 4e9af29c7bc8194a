#pragma once
/// Runs the points of an experiment and compares each with its prediction.
#include <atomic>
#include <optional>
#include <string>

#include "app/config.hpp"
#include "sim/engine.hpp"
#include "sim/observer.hpp"
#include "sim/simgrid/backend.hpp"

namespace cubesim {

/// Which engine(s) run a point: the cycle engine, the SimGrid backend, or both side by side.
enum class EngineKind { cycle, simgrid, both };
std::string engine_name(EngineKind k);

/// One run of a point under SimGrid (sim/simgrid/backend.hpp), in a process of its own.
struct SimGridOutcome {
  SimGridStats stats;
  bool verified = false;
  bool verify_ran = false;
  std::string verify_message;
  std::string error;          ///< the run failed (a process threw, a deadlock, SimGrid died)
  long max_rss_kib = 0;       ///< the SimGrid process's peak resident memory
  double process_wall_s = 0;  ///< fork to exit: what the SimGrid run cost, all in
};

/// Runs the point's processes under SimGrid in a forked child; verifies the data there. The
/// child is held to the memory budget `max_resident_bytes` (0: none; docs/reliability.md "Budgets").
SimGridOutcome run_simgrid(const Setup& s, const AlgorithmInfo& info, bool verify, SimGridOptions opt = {},
                           std::int64_t max_resident_bytes = 0);

struct RunOutcome {
  const RunPoint* point = nullptr;
  RunStats stats;
  Prediction prediction;
  bool verified = false;  ///< the data check passed (sizes only in timing mode)
  bool verify_ran = false;
  std::string verify_message;             ///< the first discrepancy
  bool relation_holds = false;            ///< simulated vs predicted as the prediction promises
  bool terms_match = false;               ///< critical-path start-ups and element transfers equal the table's
  double ratio = 0;                       ///< simulated / predicted (1 when both are 0)
  std::string error;                      ///< a process failed or deadlocked: the run has no result
  bool cycle_ran = true;                  ///< false under --engine simgrid: stats and ratio are empty
  std::optional<SimGridOutcome> simgrid;  ///< under --engine simgrid or both
  /// Success: the cycle engine's run verified and its relation held; SimGrid's run (when asked
  /// for) finished and verified. SimGrid's time is compared, never judged (docs/simgrid.md).
  [[nodiscard]] bool ok() const {
    const bool cycle_ok = !cycle_ran || (error.empty() && (!verify_ran || verified) && relation_holds);
    const bool sg_ok = !simgrid || (simgrid->error.empty() && (!simgrid->verify_ran || simgrid->verified));
    return cycle_ok && sg_ok;
  }
};

/// A run's budgets when the command line gives none (--max-events): 10^10 events, about 20 minutes
/// at the 2^12-node rate of this project's benchmarks, ten times the largest shipped run.
inline constexpr std::int64_t kDefaultMaxEvents = 10'000'000'000;

/// What bounds each run of the cycle engine (docs/reliability.md "Budgets"): EngineOptions'
/// budgets and stop flag.
struct RunLimits {
  std::int64_t max_events = kDefaultMaxEvents;  ///< 0: none
  std::int64_t max_resident_bytes = 0;          ///< 0: none
  const std::atomic<int>* stop = nullptr;       ///< set: the run throws Interrupted
  bool packet_trains = true;                    ///< false: --per-packet (EngineOptions::packet_trains)
  /// Step programs by the lockstep simulator where it times them as the engine does
  /// (sim/lockstep.hpp); false: --no-lockstep, and --per-packet, the engine's reference.
  bool lockstep = true;
  /// Threads a run of the lockstep simulator may use (EngineOptions::threads): a sweep gives each
  /// point the cores its other points leave (app/sweep.cpp).
  int threads = 1;
  std::atomic<std::int64_t>* progress = nullptr;  ///< EngineOptions::progress
  bool lockstep_repeats = true;                   ///< EngineOptions::lockstep_repeats
  bool lockstep_uniform = true;                   ///< EngineOptions::lockstep_uniform
};
/// "cycle", "simgrid" or "both"; an InputError naming `option` (the command line's --engine, the
/// Python module's engine=) for anything else.
EngineKind parse_engine(const std::string& e, const std::string& option);
/// A command's run limits: the event budget (0: none; negative: an InputError naming `option`),
/// the process's memory budget as set (set_memory_budget), packet trains unless `per_packet`.
RunLimits make_run_limits(std::int64_t max_events, bool per_packet, const std::string& option);
/// Sets what follows from a finished cycle run's stats and prediction: ratio, relation_holds,
/// terms_match.
void judge(RunOutcome& out);
/// A spent budget's error line, with the option that sets it.
std::string budget_message(const BudgetError& e);
/// The engine options of a point under `limits`.
EngineOptions engine_options(const Setup& s, const RunLimits& limits);

/// Simulates one point (engine "cycle"). Never throws for simulation failures: they land in
/// `error`. `verify` false skips the data check (then verified=false, verify_ran=false).
/// `observer`, when given, sees the run (traces). A spent budget is the point's error (with the
/// option that raises it); Interrupted passes through: the point did not finish.
RunOutcome run_point(const RunPoint& point, const AlgorithmInfo& info, bool verify, EngineObserver* observer = nullptr,
                     const RunLimits& limits = {});
/// Runs one point on the engine(s) asked for. `observer` sees the cycle engine's run only.
RunOutcome run_point(const RunPoint& point, const AlgorithmInfo& info, bool verify, EngineKind engines,
                     EngineObserver* observer = nullptr, const RunLimits& limits = {});

/// The header of a time-independent trace of this run (traces/ti_trace.hpp): what was run, on
/// which machine (as an inline machine object), and what it took there.
/// Where a sweep point is, for error lines: "/sweep (at machine=\"ipsc-nx\", params.M=64)", or
/// "" for a config without a sweep.
std::string sweep_pointer(const RunPoint& p);

/// The error of a run whose allocation the heap meter refused (sim/heap_meter.hpp): the budget,
/// what was asked for, what the heap held.
std::string heap_budget_message();

/// Refuses (InputError naming the point, the estimate and the budget) a config whose runs this
/// machine or the memory budget cannot hold, before any point runs: each point's estimate
/// (point_memory_estimate) under `limits`, `observed` when its runs are recorded (traces).
void check_memory(const Experiment& ex, const RunLimits& limits = {}, bool observed = false);
/// Whether run_point would give point p to the lockstep simulator under `limits` (an observer:
/// never): a machine it times as the engine does (sim/lockstep.hpp) and a step program for the
/// point's setup, told by the program's stated memory (AlgorithmInfo::steps_memory) without
/// making it; false for an algorithm that states none (its estimate stays the engine's).
bool lockstep_takes(const RunPoint& p, const RunLimits& limits, bool observed = false);
/// What one point's run is estimated to hold at its peak, in bytes (docs/reliability.md
/// "Memory"): where the lockstep simulator takes it and the algorithm states its program's part
/// (AlgorithmInfo::steps_memory), the simulator's records (lockstep_memory) and that part; else
/// the engine's state for every node (sim/resources.hpp) and the algorithm's memory model
/// (AlgorithmInfo::memory). Should the lockstep simulator give up, the engine's run is held to the
/// budget as it allocates (the heap meter).
std::int64_t point_memory_estimate(const RunPoint& p, const RunLimits& limits = {}, bool observed = false);

ojson trace_header(const std::string& name, const std::string& algorithm, const Setup& s, const RunStats& st);

/// Checks the relation a prediction promises.
bool relation_holds(const Prediction& p, Time simulated);
/// The same for a time in seconds (SimGrid's clock is a double): "exact" and the bounds hold
/// within kSimGridAgreement relative, the rounding of SimGrid's floating-point time.
bool relation_holds(const Prediction& p, double simulated_s);
/// Two engines agree when their times differ by at most this, relative (issue 4).
inline constexpr double kSimGridAgreement = 1e-9;
/// (simgrid - cycle) / cycle; 0 when both are 0.
double relative_difference(double simgrid_s, Time cycle);

}  // namespace cubesim
