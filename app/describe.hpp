#pragma once
/// The parameter reference (issue 33): `cubesim describe ALGORITHM|MACHINE`, docs/reference.md
/// (`cubesim describe --reference`, between generated markers) and configs/schema.json's
/// descriptions (`cubesim describe --schema-descriptions`, applied by scripts/gen-docs.sh), all
/// written from the same tables: kParams (algorithms/params.hpp) with the per-algorithm rows of
/// algorithms/param_docs.cpp, machine_keys() (machines/machine_keys.hpp), and the config keys here.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/registry.hpp"
#include "machines/machine_keys.hpp"

namespace cubesim {

/// A key of an experiment config, or of a part of it ("topology.kind"), or of a machine file.
struct ConfigKeyDoc {
  std::string_view key;
  std::string_view value;  ///< what it holds
  std::string_view meaning;
};
/// The top-level keys of a config (configs/schema.json's "properties"), in the schema's order.
std::span<const ConfigKeyDoc> config_key_docs();
/// The keys of "topology".
std::span<const ConfigKeyDoc> topology_key_docs();
/// The keys of a machine file other than machine keys: schema, name, description, default_topology.
std::span<const ConfigKeyDoc> machine_file_key_docs();

/// Where an algorithm runs, found by asking its own check on small topologies of each kind and
/// machines of each port model: a kind is listed where some try passes.
struct Support {
  std::string kind;                ///< "hypercube", "mesh", "torus"
  std::vector<std::string> ports;  ///< of "one", "k", "all"
};
std::vector<Support> algorithm_support(const Registry& reg, const AlgorithmInfo& a);
/// A smallest config that runs the algorithm (one line of JSON): its required params only, on the
/// first topology that its check accepts. Empty when none was found.
std::string example_config(const Registry& reg, const AlgorithmInfo& a);

/// `cubesim describe NAME`: an algorithm's or a machine preset's reference, as text. Throws
/// InputError for an unknown name, with the nearest names by edit distance.
std::string describe(const Registry& reg, const std::string& name);
std::string describe_algorithm(const Registry& reg, const AlgorithmInfo& a);
std::string describe_machine(const std::string& preset);

/// docs/reference.md's generated part: config keys, parameters, every algorithm's parameters,
/// machine keys with units, the presets.
std::string reference_markdown(const Registry& reg);
/// configs/schema.json's descriptions: {JSON pointer to the described schema: description}.
ojson schema_descriptions();

/// The candidates nearest `name` (sim/suggest.hpp's closest_names), or else those that contain it
/// ("nesbt": broadcast.nesbt, ...); at most 3.
std::vector<std::string> nearest_names(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace cubesim
