#include "machines/machine_loader.hpp"

#include <set>

#include "sim/input_error.hpp"
#include "sim/net/network.hpp"

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

Time parse_time_value(const ojson& v, const Ctx& c, const std::string& key) {
  Time t;
  try {
    if (v.is_number())
      t = time_from_seconds(v.get<double>());
    else if (v.is_string())
      t = parse_time(v.get<std::string>());
    else
      c.fail(key,
             "expected a time: a number of seconds or a string such as \"1.5ms\", got " + std::string(v.type_name()));
  } catch (const std::invalid_argument& e) {
    c.fail(key, e.what());
  } catch (const std::overflow_error& e) {
    c.fail(key, e.what());
  }
  if (t < Time{}) c.fail(key, "a time cannot be negative");
  return t;
}

std::int64_t parse_count(const ojson& v, const Ctx& c, const std::string& key, std::int64_t lo, std::int64_t hi) {
  if (!v.is_number_integer())
    c.fail(key, "expected an integer, got " + std::string(v.is_number() ? "a fraction" : v.type_name()));
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
    c.fail(key, "must be at most " + std::to_string(hi));
  const auto x = v.get<std::int64_t>();
  if (x < lo || x > hi)
    c.fail(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + std::to_string(x));
  return x;
}

PortModel parse_ports(const ojson& v, const Ctx& c, const std::string& key) {
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (s == "one") return {PortKind::one, 1};
    if (s == "all") return {PortKind::all, 0};
    c.fail(key, "ports must be \"one\", \"all\" or an integer k >= 1, got \"" + s + "\"");
  }
  const std::int64_t k = parse_count(v, c, key, 1, 64);
  if (k == 1) return {PortKind::one, 1};
  return {PortKind::k, static_cast<int>(k)};
}

Switching parse_switching(const ojson& v, const Ctx& c, const std::string& key) {
  if (!v.is_string()) c.fail(key, "switching must be a string");
  const auto s = v.get<std::string>();
  if (s == "store_and_forward") return Switching::store_and_forward;
  if (s == "pipelined") return Switching::pipelined;
  c.fail(key, "switching must be \"store_and_forward\" or \"pipelined\", got \"" + s + "\"");
}

std::string parse_network(const ojson& v, const Ctx& c, const std::string& key) {
  if (!v.is_string()) c.fail(key, "network must be a string");
  const auto s = v.get<std::string>();
  if (find_network_model(s) == nullptr) {
    std::string known;
    for (const NetworkModelInfo& i : network_models()) known += (known.empty() ? "" : ", ") + std::string(i.name);
    c.fail(key, "unknown network model \"" + s + "\" (known: " + known + ")");
  }
  return s;
}

/// Sets one parameter from a bare value.
void set_param(Machine& m, const std::string& key, const ojson& v, const Ctx& c) {
  if (key == "tau")
    m.tau = parse_time_value(v, c, key);
  else if (key == "tau_msg")
    m.tau_msg = parse_time_value(v, c, key);
  else if (key == "t_c")
    m.t_c = parse_time_value(v, c, key);
  else if (key == "t_a")
    m.t_a = parse_time_value(v, c, key);
  else if (key == "t_copy")
    m.t_copy = parse_time_value(v, c, key);
  else if (key == "t_elem")
    m.t_elem = parse_time_value(v, c, key);
  else if (key == "packet_elements")
    m.packet_elements = parse_count(v, c, key, 1, std::int64_t{1} << 40);
  else if (key == "element_bytes")
    m.element_bytes = static_cast<int>(parse_count(v, c, key, 1, 1024));
  else if (key == "ports")
    m.ports = parse_ports(v, c, key);
  else if (key == "switching")
    m.switching = parse_switching(v, c, key);
  else if (key == "B_copy")
    m.b_copy = parse_count(v, c, key, 0, std::int64_t{1} << 40);
  else if (key == "t_hop")
    m.t_hop = parse_time_value(v, c, key);
  else if (key == "router_buffers")
    m.router_buffers = parse_count(v, c, key, 0, 1 << 20);
  else if (key == "network")
    m.network = parse_network(v, c, key);
  else
    c.fail(key, "unknown machine parameter");
}

/// Every preset gives these; the rest are optional (defaults in sim/machine.hpp).
const std::set<std::string> kRequired = {"tau",           "tau_msg", "t_c",      "t_a", "t_copy", "packet_elements",
                                         "element_bytes", "ports",   "switching"};
const std::set<std::string> kParams = {"tau",           "tau_msg", "t_c",       "t_a",    "t_copy", "packet_elements",
                                       "element_bytes", "ports",   "switching", "B_copy", "t_hop",  "router_buffers",
                                       "t_elem",        "network"};
const std::set<std::string> kOverrides = {"tau",    "tau_msg",   "t_c",    "t_a",   "t_copy",         "packet_elements",
                                          "ports",  "switching", "B_copy", "t_hop", "router_buffers", "t_elem",
                                          "network"};

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
    } else if (kParams.count(key) != 0) {
      seen.insert(key);
      if (v.is_object()) {
        Ctx inner{file, pointer + "/" + key};
        for (const auto& [k2, v2] : v.items())
          if (k2 != "value" && k2 != "source") inner.fail(k2, "a parameter object has only \"value\" and \"source\"");
        if (!v.contains("value")) inner.fail("", "missing \"value\"");
        if (!v.contains("source") || !v["source"].is_string() || v["source"].get<std::string>().empty())
          inner.fail("source", "every parameter of a machine carries its source (a non-empty string)");
        set_param(m, key, v["value"], Ctx{file, pointer + "/" + key + "/value"});
        m.sources[key] = v["source"].get<std::string>();
      } else {
        if (preset) c.fail(key, "a preset gives every parameter as {\"value\": ..., \"source\": ...}");
        set_param(m, key, v, c);
        m.sources[key] = "inline machine";
      }
    } else {
      c.fail(key,
             "unknown key in a machine (known: name, description, default_topology, tau, tau_msg, t_c, t_a, t_copy, "
             "packet_elements, element_bytes, ports, switching, B_copy, t_hop, router_buffers, t_elem)");
    }
  }
  const std::vector<std::string> required = preset ? std::vector<std::string>(kRequired.begin(), kRequired.end())
                                                   : std::vector<std::string>{"tau", "t_c", "packet_elements"};
  for (const std::string& r : required)
    if (seen.count(r) == 0) c.fail("", "missing machine parameter \"" + r + "\"");
  if (preset && (!j.contains("schema") || !j.contains("name"))) c.fail("", "a preset needs \"schema\" and \"name\"");
  return m;
}

void apply_overrides(Machine& m, const ojson& overrides, const std::string& file, const std::string& pointer) {
  Ctx c{file, pointer};
  if (!overrides.is_object()) c.fail("", "machine_overrides must be an object");
  for (const auto& [key, v] : overrides.items()) {
    if (kOverrides.count(key) == 0)
      c.fail(key,
             "unknown override (known: tau, tau_msg, t_c, t_a, t_copy, packet_elements, ports, switching, B_copy, "
             "t_hop, router_buffers, t_elem)");
    set_param(m, key, v, c);
    m.sources[key] = "machine_overrides in the config";
  }
}

ojson machine_to_json(const Machine& m) {
  ojson j;
  j["name"] = m.name;
  j["description"] = m.description;
  auto param = [&](const char* key, ojson value) {
    auto it = m.sources.find(key);
    j[key] = {{"value", std::move(value)},
              {"source", it != m.sources.end() && !it->second.empty() ? it->second : "resolved value"}};
  };
  auto ps = [](Time t) { return std::to_string(t.count()) + "ps"; };
  param("tau", ps(m.tau));
  param("tau_msg", ps(m.tau_msg));
  param("t_c", ps(m.t_c));
  param("t_a", ps(m.t_a));
  param("t_copy", ps(m.t_copy));
  param("packet_elements", m.packet_elements);
  param("element_bytes", m.element_bytes);
  param("ports", m.ports.kind == PortKind::k ? ojson(m.ports.k) : ojson(m.ports.name()));
  param("switching", switching_name(m.switching));
  param("B_copy", m.b_copy);
  if (m.t_elem != Time{}) param("t_elem", ps(m.t_elem));
  if (m.switching == Switching::pipelined) {
    param("t_hop", ps(m.t_hop));
    param("router_buffers", m.router_buffers);
  }
  if (!m.network.empty()) param("network", m.network);
  return j;
}

}  // namespace cubesim
