// The parameter reference (issue 33, point 3): `cubesim describe ALGORITHM|MACHINE`,
// docs/reference.md and configs/schema.json's descriptions come from one set of tables
// (algorithms/params.hpp, algorithms/param_docs.cpp, machines/machine_keys.cpp, app/describe.cpp);
// these tests hold the tables complete and the three outputs to them. docs/reference.md's
// generated block is checked current by Docs.GeneratedTablesAreCurrent (tests/test_docs.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "algorithms/param_docs.hpp"
#include "app/config.hpp"
#include "app/describe.hpp"
#include "app/io.hpp"
#include "machines/machine_loader.hpp"
#include "sim/input_error.hpp"
#include "tests/cli_helpers.hpp"

using namespace cubesim;
using cubesim::test::read_all;
using cubesim::test::run_cli;

namespace {

const Registry& reg() {
  static const Registry r = make_registry();
  return r;
}

bool takes(const AlgorithmInfo& a, const std::string& key) {
  return std::find(a.params.begin(), a.params.end(), key) != a.params.end();
}

TEST(Describe, EveryParameterOfEveryAlgorithmIsDocumented) {
  for (const ParamSpec& p : kParams) {
    EXPECT_FALSE(p.meaning.empty()) << p.key;
    EXPECT_FALSE(p.unit.empty()) << p.key;
    EXPECT_FALSE(p.default_text.empty()) << p.key;
    EXPECT_FALSE(p.bounds.empty()) << p.key;
  }
  for (const AlgorithmInfo* a : reg().all())
    for (const std::string& k : a->params) {
      ASSERT_NE(find_param(k), nullptr) << a->name << " takes \"" << k << "\", which algorithms/params.hpp lacks";
      const ParamDoc d = param_doc(a->name, k);
      // A key whose meaning differs by algorithm (M: a message, a block, a block per destination,
      // a matrix order) has a row of its own for every algorithm that takes it.
      if (find_param(k)->per_algorithm) {
        EXPECT_TRUE(d.own) << a->name << " takes \"" << k
                           << "\", whose meaning differs by algorithm: give it a row in algorithms/param_docs.cpp";
      }
      // An optional key's default is a value, not "required".
      const bool required = std::find(a->required.begin(), a->required.end(), k) != a->required.end();
      if (!required) {
        EXPECT_EQ(d.default_text.find("required"), std::string::npos)
            << a->name << " leaves \"" << k << "\" optional, but its default reads \"" << d.default_text << "\"";
      }
    }
  // Every per-algorithm row names at least one algorithm, and only algorithms that take its key.
  for (const ParamOverride& o : param_overrides()) {
    int named = 0;
    for (const AlgorithmInfo* a : reg().all())
      if (names_algorithm(o.algorithms, a->name)) {
        ++named;
        EXPECT_TRUE(takes(*a, std::string(o.key)))
            << "algorithms/param_docs.cpp documents \"" << o.key << "\" for " << a->name << ", which does not take it";
      }
    EXPECT_GT(named, 0) << "algorithms/param_docs.cpp: \"" << o.algorithms << "\" names no algorithm";
  }
}

TEST(Describe, EveryAlgorithmRunsSomewhereAndItsExampleConfigIsValid) {
  for (const AlgorithmInfo* a : reg().all()) {
    const std::string ex = example_config(reg(), *a);
    ASSERT_FALSE(ex.empty()) << a->name << ": no small topology of any kind passes its check";
    EXPECT_NO_THROW(parse_experiment(ex, "example", reg())) << a->name << ": " << ex;
  }
  // What the checks say, on algorithms whose topologies the papers fix.
  const auto kinds = [](const char* name) {
    std::string s;
    for (const Support& x : algorithm_support(reg(), *reg().find(name))) s += x.kind + "(" + x.ports.front() + ") ";
    return s;
  };
  EXPECT_EQ(kinds("broadcast.nesbt"), "hypercube(one) ");
  EXPECT_EQ(kinds("transpose.spt"), "hypercube(one) ");
  EXPECT_EQ(kinds("broadcast.pipe"), "hypercube(one) mesh(one) torus(one) ");
  EXPECT_EQ(kinds("matmul.foh"), "hypercube(one) mesh(one) torus(one) ");
}

TEST(Describe, AnAlgorithm) {
  const auto r = run_cli("describe broadcast.nesbt");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* part :
       {"broadcast.nesbt: one-to-all broadcast on n edge-disjoint spanning binomial trees", "TR-530 §4.1.3",
        "runs on:  hypercube (ports one, k, all)", "  M  required, elements", "the message: the root sends",
        "  B  optional, elements per packet", "default: the machine's packet_elements (B_m)", "accepted: 1 <= B <= B_m",
        "  root  optional, node address", "one-port (and k-port): ", "all-port: ", "\"algorithm\":\"broadcast.nesbt\""})
    EXPECT_NE(r.out.find(part), std::string::npos) << "missing \"" << part << "\" in\n" << r.out;
  // The same key, another meaning: M per destination in a scatter, FOH's matrix order.
  EXPECT_NE(run_cli("describe scatter.sbt").out.find("the block for each destination"), std::string::npos);
  EXPECT_NE(run_cli("describe matmul.foh").out.find("FOH's matrix order"), std::string::npos);
}

TEST(Describe, AMachine) {
  const auto r = run_cli("describe ipsc-nx");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* part : {"ipsc-nx: Intel iPSC/1 with the NX operating system", "tau*", "1.5 ms per packet per hop",
                           "4 us per element", "256 elements", "B_m, the largest packet", "source: TR-530 §2",
                           "element_bytes ", "(not in the preset: the default)"})
    EXPECT_NE(r.out.find(part), std::string::npos) << "missing \"" << part << "\" in\n" << r.out;
  // Every machine key, on every preset.
  for (const std::string& n : preset_names()) {
    const auto p = run_cli("describe " + n);
    ASSERT_EQ(p.code, 0) << n << ": " << p.err;
    for (const MachineKey& k : machine_keys())
      EXPECT_NE(p.out.find("\n  " + std::string(k.key) + (k.overridable ? "*" : " ")), std::string::npos)
          << n << " lacks " << k.key;
  }
}

TEST(Describe, AnUnknownNameIsOneLineWithTheNearestNames) {
  auto r = run_cli("describe broadcast.sbtt");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("(did you mean "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\"broadcast.sbt\""), std::string::npos) << r.err;
  r = run_cli("describe ipsc-mx");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("(did you mean \"ipsc-nx\"?)"), std::string::npos) << r.err;
  r = run_cli("describe nesbt");  // a part of a name
  EXPECT_NE(r.err.find("(did you mean \"broadcast.nesbt\""), std::string::npos) << r.err;
  EXPECT_EQ(run_cli("describe").code, 2);  // nothing to describe
  EXPECT_EQ(run_cli("describe broadcast.sbt --reference").code, 2);
  EXPECT_EQ(nearest_names("zzzzzzzzzz", {"broadcast.sbt", "ipsc-nx"}), std::vector<std::string>{});
}

TEST(Describe, ListMachinesGivesUnits) {
  const auto r = run_cli("list machines");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("t_c 4 us     per element"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("B_m 256   elements"), std::string::npos) << r.out;
}

/// The schema at a JSON pointer, or null.
const ojson* at(const ojson& j, const std::string& pointer) {
  const ojson::json_pointer p(pointer);
  return j.contains(p) ? &j.at(p) : nullptr;
}

TEST(Describe, SchemaDescriptionsComeFromTheTables) {
  // scripts/gen-docs.sh writes them (`cubesim describe --schema-descriptions`); a missing or
  // different one fails here.
  const ojson schema = read_json_file("configs/schema.json");
  const ojson want = schema_descriptions();
  for (const auto& [pointer, text] : want.items()) {
    const ojson* s = at(schema, pointer);
    ASSERT_NE(s, nullptr) << "configs/schema.json has no " << pointer;
    EXPECT_EQ(s->value("description", std::string()), text.get<std::string>())
        << "configs/schema.json" << pointer << "/description: run scripts/gen-docs.sh";
  }
  // Every key of the config, its params, its topology, machine_overrides and the inline machine
  // is described.
  for (const char* where : {"/properties", "/properties/params/properties", "/properties/machine_overrides/properties",
                            "/$defs/inlineMachine/properties", "/$defs/topology/properties"})
    for (const auto& [k, v] : at(schema, where)->items())
      EXPECT_TRUE(want.contains(std::string(where) + "/" + k)) << "no description for " << where << "/" << k;
  // The config keys documented are the parser's: its error for an unknown key lists them.
  std::set<std::string> documented, parsed;
  for (const ConfigKeyDoc& k : config_key_docs()) documented.insert(std::string(k.key));
  try {
    parse_experiment(R"({"schema": "cubesim.config/1", "zzz": 1})", "c.json", reg());
    FAIL() << "an unknown key was accepted";
  } catch (const InputError& e) {
    const std::string m = e.message();
    const auto from = m.find("known: ") + 7;
    std::string list = m.substr(from, m.find(')', from) - from) + ",";
    for (std::size_t i = 0, j; (j = list.find(',', i)) != std::string::npos; i = j + 2)
      parsed.insert(list.substr(i, j - i));
  }
  EXPECT_EQ(documented, parsed);
}

TEST(Describe, TheReferenceIsGeneratedIntoDocs) {
  const std::string doc = read_all("docs/reference.md");
  EXPECT_NE(doc.find("<!-- BEGIN generated: cubesim describe --reference -->"), std::string::npos);
  const auto r = run_cli("describe --reference");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const AlgorithmInfo* a : reg().all()) EXPECT_NE(r.out.find("### `" + a->name + "`"), std::string::npos);
  for (const MachineKey& k : machine_keys())
    EXPECT_NE(r.out.find("| `" + std::string(k.key) + "` |"), std::string::npos);
  EXPECT_NE(r.out.find("| `t_c` | per element |"), std::string::npos);
}

}  // namespace
