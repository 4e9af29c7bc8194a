// GOAL schedules (LogGOPSim's text format, docs/traces.md "GOAL schedules"): the hand-written
// samples replay to their hand-worked times, and every recorded trace exported with --trace goal
// replays to the recorded time to the picosecond.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli_helpers.hpp"

namespace {

using cubesim::test::read_all;
using cubesim::test::Result;
using cubesim::test::run_cli;
using cubesim::test::temp_dir;
using cubesim::test::write_temp;
using nlohmann::json;

json replay_json(const std::string& args) {
  Result r = run_cli("replay " + args + " --json --reproducible");
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? json::parse(r.out) : json::object();
}

long long time_ps(const json& j) { return j["runs"][0]["simulated"]["time_ps"].get<long long>(); }

// traces/samples/goal-handwritten/four-ranks.goal on ipsc-nx (tau 1.5 ms, t_c 4 us, 4-byte
// elements, B 256, one port; a packet of b elements crosses a link in 1.5 ms + b * 4 us; calc in
// nanoseconds), worked out by hand:
//  rank 0: a = calc 1 ms (0..1). b (1024 B = 256 elements, one packet of 2.524 ms) needs a:
//          link 0->1 1.000..3.524. c (64 B, 16 elements: 1.564 ms) irequires b: it starts at
//          1.000 too, and queues for rank 0's one outgoing port: 0->2 3.524..5.088. d (64 B to
//          rank 3, not a neighbour: e-cube route 0->1->3) needs c, which completed at 5.088
//          (its packet has left): 0->1 5.088..6.652.
//  rank 1: r arrives at 3.524; k = calc 2 ms has no dependency and runs 0..2 beside it (in file
//          order it would run 3.524..5.524); s (64 B to rank 3) needs r and k: 1->3 3.524..5.088.
//  rank 2: r2 arrives at 5.088; c2 = calc 0.5 ms (cpu 0: accepted, no effect) 5.088..5.588;
//          t2 (8 B, 2 elements: 1.508 ms) 2->3 5.588..7.096.
//  rank 3: takes s at 5.088 and t2 at 7.096. d's second hop 1->3 is ready at 6.652, but rank
//          3's one incoming port is busy with t2 until 7.096: 7.096..8.660.
//  The run ends at 8.660 ms, after 5 messages and 6 packet hops (d crosses two links).
//
// traces/samples/goal-handwritten/three-ranks-ps.goal (calc in picoseconds, 3 ranks on the
// 2-cube, node 3 idle):
//  rank 0: x (400 B = 100 elements: 1.9 ms) 0->1 0..1.9; y, independent, queues for the port:
//          0->2 1.9..3.8.
//  rank 1: r arrives at 1.9; p = calc 0.25 ms irequires r: it starts at 0, with r (0..0.25);
//          q (4 B, 1 element: 1.504 ms) to rank 2 needs r and p: e-cube 1->0->2, 1->0
//          1.9..3.404, then 0->2 waits for rank 0's port and rank 2's incoming port (y) until
//          3.8: 3.8..5.304.
//  rank 2: u arrives at 3.8; w1 (1 ms) and w2 (2 ms) both need u and overlap: 3.8..4.8 and
//          3.8..5.8; z = calc 0 joins w1, w2 and v (5.304): 5.8; e = calc 0.1 ms: 5.8..5.9.
//  The run ends at 5.9 ms.
TEST(GoalCli, HandWrittenSchedulesTakeTheirHandWorkedTimes) {
  const json four = replay_json("traces/samples/goal-handwritten/four-ranks.goal --machine ipsc-nx");
  EXPECT_EQ(four["replay"]["format"], "goal");
  EXPECT_EQ(four["runs"][0]["topology"], "hypercube n=2 (4 nodes)");
  EXPECT_EQ(time_ps(four), 8'660'000'000LL);
  EXPECT_EQ(four["runs"][0]["simulated"]["messages"], 5);
  EXPECT_EQ(four["runs"][0]["simulated"]["packet_hops"], 6);
  EXPECT_EQ(four["replay"]["steps"], 13);

  const json three = replay_json("traces/samples/goal-handwritten/three-ranks-ps.goal --machine ipsc-nx");
  EXPECT_EQ(time_ps(three), 5'900'000'000LL);
  EXPECT_EQ(three["runs"][0]["simulated"]["messages"], 3);
  EXPECT_NE(three["replay"]["ranks"].get<std::string>().find("node 3 idle"), std::string::npos);

  // Recognised by content as well as by the .goal extension; --format goal forces it.
  const std::string copy =
      write_temp("goal_by_content.txt", read_all("traces/samples/goal-handwritten/four-ranks.goal"));
  EXPECT_EQ(time_ps(replay_json(copy + " --machine ipsc-nx")), 8'660'000'000LL);
  EXPECT_EQ(time_ps(replay_json(copy + " --machine ipsc-nx --format goal")), 8'660'000'000LL);
}

// Dependencies decide what overlaps, not the order of the lines: the same operations in the
// other order take the same time, and a dependency that serialises them adds up their times.
TEST(GoalCli, TheGraphNotTheFileOrderDecides) {
  const std::string a = write_temp("goal_order_a.goal",
                                   "num_ranks 2\nrank 0 {\nl1: calc 3000\nl2: send 4b to 1 tag 0\n}\n"
                                   "rank 1 {\nl1: recv 4b from 0 tag 0\n}\n");
  const std::string b = write_temp("goal_order_b.goal",
                                   "num_ranks 2\nrank 0 {\nl2: send 4b to 1 tag 0\nl1: calc 3000\n}\n"
                                   "rank 1 {\nl1: recv 4b from 0 tag 0\n}\n");
  const std::string c =
      write_temp("goal_order_c.goal",
                 "num_ranks 2\nrank 0 {\nl1: calc 3000000\nl2: send 4b to 1 tag 0\nl2 requires l1\n}\n"
                 "rank 1 {\nl1: recv 4b from 0 tag 0\n}\n");
  // One element: 1.5 ms + 4 us = 1.504 ms, beside 3 us of calc; after 3 ms of calc: 4.504 ms.
  EXPECT_EQ(time_ps(replay_json(a + " --machine ipsc-nx")), 1'504'000'000LL);
  EXPECT_EQ(time_ps(replay_json(b + " --machine ipsc-nx")), 1'504'000'000LL);
  EXPECT_EQ(time_ps(replay_json(c + " --machine ipsc-nx")), 4'504'000'000LL);
}

// Round trip: record traces of several algorithms (broadcasts, a pipelined broadcast, all-to-all,
// requests and concurrent strands in transposes, computation on the Mark II, whose t_a is no whole
// number of nanoseconds), on one-port, all-port and pipelined machines; export them to GOAL;
// replay each on the recording machine at the recorded packet size: the identical time, to the
// picosecond, and the same messages and packet hops.
TEST(GoalCli, ExportReplaysToTheRecordedTimeToThePicosecond) {
  const std::string dir = temp_dir("goal_roundtrip");
  struct Case {
    std::string config, set;
  };
  const std::vector<Case> cases = {
      {"configs/quickstart.json", "--set topology.dim=4 --set sweep={}"},
      {"configs/quickstart.json", "--set topology.dim=3 --set sweep={} --set machine_overrides.ports=all"},
      {"configs/regress/broadcast-pipe.json", "--set sweep={}"},
      {"configs/regress/alltoall-sbt.json", "--set topology.dim=3 --set sweep={}"},
      {"configs/regress/alltoall-sbt.json", "--set topology.dim=3 --set sweep={} --set machine_overrides.ports=all"},
      {"configs/regress/transpose-mpt.json", "--set sweep={}"},
      {"configs/regress/transpose-dpt.json", "--set sweep={}"},
      {"configs/regress/matmul2d-cannon.json", "--set sweep={} --set machine=caltech-mark2"},
      {"configs/regress/transpose-router.json", "--set sweep={}"},
  };
  int i = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.config + " " + c.set);
    const std::string out = dir + "/" + std::to_string(i++);
    Result r =
        run_cli("run " + c.config + " " + c.set + " --trace cubesim,goal --out " + out + " --json --reproducible");
    ASSERT_EQ(r.code, 0) << r.err;
    const json rep = json::parse(r.out);
    ASSERT_EQ(rep["runs"].size(), 1U);
    const long long recorded = rep["runs"][0]["simulated"]["time_ps"].get<long long>();
    std::string stem;
    for (const auto& e : std::filesystem::directory_iterator(out + "/traces"))
      if (e.path().extension() == ".goal") stem = e.path().string().substr(0, e.path().string().size() - 5);
    ASSERT_FALSE(stem.empty());
    // The recording machine (with its overrides) and packet size, from the native trace's header.
    const std::string native = read_all(stem + ".trace");
    const json h = json::parse(native.substr(16, native.find('\n') - 16));
    const std::string machine = write_temp("goal_machine_" + std::to_string(i) + ".json", h["machine"].dump());
    const json& topo = h["topology"];
    std::string spec = topo["kind"].get<std::string>() + ":";
    if (topo["kind"] == "hypercube") {
      spec += std::to_string(topo["dim"].get<int>());
    } else {
      for (std::size_t k = 0; k < topo["shape"].size(); ++k)
        spec += (k > 0 ? "x" : "") + std::to_string(topo["shape"][k].get<int>());
    }
    const std::string args = " --machine " + machine + " --topology " + spec + " --packet " +
                             std::to_string(h["packet_elements"].get<long long>());
    Result g = run_cli("replay " + stem + ".goal" + args + " --json --reproducible");
    ASSERT_LE(g.code, 1) << g.err;
    const json gj = json::parse(g.out);
    EXPECT_EQ(gj["replay"]["format"], "goal");
    EXPECT_EQ(time_ps(gj), recorded);
    EXPECT_EQ(gj["runs"][0]["simulated"]["messages"], rep["runs"][0]["simulated"]["messages"]);
    EXPECT_EQ(gj["runs"][0]["simulated"]["packet_hops"], rep["runs"][0]["simulated"]["packet_hops"]);
  }
  std::filesystem::remove_all(dir);
}

// A GOAL replay can be drawn as a timeline; its recorder cannot write the dependencies back.
TEST(GoalCli, ReplayWritesChromeAndRefusesReRecording) {
  const std::string dir = temp_dir("goal_rerecord");
  Result ok = run_cli("replay traces/samples/goal-handwritten/four-ranks.goal --machine ipsc-nx --trace chrome --out " +
                      dir + "/a");
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/a/traces/four-ranks-replay.chrome.json"));
  Result no = run_cli(
      "replay traces/samples/goal-handwritten/four-ranks.goal --machine ipsc-nx --trace cubesim --out " + dir + "/b");
  EXPECT_EQ(no.code, 2);
  EXPECT_NE(no.err.find("cubesim: --trace: a GOAL schedule's replay can be written as a chrome timeline only"),
            std::string::npos)
      << no.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/b/report.json"));
  std::filesystem::remove_all(dir);
}

}  // namespace
