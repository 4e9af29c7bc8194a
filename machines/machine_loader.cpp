#include "machines/machine_loader.hpp"

#include <set>

#include "machines/machine_keys.hpp"
#include "sim/input_error.hpp"

namespace cubesim {

std::vector<std::string> preset_names() {
  std::vector<std::string> v;
  for (const PresetText& p : preset_texts()) v.emplace_back(p.name);
  return v;
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
      c.fail(key, "unknown key in a machine (known: name, description, default_topology, " + machine_key_list(nullptr) +
                      ")");
    }
  }
  for (const MachineKey& k : machine_keys())
    if ((k.need == Need::always || (preset && k.need == Need::preset)) && seen.count(std::string(k.key)) == 0)
      c.fail("", "missing machine parameter \"" + std::string(k.key) + "\"");
  if (preset && (!j.contains("schema") || !j.contains("name"))) c.fail("", "a preset needs \"schema\" and \"name\"");
  return m;
}

void apply_overrides(Machine& m, const ojson& overrides, const std::string& file, const std::string& pointer) {
  Ctx c{file, pointer};
  if (!overrides.is_object()) c.fail("", "machine_overrides must be an object");
  for (const auto& [key, v] : overrides.items()) {
    const MachineKey* k = find_machine_key(key);
    if (k == nullptr || !k->overridable)
      c.fail(key,
             "unknown override (known: " + machine_key_list([](const MachineKey& r) { return r.overridable; }) + ")");
    set_param(m, *k, v, c);
    m.sources[key] = "machine_overrides in the config";
  }
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
