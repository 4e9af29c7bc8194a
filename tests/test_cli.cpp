// The command line as a user meets it: exit codes, one-line errors, --json, --out, determinism.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "algorithms/params.hpp"
#include "machines/machine_keys.hpp"
#include "machines/machine_loader.hpp"
#include "tests/cli_helpers.hpp"

using cubesim::preset_names;
using cubesim::test::read_all;
using cubesim::test::Result;
using cubesim::test::run_cli;
using cubesim::test::write_temp;

TEST(Cli, QuickstartRunsExactAndVerified) {
  Result r = run_cli("run configs/quickstart.json --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "cubesim.report/1");
  ASSERT_EQ(j["runs"].size(), 14u);
  for (const auto& run : j["runs"]) {
    EXPECT_EQ(run["verified"], true);
    EXPECT_EQ(run["relation_holds"], true);
    EXPECT_EQ(run["terms_match"], true);
    EXPECT_EQ(run["ratio"], 1.0);
    EXPECT_EQ(run["simulated"]["time_ps"], run["predicted"]["time_ps"]);
    EXPECT_GT(run["simulated"]["events"].get<long>(), 0);
    EXPECT_TRUE(run["simulated"].contains("wall_s"));
    EXPECT_TRUE(run["simulated"].contains("events_per_s"));
  }
  // The ports sweep: each all-port run names the machine it ran on.
  EXPECT_FALSE(j["runs"][0].contains("machine"));
  EXPECT_EQ(j["runs"][7]["machine"]["ports"], "all");
  EXPECT_EQ(j["machine"]["ports"], "one");
  // one-port n = 7: 7 * (60 * 1.5 ms + 15360 * 4 us) = 1.06008 s
  EXPECT_EQ(j["runs"][6]["simulated"]["time_ps"], 1'060'080'000'000);
}

TEST(Cli, ReportEchoesEveryMachineKeyAndEveryParameterGiven) {
  // The report's "machine" comes from machines/machine_keys (every key, times as _s and _ps) and a
  // run's "params" from algorithms/params.hpp's kParams (root, M, B always; the rest where given).
  const std::string cfg = write_temp("echo.json", R"({"schema": "cubesim.config/1", "machine": "ipsc-nx",
      "topology": {"kind": "hypercube", "dim": 2}, "algorithm": "transpose.exchange",
      "params": {"P": 8, "Q": 8, "B_copy": 0, "layout_before": "cyclic"}})");
  Result r = run_cli("run " + cfg + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& m = j["machine"];
  for (const cubesim::MachineKey& k : cubesim::machine_keys()) {
    const std::string key(k.key);
    if (k.kind == cubesim::KeyKind::time) {
      EXPECT_TRUE(m.contains(key + "_s") && m.contains(key + "_ps")) << key;
    } else {
      EXPECT_TRUE(m.contains(key)) << key;
    }
  }
  EXPECT_EQ(m["tau_s"], 0.0015);
  EXPECT_EQ(m["tau_ps"], 1'500'000'000);
  EXPECT_EQ(m["ports"], "one");
  EXPECT_EQ(m["switching"], "store_and_forward");
  EXPECT_EQ(m["B_copy"], 64);
  EXPECT_EQ(m["router_buffers"], 0);
  EXPECT_EQ(m["t_hop_ps"], 0);
  EXPECT_EQ(m["kind"], "formula");
  EXPECT_EQ(m["sources"]["tau"].get<std::string>().substr(0, 7), "TR-530 ");
  const auto& p = j["runs"][0]["params"];
  EXPECT_EQ(p, nlohmann::json::parse(
                   R"({"root": 0, "M": 0, "B": 256, "P": 8, "Q": 8, "B_copy": 0, "layout_before": "cyclic"})"));
}

TEST(Cli, SameConfigTwiceGivesAnIdenticalReport) {
  Result a = run_cli("run configs/tr530/s4.1.6-gc.json --json --reproducible");
  Result b = run_cli("run configs/tr530/s4.1.6-gc.json --json --reproducible");
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out.find("\"wall_s\": 0.0"), std::string::npos);
}

TEST(Cli, OutWritesReportAndCsvAndNothingElse) {
  const std::filesystem::path dir = cubesim::test::scratch_path("out_test");
  std::filesystem::remove_all(dir);
  Result r = run_cli("run configs/quickstart.json --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("broadcast.sbt"), std::string::npos);  // the table for people
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"report.json", "runs.csv"}));
  std::ifstream csv(dir / "runs.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header.rfind("machine_overrides.ports,topology.dim,nodes,M,B,simulated_s", 0), 0u) << header;
  int rows = 0;
  for (std::string line; std::getline(csv, line);) ++rows;
  EXPECT_EQ(rows, 14);
  std::filesystem::remove_all(dir);
}

TEST(Cli, OutChangesAllAtOnceAndClearsWhatKilledRunsLeft) {
  namespace fs = std::filesystem;
  const fs::path base = cubesim::test::temp_dir("out_staged");
  const fs::path dir = base / "out";
  fs::create_directories(dir);
  // A pid that is gone: a child that has exited.
  const std::string dead = cubesim::test::run_command("sh -c 'echo $$'").out;
  const std::string pid = dead.substr(0, dead.find('\n'));
  std::ofstream(dir / "keep.txt") << "the user's";
  std::ofstream(dir / "report.json") << "old";
  std::ofstream(dir / ("runs.csv")) << "old";
  std::ofstream(dir / (".report.json.tmp" + pid)) << "a kill -9 during the old write_file_atomic";
  fs::create_directories(base / (".out.staging-" + pid) / "traces");
  std::ofstream(base / (".out.staging-" + pid) / "report.json") << "a killed run's";
  // A failing run (bad trace option on a point) leaves everything but the leftovers as it was.
  Result r = run_cli("run configs/regress/broadcast-gc.json --out " + dir.string() + " --trace simgrid");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(read_all((dir / "report.json").string()), "old");
  EXPECT_EQ(read_all((dir / "runs.csv").string()), "old");
  EXPECT_FALSE(fs::exists(dir / "traces"));
  EXPECT_FALSE(fs::exists(dir / (".report.json.tmp" + pid))) << "a dead process's temporary file is removed";
  EXPECT_FALSE(fs::exists(base / (".out.staging-" + pid))) << "a dead process's staging is removed";
  // A run that succeeds replaces report and CSV together and keeps the user's other files.
  r = run_cli("run configs/quickstart.json --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_all((dir / "keep.txt").string()), "the user's");
  EXPECT_EQ(read_all((dir / "report.json").string()).rfind("{", 0), 0u);
  EXPECT_EQ(read_all((dir / "runs.csv").string()).rfind("machine_overrides.ports", 0), 0u);
  std::vector<std::string> beside;
  for (const auto& e : fs::directory_iterator(base)) beside.push_back(e.path().filename().string());
  EXPECT_EQ(beside, std::vector<std::string>{"out"}) << "no staging left beside the folder";
  fs::remove_all(base);
}

TEST(Cli, BadInputIsOneLineAndExitTwo) {
  const std::string bad = write_temp(
      "cubesim_bad.json",
      R"({"schema": "cubesim.config/1", "machine": "ipsc-nx", "topology": {"kind": "hypercube", "dim": 3}, "algorithm": "broadcast.sbt", "params": {"M": 10, "root": 9}})");
  const std::filesystem::path dir = cubesim::test::scratch_path("out_bad");
  std::filesystem::remove_all(dir);
  Result r = run_cli("run " + bad + " --out " + dir.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, bad + ": /params/root: root 9 is not a node of the hypercube n=3 (8 nodes)\n");
  EXPECT_FALSE(std::filesystem::exists(dir)) << "nothing half-written";

  const std::string syntax = write_temp("cubesim_syntax.json", "{\n \"schema\": }\n");
  r = run_cli("validate " + syntax);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind(syntax + ": line 2, column", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);

  EXPECT_EQ(run_cli("run /nonexistent/config.json").code, 2);
  EXPECT_EQ(run_cli("run configs/quickstart.json --engine turbo").code, 2);
  EXPECT_EQ(run_cli("frobnicate").code, 2);
  EXPECT_EQ(run_cli("list gadgets").code, 2);
}

TEST(Cli, ValidatePredictAndList) {
  for (const auto& e : std::filesystem::recursive_directory_iterator("configs")) {
    if (e.path().extension() != ".json" || e.path().filename() == "schema.json") continue;
    if (e.path().parent_path().filename() == "regress" &&
        (e.path().filename() == "suite.json" || e.path().filename() == "golden.json"))
      continue;  // the regression suite and its golden values (tests/test_regress.cpp)
    Result r = run_cli("validate " + e.path().string());
    EXPECT_EQ(r.code, 0) << e.path() << ": " << r.err;
  }
  Result p = run_cli("predict configs/quickstart.json --json");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(nlohmann::json::parse(p.out)["runs"].size(), 14u);
  Result m = run_cli("list machines");
  EXPECT_EQ(m.code, 0);
  for (const std::string& n : preset_names()) EXPECT_NE(m.out.find(n), std::string::npos) << n;
  Result a = run_cli("list algorithms");
  for (const char* n : {"broadcast.sbt", "broadcast.gc", "allgather.cra", "allgather.gcea", "allgather.sbt",
                        "scatter.sbt", "alltoall.sbt"})
    EXPECT_NE(a.out.find(n), std::string::npos) << n;
}

// Issue 33, point 2: a config names a machine file (relative to the config's folder), as replay
// --machine takes one; run --machine runs a config on another machine (preset or file).
TEST(Cli, AConfigNamesAMachineFileAndRunTakesMachine) {
  const std::string mine = R"({"schema": "cubesim.machine/1", "name": "mycube", "tau": "2ms", "t_c": "1us",
    "packet_elements": 256, "ports": "one", "switching": "store_and_forward"})";
  write_temp("mycube.json", mine);
  const std::string cfg = write_temp(
      "onmine.json",
      R"({"schema": "cubesim.config/1", "name": "onmine", "machine": "mycube.json", "topology": {"kind": "hypercube", "dim": 3},
          "algorithm": "broadcast.sbt", "params": {"M": 256}})");
  Result r = run_cli("run " + cfg + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["machine"]["name"], "mycube");
  EXPECT_EQ(j["runs"][0]["simulated"]["time_ps"], 3 * (2'000'000'000LL + 256 * 1'000'000LL));  // 3 hops
  // --machine: a preset in place of the file; then the file again, named from here.
  r = run_cli("run " + cfg + " --json --machine ipsc-nx");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["machine"]["name"], "ipsc-nx");
  r = run_cli("run configs/quickstart.json --json --machine " + cubesim::test::scratch_path("mycube.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["machine"]["name"], "mycube");
  // Bad: a missing file, and an unknown name; one line, exit 2.
  const std::string bad = write_temp(
      "onnone.json",
      R"({"schema": "cubesim.config/1", "machine": "nosuch.json", "topology": {"kind": "hypercube", "dim": 3},
          "algorithm": "broadcast.sbt", "params": {"M": 256}})");
  r = run_cli("run " + bad);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/machine: no machine file"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = run_cli("run configs/quickstart.json --machine nosuch");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--machine"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}
