#pragma once
/// Reports ("cubesim.report/1", DESIGN.md): JSON, CSV, and a table for people.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/runner.hpp"

namespace cubesim {

struct ReportOptions {
  /// Leave out wall-clock fields (wall_s, events_per_s), the only ones that differ between two
  /// runs of the same config: the report is then bit-identical run after run.
  bool reproducible = false;
  EngineKind engine = EngineKind::cycle;
  /// A run stopped by this signal (SIGINT, SIGTERM) before its last point: the report holds the
  /// points it finished and says so ("partial"); 0: the run finished.
  int interrupted_by = 0;
  std::string resume_command;  ///< the command that finishes an interrupted run
  /// What the command line changed in the config ("--machine x", "--set params.M=1024"): the
  /// report says what ran, not only which file it started from.
  std::vector<std::string> command_line;
};

ojson machine_json(const Machine& m);
ojson prediction_json(const Prediction& p);
/// `cubesim predict --json` ("cubesim.prediction/1"): each point's prediction, no run.
ojson predictions_json(const Experiment& ex);
/// The "simulated" object of a run: time, critical path, counts, links, busy times.
ojson simulated_json(const RunStats& st, const ReportOptions& opt);
/// The "simgrid" object of a run (--engine simgrid|both, docs/simgrid.md).
ojson simgrid_json(const RunOutcome& o, const ReportOptions& opt);
ojson report_json(const Experiment& ex, const std::vector<RunOutcome>& runs, const ReportOptions& opt);
std::string report_csv(const Experiment& ex, const std::vector<RunOutcome>& runs, const ReportOptions& opt);
std::string report_text(const Experiment& ex, const std::vector<RunOutcome>& runs, const ReportOptions& opt = {});

}  // namespace cubesim
