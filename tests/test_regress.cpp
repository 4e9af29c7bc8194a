// cubesim regress: verdicts, golden values and --update, and bad suites.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "app/regress.hpp"
#include "tests/cli_helpers.hpp"

namespace {

using cubesim::test::read_all;
using cubesim::test::Result;
using cubesim::test::run_cli;
using cubesim::test::temp_dir;
using nlohmann::json;

std::string write(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string p = dir + "/" + name;
  std::ofstream(p) << text;
  return p;
}

const char* kConfig = R"({"schema": "cubesim.config/1", "name": "r", "machine": "ipsc-nx",
  "topology": {"kind": "hypercube", "dim": 3}, "algorithm": "broadcast.sbt", "params": {"M": 300},
  "sweep": {"params.M": [1, 300]}})";

TEST(Regress, ProjectSuitePasses) {
  Result r = run_cli("regress configs/regress --json --reproducible");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["pass"], true);
  EXPECT_GE(j["experiments"].size(), 12u);
}

TEST(Regress, GoldenChangeFailsAndUpdateRewritesIt) {
  const std::string dir = temp_dir("regress");
  write(dir, "c.json", kConfig);
  write(dir, "suite.json",
        R"({"schema": "cubesim.suite/1", "experiments": [{"config": "c.json", "expect": "exact"}]})");
  // No golden values yet: the relation alone decides.
  Result r = run_cli("regress " + dir);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // --update writes them and says what it added.
  r = run_cli("regress " + dir + " --update");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("golden run 1 (params.M=1): added"), std::string::npos) << r.out;
  ASSERT_TRUE(std::filesystem::exists(dir + "/golden.json"));
  EXPECT_EQ(run_cli("regress " + dir).code, 0);
  // A model change (here: a golden value edited) is noticed, with the reason on the line.
  json g = json::parse(read_all(dir + "/golden.json"));
  const long long was = g["experiments"]["c.json"][1]["simulated_ps"];
  g["experiments"]["c.json"][1]["simulated_ps"] = was + 1;
  const long long was0 = g["experiments"]["c.json"][0]["predicted_ps"];
  g["experiments"]["c.json"][0]["predicted_ps"] = 2 * was0;
  write(dir, "golden.json", g.dump());
  r = run_cli("regress " + dir + " --out " + dir + "/out");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("FAIL  c.json"), std::string::npos) << r.out;
  // Every differing run (issue 33 point 9: not only the first), as times with the percentage, and
  // the hint to --update.
  EXPECT_NE(r.out.find("      run 1 (params.M=1): predicted "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(-50 %, -" + std::to_string(was0) + " ps)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("      run 2 (params.M=300): simulated "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", -1 ps)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--update rewrites the golden values"), std::string::npos) << r.out;
  const json summary = json::parse(read_all(dir + "/out/regress.json"));
  EXPECT_EQ(summary["failed"], 1);
  EXPECT_EQ(summary["experiments"][0]["failures"].size(), 2u);
  EXPECT_NE(read_all(dir + "/out/regress.csv").find("c.json,fail,2,exact"), std::string::npos);
  // --update shows the change and repairs the golden file.
  r = run_cli("regress " + dir + " --update");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("simulated_ps " + std::to_string(was + 1) + " -> " + std::to_string(was)), std::string::npos)
      << r.out;
  EXPECT_EQ(run_cli("regress " + dir).code, 0);
}

TEST(Regress, UpdateOfOneSuiteKeepsTheGoldenValuesOfAnotherSharingTheFile) {
  // Issue 33: a one-experiment suite pointed at a shared golden file used to rewrite it with its
  // own experiment alone. --update merges: it replaces its own entries, keeps the others and
  // names them, and says which runs it added, changed and removed.
  const std::string dir = temp_dir("regress-shared");
  write(dir, "c.json", kConfig);
  std::string three = kConfig;
  three.replace(three.find("[1, 300]"), 8, "[1, 2, 3]");
  write(dir, "d.json", three);
  write(dir, "both.json",
        R"({"schema": "cubesim.suite/1", "experiments": [{"config": "c.json", "expect": "exact"},
            {"config": "d.json", "expect": "exact"}]})");
  write(dir, "one.json", R"({"schema": "cubesim.suite/1", "experiments": [{"config": "d.json", "expect": "exact"}]})");
  ASSERT_EQ(run_cli("regress " + dir + "/both.json --update").code, 0);
  const json before = json::parse(read_all(dir + "/golden.json"));
  ASSERT_EQ(before["experiments"].size(), 2u);
  // d.json now sweeps two points: its third golden run goes, and c.json's entry stays.
  write(dir, "d.json", kConfig);
  Result r = run_cli("regress " + dir + "/one.json --update");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("run 3: removed (the config has 2 runs)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(kept as they were: 1 experiment this suite does not run: c.json)"), std::string::npos)
      << r.out;
  const json after = json::parse(read_all(dir + "/golden.json"));
  ASSERT_EQ(after["experiments"].size(), 2u);
  EXPECT_EQ(after["experiments"]["c.json"], before["experiments"]["c.json"]);
  EXPECT_EQ(after["experiments"]["d.json"].size(), 2u);
  EXPECT_EQ(run_cli("regress " + dir + "/both.json").code, 0) << "the shared file still serves both suites";
}

TEST(Regress, ExpectationsAreCheckedRunByRun) {
  // Every shipped algorithm is exact, so the failing side is shown with a registry in which
  // broadcast.sbt's formula is 1 ps short: "exact" and "upper_bound" fail, naming the run and
  // both times; "approx" with a loose tolerance passes.
  cubesim::Registry reg = cubesim::make_registry();
  cubesim::AlgorithmInfo off = *reg.find("broadcast.sbt");
  const auto predict = off.predict;
  off.name = "broadcast.off";
  off.predict = [predict](const cubesim::Setup& s) {
    cubesim::Prediction p = predict(s);
    p.time = p.time - cubesim::Time::ps(1);
    return p;
  };
  reg.add(off);
  const std::string dir = temp_dir("regress_expect");
  std::string cfg = kConfig;
  cfg.replace(cfg.find("broadcast.sbt"), 13, "broadcast.off");
  write(dir, "c.json", cfg);
  for (const auto& [expect, pass] : std::vector<std::pair<std::string, bool>>{{"\"exact\"", false},
                                                                              {"\"upper_bound\"", false},
                                                                              {"\"as_predicted\"", false},
                                                                              {"{\"approx\": 0.01}", true},
                                                                              {"{\"approx\": 0}", false}}) {
    write(dir, "suite.json",
          R"({"schema": "cubesim.suite/1", "experiments": [{"config": "c.json", "expect": )" + expect + "}]}");
    const cubesim::RegressSummary sum = cubesim::run_regress(dir, reg, {});
    ASSERT_EQ(sum.experiments.size(), 1u);
    EXPECT_EQ(sum.experiments[0].pass, pass) << expect << ": " << sum.experiments[0].reason;
    if (!pass) {
      EXPECT_NE(sum.experiments[0].reason.find("run 1 (params.M=1): simulated "), std::string::npos)
          << sum.experiments[0].reason;
      EXPECT_NE(sum.experiments[0].reason.find("does not hold"), std::string::npos);
      EXPECT_NE(sum.experiments[0].reason.find(" % from the prediction; "), std::string::npos)
          << sum.experiments[0].reason;  // the percentage and the relation, not raw picoseconds alone
    }
    EXPECT_LT(sum.experiments[0].max_ratio, 1.0001);
    EXPECT_GT(sum.experiments[0].max_ratio, 1.0);
  }
  // The approved golden file from another config: a count mismatch, with what to do.
  write(dir, "suite.json",
        R"({"schema": "cubesim.suite/1", "experiments": [{"config": "c.json", "expect": {"approx": 0.01}}]})");
  write(dir, "golden.json", R"({"schema": "cubesim.golden/1", "experiments": {"c.json": [{}]}})");
  const cubesim::RegressSummary sum = cubesim::run_regress(dir, reg, {});
  EXPECT_FALSE(sum.pass());
  EXPECT_NE(sum.experiments[0].reason.find("golden: 1 runs recorded, the config has 2 (run with --update)"),
            std::string::npos);
}

TEST(Regress, BadSuitesAreExitTwo) {
  const std::string dir = temp_dir("regress_bad");
  write(dir, "c.json", kConfig);
  struct Case {
    std::string suite, expect;
  };
  const std::vector<Case> cases = {
      {R"({"schema": "cubesim.suite/1", "experiments": []})", "/experiments: experiments must be a non-empty list"},
      {R"({"schema": "cubesim.suite/2", "experiments": [{"config": "c.json"}]})", "/schema"},
      {R"({"schema": "cubesim.suite/1", "experiments": [{"config": "nope.json"}]})",
       "/experiments/0/config: no such config"},
      {R"({"schema": "cubesim.suite/1", "experiments": [{"config": "c.json", "expect": "close"}]})",
       "/experiments/0/expect"},
      {R"({"schema": "cubesim.suite/1", "experiments": [{"config": "c.json", "colour": 1}]})", "/experiments/0/colour"},
      {R"({"schema": "cubesim.suite/1", "experiments": [{"config": "c.json"}, {"config": "c.json"}]})", "listed twice"},
      {R"({"schema": "cubesim.suite/1", "experiments": [{"config": "c.json"}]} trailing)", "invalid JSON"},
  };
  for (const Case& c : cases) {
    const std::string s = write(dir, "suite.json", c.suite);
    Result r = run_cli("regress " + s);
    EXPECT_EQ(r.code, 2) << c.suite << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // A bad config inside a good suite: the config's file and pointer.
  write(dir, "bad.json", R"({"schema": "cubesim.config/1", "machine": "ipsc-nx", "algorithm": "broadcast.sbt"})");
  const std::string s =
      write(dir, "suite.json", R"({"schema": "cubesim.suite/1", "experiments": [{"config": "bad.json"}]})");
  Result r = run_cli("regress " + s);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad.json: /topology"), std::string::npos) << r.err;
}

}  // namespace
