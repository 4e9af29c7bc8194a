#include "machines/machine_loader.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <utility>

#include "machines/machine_keys.hpp"
#include "sim/input_error.hpp"
#include "sim/net/network.hpp"
#include "sim/suggest.hpp"

namespace cubesim {

std::vector<std::string> preset_names() {
  static const std::vector<std::string> names = [] {
    // The catalogue order: by "order" (presets without one last), then by name.
    std::vector<std::pair<std::int64_t, std::string>> v;
    for (const PresetText& p : preset_texts()) {
      const ojson j = ojson::parse(p.json, nullptr, false);
      const bool ordered = j.is_object() && j.contains("order") && j["order"].is_number_integer();
      v.emplace_back(ordered ? j["order"].get<std::int64_t>() : std::numeric_limits<std::int64_t>::max(), p.name);
    }
    std::sort(v.begin(), v.end());
    std::vector<std::string> out;
    for (auto& [order, name] : v) out.push_back(std::move(name));
    return out;
  }();
  return names;
}

std::optional<ojson> preset_json(const std::string& name) {
  for (const PresetText& p : preset_texts())
    if (name == p.name) return ojson::parse(p.json);
  return std::nullopt;
}

namespace {

struct Ctx {
  const std::string& file;
  std::string pointer;
  [[noreturn]] void fail(const std::string& key, const std::string& msg) const {
    throw InputError(file, pointer + (key.empty() ? "" : "/" + key), msg);
  }
};

/// Sets one parameter from a bare value.
void set_param(Machine& m, const MachineKey& k, const ojson& v, const Ctx& c) {
  if (auto e = k.set(k, m, v)) c.fail(std::string(k.key), *e);
}

/// The network model a machine names must be of its switching (sim/net/network.hpp): checked
/// when the machine is loaded and after overrides, so that the run is not refused later.
void check_network(const Machine& m, const Ctx& c) {
  if (m.network.empty()) return;
  const NetworkModelInfo* i = find_network_model(m.network);
  if (i != nullptr && i->switching != m.switching)
    c.fail("network", "network model \"" + m.network + "\" is " + switching_name(i->switching) +
                          ", but the machine's switching is " + switching_name(m.switching));
}

}  // namespace

Machine machine_from_json(const ojson& j, const std::string& file, const std::string& pointer, bool preset) {
  Ctx c{file, pointer};
  if (!j.is_object()) c.fail("", "a machine is a preset name or an object");
  Machine m;
  m.name = "inline";
  std::set<std::string> seen;
  for (const auto& [key, v] : j.items()) {
    if (key == "schema") {
      if (!v.is_string() || v.get<std::string>() != "cubesim.machine/1")
        c.fail(key, "schema must be \"cubesim.machine/1\"");
    } else if (key == "name") {
      if (!v.is_string() || v.get<std::string>().empty()) c.fail(key, "name must be a non-empty string");
      m.name = v.get<std::string>();
    } else if (key == "description") {
      if (!v.is_string()) c.fail(key, "description must be a string");
      m.description = v.get<std::string>();
    } else if (key == "default_topology") {
      if (!v.is_object()) c.fail(key, "default_topology must be an object");
    } else if (key == "order" && preset) {
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0)
        c.fail(key, "order (the preset's place in cubesim list machines) must be an integer >= 0");
    } else if (const MachineKey* k = find_machine_key(key)) {
      seen.insert(key);
      if (v.is_object()) {
        Ctx inner{file, pointer + "/" + key};
        for (const auto& [k2, v2] : v.items())
          if (k2 != "value" && k2 != "source") inner.fail(k2, "a parameter object has only \"value\" and \"source\"");
        if (!v.contains("value")) inner.fail("", "missing \"value\"");
        if (!v.contains("source") || !v["source"].is_string() || v["source"].get<std::string>().empty())
          inner.fail("source", "every parameter of a machine carries its source (a non-empty string)");
        Ctx value{file, pointer + "/" + key};
        if (auto e = k->set(*k, m, v["value"])) value.fail("value", *e);
        m.sources[key] = v["source"].get<std::string>();
      } else {
        if (preset) c.fail(key, "a preset gives every parameter as {\"value\": ..., \"source\": ...}");
        set_param(m, *k, v, c);
        m.sources[key] = "inline machine";
      }
    } else {
      std::vector<std::string> known{"name", "description", "default_topology"};
      for (const MachineKey& mk : machine_keys()) known.emplace_back(mk.key);
      c.fail(key, "unknown key in a machine" + did_you_mean(key, known) +
                      " (known: name, description, default_topology, " + std::string(preset ? "order, " : "") +
                      machine_key_list(nullptr) + ")");
    }
  }
  for (const MachineKey& k : machine_keys())
    if ((k.need == Need::always || (preset && k.need == Need::preset)) && seen.count(std::string(k.key)) == 0)
      c.fail("", "missing machine parameter \"" + std::string(k.key) + "\"");
  if (preset && (!j.contains("schema") || !j.contains("name"))) c.fail("", "a preset needs \"schema\" and \"name\"");
  check_network(m, c);
  return m;
}

void apply_overrides(Machine& m, const ojson& overrides, const std::string& file, const std::string& pointer) {
  Ctx c{file, pointer};
  if (!overrides.is_object()) c.fail("", "machine_overrides must be an object");
  for (const auto& [key, v] : overrides.items()) {
    const MachineKey* k = find_machine_key(key);
    if (k == nullptr || !k->overridable) {
      std::vector<std::string> known;
      for (const MachineKey& mk : machine_keys())
        if (mk.overridable) known.emplace_back(mk.key);
      c.fail(key, "unknown override" + did_you_mean(key, known) +
                      " (known: " + machine_key_list([](const MachineKey& r) { return r.overridable; }) + ")");
    }
    set_param(m, *k, v, c);
    m.sources[key] = "machine_overrides in the config";
  }
  check_network(m, c);
}

bool is_preset_selector(const ojson& v) {
  if (!v.is_string()) return false;
  const std::string& s = v.get_ref<const std::string&>();
  return s == kPresetSelector || s.rfind(std::string(kPresetSelector) + ":", 0) == 0;
}

std::vector<std::string> select_presets(const std::string& selector, const std::string& file,
                                        const std::string& pointer) {
  Ctx c{file, pointer};
  const std::string quoted = "\"" + selector + "\"";
  // KEY=VALUE terms, each parsed into a machine of its own as the key's parser reads it.
  std::vector<std::pair<const MachineKey*, Machine>> terms;
  if (selector != kPresetSelector) {
    std::string rest = selector.substr(std::string(kPresetSelector).size() + 1);
    std::set<std::string> keys;
    while (true) {
      const std::size_t comma = rest.find(',');
      const std::string term = rest.substr(0, comma);
      const std::size_t eq = term.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == term.size())
        c.fail("",
               "a preset selector is \"presets\" or \"presets:KEY=VALUE[,KEY=VALUE...]\" (e.g. "
               "\"presets:kind=formula,switching=store_and_forward\"), got " +
                   quoted);
      const std::string key = term.substr(0, eq), text = term.substr(eq + 1);
      const MachineKey* k = find_machine_key(key);
      if (k == nullptr)
        c.fail("", "unknown machine key \"" + key + "\" in the preset selector " + quoted +
                       " (known: " + machine_key_list(nullptr) + ")");
      if (!keys.insert(key).second) c.fail("", "the preset selector " + quoted + " names \"" + key + "\" twice");
      // The value as JSON: an integer when it is one (a count, a port count, seconds), else a string.
      ojson v = text;
      if (text.find_first_not_of("0123456789") == std::string::npos && text.size() < 19) v = std::stoll(text);
      Machine want;
      if (auto e = k->set(*k, want, v)) c.fail("", "in the preset selector " + quoted + ": " + key + ": " + *e);
      terms.emplace_back(k, std::move(want));
      if (comma == std::string::npos) break;
      rest = rest.substr(comma + 1);
    }
  }
  std::vector<std::string> out;
  for (const std::string& name : preset_names()) {
    const Machine m = machine_from_json(*preset_json(name), "machines/presets/" + name + ".json", "", true);
    if (std::all_of(terms.begin(), terms.end(),
                    [&](const auto& t) { return t.first->get(*t.first, m) == t.first->get(*t.first, t.second); }))
      out.push_back(name);
  }
  if (out.empty()) c.fail("", "the preset selector " + quoted + " matches no preset (cubesim list machines)");
  return out;
}

ojson machine_to_json(const Machine& m) {
  ojson j;
  j["name"] = m.name;
  j["description"] = m.description;
  for (const MachineKey& k : machine_keys()) {
    if (k.written != nullptr && !k.written(m)) continue;
    const std::string key(k.key);
    auto it = m.sources.find(key);
    j[key] = {{"value", k.get(k, m)},
              {"source", it != m.sources.end() && !it->second.empty() ? it->second : "resolved value"}};
  }
  return j;
}

}  // namespace cubesim
