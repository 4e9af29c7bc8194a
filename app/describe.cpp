#include "app/describe.hpp"

#include <algorithm>
#include <array>

#include "algorithms/param_docs.hpp"
#include "app/config.hpp"
#include "app/markdown.hpp"
#include "machines/machine_loader.hpp"
#include "sim/input_error.hpp"
#include "sim/suggest.hpp"
#include "sim/time.hpp"

namespace cubesim {

namespace {

constexpr std::array kConfigKeys{
    ConfigKeyDoc{"schema", "\"cubesim.config/1\"", "the config format and its version"},
    ConfigKeyDoc{"name", "a string", "the experiment's name, in reports and output files (default: the file's stem)"},
    ConfigKeyDoc{"description", "a string", "free text for the reader; cubesim ignores it"},
    ConfigKeyDoc{"machine", "a preset name, \"presets[:KEY=VALUE,...]\", a machine file (.json) or a machine object",
                 "the machine model: `cubesim list machines`, `cubesim describe MACHINE`; its keys below"},
    ConfigKeyDoc{"machine_overrides", "an object of machine keys",
                 "machine keys that replace the machine's own (the overridable ones below)"},
    ConfigKeyDoc{"topology", "an object: kind, dim or shape",
                 "the network: a hypercube of dim dimensions, or a mesh, torus, mesh of trees or mesh of cliques of "
                 "shape (default: the machine's default_topology)"},
    ConfigKeyDoc{"algorithm", "an algorithm name",
                 "what runs: `cubesim list algorithms`, `cubesim describe ALGORITHM`"},
    ConfigKeyDoc{"params", "an object of parameters",
                 "the algorithm's parameters (the keys it takes: `cubesim describe ALGORITHM`)"},
    ConfigKeyDoc{"sweep", "an object: dotted key -> list of values",
                 "run the cross product of the lists, e.g. {\"topology.dim\": [2, 3, 4], \"params.M\": [16, 64]}; "
                 "keys: algorithm, machine, mode, topology.dim, topology.shape, topology.kind, params.X, "
                 "machine_overrides.X"},
    ConfigKeyDoc{"verify", "true or false", "check every node's data at the end of a run (default true)"},
    ConfigKeyDoc{"mode", "\"data\" or \"timing\"",
                 "data: real payloads, verified (default); timing: sizes only, for large runs"},
    ConfigKeyDoc{"compare", "a list of swept keys",
                 "the swept keys whose values compete: reports name the fastest at each point (default: "
                 "\"algorithm\" when it is swept)"},
};

constexpr std::array kTopologyKeys{
    ConfigKeyDoc{"kind", "\"hypercube\", \"mesh\", \"torus\", \"mesh_of_trees\" or \"mesh_of_cliques\"",
                 "the network's kind (the last two: Gao §4's 3-D mesh with every line a balanced binary tree of its "
                 "own nodes, or a clique; docs/meshes.md)"},
    ConfigKeyDoc{"dim", "an integer 0-24", "hypercube: the dimension n, N = 2^n nodes"},
    ConfigKeyDoc{"shape", "a list of 1-3 extents", "all kinds but hypercube: the nodes along each axis, axis 0 first"},
};

constexpr std::array kMachineFileKeys{
    ConfigKeyDoc{"schema", "\"cubesim.machine/1\"", "the machine format and its version"},
    ConfigKeyDoc{"name", "a string", "the machine's name in reports"},
    ConfigKeyDoc{"description", "a string", "free text: what machine this models, from which paper"},
    ConfigKeyDoc{"default_topology", "a topology object", "the topology a config runs on when it gives none"},
};

Machine preset_machine(const std::string& name) {
  return machine_from_json(*preset_json(name), "machines/presets/" + name + ".json", "", true);
}

/// A time key's value as "1.5 ms"; the others as their JSON value.
std::string key_value(const MachineKey& k, const Machine& m) {
  const ojson v = k.get(k, m);
  if (k.kind == KeyKind::time) return format_time(parse_time(v.get<std::string>()));
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string need_text(Need n) {
  switch (n) {
    case Need::always:
      return "every machine";
    case Need::preset:
      return "every preset";
    case Need::optional:
      break;
  }
  return "no";
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

/// Wraps `text` at `width` columns, every line after the first indented by `indent` spaces.
std::string wrap(const std::string& text, std::size_t indent, std::size_t width = 100) {
  std::string out, line;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    at = end + 1;
  }
  return out + line;
}

bool takes(const AlgorithmInfo& a, const std::string& key) {
  return std::find(a.params.begin(), a.params.end(), key) != a.params.end();
}
bool requires_key(const AlgorithmInfo& a, const std::string& key) {
  return std::find(a.required.begin(), a.required.end(), key) != a.required.end();
}

/// The values tried for a parameter: small, and what the checks of every algorithm accept.
ojson try_value(const std::string& key, int cube_dim) {
  if (key == "perm") {
    ojson p = ojson::array();
    for (int i = cube_dim - 1; i >= 0; --i) p.push_back(i);
    return p;
  }
  if (key == "root" || key == "axis" || key == "variant") return 0;
  if (key == "k") return 1;
  return 16;  // M, P, Q, R: elements or matrix sizes
}

struct Try {
  ojson topology;
  int cube_dim = 0;
  std::string machine;
};

std::vector<Try> tries(const std::string& kind) {
  std::vector<Try> v;
  if (kind == "hypercube") {
    for (int d : {3, 2, 4, 6, 1, 5}) v.push_back({{{"kind", "hypercube"}, {"dim", d}}, d, "ipsc-nx"});
  } else {
    for (const std::vector<int>& shape : std::vector<std::vector<int>>{{4, 4}, {8}, {2, 2, 2}, {4, 2}, {4, 4, 4}})
      v.push_back({{{"kind", kind}, {"shape", shape}}, 0, "mesh2d"});
  }
  return v;
}

/// The config of a try: the algorithm's required params (and M where it takes M without
/// requiring it, as FOH's matrix order), the port model overridden where `ports` is not null.
ojson try_config(const AlgorithmInfo& a, const Try& t, bool with_m, const ojson& ports) {
  ojson params = ojson::object();
  for (const std::string& k : a.params)
    if (requires_key(a, k) || (with_m && k == "M")) params[k] = try_value(k, t.cube_dim);
  ojson c = {{"schema", "cubesim.config/1"}, {"machine", t.machine}};
  if (!ports.is_null()) c["machine_overrides"] = {{"ports", ports}};
  c["topology"] = t.topology;
  c["algorithm"] = a.name;
  c["params"] = params;
  return c;
}

bool accepted(const Registry& reg, const ojson& config) {
  try {
    parse_experiment(config.dump(), "describe", reg);
    return true;
  } catch (const InputError&) {
    return false;
  }
}

/// The first config of `kind` that the algorithm accepts with `ports` (null: the machine's own).
std::optional<ojson> first_accepted(const Registry& reg, const AlgorithmInfo& a, const std::string& kind,
                                    const ojson& ports) {
  for (const Try& t : tries(kind))
    for (bool with_m : {false, true}) {
      if (with_m && (!takes(a, "M") || requires_key(a, "M"))) continue;
      ojson c = try_config(a, t, with_m, ports);
      if (accepted(reg, c)) return c;
    }
  return std::nullopt;
}

constexpr std::array<const char*, 5> kKinds{"hypercube", "mesh", "torus", "mesh_of_trees", "mesh_of_cliques"};

std::string support_text(const std::vector<Support>& s) {
  std::vector<std::string> parts;
  for (const Support& x : s) parts.push_back(x.kind + " (ports " + join(x.ports, ", ") + ")");
  return parts.empty() ? "none found" : join(parts, "; ");
}

std::string param_line_required(const AlgorithmInfo& a, const std::string& key) {
  return requires_key(a, key) ? "required" : "optional";
}

}  // namespace

std::span<const ConfigKeyDoc> config_key_docs() { return kConfigKeys; }
std::span<const ConfigKeyDoc> topology_key_docs() { return kTopologyKeys; }
std::span<const ConfigKeyDoc> machine_file_key_docs() { return kMachineFileKeys; }

std::vector<Support> algorithm_support(const Registry& reg, const AlgorithmInfo& a) {
  std::vector<Support> out;
  for (const char* kind : kKinds) {
    Support s{kind, {}};
    for (const auto& [name, ports] :
         std::array<std::pair<const char*, ojson>, 3>{{{"one", "one"}, {"k", 2}, {"all", "all"}}})
      if (first_accepted(reg, a, kind, ports)) s.ports.push_back(name);
    if (!s.ports.empty()) out.push_back(std::move(s));
  }
  return out;
}

std::string example_config(const Registry& reg, const AlgorithmInfo& a) {
  for (const char* kind : kKinds)
    if (auto c = first_accepted(reg, a, kind, nullptr)) return c->dump();
  return "";
}

std::vector<std::string> nearest_names(const std::string& name, const std::vector<std::string>& candidates) {
  std::vector<std::string> out = closest_names(name, candidates);
  if (out.empty() && name.size() >= 3)  // a part of a name: "nesbt" -> broadcast.nesbt
    for (const std::string& c : candidates)
      if (c.find(name) != std::string::npos && out.size() < 3) out.push_back(c);
  return out;
}

std::string describe_algorithm(const Registry& reg, const AlgorithmInfo& a) {
  std::string s = a.name + ": " + a.summary + "\n";
  s += "source:   " + a.source + "\n";
  s += "runs on:  " + support_text(algorithm_support(reg, a)) + "\n";
  s += "\nparams (the config's \"params\"; N = 2^n nodes):\n";
  for (const std::string& k : a.params) {
    const ParamDoc d = param_doc(a.name, k);
    s += "  " + k + "  " + param_line_required(a, k) + ", " + d.unit + "\n";
    s += "      " + wrap(d.meaning, 6) + "\n";
    s += "      " + (requires_key(a, k) ? std::string("required") : "default: " + d.default_text) +
         "; accepted: " + d.bounds + "\n";
  }
  s += "\nprediction (the paper's formula; the relation a run is held to):\n";
  for (const auto& [ports, doc] : {std::pair{"one-port (and k-port)", &a.one_port}, std::pair{"all-port", &a.all_port}})
    s += "  " + std::string(ports) + ": " + wrap(doc->row, 4) + "\n      relation: " + wrap(doc->relation, 16) + "\n";
  const std::string ex = example_config(reg, a);
  if (!ex.empty()) s += "\nexample config (the required params only):\n  " + ex + "\n";
  return s;
}

std::string describe_machine(const std::string& preset) {
  const std::optional<ojson> j = preset_json(preset);
  if (!j) throw InputError("cubesim describe", "", "no machine preset \"" + preset + "\"");
  const Machine m = preset_machine(preset);
  std::string s = preset + ": " + j->value("description", std::string()) + "\n";
  if (j->contains("default_topology")) s += "default topology: " + (*j)["default_topology"].dump() + "\n";
  s += "\nkeys (a machine file or inline machine; * overridable in machine_overrides; times take a unit: ps ns us "
       "ms s):\n";
  for (const MachineKey& k : machine_keys()) {
    const std::string key(k.key);
    std::string line = "  " + key + (k.overridable ? "*" : " ");
    line.resize(std::max<std::size_t>(line.size() + 1, 26), ' ');
    std::string value = key_value(k, m) + (k.unit.empty() ? "" : " " + std::string(k.unit));
    s += line + value + "\n      " + wrap(std::string(k.meaning), 6) + "\n";
    if (j->contains(key) && (*j)[key].is_object() && (*j)[key].contains("source"))
      s += "      source: " + wrap((*j)[key]["source"].get<std::string>(), 14) + "\n";
    else if (!j->contains(key))
      s += "      (not in the preset: the default)\n";
  }
  return s;
}

std::string describe(const Registry& reg, const std::string& name) {
  if (const AlgorithmInfo* a = reg.find(name)) return describe_algorithm(reg, *a);
  if (preset_json(name)) return describe_machine(name);
  std::vector<std::string> names;
  for (const AlgorithmInfo* a : reg.all()) names.push_back(a->name);
  for (const std::string& n : preset_names()) names.push_back(n);
  const std::vector<std::string> near = nearest_names(name, names);
  std::string msg = "no algorithm or machine preset \"" + name + "\"";
  for (std::size_t i = 0; i < near.size(); ++i)
    msg += std::string(i == 0                 ? " (did you mean "
                       : i + 1 == near.size() ? " or "
                                              : ", ") +
           "\"" + near[i] + "\"" + (i + 1 == near.size() ? "?)" : "");
  throw InputError("cubesim describe", "", msg + "; cubesim list algorithms, cubesim list machines");
}

std::string reference_markdown(const Registry& reg) {
  std::string s;
  s += "## Config keys\n\nA config (`configs/schema.json`, `\"schema\": \"cubesim.config/1\"`) is one JSON object:\n\n";
  s += "| key | value | meaning |\n|---|---|---|\n";
  for (const ConfigKeyDoc& k : kConfigKeys)
    s += "| `" + std::string(k.key) + "` | " + markdown_cell(std::string(k.value)) + " | " +
         markdown_cell(std::string(k.meaning)) + " |\n";
  s += "\n`topology`:\n\n| key | value | meaning |\n|---|---|---|\n";
  for (const ConfigKeyDoc& k : kTopologyKeys)
    s += "| `" + std::string(k.key) + "` | " + markdown_cell(std::string(k.value)) + " | " +
         markdown_cell(std::string(k.meaning)) + " |\n";

  s += "\n## Parameters\n\nThe keys of `params`, as every algorithm reads them; where a key means something "
       "different for an algorithm, its own row is in the next section (`cubesim describe ALGORITHM`). N = 2^n is "
       "the number of nodes. **Packet size**: the param `B` is the packet size in force; the machine key "
       "`packet_elements` (B_m) is the largest packet the machine allows, and the default of `B`.\n\n";
  s += "| key | unit | default | accepted | meaning |\n|---|---|---|---|---|\n";
  for (const ParamSpec& p : kParams)
    s += "| `" + std::string(p.key) + "` | " + markdown_cell(std::string(p.unit)) + " | " +
         markdown_cell(std::string(p.default_text)) + " | " + markdown_cell(std::string(p.bounds)) + " | " +
         markdown_cell(std::string(p.meaning)) + " |\n";

  s += "\n## Algorithms\n\nEvery algorithm's parameters (**bold**: required), where it runs (found by its own "
       "check), and the smallest config it accepts. The formula each one is held to: docs/primitives.md and "
       "`cubesim describe ALGORITHM`.\n";
  for (const AlgorithmInfo* a : reg.all()) {
    s += "\n### `" + a->name + "`\n\n" + a->summary + ". " + a->source +
         ".\n\nRuns on: " + support_text(algorithm_support(reg, *a)) + ".\n\n";
    s += "| key | unit | default | accepted | meaning |\n|---|---|---|---|---|\n";
    for (const std::string& k : a->params) {
      const ParamDoc d = param_doc(a->name, k);
      const bool req = requires_key(*a, k);
      s += "| " + (req ? "**`" + k + "`**" : "`" + k + "`") + " | " + markdown_cell(d.unit) + " | " +
           markdown_cell(req ? std::string("required") : d.default_text) + " | " + markdown_cell(d.bounds) + " | " +
           markdown_cell(d.meaning) + " |\n";
    }
    const std::string ex = example_config(reg, *a);
    if (!ex.empty()) s += "\nExample: `" + ex + "`\n";
  }

  s += "\n## Machine keys\n\nThe keys of a machine: a preset (`machines/presets/*.json`), a machine file, an inline "
       "`machine` object; the overridable ones also in `machine_overrides`. Times are a number of seconds or a "
       "string with a unit (`ps ns us ms s`); the unit column says what a time is per. A machine file also has ";
  for (std::size_t i = 0; i < kMachineFileKeys.size(); ++i)
    s += std::string(i == 0                             ? ""
                     : i + 1 == kMachineFileKeys.size() ? " and "
                                                        : ", ") +
         "`" + std::string(kMachineFileKeys[i].key) + "` (" + std::string(kMachineFileKeys[i].meaning) + ")";
  s += "; a preset also `order` (its place in `cubesim list machines`).\n\n| key | unit | meaning | given by | "
       "overridable | default |\n|---|---|---|---|---|---|\n";
  const Machine defaults;
  for (const MachineKey& k : machine_keys()) {
    const std::string def = k.need == Need::always ? "" : key_value(k, defaults);
    s += "| `" + std::string(k.key) + "` | " + markdown_cell(k.unit.empty() ? "a name" : std::string(k.unit)) + " | " +
         markdown_cell(std::string(k.meaning)) + " | " + need_text(k.need) + " | " + (k.overridable ? "yes" : "no") +
         " | " + (def.empty() ? std::string("—") : markdown_cell(def)) + " |\n";
  }

  s += "\n## Machine presets\n\n`cubesim describe PRESET` lists every key with its value and source.\n\n";
  s += "| preset | tau | t_c (per element) | B_m = packet_elements | ports | switching | kind |\n"
       "|---|---|---|---|---|---|---|\n";
  for (const std::string& n : preset_names()) {
    const Machine m = preset_machine(n);
    const auto v = [&](const char* key) { return key_value(*find_machine_key(key), m); };
    s += "| `" + n + "` | " + v("tau") + " | " + v("t_c") + " | " + v("packet_elements") + " | " + v("ports") + " | " +
         v("switching") + " | " + v("kind") + " |\n";
  }
  return s;
}

ojson schema_descriptions() {
  ojson d = ojson::object();
  for (const ConfigKeyDoc& k : kConfigKeys)
    d["/properties/" + std::string(k.key)] = std::string(k.meaning) + ". Value: " + std::string(k.value) + ".";
  for (const ConfigKeyDoc& k : kTopologyKeys)
    d["/$defs/topology/properties/" + std::string(k.key)] = std::string(k.meaning) + ".";
  for (const ParamSpec& p : kParams)
    d["/properties/params/properties/" + std::string(p.key)] = param_schema_description(p);
  for (const MachineKey& k : machine_keys()) {
    if (k.overridable) d["/properties/machine_overrides/properties/" + std::string(k.key)] = machine_key_description(k);
    d["/$defs/inlineMachine/properties/" + std::string(k.key)] = machine_key_description(k);
  }
  for (const ConfigKeyDoc& k : kMachineFileKeys)
    d["/$defs/inlineMachine/properties/" + std::string(k.key)] = std::string(k.meaning) + ".";
  return d;
}

}  // namespace cubesim
