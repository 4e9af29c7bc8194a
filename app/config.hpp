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

/// Reads and parses a config file. Throws InputError.
Experiment load_experiment(const std::string& path, const Registry& registry);
/// Parses a config already read; `file` names it in errors.
Experiment parse_experiment(const std::string& text, const std::string& file, const Registry& registry);

}  // namespace cubesim
