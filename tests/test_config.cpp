#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "app/config.hpp"
#include "machines/machine_keys.hpp"
#include "machines/machine_loader.hpp"
#include "sim/input_error.hpp"

using namespace cubesim;

namespace {

const Registry& reg() {
  static const Registry r = make_registry();
  return r;
}

std::string base(const std::string& extra_top = "", const std::string& params = R"("M": 100)",
                 const std::string& topology = R"({"kind": "hypercube", "dim": 3})",
                 const std::string& algorithm = "broadcast.sbt") {
  return R"({"schema": "cubesim.config/1", "machine": "ipsc-nx", "topology": )" + topology + R"(, "algorithm": ")" +
         algorithm + R"(", "params": {)" + params + "}" + extra_top + "}";
}

/// The error's "where" for a config text, or "" if it parsed.
std::string where(const std::string& text) {
  try {
    parse_experiment(text, "t.json", reg());
  } catch (const InputError& e) {
    EXPECT_EQ(e.file().empty(), false);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
    return e.where();
  }
  return "";
}

}  // namespace

TEST(Config, AValidConfigParses) {
  Experiment ex = parse_experiment(base(), "t.json", reg());
  ASSERT_EQ(ex.runs.size(), 1u);
  EXPECT_EQ(ex.name, "t");
  EXPECT_EQ(ex.runs[0].setup.params.B, 256);  // default: the machine's B_m
  EXPECT_EQ(ex.runs[0].setup.machine.tau, Time::ps(1'500'000'000));
}

TEST(Config, EachKindOfBadInputNamesItsPointer) {
  EXPECT_EQ(where("{\"schema\": \n  \"cubesim.config/1\",, }"), "line 2, column 22");
  EXPECT_EQ(where(base(R"(, "bogus": 1)")), "/bogus");
  EXPECT_EQ(where(R"({"schema": "cubesim.config/2", "machine": "ipsc-nx", "algorithm": "broadcast.sbt"})"), "/schema");
  EXPECT_EQ(where(R"({"machine": "ipsc-nx", "algorithm": "broadcast.sbt"})"), "");  // missing schema: whole doc
  EXPECT_EQ(where(base(R"(, "machine_overrides": {"tau": "3 parsecs"})")), "/machine_overrides/tau");
  EXPECT_EQ(where(base(R"(, "machine_overrides": {"tau": -1})")), "/machine_overrides/tau");
  EXPECT_EQ(where(base(R"(, "machine_overrides": {"ports": "many"})")), "/machine_overrides/ports");
  EXPECT_EQ(where(base(R"(, "machine_overrides": {"switching": "wormhole"})")), "/machine_overrides/switching");
  EXPECT_EQ(where(base(R"(, "machine_overrides": {"colour": 1})")), "/machine_overrides/colour");
  EXPECT_EQ(where(base("", R"("M": "lots")")), "/params/M");
  EXPECT_EQ(where(base("", R"("M": 1.5)")), "/params/M");
  EXPECT_EQ(where(base("", R"("M": -4)")), "/params/M");
  EXPECT_EQ(where(base("", R"("M": 0)")), "/params/M");
  EXPECT_EQ(where(base("", R"("M": 10, "root": 8)")), "/params/root");
  EXPECT_EQ(where(base("", R"("M": 10, "B": 257)")), "/params/B");
  EXPECT_EQ(where(base("", R"("M": 10, "P": 3)")), "/params/P");
  EXPECT_EQ(where(base("", R"("M": 10, "colour": 3)")), "/params/colour");
  EXPECT_EQ(where(base("", R"("M": 10, "k": 1)")), "/params/k");  // broadcast.sbt takes no k
  const char* cube3 = R"({"kind": "hypercube", "dim": 3})";
  EXPECT_EQ(where(base("", R"("M": 10, "k": 4)", cube3, "allgather.hybrid")), "/params/k");  // k > n
  EXPECT_EQ(where(base("", R"("M": 10, "k": 4)", cube3, "sometoall.sbt")), "/params/k");
  EXPECT_EQ(where(base("", R"("M": 10)", cube3, "alltosome.sbt")), "/params");  // k missing
  EXPECT_EQ(where(base("", R"("M": 10, "k": 3)", cube3, "allgather.hybrid")), "");
  EXPECT_EQ(where(base("", R"("root": 1)")), "/params");  // M missing
  EXPECT_EQ(where(base("", R"("M": 1)", R"({"kind": "hypercube", "dim": 30})")), "/topology/dim");
  EXPECT_EQ(where(base("", R"("M": 1)", R"({"kind": "hypercube", "shape": [2]})")), "/topology/shape");
  EXPECT_EQ(where(base("", R"("M": 1)", R"({"kind": "ring", "dim": 3})")), "/topology/kind");
  EXPECT_EQ(where(base("", R"("M": 1)", R"({"kind": "mesh", "shape": [4, 0]})")), "/topology/shape");
  EXPECT_EQ(where(base("", R"("M": 1)", R"({"kind": "mesh", "shape": [4, 4]})")), "/topology/kind");  // mismatch
  EXPECT_EQ(where(base("", R"("M": 1)", R"({"kind": "hypercube", "dim": 3})", "broadcast.nope")), "/algorithm");
  EXPECT_EQ(
      where(
          R"({"schema": "cubesim.config/1", "machine": "ipsc-9000", "topology": {"kind": "hypercube", "dim": 3}, "algorithm": "broadcast.sbt", "params": {"M": 1}})"),
      "/machine");
  EXPECT_EQ(
      where(
          R"({"schema": "cubesim.config/1", "machine": {"tau": "1ms"}, "topology": {"kind": "hypercube", "dim": 3}, "algorithm": "broadcast.sbt", "params": {"M": 1}})"),
      "/machine");
  EXPECT_EQ(where(base(R"(, "sweep": {"topology.dim": [2, 40]})")), "/sweep/topology.dim/1");
  EXPECT_EQ(where(base(R"(, "sweep": {"topology.dim": []})")), "/sweep/topology.dim");
  EXPECT_EQ(where(base(R"(, "sweep": {"name": ["a"]})")), "/sweep/name");
  EXPECT_EQ(where(base(R"(, "verify": "yes")")), "/verify");
  EXPECT_EQ(where(base(R"(, "mode": "fast")")), "/mode");
}

TEST(Config, SweepsAreCrossProductsInOrder) {
  Experiment ex =
      parse_experiment(base(R"(, "sweep": {"params.M": [1, 2, 3], "topology.dim": [1, 2]})"), "t.json", reg());
  ASSERT_EQ(ex.runs.size(), 6u);
  EXPECT_EQ(ex.runs[0].setup.params.M, 1);
  EXPECT_EQ(ex.runs[0].setup.topology.dim(), 1);
  EXPECT_EQ(ex.runs[1].setup.topology.dim(), 2);
  EXPECT_EQ(ex.runs[5].setup.params.M, 3);
  EXPECT_EQ(ex.runs[5].point[0].first, "params.M");
}

TEST(Config, InlineMachinesAndOverrides) {
  Experiment ex = parse_experiment(
      R"({"schema": "cubesim.config/1", "machine": {"name": "mine", "tau": "2us", "t_c": 1e-9, "packet_elements": 8, "ports": 2},
          "machine_overrides": {"tau_msg": "5ns"}, "topology": {"kind": "hypercube", "dim": 2},
          "algorithm": "allgather.sbt", "params": {"M": 3}})",
      "t.json", reg());
  const Machine& m = ex.runs[0].setup.machine;
  EXPECT_EQ(m.name, "mine");
  EXPECT_EQ(m.tau, Time::ps(2'000'000));
  EXPECT_EQ(m.t_c, Time::ps(1000));
  EXPECT_EQ(m.tau_msg, Time::ps(5000));
  EXPECT_EQ(m.ports.kind, PortKind::k);
  EXPECT_EQ(m.ports.k, 2);
  EXPECT_EQ(m.sources.at("tau_msg"), "machine_overrides in the config");
}

TEST(Config, MeshPresetsBringTheirTopology) {
  // mesh2d's default topology is an 8x8 mesh, which the cube algorithms refuse, at the preset.
  EXPECT_EQ(
      where(R"({"schema": "cubesim.config/1", "machine": "mesh2d", "algorithm": "allgather.sbt", "params": {"M": 3}})"),
      "/topology/kind");
}

TEST(Config, EveryPresetLoadsWithASourceForEveryParameter) {
  // Every file in machines/presets/ is embedded, and none is named like a preset selector.
  std::vector<std::string> files, names = preset_names();
  for (const auto& e : std::filesystem::directory_iterator("machines/presets"))
    if (e.path().extension() == ".json") files.push_back(e.path().stem().string());
  std::sort(files.begin(), files.end());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, files);
  for (const std::string& n : preset_names()) {
    EXPECT_FALSE(is_preset_selector(ojson(n))) << n;
    Machine m = machine_from_json(*preset_json(n), n + ".json", "", true);
    EXPECT_EQ(m.name, n);
    // Every key the table requires of a preset, the pipelined keys on a pipelined machine, and
    // sources only for keys of the table (machines/machine_keys.hpp).
    for (const MachineKey& k : machine_keys()) {
      if (k.need != Need::optional) {
        EXPECT_EQ(m.sources.count(std::string(k.key)), 1u) << n << " " << k.key;
      }
    }
    if (m.switching == Switching::pipelined) {
      for (const char* k : {"t_hop", "router_buffers"}) EXPECT_EQ(m.sources.count(k), 1u) << n << " " << k;
    }
    for (const auto& [k, v] : m.sources) {
      EXPECT_NE(find_machine_key(k), nullptr) << n << " " << k;
      EXPECT_GT(v.size(), 10u) << n << " " << k;
    }
  }
  Machine nx = machine_from_json(*preset_json("ipsc-nx"), "x", "", true);
  EXPECT_EQ(nx.tau, Time::ps(1'500'000'000));
  EXPECT_EQ(nx.t_c, Time::ps(4'000'000));
  EXPECT_EQ(nx.packet_elements, 256);
  EXPECT_EQ(nx.ports.kind, PortKind::one);
}

TEST(Config, PresetsMustCarrySources) {
  ojson j = *preset_json("ipsc-nx");
  j["tau"] = "1ms";
  EXPECT_THROW(machine_from_json(j, "x.json", "", true), InputError);
  j = *preset_json("ipsc-nx");
  j["tau"].erase("source");
  EXPECT_THROW(machine_from_json(j, "x.json", "", true), InputError);
}

TEST(Config, SchemaFollowsTheParameterTableAndThePresets) {
  // configs/schema.json is written by hand for other tools; it must say what the parser does.
  const ojson schema = read_json_file("configs/schema.json");
  const ojson& params = schema["properties"]["params"]["properties"];
  std::vector<std::string> in_schema, in_table;
  for (const auto& [k, v] : params.items()) {
    in_schema.push_back(k);
    const ParamSpec* spec = find_param(k);
    ASSERT_NE(spec, nullptr) << "configs/schema.json has a parameter \"" << k << "\" that algorithms/params.hpp lacks";
    if (spec->is_name()) {
      std::vector<std::string> names;
      for (std::string_view n : spec->names) names.emplace_back(n);
      EXPECT_EQ(v["enum"].get<std::vector<std::string>>(), names) << k;
    } else if (spec->is_list()) {
      EXPECT_EQ(v.value("type", ""), "array") << k;
      EXPECT_EQ(v["items"].value("minimum", std::int64_t{-1}), spec->schema_minimum) << k;
    } else {
      EXPECT_EQ(v.value("minimum", std::int64_t{-1}), spec->schema_minimum) << k;
      EXPECT_EQ(v.value("type", ""), "integer") << k;
    }
  }
  for (const ParamSpec& p : kParams) in_table.push_back(std::string(p.key));
  EXPECT_EQ(in_schema, in_table) << "configs/schema.json's params must list algorithms/params.hpp's kParams, in order";
  std::vector<std::string> presets;
  for (const auto& v : schema["properties"]["machine"]["oneOf"][0]["enum"]) presets.push_back(v.get<std::string>());
  std::vector<std::string> known = preset_names();
  std::sort(presets.begin(), presets.end());
  std::sort(known.begin(), known.end());
  EXPECT_EQ(presets, known) << "configs/schema.json's machine names must be the presets";
}

TEST(Config, SchemaFollowsTheMachineTable) {
  // configs/schema.json's inline machine and machine_overrides must say what machines/machine_keys
  // does: the same keys in the same order, the overridable ones in machine_overrides, the same
  // required keys, and each override's type, bounds and names those of its row.
  const ojson schema = read_json_file("configs/schema.json");
  const ojson& inline_machine = schema["$defs"]["inlineMachine"];
  const ojson& overrides = schema["properties"]["machine_overrides"]["properties"];
  std::vector<std::string> in_schema, in_table, over_schema, over_table, req_schema, req_table;
  for (const auto& [k, v] : inline_machine["properties"].items())
    if (k != "schema" && k != "name" && k != "description" && k != "default_topology") in_schema.push_back(k);
  for (const auto& [k, v] : overrides.items()) {
    over_schema.push_back(k);
    const MachineKey* row = find_machine_key(k);
    ASSERT_NE(row, nullptr) << "configs/schema.json overrides \"" << k << "\", which machines/machine_keys lacks";
    switch (row->kind) {
      case KeyKind::time:
        EXPECT_EQ(v.value("$ref", ""), "#/$defs/time") << k;
        break;
      case KeyKind::ports:
        EXPECT_EQ(v.value("$ref", ""), "#/$defs/ports") << k;
        break;
      case KeyKind::count:
        EXPECT_EQ(v.value("type", ""), "integer") << k;
        EXPECT_EQ(v.value("minimum", std::int64_t{-1}), row->lo) << k;
        break;
      case KeyKind::name: {
        std::vector<std::string> names(row->names.begin(), row->names.end());
        EXPECT_EQ(v["enum"].get<std::vector<std::string>>(), names) << k;
        break;
      }
      case KeyKind::model:
        EXPECT_EQ(v.value("type", ""), "string") << k;
        break;
    }
  }
  for (const auto& r : inline_machine["required"]) req_schema.push_back(r.get<std::string>());
  for (const MachineKey& k : machine_keys()) {
    in_table.emplace_back(k.key);
    if (k.overridable) over_table.emplace_back(k.key);
    if (k.need == Need::always) req_table.emplace_back(k.key);
  }
  EXPECT_EQ(in_schema, in_table)
      << "configs/schema.json's inlineMachine must list machines/machine_keys' keys, in order";
  EXPECT_EQ(over_schema, over_table)
      << "configs/schema.json's machine_overrides must list the overridable keys of machines/machine_keys, in order";
  EXPECT_EQ(req_schema, req_table) << "configs/schema.json's inlineMachine must require the keys marked Need::always";
  const ojson& ports = schema["$defs"]["ports"]["oneOf"][1];
  EXPECT_EQ(ports.value("minimum", 0), find_machine_key("ports")->lo);
  EXPECT_EQ(ports.value("maximum", 0), find_machine_key("ports")->hi);
}

TEST(Config, PresetSelectorsNameThePresetsInCatalogueOrder) {
  auto machines = [](const Experiment& ex) {
    std::vector<std::string> v;
    for (const RunPoint& p : ex.runs) v.push_back(p.setup.machine.name);
    return v;
  };
  // "presets": every preset, in the order of cubesim list machines.
  const Experiment all = parse_experiment(
      base(R"(, "sweep": {"machine": "presets"})", R"("M": 4)", R"({"kind": "hypercube", "dim": 2})", "broadcast.sbt"),
      "t.json", reg());
  EXPECT_EQ(machines(all), preset_names());
  EXPECT_EQ(all.runs[0].point[0].first, "machine");
  EXPECT_EQ(all.runs[0].point[0].second, preset_names()[0]);
  // A filter: every preset whose keys have those values, and no other.
  const Experiment sf = parse_experiment(
      base(R"(, "sweep": {"machine": "presets:kind=formula,switching=store_and_forward", "params.M": [1, 2]})"),
      "t.json", reg());
  std::vector<std::string> want;
  for (const std::string& n : preset_names()) {
    const Machine m = machine_from_json(*preset_json(n), n, "", true);
    if (m.kind == ModelKind::formula && m.switching == Switching::store_and_forward) {
      want.push_back(n);
      want.push_back(n);  // params.M is the inner axis
    }
  }
  EXPECT_EQ(machines(sf), want);
  EXPECT_EQ(std::count(want.begin(), want.end(), "cm-router"), 0);
  // Values are read as the key reads them: "1.5ms" is ipsc-nx's tau, "one" its ports.
  const Experiment nx = parse_experiment(
      base(R"(, "sweep": {"machine": "presets:tau=1.5ms,ports=one,packet_elements=256"})"), "t.json", reg());
  EXPECT_EQ(machines(nx), std::vector<std::string>{"ipsc-nx"});
  // As the config's machine: an axis outside the sweep's.
  const std::string top = R"({"schema": "cubesim.config/1", "machine": "presets:switching=store_and_forward",
      "topology": {"kind": "hypercube", "dim": 2}, "algorithm": "broadcast.sbt", "params": {"M": 1},
      "sweep": {"params.M": [1, 2]}})";
  const Experiment t = parse_experiment(top, "t.json", reg());
  ASSERT_GE(t.runs.size(), 2u);
  EXPECT_EQ(t.runs[0].point[0].first, "machine");
  EXPECT_EQ(t.runs[0].point[1].first, "params.M");
  EXPECT_EQ(t.runs[0].setup.machine.name, t.runs[1].setup.machine.name);
}

TEST(Config, BadPresetSelectorsNameTheirPlace) {
  const auto sweep = [](const std::string& sel) { return base(R"(, "sweep": {"machine": ")" + sel + R"("})"); };
  EXPECT_EQ(where(sweep("presets:")), "/sweep/machine");
  EXPECT_EQ(where(sweep("presets:kind")), "/sweep/machine");
  EXPECT_EQ(where(sweep("presets:warp=9")), "/sweep/machine");
  EXPECT_EQ(where(sweep("presets:switching=fast")), "/sweep/machine");
  EXPECT_EQ(where(sweep("presets:kind=formula,kind=formula")), "/sweep/machine");
  EXPECT_EQ(where(sweep("presets:tau=1h")), "/sweep/machine");
  EXPECT_EQ(where(sweep("presets:packet_elements=3")), "/sweep/machine");  // matches none
  EXPECT_EQ(where(base(R"(, "sweep": {"machine": ["ipsc-nx", "presets"]})")), "/sweep/machine/1");
  EXPECT_EQ(where(base(R"(, "sweep": {"machine": "ipsc-nx"})")), "/sweep/machine");
  // A selector as the machine and a machine axis in the sweep: one too many.
  const std::string both = R"({"schema": "cubesim.config/1", "machine": "presets", "algorithm": "broadcast.sbt",
      "topology": {"kind": "hypercube", "dim": 2}, "params": {"M": 1}, "sweep": {"machine": ["ipsc-nx"]}})";
  EXPECT_EQ(where(both), "/machine");
  try {
    parse_experiment(sweep("presets:warp=9"), "t.json", reg());
  } catch (const InputError& e) {
    // The known keys come from the table.
    EXPECT_NE(std::string(e.what()).find("(known: " + machine_key_list(nullptr) + ")"), std::string::npos) << e.what();
  }
}
