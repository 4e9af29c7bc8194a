#pragma once
/// Topologies as JSON: {"kind": "hypercube", "dim": n} or {"kind": "mesh"|"torus", "shape": [...]}.
/// Used by configs, machine presets (default_topology) and trace headers.
#include <nlohmann/json.hpp>
#include <string>

#include "sim/topology.hpp"

namespace cubesim {

using ojson = nlohmann::ordered_json;

/// Parses a topology object. Throws InputError naming `file` and the JSON pointer.
Topology parse_topology(const ojson& t, const std::string& file, const std::string& pointer);
ojson topology_to_json(const Topology& t);

}  // namespace cubesim
