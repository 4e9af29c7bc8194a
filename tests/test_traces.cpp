// Time-independent traces: record, write, read, replay. A replay on the recording machine must
// give the identical simulated time and critical path, for every algorithm; a replay on other
// machines and topologies must run; strands and requests replay faithfully.
#include <gtest/gtest.h>

#include "app/config.hpp"
#include "app/replay.hpp"
#include "app/runner.hpp"
#include "machines/machine_loader.hpp"
#include "sim/input_error.hpp"
#include "tests/helpers.hpp"
#include "traces/ti_trace.hpp"

namespace cubesim {
namespace {

Machine preset(const std::string& name) { return machine_from_json(*preset_json(name), name, "", true); }

struct Recorded {
  RunOutcome outcome;
  trace::Trace trace;
};

Recorded record(const AlgorithmInfo& info, const Setup& s) {
  RunPoint p;
  p.setup = s;
  trace::Recorder rec(s.topology.size());
  Recorded r{run_point(p, info, true, &rec), {}};
  r.trace.header = trace_header("test", info.name, s, r.outcome.stats);
  r.trace.topology = s.topology;
  r.trace.packet_elements = s.params.B;
  r.trace.packet_explicit = s.params.B != s.machine.packet_elements;
  r.trace.nodes = rec.take();
  return r;
}

RunStats replay(const trace::Trace& t, const Machine& m, const Topology& topo, std::int64_t b,
                trace::Recorder* again = nullptr) {
  auto shared = std::make_shared<const trace::Trace>(t);
  Engine e(m, topo, EngineOptions{b, false});
  e.set_observer(again);
  return e.run([shared](Node& n) { return trace::replay_process(n, shared); });
}

Topology mesh_of_size(NodeId n) {
  std::int64_t a = 1;
  while (a * a < n) a *= 2;
  return Topology::mesh({a, n / a}, false);
}

TEST(Traces, EveryAlgorithmReplaysIdenticallyOnItsMachineAndRunsElsewhere) {
  const Registry reg = make_registry();
  int checked = 0;
  for (const AlgorithmInfo* info : reg.all()) {
    for (const char* mname : {"ipsc-nx", "mesh2d"}) {
      for (int n : {1, 3, 4, 5}) {
        // n = 4: the two-dimensional transpositions (even n) only, to keep the suite quick.
        // n = 4: the two-dimensional transpositions (even n) and Cannon's square grid only.
        if (n == 4 && !cubesim::test::takes_matrix(*info) && info->name != "matmul2d.cannon") continue;
        for (std::int64_t M : {1, 300, 1000}) {
          cubesim::Setup s;
          s.machine = preset("ipsc-nx");
          if (std::string(mname) == "mesh2d") s.machine.ports = PortModel{PortKind::all, 1};  // all-port rows
          s.topology = Topology::hypercube(n);
          s.params.M = M;
          s.params.P = 32;
          s.params.Q = M == 1 ? 32 : 64;
          s.params.R = 24;                                             // the matrix multiplications
          if (cubesim::test::multiplies(*info) && M != 300) continue;  // M is not theirs: one run each
          s.params.root = n > 1 ? 1 : 0;
          s.params.B = s.machine.packet_elements;
          cubesim::test::fill_grid_params(s.params, n, M);
          if (info->check(s)) continue;
          SCOPED_TRACE(info->name + " ports " + s.machine.ports.name() + " n=" + std::to_string(n) +
                       " M=" + std::to_string(M));
          Recorded r = record(*info, s);
          ASSERT_TRUE(r.outcome.error.empty()) << r.outcome.error;
          ASSERT_TRUE(r.outcome.verified) << r.outcome.verify_message;

          // Text round trip.
          const std::string text = trace::write_text(r.trace);
          const trace::Trace back = trace::read_text(text, "mem.trace");
          EXPECT_EQ(back.nodes, r.trace.nodes);
          EXPECT_EQ(trace::write_text(back), text);

          // Same machine: identical time and critical path; the replay records the same trace.
          trace::Recorder again(s.topology.size());
          const RunStats st = replay(back, s.machine, s.topology, s.params.B, &again);
          EXPECT_EQ(st.time, r.outcome.stats.time);
          EXPECT_EQ(st.critical_path, r.outcome.stats.critical_path);
          EXPECT_EQ(st.messages, r.outcome.stats.messages);
          EXPECT_EQ(st.packet_hops, r.outcome.stats.packet_hops);
          EXPECT_EQ(again.take(), r.trace.nodes);

          // The Mark II (other costs, B_m = 2) and a mesh of the same size (routed sends).
          const Machine mark2 = preset("caltech-mark2");
          const RunStats on_mark2 = replay(back, mark2, s.topology, mark2.packet_elements);
          EXPECT_EQ(on_mark2.messages, r.outcome.stats.messages);
          EXPECT_EQ(on_mark2.time > Time{}, r.outcome.stats.time > Time{});  // a bit reversal of a 1-cube moves nothing
          if (n >= 2) {
            const Machine mesh = preset("mesh2d");
            const RunStats on_mesh = replay(back, mesh, mesh_of_size(s.topology.size()), mesh.packet_elements);
            EXPECT_EQ(on_mesh.messages, r.outcome.stats.messages);
            EXPECT_GE(on_mesh.packet_hops, r.outcome.stats.messages - 0);
          }
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 50);
}

// The mesh family (docs/meshes.md) on tori and meshes: recorded, written, read back and replayed
// on the recording machine with the identical time, critical path and trace; on a torus and on a
// mesh (whose folded rings send routed messages), one port and all ports.
TEST(Traces, MeshFamilyReplaysIdenticallyOnToriAndMeshes) {
  const Registry reg = make_registry();
  int checked = 0;
  for (const AlgorithmInfo* info : reg.all()) {
    if (std::find(info->params.begin(), info->params.end(), "grid") == info->params.end()) continue;
    for (const bool all_port : {false, true})
      for (const std::vector<std::int64_t>& shape : std::vector<std::vector<std::int64_t>>{{5}, {3, 4}, {2, 3, 2}})
        for (const bool wrap : {true, false}) {
          cubesim::Setup s;
          s.machine = preset("mesh2d");
          s.machine.ports = all_port ? PortModel{PortKind::all, 0} : PortModel{PortKind::one, 1};
          s.machine.packet_elements = 16;
          s.topology = Topology::mesh(shape, wrap);
          s.params.M = 37, s.params.B = 16, s.params.P = 12, s.params.Q = 10, s.params.R = 14;
          if (info->name == "matmul.foh" || info->name == "matmul.foh_ring") s.params.M = 0;
          if (info->check(s)) continue;
          SCOPED_TRACE(info->name + " " + s.machine.ports.name() + " " + s.topology.describe());
          Recorded r = record(*info, s);
          ASSERT_TRUE(r.outcome.error.empty()) << r.outcome.error;
          ASSERT_TRUE(r.outcome.verified) << r.outcome.verify_message;
          const trace::Trace back = trace::read_text(trace::write_text(r.trace), "mem.trace");
          trace::Recorder again(s.topology.size());
          const RunStats st = replay(back, s.machine, s.topology, s.params.B, &again);
          EXPECT_EQ(st.time, r.outcome.stats.time);
          EXPECT_EQ(st.critical_path, r.outcome.stats.critical_path);
          EXPECT_EQ(st.routed_messages, r.outcome.stats.routed_messages);
          EXPECT_EQ(again.take(), r.trace.nodes);
          ++checked;
        }
  }
  EXPECT_GT(checked, 40);
}

// A process with concurrent strands (all_of of Tasks) and non-blocking requests.
Task<> child(Node& self, int k) {
  auto s = self.send(k, Buffer::sized(10 + k), k);
  auto r = self.recv(k, k);
  co_await all_of(s, r);
  co_await self.compute(5 * (k + 1));
}

Task<> strands_and_requests(Node& self) {
  std::vector<Task<>> kids;
  for (int k = 0; k < self.ports(); ++k) kids.push_back(child(self, k));
  co_await all_of(std::move(kids));
  Request r = self.start(self.recv(0, 99));
  Request s = self.start(self.send(0, Buffer::sized(33), 99));
  co_await self.copy(4);
  Buffer got = co_await r;
  if (got.size() != 33) throw std::runtime_error("wrong size");
  co_await s;
}

TEST(Traces, StrandsAndRequestsReplayFaithfully) {
  const Machine m = test::simple_machine({PortKind::one, 1}, 4);
  const Topology topo = Topology::hypercube(3);
  trace::Recorder rec(topo.size());
  Engine e(m, topo, EngineOptions{4, true});
  e.set_observer(&rec);
  const RunStats st = e.run([](Node& n) { return strands_and_requests(n); });
  trace::Trace t;
  t.header = {{"schema", trace::kSchema}, {"topology", topology_to_json(topo)}, {"packet_elements", 4}};
  t.topology = topo;
  t.packet_elements = 4;
  t.nodes = rec.take();
  ASSERT_TRUE(t.has_forks());
  const std::string text = trace::write_text(t);
  EXPECT_NE(text.find("0 0 fork 1 3"), std::string::npos) << text.substr(0, 400);
  EXPECT_NE(text.find("0 0 start 1 recv 1 33 99"), std::string::npos);
  EXPECT_NE(text.find("0 0 wait 1"), std::string::npos);
  EXPECT_NE(text.find("0 2 send 2 11 1 & recv 2 11 1"), std::string::npos);
  const trace::Trace back = trace::read_text(text, "mem");
  trace::Recorder again(topo.size());
  const RunStats rs = replay(back, m, topo, 4, &again);
  EXPECT_EQ(rs.time, st.time);
  EXPECT_EQ(rs.critical_path, st.critical_path);
  EXPECT_EQ(again.take(), t.nodes);
}

TEST(Traces, ReplayChecksReceivedSizes) {
  const Topology topo = Topology::hypercube(1);
  const std::string text = std::string(trace::kSchema) +
                           " {\"topology\":{\"kind\":\"hypercube\",\"dim\":1},\"packet_elements\":8}\n"
                           "0 0 send 1 5 0\n1 0 recv 0 6 0\n";
  const trace::Trace t = trace::read_text(trace::with_end_line(text), "mem");
  EXPECT_THROW(replay(t, test::simple_machine(), topo, 8), SimulationError);
}

TEST(Traces, BadTraceTextNamesFileAndLine) {
  const std::string h =
      std::string(trace::kSchema) + " {\"topology\":{\"kind\":\"hypercube\",\"dim\":1},\"packet_elements\":8}\n";
  struct Case {
    std::string text, where, what;
  };
  const std::vector<Case> cases = {
      {"hello\n", "line 1", "not a cubesim trace"},
      {std::string(trace::kSchema) + " {nope\n", "line 1, column 19", "invalid JSON"},
      {std::string(trace::kSchema) + " {\"packet_elements\":8}\n", "line 1: /topology", "no topology"},
      {h + "0 0 send 2 5 0\n", "line 2", "destination node 2 is outside 0..1"},
      {h + "0 0 jump 1\n", "line 2", "unknown operation \"jump\""},
      {h + "\n# fine\n0 0 send 1 5 0 recv 1 5 0\n", "line 4", "expected \"&\""},
      {h + "0 0 compute x\n", "line 2", "flops must be an integer"},
      {h + "1 0 fork 0 2\n", "line 2", "first child strand 0 is outside"},
      {h + "1\n", "line 2", "missing strand"},
  };
  for (const Case& c : cases) {
    try {
      trace::read_text(trace::with_end_line(c.text), "t.trace");
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), "t.trace");
      EXPECT_EQ(e.where(), c.where) << e.what();
      EXPECT_NE(e.message().find(c.what), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace cubesim
