#include "app/config.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "app/io.hpp"
#include "app/params_json.hpp"
#include "machines/machine_loader.hpp"
#include "sim/input_error.hpp"
#include "sim/suggest.hpp"

namespace cubesim {

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

const std::set<std::string> kTopKeys = {"schema",   "name",      "description", "machine", "machine_overrides",
                                        "topology", "algorithm", "params",      "sweep",   "verify",
                                        "mode",     "compare"};

}  // namespace

ResolvedMachine resolve_machine(const ojson& mj, const std::string& file, const std::string& ptr) {
  ResolvedMachine r;
  if (is_preset_selector(mj))
    throw InputError(file, ptr,
                     "the preset selector \"" + mj.get<std::string>() +
                         "\" names several machines: it stands for a config's \"machine\" or a whole "
                         "\"sweep\": {\"machine\": ...} axis, not for one value of a list");
  if (mj.is_string() && !preset_json(mj.get<std::string>()) && mj.get<std::string>().ends_with(".json")) {
    // A machine file (the format of machines/presets/*.json), relative to the config's folder.
    namespace fs = std::filesystem;
    const fs::path name = mj.get<std::string>();
    const fs::path path = name.is_absolute() || file.empty() ? name : fs::path(file).parent_path() / name;
    if (std::error_code ec; !fs::is_regular_file(path, ec))
      throw InputError(file, ptr,
                       "no machine file \"" + path.string() + "\" (a machine is a preset: " + join(preset_names()) +
                           "; a machine file, NAME.json, relative to the config; or an object)");
    const ojson m = read_json_file(path.string());
    if (!m.is_object()) throw InputError(path.string(), "", "a machine file holds one machine object");
    return resolve_machine(m, path.string(), "");
  }
  if (mj.is_string()) {
    auto p = preset_json(mj.get<std::string>());
    if (!p)
      throw InputError(file, ptr,
                       "unknown machine \"" + mj.get<std::string>() + "\"" +
                           did_you_mean(mj.get<std::string>(), preset_names()) + " (known: " + join(preset_names()) +
                           "; or a machine file, NAME.json)");
    r.machine = machine_from_json(*p, "machines/presets/" + mj.get<std::string>() + ".json", "", true);
    if (p->contains("default_topology")) r.default_topology = (*p)["default_topology"];
  } else if (mj.is_object()) {
    r.machine = machine_from_json(mj, file, ptr, false);
    if (mj.contains("default_topology")) r.default_topology = mj["default_topology"];
  } else {
    throw InputError(file, ptr, "machine must be a preset name or a machine object");
  }
  return r;
}

ResolvedMachine machine_argument(const std::string& arg, const std::string& option, const std::string& also) {
  if (preset_json(arg)) return resolve_machine(ojson(arg), "", option);
  if (std::error_code ec; std::filesystem::exists(arg, ec)) return resolve_machine(read_json_file(arg), arg, "");
  throw InputError("", option,
                   "\"" + arg + "\" is neither a machine preset (" + join(preset_names()) + "), " +
                       (also.empty() ? "" : also + ", ") + "nor a file");
}

namespace {

std::vector<std::string> algorithm_names(const Registry& registry) {
  std::vector<std::string> names;
  for (const AlgorithmInfo* a : registry.all()) names.push_back(a->name);
  return names;
}

/// The names of an operation ("broadcast.sbtt" -> broadcast.*), or a hint at the whole list:
/// sixty names in one line help nobody.
std::string unknown_algorithm(const std::string& name, const std::vector<std::string>& names) {
  std::string msg = "unknown algorithm \"" + name + "\"" + did_you_mean(name, names);
  const std::string op = name.substr(0, name.find('.'));
  std::vector<std::string> same_op;
  for (const std::string& n : names)
    if (n.rfind(op + ".", 0) == 0) same_op.push_back(n);
  if (!same_op.empty() && same_op.size() <= 12) return msg + " (" + op + ": " + join(same_op) + ")";
  return msg + " (`cubesim list algorithms` names all " + std::to_string(names.size()) + ")";
}

/// The parameter a too-large problem is named by: the largest size given.
std::string size_pointer(const Params& p) {
  const std::pair<const char*, std::int64_t> sizes[] = {{"M", p.M}, {"P", p.P}, {"Q", p.Q}, {"R", p.R}};
  const auto* most = std::max_element(std::begin(sizes), std::end(sizes),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
  return most->second > 0 ? "/params/" + std::string(most->first) : "/params";
}

struct Parser {
  const std::string& file;
  const Registry& registry;
  [[noreturn]] void fail(const std::string& ptr, const std::string& msg) const { throw InputError(file, ptr, msg); }
  Topology topology(const ojson& t, const std::string& ptr) const { return parse_topology(t, file, ptr); }

  /// One fully resolved config (no sweep) -> Setup.
  /// `lenient`: the algorithm is swept, so a parameter another swept algorithm takes is ignored
  /// where this one takes none (docs/matmul.md "Comparing algorithms").
  Setup setup(const ojson& j, const AlgorithmInfo& info, const std::set<std::string>& lenient = {}) const {
    Setup s;
    // Machine.
    ResolvedMachine rm = resolve_machine(j["machine"], file, "/machine");
    s.machine = std::move(rm.machine);
    const ojson default_topology = std::move(rm.default_topology);
    if (j.contains("machine_overrides")) apply_overrides(s.machine, j["machine_overrides"], file, "/machine_overrides");
    // Topology.
    if (j.contains("topology"))
      s.topology = topology(j["topology"], "/topology");
    else if (!default_topology.is_null())
      s.topology = topology(default_topology, "/machine/default_topology");
    else
      fail("/topology", "missing topology (and the machine has no default_topology)");
    // Params.
    const ojson& pj = j.contains("params") ? j["params"] : ojson::object();
    if (!pj.is_object()) fail("/params", "params must be an object");
    std::set<std::string> accepted(info.params.begin(), info.params.end());
    for (const auto& [k, v] : pj.items()) {
      const std::string ptr = "/params/" + k;
      if (accepted.count(k) == 0 && lenient.count(k)) continue;
      if (accepted.count(k) == 0)
        fail(ptr, find_param(k) != nullptr
                      ? info.name + " takes no parameter \"" + k + "\" (it takes: " + join(info.params) + ")"
                      : "unknown parameter \"" + k + "\"" + did_you_mean(k, info.params) + " (" + info.name +
                            " takes: " + join(info.params) + ")");
      if (const ParamSpec* spec = find_param(k))
        if (auto e = param_from_json(s.params, *spec, v)) fail(ptr, *e);
    }
    for (const std::string& r : info.required)
      if (!pj.contains(r)) fail("/params", info.name + " needs parameter \"" + r + "\"");
    if (!pj.contains("B")) s.params.B = s.machine.packet_elements;
    if (s.machine.switching == Switching::pipelined) {
      if (s.topology.kind() != Topology::Kind::hypercube)
        fail("/topology", "the pipelined (bit-serial router) switching runs on hypercubes only");
      if (s.machine.t_hop == Time{} && s.machine.t_c == Time{})
        fail("/machine", "a pipelined machine needs t_hop or t_c above 0 (a dimension cycle must take time)");
    }
    // Mode.
    if (j.contains("mode")) {
      const ojson& m = j["mode"];
      if (!m.is_string() || (m.get<std::string>() != "data" && m.get<std::string>() != "timing"))
        fail("/mode", "mode must be \"data\" (real payloads, verified) or \"timing\" (sizes only)");
      s.data_mode = m.get<std::string>() == "data";
    }
    if (auto e = check_sizes(s)) fail(e->pointer, e->message);
    if (auto e = info.check(s)) fail(e->pointer, e->message);
    // The prediction is formed here too, so that a time beyond the 64-bit picosecond clock is
    // bad input found before any point runs, not an error after some have.
    try {
      (void)info.predict(s);
    } catch (const std::overflow_error& e) {
      fail(size_pointer(s.params),
           std::string(e.what()) + ": make the problem smaller (or the machine's costs shorter)");
    }
    return s;
  }
};

/// "topology.dim" -> "/topology/dim"; '~' and '/' inside a key escaped as RFC 6901 says.
std::string dotted_to_pointer(const std::string& key) {
  std::string p = "/";
  for (char ch : key) {
    if (ch == '.')
      p += '/';
    else if (ch == '~')
      p += "~0";
    else if (ch == '/')
      p += "~1";
    else
      p += ch;
  }
  return p;
}

}  // namespace

bool is_sweep_key(const std::string& key) {
  static const std::set<std::string> exact = {"algorithm",      "machine",       "topology.dim",
                                              "topology.shape", "topology.kind", "mode"};
  if (exact.count(key)) return true;
  for (const char* prefix : {"params.", "machine_overrides."})
    if (key.rfind(prefix, 0) == 0 && key.size() > std::string(prefix).size() &&
        key.find('.', std::string(prefix).size()) == std::string::npos)
      return true;
  return false;
}

KeyOverride parse_set_option(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("", "--set",
                     "\"" + text + "\" is not KEY=VALUE (e.g. --set params.M=1024, --set machine.tau=100us)");
  KeyOverride o;
  o.key = text.substr(0, eq);
  const std::string v = text.substr(eq + 1);
  o.value = ojson::parse(v, nullptr, false);
  if (o.value.is_discarded()) o.value = v;
  o.where = "--set " + o.key;
  if (o.key.rfind("machine.", 0) == 0) o.key = "machine_overrides." + o.key.substr(8);
  o.any_path = true;
  return o;
}

namespace {

/// A --set of a key no sweep names, written into the config's JSON: "sweep.KEY" is one axis of
/// the sweep (its keys are dotted), anything else a dotted path of objects.
void apply_set(ojson& j, const KeyOverride& o, const std::string& file) {
  const auto fail = [&](const std::string& msg) { throw InputError(file, o.where, msg); };
  if (!j.is_object()) return;  // the config's own error comes first
  if (o.key.rfind("sweep.", 0) == 0 && o.key.size() > 6) {
    if (j.contains("sweep") && !j["sweep"].is_object()) fail("the config's sweep is not an object");
    j["sweep"][o.key.substr(6)] = o.value;
    return;
  }
  ojson* at = &j;
  std::size_t start = 0;
  for (;;) {
    const auto dot = o.key.find('.', start);
    const std::string part = o.key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty()) fail("\"" + o.key + "\" is not a dotted config key");
    if (dot == std::string::npos) {
      (*at)[part] = o.value;
      return;
    }
    if (at->contains(part) && !(*at)[part].is_object())
      fail("\"" + o.key.substr(0, dot) + "\" is not an object in the config, so it has no \"" + o.key.substr(dot + 1) +
           "\"");
    at = &(*at)[part];
    start = dot + 1;
  }
}

/// The JSON pointer a --set edit writes to (for naming it in errors).
std::string set_pointer(const KeyOverride& o) {
  if (o.key.rfind("sweep.", 0) == 0) return "/sweep/" + o.key.substr(6);
  return dotted_to_pointer(o.key);
}

/// The config's JSON (after any --set edits) -> typed runs.
Experiment parse_config_json(const ojson& j, const std::string& file, const Registry& registry,
                             const std::vector<KeyOverride>& overrides);

}  // namespace

Experiment parse_experiment(const std::string& text, const std::string& file, const Registry& registry,
                            const std::vector<KeyOverride>& overrides) {
  ojson j = parse_json_text(text, file);
  std::vector<const KeyOverride*> edits;  // --set keys written into the JSON
  for (const KeyOverride& o : overrides)
    if (o.any_path && !is_sweep_key(o.key)) {
      apply_set(j, o, file);
      edits.push_back(&o);
    }
  if (edits.empty()) return parse_config_json(j, file, registry, overrides);
  try {
    return parse_config_json(j, file, registry, overrides);
  } catch (const InputError& e) {
    // An error in a value a --set wrote names the --set, not the file's line.
    for (const KeyOverride* o : edits) {
      const std::string ptr = set_pointer(*o);
      if (e.file() == file && (e.where() == ptr || e.where().rfind(ptr + "/", 0) == 0))
        throw InputError("", o->where, e.message());
    }
    throw;
  }
}

namespace {

Experiment parse_config_json(const ojson& j, const std::string& file, const Registry& registry,
                             const std::vector<KeyOverride>& overrides) {
  Parser P{file, registry};
  if (!j.is_object()) P.fail("", "a config is a JSON object");
  for (const auto& [k, v] : j.items())
    if (kTopKeys.count(k) == 0)
      P.fail("/" + k, "unknown key" + did_you_mean(k, {kTopKeys.begin(), kTopKeys.end()}) +
                          " (known: " + join({kTopKeys.begin(), kTopKeys.end()}) + ")");
  if (!j.contains("schema")) P.fail("", "missing \"schema\": \"cubesim.config/1\"");
  if (!j["schema"].is_string() || j["schema"].get<std::string>() != "cubesim.config/1")
    P.fail("/schema", "schema must be \"cubesim.config/1\"");
  if (!j.contains("machine")) P.fail("", "missing \"machine\" (a preset name or a machine object)");
  if (!j.contains("algorithm")) P.fail("", "missing \"algorithm\"");
  if (!j["algorithm"].is_string()) P.fail("/algorithm", "algorithm must be a string");

  Experiment ex;
  ex.file = file;
  ex.algorithm = j["algorithm"].get<std::string>();
  ex.info = registry.find(ex.algorithm);
  if (ex.info == nullptr) {
    const std::vector<std::string> names = algorithm_names(registry);
    P.fail("/algorithm", unknown_algorithm(ex.algorithm, names));
  }
  if (j.contains("name")) {
    if (!j["name"].is_string() || j["name"].get<std::string>().empty())
      P.fail("/name", "name must be a non-empty string");
    ex.name = j["name"].get<std::string>();
  } else {
    ex.name = std::filesystem::path(file).stem().string();
  }
  if (j.contains("description") && !j["description"].is_string())
    P.fail("/description", "description must be a string");
  if (j.contains("verify")) {
    if (!j["verify"].is_boolean()) P.fail("/verify", "verify must be true or false");
    ex.verify = j["verify"].get<bool>();
  }

  // Sweep: the cross product, first key outermost. A preset selector (machines/machine_loader.hpp)
  // is a machine axis of the presets it names, in catalogue order: as the sweep's "machine", or as
  // the config's "machine", an axis outside every other.
  std::vector<std::pair<std::string, std::vector<ojson>>> axes;
  std::vector<std::string> selector_at;  // per axis: the pointer of the selector it came from, or ""
  const auto presets_axis = [&](const ojson& selector, const std::string& ptr) {
    std::vector<ojson> names;
    for (const std::string& n : select_presets(selector.get<std::string>(), file, ptr)) names.emplace_back(n);
    return names;
  };
  if (j.contains("sweep")) {
    const ojson& sw = j["sweep"];
    if (!sw.is_object()) P.fail("/sweep", "sweep maps dotted config keys to lists of values");
    for (const auto& [k, v] : sw.items()) {
      if (!is_sweep_key(k)) P.fail("/sweep/" + k, "cannot sweep \"" + k + "\" (sweep " + kSweepKeys + ")");
      if (k == "machine" && is_preset_selector(v)) {
        axes.emplace_back(k, presets_axis(v, "/sweep/machine"));
        selector_at.emplace_back("/sweep/machine");
        continue;
      }
      if (!v.is_array() || v.empty())
        P.fail("/sweep/" + k, k == "machine" ? "a machine axis is a non-empty list of machines, or a preset selector "
                                               "(\"presets\" or \"presets:KEY=VALUE,...\")"
                                             : "a sweep axis is a non-empty list of values");
      axes.emplace_back(k, std::vector<ojson>(v.begin(), v.end()));
      selector_at.emplace_back();
    }
  }
  if (is_preset_selector(j["machine"])) {
    if (std::any_of(axes.begin(), axes.end(), [](const auto& a) { return a.first == "machine"; }))
      P.fail("/machine", "the machine is a preset selector and the sweep names machines too: give one of them");
    axes.emplace(axes.begin(), "machine", presets_axis(j["machine"], "/machine"));
    selector_at.emplace(selector_at.begin(), "/machine");
  }
  // Keys set from outside: each a one-value axis, in place of the config's axis of that key.
  std::vector<const KeyOverride*> override_at(axes.size(), nullptr);  // per axis: the override that set it
  for (const KeyOverride& o : overrides) {
    if (o.any_path && !is_sweep_key(o.key)) continue;  // written into the JSON (parse_experiment)
    if (!is_sweep_key(o.key))
      throw InputError(o.file, o.where, "cannot set \"" + o.key + "\" (set " + kSweepKeys + ")");
    const auto it = std::find_if(axes.begin(), axes.end(), [&](const auto& a) { return a.first == o.key; });
    const auto a = static_cast<std::size_t>(it - axes.begin());
    if (it == axes.end()) {
      axes.emplace_back(o.key, std::vector<ojson>{});
      selector_at.emplace_back();
      override_at.push_back(nullptr);
    }
    axes[a].second = {o.value};
    selector_at[a].clear();
    override_at[a] = &o;
  }
  // Where the value of axis `a` is, for errors: the override's place, or the sweep's list.
  const auto value_error = [&](std::size_t a, std::size_t i, const std::string& msg) {
    if (override_at[a] != nullptr) return InputError(override_at[a]->file, override_at[a]->where, msg);
    return InputError(file, "/sweep/" + axes[a].first + "/" + std::to_string(i), msg);
  };
  // A swept algorithm: every name must exist; the parameters any of them takes are accepted. An
  // algorithm set from outside accepts those of the config's own too.
  std::set<std::string> lenient;
  for (std::size_t ax = 0; ax < axes.size(); ++ax) {
    const auto& [key, values] = axes[ax];
    if (key != "algorithm") continue;
    ex.algorithm_swept = true;
    if (override_at[ax] != nullptr) lenient.insert(ex.info->params.begin(), ex.info->params.end());
    for (std::size_t i = 0; i < values.size(); ++i) {
      const AlgorithmInfo* a = values[i].is_string() ? registry.find(values[i].get<std::string>()) : nullptr;
      if (a == nullptr)
        throw value_error(ax, i,
                          values[i].is_string()
                              ? unknown_algorithm(values[i].get<std::string>(), algorithm_names(registry))
                              : "an algorithm is a name (a string)");
      lenient.insert(a->params.begin(), a->params.end());
    }
  }
  // The keys that compete: each a swept key; by default the algorithm, when it is swept.
  if (j.contains("compare")) {
    const ojson& c = j["compare"];
    if (!c.is_array() || c.empty())
      P.fail("/compare", "compare is a non-empty list of swept keys (e.g. [\"algorithm\", \"params.N1\"])");
    for (std::size_t i = 0; i < c.size(); ++i) {
      const auto swept = [&](const std::string& k) {
        return std::any_of(axes.begin(), axes.end(), [&](const auto& a) { return a.first == k; });
      };
      if (!c[i].is_string() || !swept(c[i].get<std::string>()))
        P.fail("/compare/" + std::to_string(i),
               c[i].dump() + " is not a key of \"sweep\": only swept values can compete");
      ex.compare.push_back(c[i].get<std::string>());
    }
  } else if (ex.algorithm_swept) {
    ex.compare = {"algorithm"};
  }
  std::size_t total = 1;
  for (const auto& a : axes) {
    total *= a.second.size();
    if (total > 100000) P.fail("/sweep", "the sweep has more than 100000 points");
  }
  // The config without its sweep, copied once a point (copying the sweep's lists at every point
  // made expansion quadratic). A swept key's parent must be an object (or absent) to hold it.
  ojson base = j;
  base.erase("sweep");
  std::vector<ojson::json_pointer> pointers;
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const std::string& key = axes[a].first;
    pointers.emplace_back(dotted_to_pointer(key));
    const std::string parent = key.substr(0, key.find('.'));
    if (parent != key && base.contains(parent) && !base[parent].is_object()) {
      const std::string msg =
          parent + " must be an object to " + (override_at[a] ? "set" : "sweep") + " \"" + key + "\"";
      if (override_at[a]) throw InputError(file, "/" + parent, msg + " (" + override_at[a]->where + ")");
      P.fail("/" + parent, msg);
    }
  }
  std::vector<std::size_t> idx(axes.size(), 0);
  for (std::size_t r = 0; r < total; ++r) {
    ojson point = base;
    RunPoint rp;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const auto& [key, values] = axes[a];
      point[pointers[a]] = values[idx[a]];
      rp.point.emplace_back(key, values[idx[a]]);
    }
    rp.info = ex.algorithm_swept ? registry.find(point["algorithm"].get<std::string>()) : ex.info;
    try {
      rp.setup = P.setup(point, *rp.info, lenient);
    } catch (const InputError& e) {
      // Point the error at the swept value that caused it, when it did.
      for (std::size_t a = 0; a < axes.size(); ++a) {
        const std::string sp = dotted_to_pointer(axes[a].first);
        if (e.where().rfind(sp, 0) == 0 && e.file() == file) {
          if (!selector_at[a].empty())
            throw InputError(file, selector_at[a], e.message() + " (preset " + axes[a].second[idx[a]].dump() + ")");
          throw value_error(a, idx[a], e.message());
        }
      }
      std::string at;  // the swept values (those set from outside are the caller's to name)
      for (std::size_t a = 0; a < axes.size(); ++a)
        if (override_at[a] == nullptr) at += (at.empty() ? "" : ", ") + axes[a].first + "=" + rp.point[a].second.dump();
      throw InputError(e.file(), e.where(), e.message() + (at.empty() ? "" : " (at sweep point " + at + ")"));
    }
    ex.runs.push_back(std::move(rp));
    for (std::size_t a = axes.size(); a-- > 0;) {  // last axis fastest
      if (++idx[a] < axes[a].second.size()) break;
      idx[a] = 0;
    }
  }
  return ex;
}

}  // namespace

Experiment load_experiment(const std::string& path, const Registry& registry,
                           const std::vector<KeyOverride>& overrides) {
  return parse_experiment(read_text_file(path), path, registry, overrides);
}

}  // namespace cubesim
