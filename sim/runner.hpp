#pragma once
/// Runs the points of an experiment and compares each with its prediction.
#include <optional>
#include <string>

#include "sim/config.hpp"
#include "sim/engine.hpp"
#include "sim/observer.hpp"

namespace cubesim {

struct RunOutcome {
  const RunPoint* point = nullptr;
  RunStats stats;
  Prediction prediction;
  bool verified = false;       ///< the data check passed (sizes only in timing mode)
  bool verify_ran = false;
  std::string verify_message;  ///< the first discrepancy
  bool relation_holds = false; ///< simulated vs predicted as the prediction promises
  bool terms_match = false;    ///< critical-path start-ups and element transfers equal the table's
  double ratio = 0;            ///< simulated / predicted (1 when both are 0)
  std::string error;           ///< a process failed or deadlocked: the run has no result
  [[nodiscard]] bool ok() const { return error.empty() && (!verify_ran || verified) && relation_holds; }
};

/// Simulates one point (engine "cycle"). Never throws for simulation failures: they land in
/// `error`. `verify` false skips the data check (then verified=false, verify_ran=false).
/// `observer`, when given, sees the run (traces).
RunOutcome run_point(const RunPoint& point, const AlgorithmInfo& info, bool verify, EngineObserver* observer = nullptr);

/// The header of a time-independent trace of this run (traces/ti_trace.hpp): what was run, on
/// which machine (as an inline machine object), and what it took there.
ojson trace_header(const std::string& name, const std::string& algorithm, const Setup& s, const RunStats& st);

/// Checks the relation a prediction promises.
bool relation_holds(const Prediction& p, Time simulated);

}  // namespace cubesim
