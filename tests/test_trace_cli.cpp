// Traces and replay from the command line: sample traces, SimGrid TI export replayed by SimGrid's
// own smpirun, SimGrid TI import, the Chrome timeline, and the bad-input paths.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>

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
  return json::parse(r.out);
}

// The shipped samples are what the configs record today (bit for bit), and replay to the time
// their header recorded, on the recording machine, with the formula holding.
TEST(TraceCli, SamplesAreCurrentAndReplayToTheirRecordedTime) {
  const std::string dir = temp_dir("samples");
  for (const std::string stem : {"quickstart", "tr530-s4.1.6-gc"}) {
    SCOPED_TRACE(stem);
    const std::string cfg = stem == "quickstart" ? "quickstart-trace" : "tr530-s4.1.6-gc-trace";
    Result r = run_cli("run configs/traces/" + cfg + ".json --trace cubesim,chrome --out " + dir);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read_all(dir + "/traces/" + stem + ".trace"), read_all("traces/samples/" + stem + ".trace"))
        << "regenerate traces/samples (docs/traces.md)";
    EXPECT_EQ(read_all(dir + "/traces/" + stem + ".chrome.json"), read_all("traces/samples/" + stem + ".chrome.json"));
    const std::string text = read_all("traces/samples/" + stem + ".trace");
    const json header = json::parse(text.substr(std::string("cubesim.trace/1").size(), text.find('\n') - 15));
    const json rep = replay_json("traces/samples/" + stem + ".trace");
    const json& run = rep["runs"][0];
    EXPECT_EQ(run["simulated"]["time_ps"], header["recorded"]["time_ps"]);
    EXPECT_EQ(run["simulated"]["critical_path"]["startups"], header["recorded"]["critical_path"]["startups"]);
    EXPECT_EQ(run["simulated"]["critical_path"]["element_transfers"],
              header["recorded"]["critical_path"]["element_transfers"]);
    EXPECT_EQ(run["relation_holds"], true);
    EXPECT_EQ(run["simulated"]["time_ps"], run["predicted"]["time_ps"]);
  }
}

// An iPSC trace on the Mark II and on a mesh: it runs, takes the other machine's time, and the
// mesh replay routes the non-neighbour sends (more packet hops than messages).
TEST(TraceCli, IpscTraceReplaysOnMarkIIAndMesh) {
  const json ipsc = replay_json("traces/samples/quickstart.trace");
  const json mark2 = replay_json("traces/samples/quickstart.trace --machine caltech-mark2");
  const json mesh = replay_json("traces/samples/quickstart.trace --machine mesh2d --topology mesh:4x4");
  const auto t = [](const json& j) { return j["runs"][0]["simulated"]["time_ps"].get<long long>(); };
  EXPECT_NE(t(mark2), t(ipsc));
  EXPECT_EQ(mark2["machine"]["name"], "caltech-mark2");
  EXPECT_EQ(mark2["runs"][0]["predicted"], nullptr);  // recorded at B=256, replayed at B=2
  EXPECT_EQ(mesh["runs"][0]["topology"], "mesh 4x4 (16 nodes)");
  EXPECT_GT(mesh["runs"][0]["simulated"]["packet_hops"].get<long>(),
            mesh["runs"][0]["simulated"]["packets"].get<long>());
  EXPECT_EQ(mesh["runs"][0]["simulated"]["messages"], ipsc["runs"][0]["simulated"]["messages"]);
}

// The hand-written SimGrid trace: isend/irecv/wait/waitall/compute/sleep and a routed send.
// Expected on ipsc-nx (tau 1.5 ms, t_c 4 us, B 256, t_a 33.333333 us), worked out by hand:
// rank 0 computes 1000 flops (33.333333 ms), sends 1024 elements (4 packets of 2.524 ms) to rank 3
// through rank 1, then 256 elements to rank 1; the last packet reaches rank 3 at 45.953333 ms,
// which computes 30 flops (0.99999999 ms): 46.95333299 ms.
TEST(TraceCli, ImportsAHandWrittenSimgridTrace) {
  const json j = replay_json("traces/samples/simgrid-handwritten/index.txt --machine ipsc-nx");
  const json& run = j["runs"][0];
  EXPECT_EQ(j["replay"]["format"], "simgrid");
  EXPECT_EQ(run["topology"], "hypercube n=2 (4 nodes)");
  EXPECT_EQ(run["simulated"]["time_ps"], 46953332990LL);
  EXPECT_EQ(run["simulated"]["messages"], 3);
  EXPECT_EQ(run["simulated"]["packet_hops"], 4 + 4 + 1 + 1);
  // One file shared by all ranks works too.
  std::string shared;
  for (int r = 0; r < 4; ++r)
    shared += read_all("traces/samples/simgrid-handwritten/ranks/rank-" + std::to_string(r) + ".txt");
  const std::string one = write_temp("cubesim_shared_ti.txt", shared);
  EXPECT_EQ(replay_json(one + " --machine ipsc-nx")["runs"][0]["simulated"]["time_ps"], 46953332990LL);
}

double smpi_time(const std::string& out) {
  std::smatch m;
  static const std::regex re(R"(Simulation time ([0-9.e+-]+))");
  if (!std::regex_search(out, m, re)) return -1;
  return std::stod(m[1]);
}

// Export a run as SimGrid TI, replay it with SimGrid 3.32's smpirun/smpireplaymain, and compare.
// SimGrid's flow for a lone message takes latency + bytes/bandwidth, where SMPI adds a 16-byte
// envelope to every message (measured; docs/traces.md): on the Gray-code path every message is
// alone on its link, so SimGrid's time is cubesim's plus 16 bytes * t_c / element_bytes per hop.
TEST(TraceCli, SimgridExportReplaysInSmpirun) {
  const std::string dir = temp_dir("sgexport");
  const std::string machine =
      write_temp("cubesim_big_machine.json",
                 R"({"name": "slow", "tau": "0.1s", "t_c": "1ms", "t_a": "1ms", "packet_elements": 100})");
  const std::string cfg = write_temp("cubesim_sg.json", R"({"schema": "cubesim.config/1", "name": "sg",
    "machine": {"name": "slow", "tau": "0.1s", "t_c": "1ms", "t_a": "1ms", "packet_elements": 100},
    "topology": {"kind": "hypercube", "dim": 3}, "algorithm": "broadcast.gc", "params": {"M": 100}})");
  Result r = run_cli("run " + cfg + " --trace simgrid,cubesim --json --reproducible --out " + dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const json rep = json::parse(r.out);
  const double ours = rep["runs"][0]["simulated"]["time_s"].get<double>();
  const std::string sg = dir + "/traces/sg.simgrid";
  for (const char* f :
       {"index.txt", "platform.xml", "hostfile.txt", "replay.sh", "ranks/rank-0.txt", "ranks/rank-7.txt"})
    EXPECT_TRUE(std::filesystem::exists(sg + "/" + f)) << f;
  EXPECT_EQ(read_all(sg + "/ranks/rank-0.txt"), "0 init\n0 send 1 0 400\n0 finalize\n");
  Result s = cubesim::test::run_command("sh " + sg + "/replay.sh");
  ASSERT_EQ(s.code, 0) << s.err;
  const double simgrid = smpi_time(s.out + s.err);
  ASSERT_GT(simgrid, 0) << s.err;
  const int hops = 7;  // the path through all 8 nodes
  EXPECT_NEAR(ours, hops * (0.1 + 100 * 1e-3), 1e-12);
  EXPECT_NEAR(simgrid, ours + hops * 16 * 1e-3 / 4, 2e-6) << s.err;

  // And back: the exported actions import and replay to cubesim's time on the same machine.
  const json back = replay_json(sg + "/index.txt --machine " + machine);
  EXPECT_EQ(back["runs"][0]["simulated"]["time_ps"], rep["runs"][0]["simulated"]["time_ps"]);
}

TEST(TraceCli, ChromeTraceHasSlicesTracksAndFlows) {
  const json c = json::parse(read_all("traces/samples/tr530-s4.1.6-gc.chrome.json"));
  const std::string text = read_all("traces/samples/tr530-s4.1.6-gc.trace");
  const json h = json::parse(text.substr(15, text.find('\n') - 15));
  long slices = 0, starts = 0, ends = 0, names = 0;
  double last_end = 0;
  for (const json& e : c["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "X") {
      ++slices;
      last_end = std::max(last_end, e["ts"].get<double>() + e["dur"].get<double>());
    }
    if (ph == "s") ++starts;
    if (ph == "f") ++ends;
    if (ph == "M" && e["name"] == "thread_name") ++names;
  }
  // GC(1,1) at n=4 with 8 packets, pipelined: each of the 15 nodes on the path after the root
  // receives 8 one-packet messages, each one hop.
  EXPECT_EQ(slices, 15 * 8);
  EXPECT_EQ(starts, 15 * 8);
  EXPECT_EQ(ends, 15 * 8);
  EXPECT_EQ(names, 15);  // one port track per sending node
  EXPECT_NEAR(last_end, h["recorded"]["time_ps"].get<double>() / 1e6, 1e-6);

  // A node range keeps the file small for big machines.
  const std::string dir = temp_dir("chrome");
  Result r = run_cli("run configs/traces/quickstart-trace.json --trace chrome --trace-nodes 0-3 --out " + dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const json q = json::parse(read_all(dir + "/traces/quickstart.chrome.json"));
  for (const json& e : q["traceEvents"]) {
    if (e.contains("pid")) {
      EXPECT_LE(e["pid"].get<int>(), 3);
    }
  }
  r = run_cli("run configs/traces/quickstart-trace.json --trace chrome --trace-max-events 5 --out " + dir);
  ASSERT_EQ(r.code, 0);
  EXPECT_NE(r.err.find("dropped"), std::string::npos) << r.err;
}

TEST(TraceCli, BadInputIsOneLineAndExitTwo) {
  const std::string dir = temp_dir("tracebad");
  const std::string badtrace =
      write_temp("cubesim_bad.trace", read_all("traces/samples/quickstart.trace") + "3 0 send 99 1 0\n");
  const std::string collective = write_temp("cubesim_coll.txt", "0 init\n0 bcast 100\n");
  struct Case {
    std::string args, expect;
  };
  const std::vector<Case> cases = {
      {"run configs/traces/quickstart-trace.json --trace chrome", "--trace: traces are files: give --out DIR"},
      {"run configs/traces/quickstart-trace.json --trace pdf --out " + dir, "unknown trace format \"pdf\""},
      {"run configs/traces/quickstart-trace.json --trace chrome --trace-nodes 5-2 --out " + dir, "--trace-nodes"},
      {"replay " + badtrace, badtrace + ": line "},
      {"replay /nonexistent.trace", "/nonexistent.trace: cannot read the file"},
      {"replay traces/samples/quickstart.trace --machine nosuch", "--machine: \"nosuch\" is neither"},
      {"replay traces/samples/quickstart.trace --machine mesh2d", "give --topology"},
      {"replay traces/samples/quickstart.trace --topology mesh:3x3", "has 9 nodes; the trace has 16"},
      {"replay traces/samples/quickstart.trace --topology ring:4", "--topology"},
      {"replay traces/samples/simgrid-handwritten/index.txt", "a SimGrid trace records no machine"},
      {"replay " + collective + " --machine ipsc-nx", collective + ": line 2: action \"bcast\" is not supported"},
  };
  for (const Case& c : cases) {
    Result r = run_cli(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/report.json")) << c.args;  // nothing half-written
  }
}

}  // namespace
