// Issue 17: runs that are stopped (a signal, a budget) or cannot finish (a deadlock) end cleanly:
// what finished is kept, the error names what each node waits for, and --resume finishes what a
// signal stopped, with the report an uninterrupted run writes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli_helpers.hpp"

namespace cubesim::test {
namespace {

namespace fs = std::filesystem;

/// Four points: a short one, two long ones (a signal sent when the first is logged lands in one
/// of them, on any machine this suite runs on), a short one.
std::string sweep_config() {
  return write_temp("interrupted.json", R"({"schema": "cubesim.config/1", "name": "interrupted", "machine": "ipsc-nx",
    "algorithm": "allgather.sbt", "topology": {"kind": "hypercube", "dim": 8}, "params": {"M": 4}, "mode": "timing",
    "sweep": {"topology.dim": [8, 13, 13, 9]}})");
}

/// Starts `cubesim -v ARGS`, sends `signal` once the first point is logged, and returns the exit
/// code and stderr.
Result run_and_signal(const std::string& args, const char* signal) {
  // A file of its own each call, and none before the run writes it: the wait below must not
  // read an earlier run's "point 1:" (and signal a run that has not installed its handlers).
  static int calls = 0;
  const std::string err = scratch_path("signal-" + std::to_string(++calls) + ".err");
  std::filesystem::remove(err);
  const std::string script =
      std::string(CUBESIM_BINARY) + " -v " + args + " >/dev/null 2>" + err + " & pid=$!; until grep -q 'point 1:' " +
      err + " 2>/dev/null; do if ! kill -0 $pid 2>/dev/null; then break; fi; sleep 0.01; done; kill -" + signal +
      " $pid; wait $pid; echo $?";
  Result r = run_command("bash " + write_temp("signal.sh", script + "\n"));
  r.code = std::stoi(r.out);
  r.err = read_all(err);
  return r;
}

TEST(Interrupted, ASignalKeepsTheFinishedPointsAndResumeFinishesTheRunAsIfUninterrupted) {
  const std::string cfg = sweep_config();
  const std::string whole = temp_dir("whole");
  ASSERT_EQ(run_cli("run " + cfg + " --out " + whole + " --reproducible").code, 0);

  for (const auto& [signal, code] : {std::pair{"INT", 130}, std::pair{"TERM", 143}}) {
    SCOPED_TRACE(signal);
    const std::string out = temp_dir(std::string("stopped_") + signal);
    const Result r = run_and_signal("run " + cfg + " --out " + out + " --reproducible", signal);
    EXPECT_EQ(r.code, code) << r.err;
    EXPECT_NE(r.err.find(std::string("stopped by SIG") + signal + " after "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--resume --reproducible runs the rest"), std::string::npos) << r.err;  // as it ran
    // A valid report of the points that finished, marked partial.
    const auto report = nlohmann::json::parse(read_all(out + "/report.json"));
    ASSERT_TRUE(report.contains("partial")) << report.dump(1);
    const auto finished = report["partial"]["points_finished"].get<std::size_t>();
    EXPECT_GE(finished, 1u);
    EXPECT_LT(finished, 4u);
    EXPECT_EQ(report["partial"]["points_total"], 4);
    EXPECT_EQ(report["partial"]["signal"], std::string("SIG") + signal);
    EXPECT_EQ(report["runs"].size(), finished);
    for (const auto& run : report["runs"]) EXPECT_EQ(run["verified"], true);
    EXPECT_TRUE(fs::exists(out + "/resume.json"));
    // --resume runs the rest; the report and CSV are the uninterrupted run's, byte for byte.
    const Result resumed = run_cli("-v run " + cfg + " --out " + out + " --reproducible --resume");
    EXPECT_EQ(resumed.code, 0) << resumed.err;
    EXPECT_NE(resumed.err.find("--resume: " + std::to_string(finished) + " of 4 points taken from"), std::string::npos)
        << resumed.err;
    EXPECT_EQ(read_all(out + "/report.json"), read_all(whole + "/report.json"));
    EXPECT_EQ(read_all(out + "/runs.csv"), read_all(whole + "/runs.csv"));
    EXPECT_FALSE(fs::exists(out + "/resume.json")) << "a finished run leaves nothing to resume";
  }
}

TEST(Interrupted, ResumeReusesNoPointOfAnotherConfig) {
  // OUT holds the resume file of another config's interrupted run: none of its points is one of
  // this config's, so every point runs and the report is this config's own.
  const std::string one = write_temp("other.json", R"({"schema": "cubesim.config/1", "machine": "ipsc-nx",
    "algorithm": "broadcast.sbt", "topology": {"kind": "hypercube", "dim": 3}, "params": {"M": 4},
    "sweep": {"params.M": [4, 8]}})");
  const std::string whole = temp_dir("other_whole");
  ASSERT_EQ(run_cli("run " + one + " --out " + whole + " --reproducible").code, 0);
  const std::string out = temp_dir("other_stopped");
  const Result r = run_and_signal("run " + sweep_config() + " --out " + out, "INT");
  ASSERT_EQ(r.code, 130) << r.err;
  const Result resumed = run_cli("-v run " + one + " --out " + out + " --reproducible --resume");
  EXPECT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(resumed.err.find("points taken from"), std::string::npos) << resumed.err;
  EXPECT_EQ(read_all(out + "/report.json"), read_all(whole + "/report.json"));
}

TEST(Budgets, AnEventBudgetStopsEachRunWithExitOneAndKeepsTheReport) {
  const std::string out = temp_dir("budget_events");
  const Result r = run_cli("run configs/quickstart.json --out " + out + " --max-events 200");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("the budget of 200 events is spent"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("processes still run: node 0 waits for"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(--max-events sets the budget)"), std::string::npos) << r.err;
  const auto report = nlohmann::json::parse(read_all(out + "/report.json"));
  ASSERT_EQ(report["runs"].size(), 14u);
  EXPECT_EQ(report["runs"][0]["verified"], true) << "the 2-node run takes fewer than 200 events";
  EXPECT_NE(report["runs"][6]["error"].get<std::string>().find("budget of 200 events"), std::string::npos);
  // The same run without a budget (0) passes.
  EXPECT_EQ(run_cli("run configs/quickstart.json --max-events 0").code, 0);
  // Replays have the same budget.
  const Result rep = run_cli("replay traces/samples/quickstart.trace --max-events 10");
  EXPECT_EQ(rep.code, 1);
  EXPECT_NE(rep.out.find("replay failed: the budget of 10 events is spent"), std::string::npos) << rep.out;
}

TEST(Budgets, AMemoryBudgetRefusesUpFrontWhatCannotFit) {
  // 2^20 nodes of engine state alone are more than 1 GiB (2.5 GiB with broadcast.sbt's 1 KiB a
  // node): refused before anything runs.
  const std::string cfg = write_temp("big.json", R"({"schema": "cubesim.config/1", "machine": "ipsc-nx",
    "algorithm": "broadcast.sbt", "topology": {"kind": "hypercube", "dim": 20}, "params": {"M": 1}, "mode": "timing"})");
  const Result r = run_cli("run " + cfg + " --max-memory 1G");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(
      r.err.find(
          "/topology: hypercube n=20 (1048576 nodes) needs about 2.5 GiB of memory (broadcast.sbt's memory model)"),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("under the memory budget of 1.0 GiB (--max-memory)"), std::string::npos) << r.err;
}

TEST(Liveness, AReceiveNobodySendsIsADeadlockNamingTheBlockedNodes) {
  const std::string d = temp_dir("deadlock");
  // Rank 1 receives from rank 0, which ends without sending; rank 2 waits for rank 1.
  std::ofstream(d + "/a.txt") << "0 init\n1 init\n2 init\n3 init\n1 recv 0 7 8\n2 recv 1 0 8\n";
  const Result r = run_cli("replay " + d + "/a.txt --machine ipsc-nx --topology hypercube:2");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("replay failed: deadlock at t=0 s: 2 of 4 processes never finish: "
                       "node 1 waits for recv from node 0 (port 0) tag 7; node 2 waits for recv from node 1 tag 0"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace cubesim::test
