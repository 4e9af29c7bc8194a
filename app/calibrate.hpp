#pragma once
/// `cubesim calibrate` (docs/calibrate.md): fits time keys of a machine (tau, t_c, ...) to times
/// measured on a real machine, by nonlinear least squares on the simulated times of each
/// measurement's run (Levenberg-Marquardt, finite-difference Jacobians), with 95 % intervals
/// from the Jacobian at the optimum, and writes the calibrated machine as a machine file.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/registry.hpp"
#include "app/config.hpp"
#include "app/runner.hpp"
#include "machines/machine_keys.hpp"

namespace cubesim {

using ojson = nlohmann::ordered_json;

/// One measurement: a row of MEASURED.csv.
struct MeasuredRow {
  int line = 0;                                                 ///< in the CSV, from 1
  std::string config;                                           ///< as written in the CSV
  std::string config_path;                                      ///< resolved against the CSV's folder
  std::vector<std::pair<std::string, std::string>> cells;       ///< override column -> cell text (non-empty cells)
  std::vector<std::pair<std::string, std::string>> cell_where;  ///< override column -> "line L, column C (KEY)"
  double time_s = 0;                                            ///< the measured time
  double weight = 1;
};

/// MEASURED.csv parsed (no config loaded yet).
struct MeasuredTable {
  std::string file;
  std::vector<std::string> columns;  ///< the header's names
  std::vector<MeasuredRow> rows;
};

/// Parses MEASURED.csv's text: the header (config, time, optional weight, and config keys as a
/// sweep names them), then the rows. `fitted`: keys no column may set (machine_overrides.KEY).
/// InputError at `file` and the line (and column) for anything wrong.
MeasuredTable parse_measured(const std::string& text, const std::string& file,
                             const std::vector<std::string>& fitted = {});

/// "tau,t_c" -> the time keys to fit. InputError (--fit) for an unknown key, a key that is not a
/// time, a key named twice, or none.
std::vector<const MachineKey*> parse_fit_keys(const std::string& text);

/// What `cubesim calibrate` is asked to do.
struct CalibrateOptions {
  std::string measured;   ///< MEASURED.csv
  std::string machine;    ///< --machine: a preset name or a machine file
  std::string fit;        ///< --fit KEY,...
  std::string out;        ///< --out FILE: the calibrated machine file; empty: none
  bool absolute = false;  ///< --residuals absolute: sim - measured in seconds (default relative)
  int jobs = 0;           ///< runs at once; 0: one per core
  int max_iterations = 50;
  RunLimits limits;
};

/// One fitted key.
struct FittedKey {
  std::string key;
  double base_s = 0;   ///< --machine's value
  double value_s = 0;  ///< the fitted value (rounded to a picosecond, as the machine holds it)
  std::int64_t value_ps = 0;
  std::optional<double> half_width_s;  ///< the 95 % interval's half-width; none when n <= p
  bool at_bound = false;               ///< the fit stopped at 0, the key's lower bound
};

/// One row at the fitted values.
struct RowFit {
  const MeasuredRow* row = nullptr;
  double simulated_s = 0;
  std::int64_t simulated_ps = 0;
  double relative_error = 0;  ///< (simulated - measured) / measured
  double residual = 0;        ///< the fit's residual: sqrt(weight) * (relative or absolute) error
};

struct Calibration {
  std::string measured;  ///< the CSV as given
  std::string base;      ///< --machine as given
  bool absolute = false;
  MeasuredTable table;
  std::vector<FittedKey> keys;
  std::vector<RowFit> rows;
  double rss = 0;
  std::size_t n = 0, p = 0;
  double s = 0;    ///< sqrt(RSS / (n - p)); 0 when n <= p
  double t95 = 0;  ///< Student's t, 97.5 % quantile, n - p degrees of freedom; 0 when n <= p
  int iterations = 0;
  std::int64_t runs = 0;  ///< simulations run, all in
  bool converged = false;
  std::string stop;  ///< why the iterations ended, in words
  Machine machine;   ///< the calibrated machine (kind calibrated, sources of the fitted keys)
  ojson default_topology;
  [[nodiscard]] bool intervals() const { return n > p; }
};

/// Loads everything (options, machine, CSV, configs: InputError for bad input), runs the fit, and
/// returns it. A run that fails (a deadlock, a spent budget) is a std::runtime_error naming the row.
Calibration calibrate(const Registry& reg, const CalibrateOptions& o);

/// The calibration as JSON ("cubesim.calibration/1").
ojson calibration_json(const Calibration& c, const std::string& machine_file);
/// The calibration as text.
std::string calibration_text(const Calibration& c);
/// The calibrated machine as a machine file (the schema of machines/presets/*.json, without
/// "order"), named `name`.
ojson calibrated_machine_json(const Calibration& c, const std::string& name);

/// The 97.5 % quantile of Student's t with `df` degrees of freedom (df >= 1).
double student_t975(double df);

}  // namespace cubesim
