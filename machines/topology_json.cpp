#include "machines/topology_json.hpp"

#include <stdexcept>
#include <vector>

#include "sim/input_error.hpp"

namespace cubesim {

namespace {
const char* const kKinds =
    "topology.kind must be \"hypercube\", \"mesh\", \"torus\", \"mesh_of_trees\" or \"mesh_of_cliques\"";
}  // namespace

Topology parse_topology(const ojson& t, const std::string& file, const std::string& ptr) {
  auto fail = [&](const std::string& p, const std::string& msg) { throw InputError(file, p, msg); };
  if (!t.is_object()) fail(ptr, "topology must be an object such as {\"kind\": \"hypercube\", \"dim\": 5}");
  for (const auto& [k, v] : t.items())
    if (k != "kind" && k != "dim" && k != "shape")
      fail(ptr + "/" + k, "unknown key in topology (known: kind, dim, shape)");
  if (!t.contains("kind") || !t["kind"].is_string()) fail(ptr + "/kind", kKinds);
  const auto kind = t["kind"].get<std::string>();
  if (kind == "hypercube") {
    if (t.contains("shape")) fail(ptr + "/shape", "a hypercube has \"dim\", not \"shape\"");
    if (!t.contains("dim")) fail(ptr, "a hypercube needs \"dim\"");
    const ojson& d = t["dim"];
    if (!d.is_number_integer()) fail(ptr + "/dim", "dim must be an integer");
    const auto n = d.get<std::int64_t>();
    if (n < 0 || n > Topology::kMaxCubeDim)
      fail(ptr + "/dim", "dim " + std::to_string(n) + " is outside 0.." + std::to_string(Topology::kMaxCubeDim));
    return Topology::hypercube(static_cast<int>(n));
  }
  if (kind == "mesh" || kind == "torus" || kind == "mesh_of_trees" || kind == "mesh_of_cliques") {
    if (t.contains("dim")) fail(ptr + "/dim", "a " + kind + " has \"shape\", not \"dim\"");
    if (!t.contains("shape") || !t["shape"].is_array())
      fail(ptr + "/shape", "a " + kind + " needs \"shape\": a list of 1 to 3 extents");
    std::vector<std::int64_t> shape;
    std::size_t i = 0;
    for (const ojson& e : t["shape"]) {
      if (!e.is_number_integer()) fail(ptr + "/shape/" + std::to_string(i), "an extent must be an integer");
      shape.push_back(e.get<std::int64_t>());
      ++i;
    }
    try {
      return Topology::lines(kind == "torus"             ? Topology::Kind::torus
                             : kind == "mesh_of_trees"   ? Topology::Kind::mesh_of_trees
                             : kind == "mesh_of_cliques" ? Topology::Kind::mesh_of_cliques
                                                         : Topology::Kind::mesh,
                             shape);
    } catch (const std::invalid_argument& e) {
      fail(ptr + "/shape", e.what());
    }
  }
  throw InputError(file, ptr + "/kind", std::string(kKinds) + ", got \"" + kind + "\"");
}

ojson topology_to_json(const Topology& t) {
  if (t.kind() == Topology::Kind::hypercube) return {{"kind", "hypercube"}, {"dim", t.dim()}};
  ojson shape = ojson::array();
  for (int i = 0; i < t.dim(); ++i) shape.push_back(t.shape()[static_cast<std::size_t>(i)]);
  return {{"kind", t.kind_name()}, {"shape", shape}};
}

}  // namespace cubesim
