// The lockstep simulator (sim/lockstep.hpp, docs/lockstep.md) against the engine: every report
// field but the engine's own counters (events, resumes) identical, on every regression point of an
// algorithm with a step program and on a grid of cubes, sizes and costs; and where it cannot tell
// what the engine would do, it says so (nullopt) and the engine runs the point.
#include <algorithm>
#include <atomic>
#include <filesystem>

#include "algorithms/registry.hpp"
#include "app/config.hpp"
#include "app/report.hpp"
#include "helpers.hpp"
#include "sim/lockstep.hpp"
#include "tests/cli_helpers.hpp"
#include "tests/listed_program.hpp"
#include "tests/report_compare.hpp"

namespace cubesim {
namespace {

namespace fs = std::filesystem;

using test::comparable;
using test::regress_configs;

RunLimits with_lockstep(int threads = 1) {
  RunLimits l;
  l.threads = threads;
  return l;
}
RunLimits without_lockstep() {
  RunLimits l;
  l.lockstep = false;
  return l;
}

/// A timing-mode point of `info` on the all-port simple machine and the n-cube.
RunPoint timing_point(const AlgorithmInfo* info, int n, std::int64_t M, std::int64_t B) {
  RunPoint rp;
  rp.info = info;
  rp.setup.machine = test::simple_machine({PortKind::all, 0}, 256);
  rp.setup.topology = Topology::hypercube(n);
  rp.setup.params.M = M;
  rp.setup.params.B = B;
  rp.setup.data_mode = false;
  return rp;
}

/// The variants of a point the lockstep simulator may run: timing mode, all-port, as configured
/// and with packets of 1 and 3 elements, the simple machine's costs (ties abound), and a message
/// start-up (tau_msg).
std::vector<std::pair<std::string, Setup>> variants(const Setup& s0) {
  Setup s = s0;
  s.data_mode = false;
  s.machine.ports = PortModel{PortKind::all, 0};
  std::vector<std::pair<std::string, Setup>> v{{"all-port", s}};
  for (std::int64_t b : {1, 3}) {
    Setup t = s;
    t.params.B = std::min<std::int64_t>(b, s.params.B);
    v.emplace_back("B=" + std::to_string(t.params.B), t);
  }
  const Setup simple = test::with_simple_costs(s);
  v.emplace_back("simple costs, B=" + std::to_string(simple.params.B), simple);
  Setup msg = simple;
  msg.machine.tau_msg = Time::ps(333);
  v.emplace_back("simple costs, tau_msg", msg);
  return v;
}

/// The quick tier (CUBESIM_TEST_TIER=quick, the sanitizer run) takes every fourth point of the
/// grids below; the plain build every point.
bool skipped(std::int64_t& count) { return test::quick_tier() && (count++ % 4) != 0; }

TEST(Lockstep, GivesTheEnginesReportOnEveryRegressPointWithAStepProgram) {
  const Registry reg = make_registry();
  std::int64_t points = 0, by_lockstep = 0, count = 0;
  std::set<std::string> with_program;
  for (const std::string& name : regress_configs()) {
    const Experiment ex =
        load_experiment((fs::path(CUBESIM_SOURCE_DIR) / "configs" / "regress" / (name + ".json")).string(), reg);
    for (const RunPoint& p : ex.runs) {
      if (!p.info->steps) continue;
      for (const auto& [label, setup] : variants(p.setup)) {
        if (!p.info->steps(setup)) continue;  // no program on this machine (broadcast.gc all-port)
        with_program.insert(p.info->name);
        if (skipped(count)) continue;
        RunPoint rp = p;
        rp.setup = setup;
        const RunOutcome a = run_point(rp, *p.info, true, nullptr, without_lockstep());
        const RunOutcome b = run_point(rp, *p.info, true, nullptr, with_lockstep());
        ASSERT_EQ(comparable(a).dump(), comparable(b).dump())
            << name << " " << setup.topology.describe() << " M=" << setup.params.M << " " << label;
        EXPECT_EQ(a.stats.lockstep_runs, 0);
        EXPECT_TRUE(b.verified) << name << " " << label << ": " << b.verify_message;
        ++points;
        by_lockstep += b.stats.lockstep_runs;
      }
    }
  }
  std::cout << "[ lockstep ] " << points << " runs of " << with_program.size() << " algorithms with a step program, "
            << by_lockstep << " by the lockstep simulator\n";
  EXPECT_TRUE(with_program.count("allgather.gcea") && with_program.count("allgather.cra") &&
              with_program.count("allgather.hybrid") && with_program.count("matmul2d.cannon") &&
              with_program.count("matmul2d.dekel") && with_program.count("matmul2d.outer"));
  // The 1-cube rows have no program; every other point must have been the simulator's, or it
  // gave up too often to be worth its name.
  EXPECT_GE(by_lockstep * 3, points * 2);
}

/// GCEA(n,N) and CRA(n,N) on cubes of 2 to 7 dimensions, over sizes that split unevenly into n
/// parts, packets of 1, 3 and 256 elements, and three machines; the hybrid with 0 to n doubling
/// steps.
TEST(Lockstep, GivesTheEnginesReportOverAGridOfCubesSizesAndCosts) {
  const Registry reg = make_registry();
  std::int64_t runs = 0, by_lockstep = 0, count = 0, with_repeats = 0;
  for (const char* algo : {"allgather.gcea", "allgather.cra"}) {
    const AlgorithmInfo* info = reg.find(algo);
    ASSERT_NE(info, nullptr);
    for (int n = 2; n <= 7; ++n)
      for (std::int64_t M : {1, 5, 12, 300})
        for (std::int64_t B : {1, 3, 256})
          for (int costs = 0; costs < 3; ++costs) {
            if (skipped(count)) continue;
            RunPoint rp = timing_point(info, n, M, B);
            if (costs == 1) rp.setup.machine.tau_msg = Time::ps(250);
            if (costs == 2) {  // packets of one size end together with the message start-up: ties
              rp.setup.machine.tau = Time::ps(100);
              rp.setup.machine.t_c = Time::ps(100);
            }
            const RunOutcome a = run_point(rp, *info, true, nullptr, without_lockstep());
            const RunOutcome b = run_point(rp, *info, true, nullptr, with_lockstep());
            ASSERT_EQ(comparable(a).dump(), comparable(b).dump())
                << algo << " n=" << n << " M=" << M << " B=" << B << " costs " << costs;
            // Split among threads (ranges of at least 16 nodes: up to 8 on 2^7 nodes), the same
            // report, events and resumes included.
            const RunOutcome c = run_point(rp, *info, true, nullptr, with_lockstep(n == 7 ? 8 : 3));
            ASSERT_EQ(comparable(b).dump(), comparable(c).dump()) << algo << " n=" << n << " threads";
            EXPECT_EQ(b.stats.events, c.stats.events);
            EXPECT_EQ(b.stats.resumes, c.stats.resumes);
            ++runs;
            by_lockstep += b.stats.lockstep_runs;
            with_repeats += b.stats.lockstep_repeated_steps > 0 ? 1 : 0;
          }
  }
  // The hybrid (TR-530 §5.1): k doubling steps of growing sizes, then the GCEA on super-blocks.
  const AlgorithmInfo* hybrid = reg.find("allgather.hybrid");
  ASSERT_NE(hybrid, nullptr);
  for (int n = 1; n <= 7; ++n)
    for (int k : {0, 1, n / 2, n})
      for (std::int64_t M : {1, 7, 300})
        for (std::int64_t B : {1, 4, 256}) {
          if (skipped(count)) continue;
          RunPoint rp = timing_point(hybrid, n, M, B);
          rp.setup.machine.tau_msg = Time::ps(70);
          rp.setup.params.k = k;
          const RunOutcome a = run_point(rp, *hybrid, true, nullptr, without_lockstep());
          const RunOutcome b = run_point(rp, *hybrid, true, nullptr, with_lockstep());
          ASSERT_EQ(comparable(a).dump(), comparable(b).dump())
              << "hybrid n=" << n << " k=" << k << " M=" << M << " B=" << B;
          ++runs;
          by_lockstep += b.stats.lockstep_runs;
        }
  std::cout << "[ lockstep ] grid: " << runs << " runs, " << by_lockstep << " by the lockstep simulator, "
            << with_repeats << " CRA runs with repeated steps added\n";
  if (!test::quick_tier()) EXPECT_GE(with_repeats, 20);
  EXPECT_GE(by_lockstep * 3, runs * 2);
}

/// Cannon all-port (the CRA alignment: strands, a join, computes), Dekel all-port (groups of one
/// or two exchanges, computes) and the outer product all-port (a wave: messages received steps
/// after they were sent, queued on the links) on cubes of 0 to 7 dimensions (odd n: rings of two
/// items a node; the outer product only on square grids), matrices that the grid divides and
/// that it does not, one and two products (Cannon, the outer product),
/// packets of 1, 4 and 256 elements, and two machines: the simple one with tau = t_c = t_a (C's
/// and D's blocks, alignments and multiplies end together: ties) and one with a message start-up
/// and a kernel call's overhead (t_call).
TEST(Lockstep, GivesTheEnginesReportForTheMultiplications) {
  const Registry reg = make_registry();
  std::int64_t runs = 0, by_lockstep = 0, count = 0;
  test::for_each_multiplication_point(reg, 2, [&](const test::MatmulPoint& mp) {
    if (skipped(count)) return;
    Machine m = test::simple_machine({PortKind::all, 0}, 256);
    if (mp.costs == 0) {
      m.tau = Time::ps(100);
      m.t_c = Time::ps(100);
      m.t_a = Time::ps(100);
    } else {
      m.tau_msg = Time::ps(250);
      m.t_call = Time::ps(40);
    }
    const RunPoint rp = mp.on(m);
    const RunOutcome a = run_point(rp, *mp.info, true, nullptr, without_lockstep());
    const RunOutcome b = run_point(rp, *mp.info, true, nullptr, with_lockstep());
    ASSERT_EQ(comparable(a).dump(), comparable(b).dump()) << mp.where();
    EXPECT_TRUE(b.verified) << mp.where() << ": " << b.verify_message;
    const RunOutcome c = run_point(rp, *mp.info, true, nullptr, with_lockstep(3));
    ASSERT_EQ(comparable(b).dump(), comparable(c).dump()) << mp.where() << " threads";
    EXPECT_EQ(b.stats.events, c.stats.events);
    ++runs;
    by_lockstep += b.stats.lockstep_runs;
  });
  std::cout << "[ lockstep ] Cannon, Dekel, the outer product: " << runs << " runs, " << by_lockstep
            << " by the lockstep simulator\n";
  EXPECT_EQ(by_lockstep, runs);
}

/// Two lists of a step's operations, operation for operation the same.
bool same_ops(const std::vector<StepOp>& a, const std::vector<StepOp>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const StepOp& u, const StepOp& v) {
    return u.kind == v.kind && u.strand == v.strand && u.port == v.port && u.tag == v.tag && u.elements == v.elements;
  });
}

// AlgorithmInfo::steps_memory tells, without making the program, what `steps` gives (memory
// admission reads it, app/runner.cpp): a part exactly where the factory gives a program, of the
// program's shape (wide chains, strands; one strand one-port), for every algorithm with a program,
// on one-, all- and 2-port machines, the 0- to 5-cubes and a 4 x 4 torus, Cannon's variants 0 and 1.
TEST(Lockstep, EachProgramsStatedMemoryMatchesWhatItsFactoryGives) {
  const Registry reg = make_registry();
  std::size_t programs = 0, declined = 0;
  std::vector<Topology> topologies;
  for (int n = 0; n <= 5; ++n) topologies.push_back(Topology::hypercube(n));
  topologies.push_back(Topology::mesh({4, 4}, true));
  for (const AlgorithmInfo* info : reg.all()) {
    if (!info->steps) continue;
    ASSERT_TRUE(info->steps_memory) << info->name << " states no memory for its step program";
    for (const PortModel ports : {PortModel{PortKind::one, 0}, PortModel{PortKind::all, 0}, PortModel{PortKind::k, 2}})
      for (const Topology& topo : topologies)
        for (const std::int64_t variant : {0, 1}) {
          cubesim::Setup s;
          s.machine = test::simple_machine(ports, 256);
          s.topology = topo;
          s.params.M = 8;
          s.params.B = 4;
          s.params.P = s.params.Q = s.params.R = 64;
          s.params.k = topo.dim() / 2;
          s.params.variant = variant;
          s.data_mode = false;
          if (info->check && info->check(s)) continue;  // not a setup of this algorithm
          const std::string at = info->name + " " + topo.describe() + " ports " +
                                 std::to_string(static_cast<int>(ports.kind)) + " variant " + std::to_string(variant);
          const std::optional<StepsMemory> m = info->steps_memory(s);
          const std::unique_ptr<StepProgram> program = info->steps(s);
          ASSERT_EQ(m.has_value(), program != nullptr) << at;
          if (!program) {
            ++declined;
            continue;
          }
          ++programs;
          EXPECT_EQ(m->wide, program->wide()) << at;
          EXPECT_EQ(m->strands, program->strands()) << at;
          // The repeats it promises (StepProgram::repeats): stated for the snapshot's memory, and
          // true of step(): each step of a repeat posts what the step before it posts.
          bool repeats = false;
          std::vector<StepOp> before, ops;
          for (std::int64_t step = 1; step < program->steps(); ++step) {
            const std::int64_t r = program->repeats(step);
            ASSERT_GE(r, 0) << at;
            ASSERT_LE(step + r, program->steps()) << at << " step " << step;
            repeats = repeats || r > 0;
            for (NodeId x = 0; x < topo.size() && r > 0; ++x) {
              before.clear();
              program->step(x, step - 1, before);
              for (std::int64_t u = step; u < step + r; ++u) {
                ops.clear();
                program->step(x, u, ops);
                ASSERT_TRUE(same_ops(ops, before))
                    << at << " node " << x << " step " << u << " does not repeat step " << step - 1;
              }
            }
          }
          EXPECT_EQ(m->repeats, repeats) << at;
          // The uniform steps it promises (StepProgram::uniform): every node posts node 0's.
          for (std::int64_t step = 0; step < program->steps(); ++step) {
            if (!program->uniform(step)) continue;
            before.clear();
            program->step(0, step, before);
            for (NodeId x = 1; x < topo.size(); ++x) {
              ops.clear();
              program->step(x, step, ops);
              ASSERT_TRUE(same_ops(ops, before)) << at << " node " << x << " step " << step << " is not node 0's";
            }
          }
          if (ports.kind == PortKind::one) EXPECT_EQ(program->strands(), 1) << at;
        }
  }
  std::printf("%zu setups with a program, %zu declined\n", programs, declined);
  EXPECT_GT(programs, 100u);
  EXPECT_GT(declined, 50u);
}

TEST(Lockstep, LeavesToTheEngineWhatItDoesNotTimeExactly) {
  const Registry reg = make_registry();
  const AlgorithmInfo* info = reg.find("allgather.gcea");
  ASSERT_NE(info, nullptr);
  const RunPoint rp = timing_point(info, 4, 8, 4);
  EXPECT_EQ(run_point(rp, *info, true, nullptr, with_lockstep()).stats.lockstep_runs, 1);
  // Data mode moves data: the engine's.
  RunPoint data = rp;
  data.setup.data_mode = true;
  EXPECT_EQ(run_point(data, *info, true, nullptr, with_lockstep()).stats.lockstep_runs, 0);
  // One-port: the one-port simulator's (docs/lockstep.md "One-port"); k-port, node software,
  // --per-packet, an observer: the engine's.
  RunPoint one = rp;
  one.setup.machine.ports = PortModel{PortKind::one, 1};
  EXPECT_EQ(run_point(one, *info, true, nullptr, with_lockstep()).stats.lockstep_runs, 1);
  RunPoint two = rp;
  two.setup.machine.ports = PortModel{PortKind::k, 2};
  EXPECT_EQ(run_point(two, *info, true, nullptr, with_lockstep()).stats.lockstep_runs, 0);
  RunPoint soft = rp;
  soft.setup.machine.o_send = Time::ps(5);
  EXPECT_EQ(run_point(soft, *info, true, nullptr, with_lockstep()).stats.lockstep_runs, 0);
  RunLimits per_packet;
  per_packet.packet_trains = false;
  EXPECT_EQ(run_point(rp, *info, true, nullptr, per_packet).stats.lockstep_runs, 0);
}

/// A program on the 2-cube whose outcome the engine's order of events would decide, or that is
/// not a step program at all; `wide`: one that computes and forks (four strands).
test::ListedProgram Scripted(std::vector<std::vector<std::vector<StepOp>>> ops, bool wide = false) {
  return test::ListedProgram(std::move(ops), wide, wide ? StepProgram::kMaxStrands : 1);
}

StepOp snd(int port, std::int64_t e, int tag = 0) {
  return {.kind = StepOp::Kind::send, .port = port, .tag = tag, .elements = e};
}
StepOp rcv(int port, int tag = 0) { return {.kind = StepOp::Kind::recv, .port = port, .tag = tag}; }

TEST(Lockstep, GivesUpWhereTheEnginesOrderOfEventsWouldDecide) {
  const Machine m = test::simple_machine({PortKind::all, 0}, 1000);  // tau 1000 ps, t_c 10 ps
  const Topology cube = Topology::hypercube(2);
  EngineOptions o{1000, false};
  std::vector<Buffer> results;
  // Step 0: node 0 receives 100 elements from node 1 (one packet: 1000 + 1000 ps, chain 1
  // start-up, 100 elements, pushed at 0) and, from node 2, the second of two empty messages (2 x
  // 1000 ps, chain 2 start-ups, pushed at 1000): both at 2000 ps; the engine takes the end pushed
  // first. Step 1: node 0 sends 500 elements to node 1 (6000 ps): nodes 0 and 1 end last, at
  // 8000 ps, on the chain node 0 went on with.
  const std::vector<std::vector<StepOp>> first{
      {rcv(0), rcv(1, 0), rcv(1, 1)}, {snd(0, 100)}, {snd(1, 0, 0), snd(1, 0, 1)}, {}};
  const std::vector<std::vector<StepOp>> then{{snd(0, 500)}, {rcv(0)}, {}, {}};
  const auto pushed_first = run_lockstep(m, cube, o, Scripted({first, then}), results);
  ASSERT_TRUE(pushed_first);
  EXPECT_EQ(pushed_first->time, Time::ps(8000));
  EXPECT_EQ(pushed_first->critical_path.startups, 2);
  EXPECT_EQ(pushed_first->critical_path.element_transfers, 600);
  EXPECT_EQ(pushed_first->queued_transmissions, 1);
  EXPECT_EQ(pushed_first->unreceived_messages, 0);
  EXPECT_EQ(pushed_first->messages, 4);
  // Step 0: node 3 sends 100 elements to node 1 (ends at 2000 ps, chain 1 start-up and 100
  // elements) and two empty messages to node 2 (ends at 2000 ps, chain 2 start-ups). Step 1: both
  // send 100 elements to node 0 at 2000 ps: two ends at 4000 ps, both pushed at 2000 ps, with
  // different chains; only the engine's sequence numbers order them. Step 2: node 0 sends 500
  // elements to node 1: the unsure chain is the critical path.
  const std::vector<std::vector<StepOp>> s0{
      {}, {rcv(1)}, {rcv(0, 0), rcv(0, 1)}, {snd(1, 100), snd(0, 0, 0), snd(0, 0, 1)}};
  std::vector<std::vector<StepOp>> s1{{rcv(0), rcv(1)}, {snd(0, 100)}, {snd(1, 100)}, {}};
  EXPECT_FALSE(run_lockstep(m, cube, o, Scripted({s0, s1, then}), results));
  // Node 2 sends 90 elements instead (ends at 3900 ps): node 0 goes on with node 1's chain.
  s1[2] = {snd(1, 90)};
  const auto later = run_lockstep(m, cube, o, Scripted({s0, s1, then}), results);
  ASSERT_TRUE(later);
  EXPECT_EQ(later->time, Time::ps(10000));
  EXPECT_EQ(later->critical_path.startups, 3);
  EXPECT_EQ(later->critical_path.element_transfers, 700);
  // The unsure chain that does not end as the critical path: node 2 (not 0) goes on to the end.
  s1[2] = {snd(1, 100)};
  const std::vector<std::vector<StepOp>> away{{}, {}, {snd(0, 900)}, {rcv(0)}};
  const auto elsewhere = run_lockstep(m, cube, o, Scripted({s0, s1, away}), results);
  ASSERT_TRUE(elsewhere);
  EXPECT_EQ(elsewhere->time, Time::ps(2000 + 2000 + 1000 + 9000));
  EXPECT_EQ(elsewhere->critical_path.startups, 4);  // 2 empty messages, 100 elements, 900 elements
  EXPECT_EQ(elsewhere->critical_path.element_transfers, 1000);
  // A receive whose message is sent in a later step.
  const std::vector<std::vector<StepOp>> early{{rcv(0)}, {}, {}, {}}, late{{}, {snd(0, 1)}, {}, {}};
  EXPECT_FALSE(run_lockstep(m, cube, o, Scripted({early, late}), results));
  // A port without a link is a program's error.
  const std::vector<std::vector<StepOp>> bad{{snd(5, 1)}, {}, {}, {}};
  EXPECT_THROW(run_lockstep(m, cube, o, Scripted({bad}), results), SimulationError);
}

StepOp on(std::uint8_t strand, StepOp op) {
  op.strand = strand;
  return op;
}
StepOp compute(std::int64_t flops, std::uint8_t strand = 0) {
  return {.kind = StepOp::Kind::compute, .strand = strand, .elements = flops};
}
StepOp join() { return {.kind = StepOp::Kind::join}; }

TEST(Lockstep, JoinsStrandsAsTheLastToEndAndGivesUpOnTheirTies) {
  Machine m = test::simple_machine({PortKind::all, 0}, 1000);  // tau 1000 ps, t_c 10 ps, t_a 3 ps
  m.t_call = Time::ps(10);
  const Topology cube = Topology::hypercube(2);
  EngineOptions o{1000, false};
  std::vector<Buffer> results;
  // Node 0 forks: strand 1 sends 100 elements to node 1 (2000 ps), strand 2 sends 200 to node 2
  // (3000 ps) and computes 10 flops (40 ps); then joins, at 3040 ps with strand 2's chain, and
  // computes 1 flop (13 ps).
  const std::vector<std::vector<StepOp>> fork{
      {on(1, snd(0, 100)), on(2, snd(1, 200)), compute(10, 2)}, {rcv(0)}, {rcv(1)}, {}};
  const std::vector<std::vector<StepOp>> joined{{join(), compute(1)}, {}, {}, {}};
  const auto r = run_lockstep(m, cube, o, Scripted({fork, joined}, true), results);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->time, Time::ps(3053));
  EXPECT_EQ(r->critical_path.startups, 1);
  EXPECT_EQ(r->critical_path.element_transfers, 200);
  EXPECT_EQ(r->critical_path.flops, 11);
  EXPECT_EQ(r->critical_path.overheads, Time::ps(20));
  EXPECT_EQ(r->max_node_compute_busy, Time::ps(53));
  // The strands end together at 2010 ps (strand 1 sends 101 elements; strand 2 sends 100, then
  // computes 0 flops: t_call alone) with different chains: which one the process goes on with is
  // the engine's order of events.
  const std::vector<std::vector<StepOp>> tie{
      {on(1, snd(0, 101)), on(2, snd(1, 100)), compute(0, 2)}, {rcv(0)}, {rcv(1)}, {}};
  EXPECT_FALSE(run_lockstep(m, cube, o, Scripted({tie, joined}, true), results));
  // Two strands on one link between joins: the engine's order of events says which goes first.
  const std::vector<std::vector<StepOp>> shared{{on(1, snd(0, 1)), on(2, snd(0, 1, 1))}, {rcv(0), rcv(0, 1)}, {}, {}};
  EXPECT_FALSE(run_lockstep(m, cube, o, Scripted({shared, joined}, true), results));
  // Programs that are not ones: strand 0 posting while strands run, a send after its strand's
  // compute, strands not joined at the end, a strand beyond the simulator's, a join after another
  // operation of its step, a compute in a narrow program.
  const std::vector<std::vector<StepOp>> early{{on(1, snd(0, 1)), snd(1, 1)}, {rcv(0)}, {rcv(1)}, {}};
  EXPECT_THROW(run_lockstep(m, cube, o, Scripted({early, joined}, true), results), SimulationError);
  const std::vector<std::vector<StepOp>> after{{compute(1), snd(0, 1)}, {rcv(0)}, {}, {}};
  EXPECT_THROW(run_lockstep(m, cube, o, Scripted({after}, true), results), SimulationError);
  EXPECT_THROW(run_lockstep(m, cube, o, Scripted({fork}, true), results), SimulationError);
  const std::vector<std::vector<StepOp>> beyond{{on(StepProgram::kMaxStrands, snd(0, 1))}, {rcv(0)}, {}, {}};
  EXPECT_THROW(run_lockstep(m, cube, o, Scripted({beyond}, true), results), SimulationError);
  const std::vector<std::vector<StepOp>> late_join{{snd(0, 1), join()}, {rcv(0)}, {}, {}};
  EXPECT_THROW(run_lockstep(m, cube, o, Scripted({late_join}, true), results), SimulationError);
  const std::vector<std::vector<StepOp>> narrow{{compute(1)}, {}, {}, {}};
  EXPECT_THROW(run_lockstep(m, cube, o, Scripted({narrow}), results), SimulationError);
}

TEST(Lockstep, KeepsTheEventBudget) {
  const Registry reg = make_registry();
  const AlgorithmInfo* info = reg.find("allgather.gcea");
  ASSERT_NE(info, nullptr);
  const RunPoint rp = timing_point(info, 8, 8, 8);
  RunLimits l;
  l.max_events = 10000;
  const RunOutcome o = run_point(rp, *info, true, nullptr, l);
  EXPECT_NE(o.error.find("the budget of 10000 events is spent"), std::string::npos) << o.error;
  // The step it names is the step it stopped in, on any number of threads: 256 nodes, checked
  // every 4,096 node-steps, 12,288 by the end of step 48 (two threads had counted each of a step's
  // two barriers as a step: "step 95").
  for (const int threads : {1, 2, 3}) {
    l.threads = threads;
    const RunOutcome t = run_point(rp, *info, true, nullptr, l);
    EXPECT_NE(t.error.find("(12288 events by step 48 of 255)"), std::string::npos) << threads << ": " << t.error;
  }
}

// Repeated steps (StepProgram::repeats, docs/lockstep.md "Repeated steps"): where CRA's parts
// are of one size its steps settle after a few into adding one time and one chain to every node,
// and the rest are added at once; the report is the one of every step timed, events and resumes
// included, on one and three threads, and the engine's.
TEST(Lockstep, RepeatedStepsGiveTheReportOfEveryStepTimed) {
  const Registry reg = make_registry();
  const AlgorithmInfo* info = reg.find("allgather.cra");
  ASSERT_NE(info, nullptr);
  RunPoint rp = timing_point(info, 9, 16380, 256);  // 9 parts of 1,820 elements, 511 steps
  rp.setup.machine.tau_msg = Time::ps(250);
  RunLimits off = with_lockstep();
  off.lockstep_repeats = false;
  const RunOutcome timed = run_point(rp, *info, true, nullptr, off);
  EXPECT_EQ(timed.stats.lockstep_repeated_steps, 0);
  {  // every node's end time, not only the report's
    std::vector<Time> a, b;
    EngineOptions o = engine_options(rp.setup, with_lockstep());
    const std::unique_ptr<StepProgram> prog = info->steps(rp.setup);
    std::vector<Buffer> results;
    o.node_times = &a;
    ASSERT_TRUE(run_lockstep(rp.setup.machine, rp.setup.topology, o, *prog, results).has_value());
    o.node_times = &b;
    o.lockstep_repeats = false;
    ASSERT_TRUE(run_lockstep(rp.setup.machine, rp.setup.topology, o, *prog, results).has_value());
    EXPECT_EQ(a, b);
    EXPECT_EQ(a.size(), 512u);
  }
  for (const int threads : {1, 3}) {
    const RunOutcome added = run_point(rp, *info, true, nullptr, with_lockstep(threads));
    ASSERT_EQ(comparable(timed).dump(), comparable(added).dump()) << threads;
    EXPECT_EQ(timed.stats.events, added.stats.events);
    EXPECT_EQ(timed.stats.resumes, added.stats.resumes);
    EXPECT_GT(added.stats.lockstep_repeated_steps, 400) << threads << ": most of the 511 steps are added";
  }
  rp.setup.topology = Topology::hypercube(6);  // the engine's, on a cube it runs in a moment
  rp.setup.params.M = 600;
  const RunOutcome engine = run_point(rp, *info, true, nullptr, without_lockstep());
  const RunOutcome added = run_point(rp, *info, true, nullptr, with_lockstep());
  ASSERT_EQ(comparable(engine).dump(), comparable(added).dump());
  EXPECT_GT(added.stats.lockstep_repeated_steps, 40);
}

/// A program run by the all-port lockstep simulator with repeats and with every step timed, on
/// the simple machine and the n-cube, packets of B: both runs' stats and every node's end time.
struct AddedAndTimed {
  std::optional<RunStats> added, timed;
  std::vector<Time> added_times, timed_times;
};
/// The run with a shortcut of the all-port simulator (`shortcut`: repeated or uniform steps) and
/// the run without it, on `threads` threads.
AddedAndTimed with_and_without(const StepProgram& program, const Topology& topo, std::int64_t B, const Machine& m,
                               bool EngineOptions::*shortcut, int threads = 1) {
  EngineOptions o{B, false};
  o.threads = threads;
  AddedAndTimed r;
  std::vector<Buffer> results;
  o.node_times = &r.added_times;
  r.added = run_lockstep(m, topo, o, program, results);
  o.*shortcut = false;
  o.node_times = &r.timed_times;
  r.timed = run_lockstep(m, topo, o, program, results);
  return r;
}
AddedAndTimed added_and_timed(const StepProgram& program, int n, std::int64_t B, const Machine& m) {
  return with_and_without(program, Topology::hypercube(n), B, m, &EngineOptions::lockstep_repeats);
}

// Records that grow apart: two pairs of nodes, each sending on one link every step, messages of
// 2 and of 1 element, so the pairs' times grow at two rates. Every comparison still comes out the
// same every step: the steps are added, and the report is the one of every step timed.
TEST(Lockstep, RepeatedStepsFollowRecordsThatGrowApart) {
  class Apart final : public StepProgram {
   public:
    [[nodiscard]] std::int64_t steps() const override { return 200; }
    void step(NodeId x, std::int64_t /*s*/, std::vector<StepOp>& ops) const override {
      // 2-cube: 0 -> 1 across dimension 0 (2 elements), 2 -> 3 across dimension 0 (1 element).
      if (x == 0 || x == 2) ops.push_back({.kind = StepOp::Kind::send, .port = 0, .elements = x == 0 ? 2 : 1});
      if (x == 1 || x == 3) ops.push_back({.kind = StepOp::Kind::recv, .port = 0});
    }
    [[nodiscard]] std::int64_t result_elements(NodeId /*x*/) const override { return 0; }
    [[nodiscard]] std::int64_t repeats(std::int64_t s) const override { return steps() - s; }
  };
  const AddedAndTimed r = added_and_timed(Apart{}, 2, 4, test::simple_machine({PortKind::all, 0}, 256));
  const std::optional<RunStats>& added = r.added;
  const std::optional<RunStats>& timed = r.timed;
  ASSERT_TRUE(added.has_value() && timed.has_value());
  EXPECT_EQ(r.added_times, r.timed_times);
  EXPECT_GT(added->lockstep_repeated_steps, 150);
  EXPECT_EQ(added->time, timed->time);
  EXPECT_EQ(added->critical_path, timed->critical_path);
  EXPECT_EQ(added->max_node_comm_busy, timed->max_node_comm_busy);
  EXPECT_EQ(added->messages, 400);
  EXPECT_EQ(timed->messages, 400);
}

/// The program of RepeatedStepsStopWhereAComparisonChangesItsOutcome (below) on nodes 0 to 7; with
/// a crowd (a cube of 5 dimensions or more), nodes 16 and up besides exchange a message a step
/// across dimension 3, so that every step has thousands of node-steps.
class Overtaken final : public StepProgram {
 public:
  explicit Overtaken(bool crowd = false) : crowd_(crowd) {}
  [[nodiscard]] std::int64_t steps() const override { return 400; }
  void step(NodeId x, std::int64_t s, std::vector<StepOp>& ops) const override {
    if (crowd_ && x >= 16) {  // the crowd: each step a message of 1 element across dimension 3
      if ((x & 8) == 0)
        ops.push_back({.kind = StepOp::Kind::send, .port = 3, .elements = 1});
      else
        ops.push_back({.kind = StepOp::Kind::recv, .port = 3});
      return;
    }
    if (s == 0) {  // node 1 sends 40 elements to node 5 (across dimension 2)
      if (x == 1) ops.push_back({.kind = StepOp::Kind::send, .port = 2, .tag = 9, .elements = 40});
      if (x == 5) ops.push_back({.kind = StepOp::Kind::recv, .port = 2, .tag = 9});
      return;
    }
    if (x == 1) ops.push_back({.kind = StepOp::Kind::send, .port = 1, .elements = 1});  // to 3
    if (x == 2) ops.push_back({.kind = StepOp::Kind::send, .port = 0, .elements = 2});  // to 3
    if (x == 3) {
      ops.push_back({.kind = StepOp::Kind::send, .port = 2, .elements = 0});  // to 7
      ops.push_back({.kind = StepOp::Kind::recv, .port = 1});                 // from 1
      ops.push_back({.kind = StepOp::Kind::recv, .port = 0});                 // from 2
    }
    if (x == 7) ops.push_back({.kind = StepOp::Kind::recv, .port = 2});  // from 3
  }
  [[nodiscard]] std::int64_t result_elements(NodeId /*x*/) const override { return 0; }
  [[nodiscard]] std::int64_t repeats(std::int64_t s) const override { return s >= 2 ? steps() - s : 0; }

 private:
  bool crowd_;
};

// Where a comparison changes its outcome part of the way, the steps around the change are timed.
// On the 3-cube node 3 receives every step from node 1 (1 element) and from node 2 (2 elements)
// and sends an empty message on to node 7; node 1 starts late (step 0 sends 40 elements from it
// first), so node 3 goes on with node 1's message until node 2's, t_c a step longer, overtakes it,
// 140 steps in. A repeat across that step would go on at node 1's rate; the step timed to check
// it recomputes node 3 from its senders, but node 7, one step behind, would keep the wrong time
// (the report, which samples the critical nodes, would not show it: every node's end time is
// compared). The check refuses it, the records go back, shorter repeats are tried, and every node
// ends where it does with every step timed. (Without the check this test fails.)
TEST(Lockstep, RepeatedStepsStopWhereAComparisonChangesItsOutcome) {
  const AddedAndTimed r = added_and_timed(Overtaken{}, 3, 64, test::simple_machine({PortKind::all, 0}, 256));
  const std::optional<RunStats>& added = r.added;
  const std::optional<RunStats>& timed = r.timed;
  const std::vector<Time>& added_times = r.added_times;
  const std::vector<Time>& timed_times = r.timed_times;
  ASSERT_TRUE(added.has_value() && timed.has_value());
  std::cout << "[ repeats ] " << added->lockstep_repeated_steps << " of 400 steps added\n";
  EXPECT_GT(added->lockstep_repeated_steps, 300);
  EXPECT_LT(added->lockstep_repeated_steps, 399);
  EXPECT_EQ(added->time, timed->time);
  EXPECT_EQ(added->critical_path, timed->critical_path);
  EXPECT_EQ(added->events, timed->events);
  ASSERT_EQ(added_times.size(), 8u);
  for (std::size_t x = 0; x < 8; ++x) EXPECT_EQ(added_times[x], timed_times[x]) << "node " << x;
  // node 3 ends on node 2's chain (2 elements a step since step 140), not node 1's
  EXPECT_EQ(timed_times[3], timed_times[2]);
}

// The shared progress counter (EngineOptions::progress, the progress line) only goes forward: a
// step timed from extrapolated records that the check then refuses must not have published its
// counts (the counter would run ahead, then back: an engine invariant). Overtaken's refusals on a
// 13-cube with a crowd, 8,000 node-steps a step, so that every step publishes. (Publishing from
// the refused step breaks the invariant and the run: checked by hand, stop 66.)
TEST(Lockstep, TheProgressCounterOnlyGoesForwardThroughRefusedRepeats) {
  const Topology topo = Topology::hypercube(13);
  EngineOptions o{64, false};
  std::atomic<std::int64_t> progress{0};
  o.progress = &progress;
  std::vector<Buffer> results;
  const std::optional<RunStats> added =
      run_lockstep(test::simple_machine({PortKind::all, 0}, 256), topo, o, Overtaken{true}, results);
  ASSERT_TRUE(added.has_value());
  EXPECT_GT(added->lockstep_repeated_steps, 300);
  EXPECT_LT(added->lockstep_repeated_steps, 399);  // refused repeats on the way
  EXPECT_EQ(progress.load(), added->events);
  EXPECT_GT(added->events, 400 * 8000);
}

// Comparisons that come out the same every step are not enough: the increments may still travel.
// A line 0 -> 1 -> 3 -> 2 -> 6 -> 7 on the 3-cube, each node sending fewer elements than the one
// before it: from step 1 every node goes on with its upstream neighbour's message (the same
// outcomes every step), but node 0's increment reaches node 7 only a hop a step. A repeat taken
// from steps 1 and 2 would carry node 7 on at its early increment (139,400 ps at the end against
// 149,000), and a last step in which node 7 sends 1,000 elements would put the report's time
// wrong by 9,500 ps. The step timed to check a repeat must end where the repeat says (found by a
// review of this change; without that check this test fails).
TEST(Lockstep, RepeatedStepsWaitForTheIncrementsToSettle) {
  class Line final : public StepProgram {
   public:
    [[nodiscard]] std::int64_t steps() const override { return 100; }
    void step(NodeId x, std::int64_t s, std::vector<StepOp>& ops) const override {
      if (s == steps() - 1) {  // node 7 sends 1,000 elements to node 5
        if (x == 7) ops.push_back({.kind = StepOp::Kind::send, .port = 1, .elements = 1000});
        if (x == 5) ops.push_back({.kind = StepOp::Kind::recv, .port = 1});
        return;
      }
      const auto send = [&](int port, int e) {
        ops.push_back({.kind = StepOp::Kind::send, .port = port, .elements = e});
      };
      const auto recv = [&](int port) { ops.push_back({.kind = StepOp::Kind::recv, .port = port}); };
      if (x == 0) send(0, 50);
      if (x == 1) recv(0), send(1, 40);
      if (x == 3) recv(1), send(0, 30);
      if (x == 2) recv(0), send(2, 20);
      if (x == 6) recv(2), send(0, 10);
      if (x == 7) recv(0);
    }
    [[nodiscard]] std::int64_t result_elements(NodeId /*x*/) const override { return 0; }
    [[nodiscard]] std::int64_t repeats(std::int64_t s) const override {
      return s >= 1 && s < steps() - 1 ? steps() - 1 - s : 0;
    }
  };
  const AddedAndTimed r = added_and_timed(Line{}, 3, 64, test::simple_machine({PortKind::all, 0}, 256));
  const std::optional<RunStats>& added = r.added;
  const std::optional<RunStats>& timed = r.timed;
  ASSERT_TRUE(added.has_value() && timed.has_value());
  EXPECT_GT(added->lockstep_repeated_steps, 50);
  EXPECT_EQ(added->time, timed->time);
  EXPECT_EQ(timed->time, Time::ps(173500));
  EXPECT_EQ(added->critical_path, timed->critical_path);
  EXPECT_EQ(r.added_times, r.timed_times);
}

// A program that computes (wide chains, the nodes' compute time): two nodes exchange 3 elements
// and multiply 5 flops a step; the steps added give what timing each of them gives.
TEST(Lockstep, RepeatedStepsOfAProgramThatComputes) {
  class Exchange final : public StepProgram {
   public:
    [[nodiscard]] std::int64_t steps() const override { return 100; }
    void step(NodeId /*x*/, std::int64_t /*s*/, std::vector<StepOp>& ops) const override {
      ops.push_back({.kind = StepOp::Kind::send, .port = 0, .elements = 3});
      ops.push_back({.kind = StepOp::Kind::recv, .port = 0});
      ops.push_back({.kind = StepOp::Kind::compute, .elements = 5});
    }
    [[nodiscard]] std::int64_t result_elements(NodeId /*x*/) const override { return 0; }
    [[nodiscard]] bool wide() const override { return true; }
    [[nodiscard]] std::int64_t repeats(std::int64_t s) const override { return steps() - s; }
  };
  Machine m = test::simple_machine({PortKind::all, 0}, 256);
  m.t_call = Time::ps(40);
  const AddedAndTimed r = added_and_timed(Exchange{}, 1, 2, m);
  const std::optional<RunStats>& added = r.added;
  const std::optional<RunStats>& timed = r.timed;
  ASSERT_TRUE(added.has_value() && timed.has_value());
  EXPECT_EQ(r.added_times, r.timed_times);
  EXPECT_GT(added->lockstep_repeated_steps, 90);
  EXPECT_EQ(timed->lockstep_repeated_steps, 0);
  EXPECT_EQ(added->time, timed->time);
  EXPECT_EQ(added->critical_path, timed->critical_path);
  EXPECT_EQ(added->critical_path.flops, 500);
  EXPECT_EQ(added->max_node_compute_busy, timed->max_node_compute_busy);
  EXPECT_EQ(added->max_node_comm_busy, timed->max_node_comm_busy);
  EXPECT_EQ(added->max_link_load, timed->max_link_load);
  EXPECT_EQ(added->packets, timed->packets);
  EXPECT_EQ(added->events, timed->events);
  EXPECT_EQ(added->resumes, timed->resumes);
}

// A budget spent inside the steps a repeat would add: the repeat stops before the step whose
// check fails, so that the run fails in the same step with the same count as when every step is
// timed (256 nodes, checked every 16 steps).
/// `name` on the 8-cube with a budget of 30,000 events, with a shortcut of the all-port simulator
/// (`shortcut`: repeated or uniform steps) and without, on 1 and 2 threads: the same error, in
/// step 128 of 255.
void keeps_the_event_budget(const char* name, bool RunLimits::*shortcut) {
  const Registry reg = make_registry();
  const AlgorithmInfo* info = reg.find(name);
  ASSERT_NE(info, nullptr);
  const RunPoint rp = timing_point(info, 8, 16384, 256);
  for (const int threads : {1, 2}) {
    RunLimits on = with_lockstep(threads);
    on.max_events = 30000;
    RunLimits off = on;
    off.*shortcut = false;
    const RunOutcome a = run_point(rp, *info, true, nullptr, on);
    const RunOutcome b = run_point(rp, *info, true, nullptr, off);
    EXPECT_NE(a.error.find("the budget of 30000 events is spent (32768 events by step 128 of 255)"), std::string::npos)
        << a.error;
    EXPECT_EQ(a.error, b.error) << name << " " << threads;
  }
}

TEST(Lockstep, RepeatedStepsKeepTheEventBudget) {
  keeps_the_event_budget("allgather.cra", &RunLimits::lockstep_repeats);
  const Registry reg = make_registry();
  const AlgorithmInfo* info = reg.find("allgather.cra");
  ASSERT_NE(info, nullptr);
  const RunPoint rp = timing_point(info, 8, 16384, 256);
  RunLimits ample = with_lockstep();
  ample.max_events = 70000;  // above the run's 65,536 resumes
  EXPECT_TRUE(run_point(rp, *info, true, nullptr, ample).error.empty());
}

/// A program run by the all-port lockstep simulator with uniform steps (node 0 alone) and with
/// every node timed: both runs' stats and every node's end time.
AddedAndTimed alone_and_all(const StepProgram& program, const Topology& topo, std::int64_t B, const Machine& m,
                            int threads) {
  return with_and_without(program, topo, B, m, &EngineOptions::lockstep_uniform, threads);
}

// Uniform steps (StepProgram::uniform, docs/lockstep.md "Uniform steps"): the Gray-code exchanges
// (parts of two sizes), the hybrid and the tree collectives' step form time node 0 alone in every
// step, and give the report of every node timed, events and resumes included, on 1 and 3 threads,
// with every node's end time; on the 5-cube, the engine's report.
TEST(Lockstep, UniformStepsGiveTheReportOfEveryNodeTimed) {
  const Registry reg = make_registry();
  for (const char* name : {"allgather.gcea", "allgather.hybrid", "allgather.sbnt", "alltoall.nrsbt"}) {
    const AlgorithmInfo* info = reg.find(name);
    ASSERT_NE(info, nullptr) << name;
    RunPoint rp = timing_point(info, 7, 1000, 64);  // GCEA: 7 parts, of 143 and 142 elements
    rp.setup.params.k = 3;
    rp.setup.machine.tau_msg = Time::ps(250);
    RunLimits off = with_lockstep();
    off.lockstep_uniform = false;
    const RunOutcome all = run_point(rp, *info, true, nullptr, off);
    ASSERT_TRUE(all.error.empty()) << name << ": " << all.error;
    EXPECT_EQ(all.stats.lockstep_runs, 1) << name;
    EXPECT_EQ(all.stats.lockstep_uniform_steps, 0) << name;
    const std::unique_ptr<StepProgram> prog = info->steps(rp.setup);
    ASSERT_NE(prog, nullptr) << name;
    for (const int threads : {1, 3}) {
      const RunOutcome alone = run_point(rp, *info, true, nullptr, with_lockstep(threads));
      ASSERT_EQ(comparable(all).dump(), comparable(alone).dump()) << name << " " << threads;
      EXPECT_EQ(all.stats.events, alone.stats.events) << name;
      EXPECT_EQ(all.stats.resumes, alone.stats.resumes) << name;
      EXPECT_EQ(alone.stats.lockstep_uniform_steps, prog->steps()) << name << ": every step node 0's alone";
      const AddedAndTimed r = alone_and_all(*prog, rp.setup.topology, 64, rp.setup.machine, threads);
      ASSERT_TRUE(r.added.has_value() && r.timed.has_value()) << name;
      EXPECT_EQ(r.added_times, r.timed_times) << name;
      EXPECT_EQ(r.added_times.size(), 128u);
    }
    rp.setup.topology = Topology::hypercube(5);
    const RunOutcome engine = run_point(rp, *info, true, nullptr, without_lockstep());
    const RunOutcome alone = run_point(rp, *info, true, nullptr, with_lockstep());
    ASSERT_EQ(comparable(engine).dump(), comparable(alone).dump()) << name;
    EXPECT_GT(alone.stats.lockstep_uniform_steps, 0) << name;
  }
}

// Uniform steps begin and end, on the 5-cube (two workers with 2 threads), in a program that
// computes: steps 0-9 alike (dimension s mod 4, 3(s + 1) elements, then 1 + s mod 3 flops), but
// step 4 also sends a message that step 5 receives (it waits on the link between them: neither is
// balanced); steps 10-11 post alike without saying so; 12-13 say so again, and the nodes, all
// alike, are node 0's again; step 14 is uniform and empty, and node 0 says it posts nothing before
// step 17 (StepProgram::next_step), but nodes 2 and 3 exchange in steps 15 and 16; steps 17-26
// post apart (1 + x / 4 elements, across dimensions 0 and 1: the nodes' times part by x / 4 and
// stay apart); steps 27-44 say they are uniform, but the nodes are not alike, and each node is
// timed. 11 steps of node 0 alone; every node's end time and the report as with every node timed.
// (With alike() always true, spread() leaving a node's or a link's record behind, or node 0's next
// step spread to nodes 2 and 3, this test fails.)
TEST(Lockstep, UniformStepsBeginWhereAllNodesAreAlikeAndEndWhereTheyPostApart) {
  class Mixed final : public StepProgram {
   public:
    [[nodiscard]] std::int64_t steps() const override { return 45; }
    [[nodiscard]] bool wide() const override { return true; }
    [[nodiscard]] bool uniform(std::int64_t s) const override { return s < 10 || (s >= 12 && s <= 14) || s >= 27; }
    [[nodiscard]] std::int64_t next_step(NodeId x, std::int64_t s) const override {
      return x == 0 && s >= 14 && s < 17 ? 17 : s;
    }
    void step(NodeId x, std::int64_t s, std::vector<StepOp>& ops) const override {
      if (s == 14) return;
      if (s == 15 || s == 16) {  // nodes 2 and 3 exchange across dimension 0
        if (x == 2 || x == 3) {
          ops.push_back({.kind = StepOp::Kind::send, .port = 0, .elements = 6});
          ops.push_back({.kind = StepOp::Kind::recv, .port = 0});
        }
        return;
      }
      int port = static_cast<int>(s % 4);
      std::int64_t e = 3 * (s + 1);
      if (s >= 17) {
        port = static_cast<int>(s % 2);
        e = s < 27 ? 1 + x / 4 : 5;
      }
      ops.push_back({.kind = StepOp::Kind::send, .port = port, .elements = e});
      if (s == 4) ops.push_back({.kind = StepOp::Kind::send, .port = 1, .tag = 7, .elements = 3});
      ops.push_back({.kind = StepOp::Kind::recv, .port = port});
      if (s == 5) ops.push_back({.kind = StepOp::Kind::recv, .port = 1, .tag = 7});
      if (s < 14) ops.push_back({.kind = StepOp::Kind::compute, .elements = 1 + s % 3});
    }
    [[nodiscard]] std::int64_t result_elements(NodeId /*x*/) const override { return 0; }
  };
  Machine m = test::simple_machine({PortKind::all, 0}, 256);
  m.tau_msg = Time::ps(7);
  m.t_call = Time::ps(3);
  for (const int threads : {1, 2}) {
    const AddedAndTimed r = alone_and_all(Mixed{}, Topology::hypercube(5), 4, m, threads);
    ASSERT_TRUE(r.added.has_value() && r.timed.has_value());
    EXPECT_EQ(r.added->lockstep_uniform_steps, 11) << threads;
    EXPECT_EQ(r.timed->lockstep_uniform_steps, 0);
    EXPECT_EQ(r.added_times, r.timed_times) << threads;
    EXPECT_NE(r.timed_times[0], r.timed_times[31]) << "the nodes end apart";
    EXPECT_EQ(r.added->time, r.timed->time);
    EXPECT_EQ(r.added->critical_path, r.timed->critical_path);
    EXPECT_EQ(r.added->events, r.timed->events);
    EXPECT_EQ(r.added->resumes, r.timed->resumes);
    EXPECT_EQ(r.added->messages, r.timed->messages);
    EXPECT_EQ(r.added->messages, 32 * (15 + 28) + 4);
    EXPECT_EQ(r.added->packets, r.timed->packets);
    EXPECT_EQ(r.added->element_hops, r.timed->element_hops);
    EXPECT_EQ(r.added->max_link_load, r.timed->max_link_load);
    EXPECT_EQ(r.added->mean_link_load, r.timed->mean_link_load);
    EXPECT_EQ(r.added->max_node_comm_busy, r.timed->max_node_comm_busy);
    EXPECT_EQ(r.added->mean_node_comm_busy_s, r.timed->mean_node_comm_busy_s);
    EXPECT_EQ(r.added->max_node_compute_busy, r.timed->max_node_compute_busy);
    EXPECT_EQ(r.added->mean_node_compute_busy_s, r.timed->mean_node_compute_busy_s);
    EXPECT_EQ(r.added->busiest_link_node, r.timed->busiest_link_node);
    EXPECT_EQ(r.added->busiest_link_port, r.timed->busiest_link_port);
  }
}

// A uniform step that stops part of the way, after node 0's first send is on its link: its second
// send takes no time (no start-up, no elements: the engine's order of events would decide), so the
// run gives up and the engine runs the point, as with every node timed (found by a review: the
// records of the stopped step were spread, and the check that no message waits on a link broke
// the run instead).
TEST(Lockstep, AUniformStepThatGivesUpGivesUpAsEveryNodeTimed) {
  class Stops final : public StepProgram {
   public:
    [[nodiscard]] std::int64_t steps() const override { return 4; }
    [[nodiscard]] bool uniform(std::int64_t /*s*/) const override { return true; }
    void step(NodeId /*x*/, std::int64_t s, std::vector<StepOp>& ops) const override {
      ops.push_back({.kind = StepOp::Kind::send, .port = 0, .elements = 5});
      if (s == 2) ops.push_back({.kind = StepOp::Kind::send, .port = 1, .tag = 1, .elements = 0});
      ops.push_back({.kind = StepOp::Kind::recv, .port = 0});
      if (s == 2) ops.push_back({.kind = StepOp::Kind::recv, .port = 1, .tag = 1});
    }
    [[nodiscard]] std::int64_t result_elements(NodeId /*x*/) const override { return 0; }
  };
  Machine m = test::simple_machine({PortKind::all, 0}, 256);
  m.tau = Time{};
  m.tau_msg = Time{};
  for (const int threads : {1, 2}) {
    const AddedAndTimed r = alone_and_all(Stops{}, Topology::hypercube(5), 4, m, threads);
    EXPECT_FALSE(r.added.has_value()) << threads;
    EXPECT_FALSE(r.timed.has_value()) << threads;
  }
}

// A budget spent in uniform steps: every step still counts every node's events, and the run fails
// in the same step with the same count as with every node timed (256 nodes, checked every step).
TEST(Lockstep, UniformStepsKeepTheEventBudget) {
  keeps_the_event_budget("allgather.gcea", &RunLimits::lockstep_uniform);
}

}  // namespace
}  // namespace cubesim
