#pragma once
/// `cubesim regress SUITE.json|DIR` (docs/regress.md): predicted against simulated times, with a
/// verdict per experiment.
///
/// A suite ("cubesim.suite/1") lists experiments, each a config and what is expected of it:
///   "expect": "as_predicted" (default: the relation each prediction promises), "exact",
///             "upper_bound", or {"approx": tolerance} (|simulated/predicted - 1| <= tolerance);
/// and, in the golden file next to it (default "golden.json"), the simulated and predicted times
/// and critical-path terms of every run, so that any change of a model or a formula is noticed.
/// A folder is a suite of every config in it (suite.json there, if present, wins).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "app/runner.hpp"

namespace cubesim {

using ojson = nlohmann::ordered_json;

struct RegressOptions {
  bool update = false;        ///< rewrite the golden file with the current values
  bool reproducible = false;  ///< no wall-clock fields in the summary
  RunLimits limits;           ///< --max-events, --max-memory
};

struct ExperimentVerdict {
  std::string id;  ///< the config's path relative to the suite
  bool pass = false;
  std::size_t runs = 0;
  std::string expect;  ///< the expectation, as text
  double min_ratio = 0, max_ratio = 0;
  std::string reason;                       ///< why it failed (the first reason), or "" when it passed
  std::vector<std::string> failures;        ///< every reason, run by run (reason is the first)
  std::vector<std::string> golden_changes;  ///< with --update: what changed
};

struct RegressSummary {
  std::string suite;
  std::vector<ExperimentVerdict> experiments;
  bool golden_written = false;
  std::string golden_path;
  /// --update: experiments of the golden file this suite does not run, kept as they were.
  std::vector<std::string> golden_kept;
  double wall_s = 0;
  [[nodiscard]] bool pass() const;
};

/// Runs the suite. Throws InputError for a bad suite, config or golden file.
RegressSummary run_regress(const std::string& suite, const Registry& registry, const RegressOptions& opt);
ojson regress_json(const RegressSummary& s, const RegressOptions& opt);
std::string regress_csv(const RegressSummary& s);
std::string regress_text(const RegressSummary& s);

}  // namespace cubesim
