#pragma once
/// Experiment configs ("cubesim.config/1", configs/schema.json): parsed strictly, once, into
/// typed runs (STYLE.md habit 5). Unknown keys, bad units, bad types, out-of-range values and an
/// algorithm that does not fit the topology are InputErrors naming the file and JSON pointer.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/registry.hpp"
#include "app/io.hpp"
#include "machines/topology_json.hpp"

namespace cubesim {

using ojson = nlohmann::ordered_json;

struct RunPoint {
  std::vector<std::pair<std::string, ojson>> point;  ///< swept key -> value, in sweep order
  Setup setup;
  const AlgorithmInfo* info = nullptr;  ///< the point's algorithm (a sweep may vary it)
};

struct Experiment {
  std::string file;
  std::string name;
  std::string algorithm;  ///< the config's "algorithm" (each run's may differ: RunPoint::info)
  const AlgorithmInfo* info = nullptr;
  bool algorithm_swept = false;  ///< "algorithm" is a sweep axis: reports name each run's
  /// The swept keys whose values compete ("compare"; by default "algorithm" when it is swept): at
  /// each point of the other swept keys the reports name the fastest run's values, its margin, and
  /// how often each algorithm wins.
  std::vector<std::string> compare;
  bool verify = true;
  std::vector<RunPoint> runs;
};

struct ResolvedMachine {
  Machine machine;
  ojson default_topology;  ///< null when the machine names none
};
/// A preset name or an inline machine object.
ResolvedMachine resolve_machine(const ojson& m, const std::string& file, const std::string& pointer);

/// A preset name or a machine file (an inline machine object in a JSON file), as `replay --machine`
/// and `calibrate --machine` take it. InputError at `option` when `arg` is neither; `also` names
/// the option's other values in that message (e.g. "\"recorded\"").
ResolvedMachine machine_argument(const std::string& arg, const std::string& option, const std::string& also = "");

/// A config key set to one value for every run, from outside the config (`cubesim calibrate`'s
/// columns): a key a sweep may name (is_sweep_key), set as a one-value sweep axis would set it,
/// in place of the config's own axis of that key if it sweeps one. An error in the value is an
/// InputError at `file` and `where` (e.g. the CSV's line and column), not at the config.
struct KeyOverride {
  std::string key;
  ojson value;
  std::string file, where;
  /// `cubesim run --set`: a key no sweep may name (name, verify, compare, sweep.KEY, ...) is set
  /// in the config's JSON before it is read, and checked as if the file said it.
  bool any_path = false;
};
/// `--set KEY=VALUE` (run, predict, validate): VALUE is JSON when it parses as JSON (1024, true,
/// [1,2], "x"), else a string (ipsc-d7, 100us); "machine.KEY" means machine_overrides.KEY, so that
/// a preset's parameter can be changed; "sweep.KEY" sets one axis of the sweep. InputError at
/// "--set" when the text is not KEY=VALUE.
KeyOverride parse_set_option(const std::string& text);
/// Whether a sweep (or a KeyOverride) may name `key`: algorithm, machine, mode, topology.dim,
/// topology.shape, topology.kind, params.X or machine_overrides.X.
bool is_sweep_key(const std::string& key);
/// The keys is_sweep_key accepts, in words, for error messages.
inline constexpr const char* kSweepKeys =
    "algorithm, machine, mode, topology.dim, topology.shape, topology.kind, params.X or machine_overrides.X";

/// Reads and parses a config file. Throws InputError.
Experiment load_experiment(const std::string& path, const Registry& registry,
                           const std::vector<KeyOverride>& overrides = {});
/// Parses a config already read; `file` names it in errors.
Experiment parse_experiment(const std::string& text, const std::string& file, const Registry& registry,
                            const std::vector<KeyOverride>& overrides = {});

}  // namespace cubesim
