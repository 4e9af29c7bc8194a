// Replaying MPI traces on the 1980s machines (issue 34 points 2 and 3): the collectives of a
// SimGrid TI trace run by cubesim's own algorithms (--collectives, a default per machine), and
// ranks placed onto nodes (--map). docs/traces.md, "Collectives" and "Ranks onto nodes".
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/collectives.hpp"
#include "app/replay.hpp"
#include "app/runner.hpp"
#include "tests/cli_helpers.hpp"

namespace {

using cubesim::test::Result;
using cubesim::test::run_cli;
using cubesim::test::write_temp;
using nlohmann::json;

const std::string kDir = "traces/samples/simgrid-collectives/";

json replay(const std::string& args) {
  Result r = run_cli("replay " + args + " --json --reproducible");
  EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
  return r.code == 0 ? json::parse(r.out) : json::object();
}

long long replay_ps(const std::string& args) {
  return replay(args)["runs"][0]["simulated"]["time_ps"].get<long long>();
}

/// The time of a plain `cubesim run` of `algorithm` on the 2-cube (4 nodes) of `machine`.
long long run_ps(const std::string& machine, const std::string& algorithm, const std::string& params) {
  const std::string cfg = write_temp("coll-" + machine + "-" + algorithm + ".json",
                                     R"({"schema": "cubesim.config/1", "name": "c", "machine": ")" + machine +
                                         R"(", "topology": {"kind": "hypercube", "dim": 2}, "algorithm": ")" +
                                         algorithm + R"(", "params": )" + params + R"(, "mode": "timing"})");
  Result r = run_cli("run " + cfg + " --json --reproducible");
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? json::parse(r.out)["runs"][0]["simulated"]["time_ps"].get<long long>() : -1;
}

/// In-process (the CLI's own functions, without a process per run: the tests stay fast).
const cubesim::Registry& registry() {
  static const cubesim::Registry r = cubesim::make_registry();
  return r;
}

cubesim::trace::ReplayResult replay_here(const std::string& path, const std::string& machine) {
  cubesim::trace::ReplayOptions o;
  o.machine = machine;
  cubesim::trace::ReplayResult r = cubesim::trace::prepare_replay(path, o, registry());
  cubesim::trace::run_replay(r, registry(), nullptr);
  EXPECT_EQ(r.error, "") << path;
  return r;
}

/// The time of `algorithm` run alone, as `cubesim run` runs it in timing mode, on `s`'s machine
/// and topology with M, root and k.
long long plain_ps(cubesim::Setup s, const std::string& algorithm, std::int64_t M, std::int64_t root,
                   std::int64_t k = 0) {
  s.params.M = M;
  s.params.root = root;
  s.params.k = k;
  s.data_mode = false;
  const cubesim::AlgorithmInfo* info = registry().find(algorithm);
  EXPECT_NE(info, nullptr);
  EXPECT_FALSE(info->check(s).has_value()) << algorithm;
  cubesim::Engine e(s.machine, s.topology, cubesim::engine_options(s, {}));
  return e.run([&](cubesim::Node& n) { return info->process(n, s.params); }).time.count();
}

// Every sample replays on the iPSC and the Mark II, each collective run by the machine's default.
TEST(CollectivesReplay, SamplesReplayOnIpscAndMarkII) {
  const std::vector<std::pair<std::string, std::string>> samples = {{"bcast", "broadcast.sbt"},
                                                                    {"reduce", "reduce.sbt"},
                                                                    {"allReduce", "allreduce.sbt"},
                                                                    {"barrier", "allreduce.sbt"},
                                                                    {"gather", "alltosome.sbt"},
                                                                    {"allToAllV", "alltoall.sbt"},
                                                                    {"reduceScatter", "reduce_scatter.sbt"}};
  for (const auto& [name, algo] : samples)
    for (const char* ranks : {"3", "4"})
      for (const char* machine : {"ipsc-nx", "caltech-mark2"}) {
        const cubesim::trace::ReplayResult r = replay_here(kDir + name + "-" + ranks + ".txt", machine);
        ASSERT_NE(r.collectives, nullptr) << name;
        EXPECT_EQ(r.collectives->runs.size(), 1u) << name;
        ASSERT_EQ(r.collectives->selection.size(), 1u) << name;
        EXPECT_EQ(r.collectives->selection.begin()->second, algo) << name;
        EXPECT_FALSE(r.collectives->given.begin()->second);
        EXPECT_GT(r.stats.time.count(), 0);
        EXPECT_EQ(r.stats.unreceived_messages, 0);
      }
  // The report says it, JSON and text.
  const json j = replay(kDir + "allToAllV-3.txt --machine caltech-mark2");
  EXPECT_EQ(j["replay"]["collectives"]["selection"]["alltoall"]["algorithm"], "alltoall.sbt");
  EXPECT_EQ(j["replay"]["collectives"]["selection"]["alltoall"]["chosen"], "default");
  EXPECT_EQ(j["replay"]["collectives"]["comp_size_charged"], false);
  EXPECT_EQ(j["runs"][0]["mode"], "timing");
  const Result t = run_cli("replay " + kDir + "reduce-3.txt --machine ipsc-nx");
  EXPECT_NE(t.out.find("reduce by reduce.sbt (default)"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("node 3 spare: in the collectives only"), std::string::npos) << t.out;
}

// A lone collective takes, to the picosecond, what a plain run of the selected algorithm takes
// with the same M (bytes / 4-byte elements, rounded up; the largest of any rank's), root and
// cube; three ranks run on the 2-cube, the spare node in the algorithm.
TEST(CollectivesReplay, LoneCollectiveTakesThePlainRunsTime) {
  struct Case {
    std::string file, algorithm;
    std::int64_t M, root, k;
  };
  const std::vector<Case> cases = {
      {"bcast-4", "broadcast.sbt", 1024, 0, 0},
      {"bcast-3", "broadcast.sbt", 1024, 2, 0},
      {"reduce-4", "reduce.sbt", 512, 1, 0},
      {"reduce-3", "reduce.sbt", 512, 0, 0},
      {"allReduce-3", "allreduce.sbt", 200, 0, 0},
      {"allReduce-4", "allreduce.sbt", 200, 0, 0},
      {"barrier-4", "allreduce.sbt", 1, 0, 0},
      {"barrier-3", "allreduce.sbt", 1, 0, 0},
      {"gather-3", "alltosome.sbt", 128, 0, 2},
      {"gather-4", "alltosome.sbt", 128, 0, 2},
      {"allToAllV-4", "alltoall.sbt", 35, 0, 0},
      {"allToAllV-3", "alltoall.sbt", 30, 0, 0},
      {"reduceScatter-3", "reduce_scatter.sbt", 18, 0, 0},
      {"reduceScatter-4", "reduce_scatter.sbt", 16, 0, 0},
      {"scatter-4", "scatter.sbt", 64, 3, 0},
      {"allGather-4", "allgather.sbt", 75, 0, 0},
  };
  for (const char* machine : {"ipsc-nx", "caltech-mark2"})
    for (const Case& c : cases) {
      const cubesim::trace::ReplayResult r = replay_here(kDir + c.file + ".txt", machine);
      EXPECT_EQ(r.stats.time.count(), plain_ps(r.setup, c.algorithm, c.M, c.root, c.k)) << c.file << " on " << machine;
    }
  // And through the command line: `cubesim replay` against `cubesim run`.
  EXPECT_EQ(replay_ps(kDir + "bcast-3.txt --machine caltech-mark2"),
            run_ps("caltech-mark2", "broadcast.sbt", R"({"M": 1024, "root": 2})"));
}

// --collectives picks another algorithm: the time is that algorithm's, and the report says so.
TEST(CollectivesReplay, SelectorChangesTheAlgorithmAndTheTime) {
  const std::string bcast = kDir + "bcast-4.txt --machine ipsc-nx";
  const long long sbt = replay_ps(bcast);
  const json j = replay(bcast + " --collectives bcast=broadcast.gc,allreduce=allreduce.sbt");
  const json& sel = j["replay"]["collectives"]["selection"]["bcast"];
  EXPECT_EQ(sel["algorithm"], "broadcast.gc");
  EXPECT_EQ(sel["chosen"], "--collectives");
  const long long gc = j["runs"][0]["simulated"]["time_ps"].get<long long>();
  EXPECT_NE(gc, sbt);
  EXPECT_EQ(gc, run_ps("ipsc-nx", "broadcast.gc", R"({"M": 1024, "root": 0})"));
  // The text summary names the choice, too.
  Result r = run_cli("replay " + bcast + " --collectives bcast=broadcast.gc");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("bcast by broadcast.gc (--collectives)"), std::string::npos) << r.out;
}

// The defaults: the one-port algorithms on one-port machines (every iPSC and Mark II preset),
// the all-port ones on all-port machines.
TEST(CollectivesReplay, DefaultSelectionPerPortModel) {
  cubesim::Machine one, all;
  one.ports.kind = cubesim::PortKind::one;
  all.ports.kind = cubesim::PortKind::all;
  const auto d1 = cubesim::trace::default_collectives(one);
  const auto dn = cubesim::trace::default_collectives(all);
  EXPECT_EQ(d1.at("bcast"), "broadcast.sbt");
  EXPECT_EQ(dn.at("bcast"), "broadcast.nesbt");
  EXPECT_EQ(d1.at("alltoall"), "alltoall.sbt");
  EXPECT_EQ(dn.at("alltoall"), "alltoall.sbnt");
  EXPECT_EQ(d1.at("gather"), "alltosome.sbt");
  EXPECT_EQ(dn.at("scatter"), "scatter.sbnt");
  EXPECT_EQ(d1.at("barrier"), "allreduce.sbt");
  EXPECT_EQ(d1.size(), cubesim::trace::collective_actions().size());
  for (const char* m : {"ipsc-nx", "ipsc-os1", "caltech-mark2"})
    EXPECT_EQ(replay(kDir + "bcast-4.txt --machine " +
                     std::string(m))["replay"]["collectives"]["selection"]["bcast"]["algorithm"],
              "broadcast.sbt")
        << m;
}

// Point-to-point messages in flight across a collective (rank 0's isend to rank 1, tag 0, waited
// for after an allreduce whose exchanges also go 0 <-> 1) are not taken by the algorithm: the
// trace's tags are kept apart from the algorithms'.
struct TagLog : cubesim::EngineObserver {
  std::vector<std::pair<std::int64_t, int>> sent;  ///< (elements, tag) of every message
  void on_message(std::uint64_t, cubesim::NodeId, cubesim::NodeId, int tag, std::int64_t e, cubesim::Time) override {
    sent.emplace_back(e, tag);
  }
};

TEST(CollectivesReplay, PointToPointAndCollectivesKeepApart) {
  {
    // The trace's messages (100 and 50 elements, tags 0 and 7) travel with tags -1 and -8; the
    // algorithms' (200 elements each exchange, 1024 the broadcast) with their own, >= 0.
    cubesim::trace::ReplayOptions o;
    o.machine = "ipsc-nx";
    cubesim::trace::ReplayResult r = cubesim::trace::prepare_replay(kDir + "mixed-4.txt", o, registry());
    TagLog log;
    cubesim::trace::run_replay(r, registry(), &log);
    ASSERT_EQ(r.error, "");
    int p2p = 0;
    for (const auto& [e, tag] : log.sent) {
      if (e == 100 || e == 50) {
        EXPECT_EQ(tag, e == 100 ? -1 : -8);
        ++p2p;
      } else {
        EXPECT_GE(tag, 0);
      }
    }
    EXPECT_EQ(p2p, 2);
  }
  for (const char* machine : {"ipsc-nx", "caltech-mark2"}) {
    const json j = replay(kDir + "mixed-4.txt --machine " + std::string(machine));
    EXPECT_EQ(j["replay"]["collectives"]["calls"], 2);
    EXPECT_EQ(j["runs"][0]["simulated"]["unreceived_messages"], 0);
    // 2 p2p messages, 8 allreduce exchanges' messages, 3 broadcast messages.
    EXPECT_EQ(j["runs"][0]["simulated"]["messages"], 13);
  }
}

// --map: a send from rank 0 to rank 3 crosses 2 links with rank i on node i, 1 with rank i on
// node gray(i) (3 -> node 2), and what a file says.
TEST(RankMap, GrayRandomAndFilePlaceTheRanks) {
  const std::string p2p = write_temp("p2p-map.txt",
                                     "0 init\n0 send 3 0 400\n0 finalize\n1 init\n1 finalize\n2 init\n2 finalize\n"
                                     "3 init\n3 recv 0 0 400\n3 finalize\n");
  const auto hops = [&](const std::string& args) {
    return replay(p2p + " --machine ipsc-nx" + args)["runs"][0]["simulated"]["packet_hops"].get<int>();
  };
  EXPECT_EQ(hops(""), 2);
  EXPECT_EQ(hops(" --map identity"), 2);
  EXPECT_EQ(hops(" --map gray"), 1);
  const std::string file = write_temp("map-swap.txt", "0\n2\n3\n1\n");  // rank 3 on node 1
  EXPECT_EQ(hops(" --map " + file), 1);
  const json g = replay(p2p + " --machine ipsc-nx --map gray");
  EXPECT_EQ(g["replay"]["map"]["kind"], "gray");
  EXPECT_EQ(g["replay"]["map"]["rank_to_node"], json({0, 1, 3, 2}));
  // random: the same seed places the ranks the same way (the report bit-identical).
  const Result a = run_cli("replay " + p2p + " --machine ipsc-nx --map random:7 --json --reproducible");
  const Result b = run_cli("replay " + p2p + " --machine ipsc-nx --map random:7 --json --reproducible");
  EXPECT_EQ(a.code, 0);
  EXPECT_EQ(a.out, b.out);
  const json r = json::parse(a.out)["replay"]["map"];
  EXPECT_EQ(r["kind"], "random:7");
  ASSERT_EQ(r["rank_to_node"].size(), 4u);
  // Three ranks on four nodes: the collectives' root follows its rank.
  const json s = replay(kDir + "bcast-3.txt --machine ipsc-nx --map gray");
  EXPECT_EQ(s["replay"]["map"]["rank_to_node"], json({0, 1, 3}));
  EXPECT_EQ(s["runs"][0]["simulated"]["time_ps"], run_ps("ipsc-nx", "broadcast.sbt", R"({"M": 1024, "root": 3})"));
}

// --map on a native trace moves its recorded nodes (the formula no longer describes the run), and
// on a GOAL schedule its ranks.
TEST(RankMap, NativeAndGoalTraces) {
  const json n = replay("traces/samples/quickstart.trace --map random:3");
  EXPECT_EQ(n["runs"][0]["predicted"], nullptr);
  EXPECT_NE(n["runs"][0]["prediction_note"].get<std::string>().find("--map random:3"), std::string::npos);
  EXPECT_EQ(n["replay"]["map"]["rank_to_node"].size(), 16u);
  const json same = replay("traces/samples/quickstart.trace --map identity");
  EXPECT_NE(same["runs"][0]["predicted"], nullptr);
  const json g = replay("traces/samples/goal-handwritten/four-ranks.goal --machine ipsc-nx --map gray");
  EXPECT_EQ(g["replay"]["map"]["rank_to_node"], json({0, 1, 3, 2}));
}

}  // namespace
