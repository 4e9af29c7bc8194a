// The one-port lockstep simulator (sim/lockstep_one_port.cpp, docs/lockstep.md "One-port") against
// the engine: every report field but the engine's own counters identical -- queued transmissions
// and slot ties included, which the engine's order of events decides -- on random step programs
// run by both (the engine through a process that posts the program's operations), on the
// regression points of the algorithms with a one-port program and on a grid of the hybrid; and
// where a train's packets would interleave with another message's, it leaves the run to the engine.
#include <array>
#include <random>

#include "app/config.hpp"
#include "app/report.hpp"
#include "helpers.hpp"
#include "sim/engine.hpp"
#include "sim/lockstep.hpp"
#include "tests/listed_program.hpp"
#include "tests/report_compare.hpp"

namespace cubesim {
namespace {

namespace fs = std::filesystem;

using Listed = test::ListedProgram;

/// The process a step program describes, for the engine: each step's sends and receives as one
/// group, then its computes, one await each.
Task<> posts(Node& self, const StepProgram& program) {
  std::vector<StepOp> ops;
  for (std::int64_t s = 0; s < program.steps(); ++s) {
    ops.clear();
    program.step(self.id(), s, ops);
    std::vector<Op> group;
    std::size_t i = 0;
    for (; i < ops.size() && ops[i].kind != StepOp::Kind::compute; ++i)
      group.push_back(ops[i].kind == StepOp::Kind::send
                          ? self.send(ops[i].port, Buffer::sized(ops[i].elements), ops[i].tag)
                          : self.recv(ops[i].port, ops[i].tag));
    if (!group.empty()) co_await all_of(group);
    for (; i < ops.size(); ++i) co_await self.compute(ops[i].elements);
  }
}

ojson report(const RunStats& st) {
  ojson j = simulated_json(st, ReportOptions{.reproducible = true});
  j.erase("events");
  j.erase("resumes");
  return j;
}

/// A random program on the n-cube: in each step every node sends 0 to 3 messages (of up to
/// `packets` packets: 0 to `packets` times B elements and a few more, or, with `packets` 1, 0 or
/// B elements: messages of one size end together; tags 0 and 1) to random neighbours, in a
/// random order; each
/// receiver posts the receives of what was sent to it in that step or, now and then, in the next
/// one (the message waits), among its sends in a random order; a node computes after its group
/// now and then (`wide`).
Listed random_program(std::mt19937& rng, int n, int steps, std::int64_t B, int packets, bool wide) {
  const auto N = static_cast<std::size_t>(1) << n;
  std::vector<std::vector<std::vector<StepOp>>> ops(static_cast<std::size_t>(steps) + 1,
                                                    std::vector<std::vector<StepOp>>(N));
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int s = 0; s < steps; ++s) {
    for (std::size_t x = 0; x < N; ++x) {
      const int sends = n == 0 ? 0 : pick(0, 3);
      for (int i = 0; i < sends; ++i) {
        const int port = pick(0, n - 1), tag = pick(0, 1);
        const std::int64_t e = packets == 1 ? B * pick(0, 1) : B * pick(0, packets) + pick(0, 2);
        ops[static_cast<std::size_t>(s)][x].push_back(
            {.kind = StepOp::Kind::send, .port = port, .tag = tag, .elements = e});
        const std::size_t to = x ^ (std::size_t{1} << port);
        const std::size_t when = static_cast<std::size_t>(s) + (pick(0, 5) == 0 ? 1 : 0);
        ops[when][to].push_back({.kind = StepOp::Kind::recv, .port = port, .tag = tag});
      }
    }
  }
  for (auto& step : ops)
    for (auto& v : step) {
      std::shuffle(v.begin(), v.end(), rng);
      if (wide && pick(0, 2) == 0) v.push_back({.kind = StepOp::Kind::compute, .elements = pick(0, 40)});
    }
  return Listed(std::move(ops), wide);
}

/// One-port machines: the simple one (tau = 100 t_c), one where a packet of B elements takes
/// tau (packets of one size end together: ties), one with a message start-up and a kernel call.
Machine one_port_machine(int costs, std::int64_t B) {
  Machine m = test::simple_machine({PortKind::one, 1}, B);
  if (costs == 1) {
    m.tau = Time::ps(100);
    m.t_c = Time::ps(100 / B + 1);
  }
  if (costs == 2) {
    m.tau_msg = Time::ps(250);
    m.t_call = Time::ps(40);
  }
  return m;
}

/// A timing-mode point of `info` on the n-cube and one_port_machine(costs, B).
RunPoint one_port_point(const AlgorithmInfo* info, int n, int costs, std::int64_t B) {
  RunPoint rp;
  rp.info = info;
  rp.setup.machine = one_port_machine(costs, B);
  rp.setup.topology = Topology::hypercube(n);
  rp.setup.params.B = B;
  rp.setup.data_mode = false;
  return rp;
}

/// The point run by the engine (first) and as the runner runs it (the lockstep simulator where
/// it takes the point).
std::pair<RunOutcome, RunOutcome> engine_and_lockstep(const RunPoint& rp) {
  RunLimits without;
  without.lockstep = false;
  return {run_point(rp, *rp.info, true, nullptr, without), run_point(rp, *rp.info, true, nullptr, RunLimits{})};
}

TEST(LockstepOnePort, GivesTheEnginesReportOnRandomPrograms) {
  std::mt19937 rng(20261128);
  std::int64_t runs = 0, by_lockstep = 0, queued = 0, ties = 0;
  const int rounds = test::quick_tier() ? 300 : 1200;
  for (int round = 0; round < rounds; ++round) {
    const int n = round % 6;  // 0..5
    const std::int64_t B = std::array<std::int64_t, 3>{1, 4, 256}[static_cast<std::size_t>(round / 5 % 3)];
    const int costs = round / 15 % 3;
    const bool wide = round % 2 == 1;
    const Machine m = one_port_machine(costs, B);
    const Topology cube = Topology::hypercube(n);
    const EngineOptions o{B, false};
    const int packets = round % 4 == 3 ? 3 : 1;  // trains a quarter of the rounds
    const Listed program = random_program(rng, n, 1 + round % 8, B, packets, wide);
    Engine e(m, cube, o);
    const RunStats a = e.run([&](Node& node) { return posts(node, program); });
    std::vector<Buffer> results;
    const std::optional<RunStats> b = run_lockstep(m, cube, o, program, results);
    ++runs;
    if (!b) continue;
    ++by_lockstep;
    queued += b->queued_transmissions;
    ties += b->slot_ties;
    ASSERT_EQ(report(a).dump(), report(*b).dump())
        << "round " << round << " n=" << n << " B=" << B << " costs " << costs << " wide " << wide;
    EXPECT_EQ(b->lockstep_runs, 1);
  }
  std::cout << "[ one-port ] random programs: " << runs << " runs, " << by_lockstep << " by the lockstep simulator ("
            << queued << " queued transmissions, " << ties << " slot ties)\n";
  // Trains interleaved with other messages are the engine's; most runs must still be the
  // simulator's, and they must have queued and tied, or the test proves little.
  EXPECT_GE(by_lockstep * 4, runs * 3);
  EXPECT_GT(queued, 0);
  EXPECT_GT(ties, 0);
}

/// Two messages into one node on a one-port machine: the second queues behind the first (its
/// chain then runs through it), and a packet train the second would interleave with makes the
/// run the engine's.
TEST(LockstepOnePort, QueuesForTheIncomingSlotAndLeavesInterleavedTrainsToTheEngine) {
  const Machine m = test::simple_machine({PortKind::one, 1}, 100);  // tau 1000 ps, t_c 10 ps
  const Topology cube = Topology::hypercube(2);
  const EngineOptions o{100, false};
  std::vector<Buffer> results;
  auto snd = [](int port, std::int64_t e) { return StepOp{.kind = StepOp::Kind::send, .port = port, .elements = e}; };
  auto rcv = [](int port) { return StepOp{.kind = StepOp::Kind::recv, .port = port}; };
  // Nodes 1 and 2 send 100 and 50 elements to node 0 at 0 (one packet each: 2000 and 1500 ps):
  // node 1's (posted first) gets node 0's incoming slot, node 2's waits until 2000 ps and ends at
  // 3500 ps, its chain through node 1's message.
  const Listed one_each({{{rcv(0), rcv(1)}, {snd(0, 100)}, {snd(1, 50)}, {}}}, false);
  const auto r = run_lockstep(m, cube, o, one_each, results);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->time, Time::ps(3500));
  EXPECT_EQ(r->queued_transmissions, 1);
  EXPECT_EQ(r->slot_ties, 1);  // both asked at 0
  EXPECT_EQ(r->critical_path.startups, 2);
  EXPECT_EQ(r->critical_path.element_transfers, 150);
  // Node 1 sends a train of three packets (from 0 to 6000 ps); node 2 sends one packet at 0 too:
  // it queues for node 0's slot while the train's first packet is in flight, and the engine
  // would serve it between the train's packets.
  const Listed train({{{rcv(0), rcv(1)}, {snd(0, 300)}, {snd(1, 50)}, {}}}, false);
  EXPECT_FALSE(run_lockstep(m, cube, o, train, results));
  // The train first, node 2's message after it has ended (node 2 first receives a train of ten
  // packets from node 3, until 20000 ps): no interleaving, the simulator's.
  const Listed after({{{rcv(0)}, {snd(0, 300)}, {rcv(0)}, {snd(0, 1000)}}, {{rcv(1)}, {}, {snd(1, 50)}, {}}}, false);
  const auto a = run_lockstep(m, cube, o, after, results);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->time, Time::ps(21500));
  EXPECT_EQ(a->packet_trains, 2);
  Engine e(m, cube, o);
  EXPECT_EQ(report(e.run([&](Node& node) { return posts(node, after); })).dump(), report(*a).dump());
}

/// The regression points of the algorithms with a one-port step program (the hybrid), in timing
/// mode on one-port machines: as configured, packets of 1 and 3 elements, the simple machine's
/// costs and a message start-up.
TEST(LockstepOnePort, GivesTheEnginesReportOnEveryRegressPointWithAOnePortProgram) {
  const Registry reg = make_registry();
  std::int64_t points = 0, by_lockstep = 0;
  std::set<std::string> with_program;
  for (const std::string& name : test::regress_configs()) {
    const Experiment ex =
        load_experiment((fs::path(CUBESIM_SOURCE_DIR) / "configs" / "regress" / (name + ".json")).string(), reg);
    for (const RunPoint& p : ex.runs) {
      if (!p.info->steps) continue;
      cubesim::Setup s = p.setup;
      s.data_mode = false;
      s.machine.ports = PortModel{PortKind::one, 1};
      if (!p.info->steps(s)) continue;
      with_program.insert(p.info->name);
      std::vector<cubesim::Setup> variants{s};
      for (std::int64_t b : {1, 3}) {
        cubesim::Setup t = s;
        t.params.B = std::min<std::int64_t>(b, s.params.B);
        variants.push_back(t);
      }
      cubesim::Setup simple = test::with_simple_costs(s);
      variants.push_back(simple);
      simple.machine.tau_msg = Time::ps(333);
      variants.push_back(simple);
      for (const cubesim::Setup& v : variants) {
        RunPoint rp = p;
        rp.setup = v;
        const auto [a, b] = engine_and_lockstep(rp);
        ASSERT_EQ(test::comparable(a).dump(), test::comparable(b).dump())
            << name << " " << v.topology.describe() << " M=" << v.params.M << " B=" << v.params.B;
        EXPECT_TRUE(b.verified) << name << ": " << b.verify_message;
        ++points;
        by_lockstep += b.stats.lockstep_runs;
      }
    }
  }
  std::cout << "[ one-port ] " << points << " regress runs of " << with_program.size() << " algorithms, " << by_lockstep
            << " by the lockstep simulator\n";
  EXPECT_TRUE(with_program.count("allgather.hybrid"));
  EXPECT_TRUE(with_program.count("broadcast.gc") && with_program.count("broadcast.nesbt"));
  EXPECT_GE(by_lockstep * 3, points * 2);
}

/// The all-gathers one-port: GCEA(1,N) and CRA(1,N) on cubes of 1 to 7 dimensions, and the hybrid
/// (TR-530 §5.1) on 1 to 8 with 0 to n doubling steps; sizes, packets and the three machines.
TEST(LockstepOnePort, GivesTheEnginesReportForTheAllGathersOverAGrid) {
  const Registry reg = make_registry();
  const AlgorithmInfo* hybrid = reg.find("allgather.hybrid");
  ASSERT_NE(hybrid, nullptr);
  std::int64_t runs = 0, by_lockstep = 0, count = 0;
  for (const char* algo : {"allgather.gcea", "allgather.cra"}) {
    const AlgorithmInfo* info = reg.find(algo);
    ASSERT_NE(info, nullptr);
    for (int n = 1; n <= 7; ++n)
      for (std::int64_t M : {1, 5, 12, 300})
        for (std::int64_t B : {1, 3, 256})
          for (int costs = 0; costs < 3; ++costs) {
            if (test::quick_tier() && (count++ % 4) != 0) continue;
            RunPoint rp = one_port_point(info, n, costs, B);
            rp.setup.params.M = M;
            const auto [a, b] = engine_and_lockstep(rp);
            ASSERT_EQ(test::comparable(a).dump(), test::comparable(b).dump())
                << algo << " n=" << n << " M=" << M << " B=" << B << " costs " << costs;
            ++runs;
            by_lockstep += b.stats.lockstep_runs;
          }
  }
  for (int n = 1; n <= 8; ++n)
    for (int k : {0, 1, n / 2, n})
      for (std::int64_t M : {1, 7, 300})
        for (std::int64_t B : {1, 4, 256})
          for (int costs = 0; costs < 3; ++costs) {
            if (test::quick_tier() && (count++ % 4) != 0) continue;
            RunPoint rp = one_port_point(hybrid, n, costs, B);
            rp.setup.params.M = M;
            rp.setup.params.k = k;
            const auto [a, b] = engine_and_lockstep(rp);
            ASSERT_EQ(test::comparable(a).dump(), test::comparable(b).dump())
                << "hybrid n=" << n << " k=" << k << " M=" << M << " B=" << B << " costs " << costs;
            ++runs;
            by_lockstep += b.stats.lockstep_runs;
          }
  std::cout << "[ one-port ] all-gathers' grid: " << runs << " runs, " << by_lockstep << " by the lockstep simulator\n";
  EXPECT_EQ(by_lockstep, runs);
}

/// The pipelined broadcasts one-port, a message a packet: the Gray-code pipeline GC(1,1)
/// (broadcast.gc, TR-530 §4.1.1; the receive and the send of each packet awaited alone) and
/// nESBT(1,1) (broadcast.nesbt, §4.1.3; a cycle's send and receive across dimension t mod n
/// together), on cubes of 0 to 7 dimensions from three roots; messages of one packet, of several
/// with a short last one, and of whole packets; the three machines. And next_step() against
/// step() for every node and step of the grid.
TEST(LockstepOnePort, GivesTheEnginesReportForThePipelinedBroadcastsOverAGrid) {
  const Registry reg = make_registry();
  for (const char* algo : {"broadcast.gc", "broadcast.nesbt"}) {
    const AlgorithmInfo* info = reg.find(algo);
    ASSERT_NE(info, nullptr);
    std::int64_t runs = 0, by_lockstep = 0, count = 0, skipped = 0;
    std::vector<StepOp> ops;
    for (int n = 0; n <= 7; ++n)
      for (const NodeId root : {NodeId{0}, NodeId{5}, NodeId{-1}}) {
        const NodeId r = root < 0 ? (NodeId{1} << n) - 1 : root & ((NodeId{1} << n) - 1);
        for (std::int64_t M : {1, 5, 12, 300})
          for (std::int64_t B : {1, 3, 256})
            for (int costs = 0; costs < 3; ++costs) {
              RunPoint rp = one_port_point(info, n, costs, B);
              rp.setup.params.M = M;
              rp.setup.params.root = r;
              const std::unique_ptr<StepProgram> prog = info->steps(rp.setup);
              ASSERT_NE(prog, nullptr);
              for (NodeId x = 0; x < rp.setup.topology.size(); ++x)
                for (std::int64_t s = 0; s < prog->steps(); ++s) {
                  const std::int64_t next = prog->next_step(x, s);
                  ASSERT_GE(next, s);
                  ASSERT_LE(next, prog->steps());
                  for (std::int64_t u = s; u < next; ++u) {
                    ops.clear();
                    prog->step(x, u, ops);
                    ASSERT_TRUE(ops.empty()) << "n=" << n << " node " << x << ": step " << u << " skipped from " << s;
                  }
                  skipped += next > s ? 1 : 0;
                }
              if (test::quick_tier() && (count++ % 4) != 0) continue;
              const auto [a, b] = engine_and_lockstep(rp);
              ASSERT_EQ(test::comparable(a).dump(), test::comparable(b).dump())
                  << algo << " n=" << n << " root " << r << " M=" << M << " B=" << B << " costs " << costs;
              EXPECT_TRUE(b.verified) << b.verify_message;
              ++runs;
              by_lockstep += b.stats.lockstep_runs;
            }
      }
    std::cout << "[ one-port ] " << algo << "'s grid: " << runs << " runs, " << by_lockstep
              << " by the lockstep simulator; " << skipped << " (node, step) pairs skip ahead\n";
    EXPECT_EQ(by_lockstep, runs);
    if (std::string(algo) == "broadcast.gc") EXPECT_GT(skipped, 0);
  }
}

/// The step-form tree collectives (routing::exchange_program): the all-gathers on the SBT (all-port),
/// the SBnT and the nRSBT, the all-to-alls on the SBnT and the nRSBT, each port model's schedule,
/// on cubes of 1 to 7 dimensions; blocks of 1, 5 and 300 elements, packets of 1, 3 and 256, the
/// three machines. Every run the lockstep simulator's, its report the engine's.
TEST(LockstepOnePort, GivesTheEnginesReportForTheTreeExchangesOverAGrid) {
  const Registry reg = make_registry();
  std::int64_t runs = 0, by_lockstep = 0, count = 0;
  for (const char* algo : {"allgather.sbt", "allgather.sbnt", "allgather.nrsbt", "alltoall.sbnt", "alltoall.nrsbt"}) {
    const AlgorithmInfo* info = reg.find(algo);
    ASSERT_NE(info, nullptr);
    for (const PortKind kind : {PortKind::one, PortKind::all})
      for (int n = 1; n <= 7; ++n)
        for (std::int64_t M : {1, 5, 300})
          for (std::int64_t B : {1, 3, 256})
            for (int costs = 0; costs < 3; ++costs) {
              RunPoint rp = one_port_point(info, n, costs, B);
              rp.setup.machine.ports =
                  kind == PortKind::all ? PortModel{PortKind::all, 0} : PortModel{PortKind::one, 1};
              rp.setup.params.M = M;
              const bool program = info->steps(rp.setup) != nullptr;
              ASSERT_EQ(program, kind == PortKind::all || std::string(algo) != "allgather.sbt") << algo;
              if (!program || (test::quick_tier() && (count++ % 4) != 0)) continue;
              const auto [a, b] = engine_and_lockstep(rp);
              ASSERT_EQ(test::comparable(a).dump(), test::comparable(b).dump())
                  << algo << (kind == PortKind::all ? " all-port" : " one-port") << " n=" << n << " M=" << M
                  << " B=" << B << " costs " << costs;
              EXPECT_TRUE(b.verified) << b.verify_message;
              ++runs;
              by_lockstep += b.stats.lockstep_runs;
            }
  }
  std::cout << "[ lockstep ] the tree exchanges' grid: " << runs << " runs, " << by_lockstep
            << " by the lockstep simulators\n";
  EXPECT_GE(by_lockstep * 10, runs * 9);
}

/// Cannon's algorithm (K = 1, 2), Dekel's and the outer product (K = 1, 2; square grids) one-port:
/// a step an awaited group (the alignments' shifts and exchanges one by one, C's roll or exchange
/// then D's, the outer product's receives, C's forward, D's forward), on cubes of 0 to 7 dimensions, matrices the grid
/// divides and does not, packets of 1, 4 and 256 elements, and the three machines (one where blocks and multiplies end
/// together: ties).
TEST(LockstepOnePort, GivesTheEnginesReportForTheMultiplications) {
  const Registry reg = make_registry();
  std::int64_t runs = 0, by_lockstep = 0, count = 0, queued = 0, ties = 0;
  test::for_each_multiplication_point(reg, 3, [&](const test::MatmulPoint& mp) {
    if (test::quick_tier() && (count++ % 4) != 0) return;
    Machine m = one_port_machine(mp.costs, mp.B);
    if (mp.costs == 1) m.t_a = m.tau;
    const auto [a, b] = engine_and_lockstep(mp.on(m));
    ASSERT_EQ(test::comparable(a).dump(), test::comparable(b).dump()) << mp.where();
    EXPECT_TRUE(b.verified) << mp.where() << ": " << b.verify_message;
    ++runs;
    by_lockstep += b.stats.lockstep_runs;
    queued += b.stats.lockstep_runs * b.stats.queued_transmissions;
    ties += b.stats.lockstep_runs * b.stats.slot_ties;
  });
  std::cout << "[ one-port ] Cannon, Dekel, the outer product: " << runs << " runs, " << by_lockstep
            << " by the lockstep simulator (" << queued << " queued transmissions, " << ties << " slot ties)\n";
  // Blocks of several packets whose trains meet at a node (C from the left, D from above) are the
  // engine's: 149 of 432 runs.
  EXPECT_GE(by_lockstep * 5, runs * 3);
  EXPECT_GT(ties, 0);
}

// StepProgram::next_step, which both lockstep simulators follow to skip a node's empty steps: from
// every step it skips only steps in which the node posts nothing, and never goes back or past the
// end -- for every node and step of the multiplications' grid, one-port and all-port (the outer
// product overrides it: three steps in four of a node are empty; the others keep the default).
TEST(LockstepOnePort, NextStepSkipsOnlyEmptySteps) {
  const Registry reg = make_registry();
  std::int64_t programs = 0, skipped = 0;
  std::vector<StepOp> ops;
  test::for_each_multiplication_point(reg, 1, [&](const test::MatmulPoint& mp) {
    for (const PortKind kind : {PortKind::one, PortKind::all}) {
      Machine m = one_port_machine(0, mp.B);
      m.ports.kind = kind;
      const RunPoint rp = mp.on(m);
      if (!rp.info->steps) continue;
      const std::unique_ptr<StepProgram> prog = rp.info->steps(rp.setup);
      if (prog == nullptr) continue;
      ++programs;
      const std::int64_t steps = prog->steps();
      for (NodeId x = 0; x < rp.setup.topology.size(); ++x)
        for (std::int64_t s = 0; s < steps; ++s) {
          const std::int64_t next = prog->next_step(x, s);
          ASSERT_GE(next, s) << mp.where() << " node " << x << " step " << s;
          ASSERT_LE(next, steps) << mp.where() << " node " << x << " step " << s;
          for (std::int64_t u = s; u < next; ++u) {
            ops.clear();
            prog->step(x, u, ops);
            ASSERT_TRUE(ops.empty()) << mp.where() << " node " << x << ": step " << u << " skipped from " << s
                                     << " posts " << ops.size() << " operations";
          }
          skipped += next > s ? 1 : 0;
        }
    }
  });
  std::cout << "[ next_step ] " << programs << " programs, " << skipped << " (node, step) pairs skip ahead\n";
  EXPECT_GT(skipped, 0);
}

}  // namespace
}  // namespace cubesim
