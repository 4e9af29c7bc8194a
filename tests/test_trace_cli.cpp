// Traces and replay from the command line: sample traces, SimGrid TI export replayed by SimGrid's
// own smpirun, SimGrid TI import, the Chrome timeline, and the bad-input paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "tests/cli_helpers.hpp"
#include "traces/ti_trace.hpp"

namespace {

using cubesim::test::read_all;
using cubesim::test::Result;
using cubesim::test::run_cli;
using cubesim::test::temp_dir;
using cubesim::test::write_temp;
using nlohmann::json;

struct NodeRange {
  long first = 0, last = -1;
};

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
    const json header = json::parse(text.substr(std::string("cubesim.trace/2").size(), text.find('\n') - 15));
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

// Issue 34 point 1: SimGrid's time-independent actions as its examples and older traces spell
// them (Isend, Irecv, waitAll; sends without a tag; test), with an editor's line in the file and
// three ranks, replay to the time of the same trace in SimGrid 3.32's own spelling, on the
// smallest cube that holds the ranks, and say what they passed over.
TEST(TraceCli, ImportsSimgridSpellingsTaglessSendsTestsAndThreeRanks) {
  const std::string odd = write_temp("cubesim_ti_spellings.txt",
                                     "# three ranks, as SimGrid's replay examples run\n"
                                     "0 init\n1 init\n2 init\n"
                                     "vim: set ts=8 sw=2:\n"  // an editor's line: no rank's
                                     "0 Isend 1 0 1000\n"     // capitalised, tagged
                                     "0 send 2 1e3 6\n"       // no tag: <peer> <count> <datatype>
                                     "1 Irecv 0 0 1000\n"
                                     "1 test 0 1 0\n"  // never waits
                                     "1 waitAll\n"
                                     "2 recv 0 1000\n"  // no tag: <peer> <count>
                                     "1 compute 100\n"
                                     "0 finalize\n1 finalize\n2 finalize\n");
  const std::string canonical = write_temp("cubesim_ti_canonical.txt",
                                           "0 init\n1 init\n2 init\n0 isend 1 0 1000\n0 send 2 0 1000\n"
                                           "1 irecv 0 0 1000\n1 waitall\n2 recv 0 0 1000\n1 compute 100\n"
                                           "0 finalize\n1 finalize\n2 finalize\n");
  for (const char* machine : {"ipsc-nx", "caltech-mark2"}) {
    SCOPED_TRACE(machine);
    const json a = replay_json(odd + " --machine " + machine);
    const json b = replay_json(canonical + " --machine " + machine);
    EXPECT_EQ(a["runs"][0]["simulated"]["time_ps"], b["runs"][0]["simulated"]["time_ps"]);
    EXPECT_GT(a["runs"][0]["simulated"]["time_ps"].get<long long>(), 0);
    EXPECT_EQ(a["runs"][0]["simulated"]["messages"], 2);
    EXPECT_EQ(a["runs"][0]["topology"], "hypercube n=2 (4 nodes)");
    EXPECT_EQ(a["replay"]["ranks"], "3 ranks on hypercube n=2 (4 nodes): rank i on node i, node 3 idle");
    EXPECT_NE(a["replay"]["skipped"].get<std::string>().find("1 line(s) replayed by no rank"), std::string::npos);
    EXPECT_NE(a["replay"]["skipped"].get<std::string>().find("line 5: \"vim: set"), std::string::npos);
    EXPECT_FALSE(b["replay"].contains("skipped"));
  }
  // One file a rank: a line of another rank in it is passed over, as SimGrid does ("Ignore trace
  // element not for me").
  const std::string dir = temp_dir("ti_per_rank");
  std::ofstream(dir + "/r0.txt") << "0 init\n0 send 1 0 10\n1 compute 1000000\n0 finalize\n";
  std::ofstream(dir + "/r1.txt") << "1 init\n1 recv 0 0 10\n1 finalize\n";
  std::ofstream(dir + "/index.txt") << "r0.txt\nr1.txt\n";
  const json per_rank = replay_json(dir + "/index.txt --machine ipsc-nx");
  EXPECT_NE(per_rank["replay"]["skipped"].get<std::string>().find("rank 1's line in rank 0's file"), std::string::npos);
  // tau + 3 t_c: 10 bytes are 3 of the iPSC's 4-byte elements, rounded up.
  EXPECT_EQ(per_rank["runs"][0]["simulated"]["time_ps"], 1500000000LL + 3 * 4000000LL);
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

// A hand-written trace (traces/samples/simgrid-p2p/: isend, irecv, waitall, compute, send, recv
// among three ranks on a 2-cube, neighbours only, no node sending two messages at once) replays
// in cubesim and in SimGrid 3.32's own replayer (smpirun -replay on the platform cubesim exports)
// to the same time on the iPSC and on the Mark II, but for SMPI's 16-byte envelope on each of the
// two messages of the critical path (0 -> 1, 1000 flops on rank 1, 1 -> 0).
TEST(TraceCli, HandWrittenTraceReplaysAsSmpirunReplaysItOnTheIpscAndTheMarkII) {
  const std::string dir = temp_dir("sgp2p");
  struct Case {
    const char* machine;
    double tau, t_c, t_a;  // seconds; element_bytes 4 on both
  };
  for (const Case& c : {Case{"ipsc-nx", 1.5e-3, 4e-6, 1.0 / 30e3}, Case{"caltech-mark2", 0, 70e-6, 61.5e-6}}) {
    SCOPED_TRACE(c.machine);
    const json rep = replay_json(std::string("traces/samples/simgrid-p2p/index.txt --machine ") + c.machine);
    const double ours = rep["runs"][0]["simulated"]["time_s"].get<double>();
    EXPECT_NEAR(ours, 2 * (c.tau + 100 * c.t_c) + 1000 * c.t_a, 1e-9);  // 400 bytes: 100 elements, 1 packet
    const std::string cfg =
        write_temp(std::string("cubesim_p2p_") + c.machine + ".json",
                   std::string(R"({"schema": "cubesim.config/1", "name": "p", "machine": ")") + c.machine +
                       R"(", "topology": {"kind": "hypercube", "dim": 2},
        "algorithm": "broadcast.sbt", "params": {"M": 1}})");
    const std::string plat = dir + "/" + c.machine + ".xml", hosts = dir + "/hosts.txt";
    Result r = run_cli("export-platform " + cfg + " --out " + plat);
    ASSERT_EQ(r.code, 0) << r.err;
    {
      std::ofstream h(hosts);
      h << "node-0\nnode-1\nnode-2\n";
    }
    // SimGrid opens the index's files relative to the current folder.
    Result s = cubesim::test::run_command("cd traces/samples/simgrid-p2p && smpirun -np 3 -platform " + plat +
                                          " -hostfile " + hosts +
                                          " -replay index.txt"
                                          " --cfg=network/model:CM02 --cfg=network/latency-factor:1"
                                          " --cfg=network/bandwidth-factor:1 --cfg=network/crosstraffic:0"
                                          " --cfg=network/TCP-gamma:1e18 --cfg=surf/precision:1e-13"
                                          " --cfg=smpi/send-is-detached-thresh:2000000000");
    ASSERT_EQ(s.code, 0) << s.err;
    const double simgrid = smpi_time(s.out + s.err);
    ASSERT_GT(simgrid, 0) << s.err;
    EXPECT_NEAR(simgrid, ours + 2 * 16 * c.t_c / 4, 1e-6) << s.err;  // SimGrid prints microseconds
  }
}

TEST(TraceCli, ChromeTraceHasSlicesTracksAndFlows) {
  const json c = json::parse(read_all("traces/samples/tr530-s4.1.6-gc.chrome.json"));
  const std::string text = read_all("traces/samples/tr530-s4.1.6-gc.trace");
  const json h = json::parse(text.substr(15, text.find('\n') - 15));
  long slices = 0, recvs = 0, starts = 0, ends = 0, names = 0;
  double last_end = 0;
  for (const json& e : c["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "X") {
      ++(e["name"] == "recv" ? recvs : slices);
      last_end = std::max(last_end, e["ts"].get<double>() + e["dur"].get<double>());
    }
    if (ph == "s") ++starts;
    if (ph == "f") ++ends;
    if (ph == "M" && e["name"] == "thread_name") ++names;
  }
  // GC(1,1) at n=4 with 8 packets, pipelined: each of the 15 nodes on the path after the root
  // receives 8 one-packet messages, each one hop.
  EXPECT_EQ(slices, 15 * 8);
  EXPECT_EQ(recvs, 15 * 8);
  EXPECT_EQ(starts, 15 * 8);
  EXPECT_EQ(ends, 15 * 8);
  EXPECT_EQ(names, 15 + 15);  // one port track per sending node, one per receiving node
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

// The structure a viewer needs to draw a message as an arrow between two nodes (Chrome trace
// event format: a flow event binds to the slice enclosing its ts on its own pid/tid; "bp":"e"
// makes the end do the same). For every flow id: exactly one start and one end; the start lies
// strictly inside one slice, on the source's port track, of that message; the end strictly
// inside one "recv" slice of that message on a track of the destination node; slices on a port
// track never overlap (each would nest in the other). Returns the number of arrows.
struct FlowCount {
  long arrows = 0, recv_slices = 0, recv_without_arrow = 0;
};
FlowCount check_flows(const json& trace, NodeRange range = {}) {
  struct Slice {
    long long start, end;
    json args;
    std::string name;
  };
  const auto ps = [](const json& us) { return std::llround(us.get<double>() * 1e6); };
  std::map<std::pair<long, long>, std::vector<Slice>> tracks;
  std::map<long long, std::vector<json>> starts, ends;
  FlowCount n;
  for (const json& e : trace["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "X") {
      tracks[{e["pid"], e["tid"]}].push_back({ps(e["ts"]), ps(e["ts"]) + ps(e["dur"]), e["args"], e["name"]});
      if (e["name"] == "recv") {
        ++n.recv_slices;
        n.recv_without_arrow += e["args"].contains("arrow") ? 1 : 0;
      }
    }
    if (ph == "s") starts[e["id"].get<long long>()].push_back(e);
    if (ph == "f") ends[e["id"].get<long long>()].push_back(e);
  }
  for (auto& [track, slices] : tracks) {
    if (track.second == 0) continue;  // cpu: concurrent strands may nest
    std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) { return a.start < b.start; });
    for (std::size_t i = 1; i < slices.size(); ++i)
      EXPECT_LE(slices[i - 1].end, slices[i].start) << "overlap on node " << track.first << " tid " << track.second;
  }
  // The one slice on e's own track that encloses e's ts, strictly inside (a shared boundary would
  // be ambiguous to a viewer); nullptr, with a failure, if none or several.
  const auto enclosing = [&](const json& e) -> const Slice* {
    const long long ts = ps(e["ts"]);
    const Slice* hit = nullptr;
    int hits = 0;
    for (const Slice& s : tracks[{e["pid"], e["tid"]}])
      if (s.start <= ts && ts <= s.end) {
        ++hits;
        hit = s.start < ts && ts < s.end ? &s : nullptr;
      }
    EXPECT_EQ(hits, 1) << e.dump();
    EXPECT_NE(hit, nullptr) << "not strictly inside its slice: " << e.dump();
    return hits == 1 ? hit : nullptr;
  };
  for (const auto& [id, ss] : starts) EXPECT_TRUE(ends.contains(id)) << "flow " << id << " has no end";
  for (const auto& [id, fs] : ends) {
    SCOPED_TRACE("flow " + std::to_string(id));
    EXPECT_TRUE(starts.contains(id)) << "an end without a start";
    EXPECT_EQ(fs.size(), 1U);
    if (!starts.contains(id) || fs.size() != 1) continue;
    EXPECT_EQ(starts[id].size(), 1U);
    const json& s = starts[id][0];
    const json& f = fs[0];
    EXPECT_EQ(f.value("bp", ""), "e");
    EXPECT_NE(s["pid"], f["pid"]) << "the arrow must leave the sender's node";
    for (const json* e : {&s, &f}) {
      EXPECT_GE((*e)["pid"].get<long>(), range.first);
      if (range.last >= 0) {
        EXPECT_LE((*e)["pid"].get<long>(), range.last);
      }
    }
    const Slice* from = enclosing(s);
    const Slice* to = enclosing(f);
    if (from == nullptr || to == nullptr) continue;
    EXPECT_EQ(from->args.value("message", json()), id);
    EXPECT_EQ(from->args.value("packet", json()), 0);
    EXPECT_EQ(from->args.value("src", json()), s["pid"]) << "the arrow starts at the message's source";
    EXPECT_EQ(to->name, "recv");
    EXPECT_EQ(to->args.value("message", json()), id);
    EXPECT_EQ(to->args.value("dst", json()), f["pid"]) << "the arrow ends at the message's destination";
    EXPECT_LT(from->start, to->end);
    ++n.arrows;
  }
  EXPECT_EQ(trace["traceEvents"][0]["args"].value("flows", -1L), n.arrows);
  return n;
}

// Issue 33: every message is an arrow from the sender's packet slice to a recv slice on the
// receiving node: on a one-hop broadcast, a pipelined path and routed (multi-hop) sends; with a
// node range, arrows whose either end is outside are dropped (their recv slice says so); with
// an event cap, an arrow is written whole or not at all.
TEST(TraceCli, ChromeFlowsGoFromSenderToReceiver) {
  const std::string dir = temp_dir("flows");
  const auto trace = [&](const std::string& cfg, const std::string& extra, json* report = nullptr) {
    Result r = run_cli("run " + cfg + " --trace chrome --json --reproducible --out " + dir + " " + extra);
    EXPECT_EQ(r.code, 0) << r.err;
    if (report != nullptr) *report = json::parse(r.out);
    const std::string name = json::parse(r.out)["name"];
    return json::parse(read_all(dir + "/traces/" + name + ".chrome.json"));
  };
  const std::string routed = write_temp("cubesim_flows_routed.json", R"({"schema": "cubesim.config/1",
    "name": "routed", "machine": "ipsc-nx", "topology": {"kind": "hypercube", "dim": 3},
    "algorithm": "transpose.router", "params": {"P": 16, "Q": 16}})");
  for (const std::string& cfg : std::vector<std::string>{"configs/traces/quickstart-trace.json",
                                                         "configs/traces/tr530-s4.1.6-gc-trace.json", routed}) {
    SCOPED_TRACE(cfg);
    json rep;
    const json t = trace(cfg, "", &rep);
    const FlowCount n = check_flows(t);
    const long messages = rep["runs"][0]["simulated"]["messages"];
    EXPECT_EQ(n.arrows, messages) << "one arrow a message";
    EXPECT_EQ(n.recv_slices, messages);
    EXPECT_EQ(n.recv_without_arrow, 0);
  }
  // Nodes 1-5 of the SBT broadcast from node 0: arrows 1->3 and 1->5 inside; 0->1, 0->2, 0->4
  // come from outside (a recv slice, no arrow); 1->9, 2->6, ... leave (a packet slice, no arrow).
  const FlowCount cut = check_flows(trace("configs/traces/quickstart-trace.json", "--trace-nodes 1-5"), {1, 5});
  EXPECT_GT(cut.arrows, 0);
  EXPECT_GT(cut.recv_without_arrow, 0);
  for (const int cap : {5, 62, 63, 400}) {  // 62: the first message's 60 packets fit, its arrow not
    SCOPED_TRACE("cap " + std::to_string(cap));
    const json t = trace("configs/traces/quickstart-trace.json", "--trace-max-events " + std::to_string(cap));
    check_flows(t);
    EXPECT_LE(t["traceEvents"][0]["args"]["kept_events"].get<long>(), cap);
    EXPECT_GT(t["traceEvents"][0]["args"]["dropped_events"].get<long>(), 0);
  }
  // The same config gives the same bytes.
  const std::string first = read_all(dir + "/traces/routed.chrome.json");
  trace(routed, "");
  EXPECT_EQ(read_all(dir + "/traces/routed.chrome.json"), first);
}

TEST(TraceCli, BadInputIsOneLineAndExitTwo) {
  const std::string dir = temp_dir("tracebad");
  const std::string sample = read_all("traces/samples/quickstart.trace");
  const std::string badtrace = write_temp(
      "cubesim_bad.trace",
      cubesim::trace::with_end_line(sample.substr(0, sample.rfind('\n', sample.size() - 2) + 1) + "3 0 send 99 1 0\n"));
  const std::string collective = write_temp("cubesim_coll.txt", "0 init\n0 bcast\n");
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
      {"replay " + collective + " --machine ipsc-nx", collective + ": line 2: bcast: missing arguments"},
  };
  for (const Case& c : cases) {
    Result r = run_cli(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/report.json")) << c.args;  // nothing half-written
  }
}

// Issue 39: a replay whose prediction's relation does not hold exits 1, as `run` does; a replay
// on another topology of as many nodes gets no prediction (the formula there describes messages
// the trace does not hold).
TEST(TraceCli, ReplayExitsOneWhenTheRelationFailsAndPredictsOnlyOnTheRecordedTopology) {
  const std::string d = temp_dir("replay_exit");
  {
    std::ofstream(d + "/allport.json")
        << R"({"name": "ipsc-all", "tau": "1.5ms", "t_c": "4us", "packet_elements": 256, "ports": "all"})";
  }
  // The one-port broadcast's messages on an all-port machine: slower than SBT-b(n,1), exact broken.
  Result r = run_cli("replay traces/samples/quickstart.trace --machine " + d + "/allport.json --topology hypercube:4");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("DOES NOT HOLD"), std::string::npos) << r.out;
  EXPECT_EQ(run_cli("replay traces/samples/quickstart.trace").code, 0);
  {
    std::ofstream(d + "/torus.json") << R"({"schema": "cubesim.config/1", "machine": "mesh2d",
        "topology": {"kind": "torus", "shape": [4, 4]}, "algorithm": "allgather.ring", "params": {"M": 8}})";
  }
  ASSERT_EQ(run_cli("run " + d + "/torus.json --out " + d + "/out --trace cubesim").code, 0);
  const std::string trace = d + "/out/traces/torus.trace";
  r = run_cli("replay " + trace + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["runs"][0]["relation_holds"], true);
  r = run_cli("replay " + trace + " --topology torus:2x8");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("no prediction: the trace was recorded on torus 4x4 (16 nodes) and replays on torus 2x8"),
            std::string::npos)
      << r.out;
}

}  // namespace
