// Every algorithm of the exact family (issue 2) held to its TR-530 table row to the picosecond,
// and its critical path to the table's "start-ups" and "element transfers" columns, over a grid
// of n, M, B, tau, t_c and tau_msg; every run's data verified.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <tuple>

#include "app/runner.hpp"
#include "helpers.hpp"

using namespace cubesim;

namespace {

using Case = cubesim::test::AlgorithmCase;

using cubesim::test::case_name;
using cubesim::test::describe;
using cubesim::test::three_digits;

class ExactFormula : public ::testing::TestWithParam<Case> {};

TEST_P(ExactFormula, SimulationEqualsTableToThePicosecond) {
  const Registry reg = make_registry();
  const AlgorithmInfo* info = reg.find(GetParam().algorithm);
  ASSERT_NE(info, nullptr);
  struct Costs {
    std::int64_t tau, t_c, tau_msg, t_a;
  };
  // iPSC NX; awkward co-prime values (no ties between paths of different composition); iPSC OS1.
  // t_a matters to the reductions only (their additions are charged as compute).
  const std::vector<Costs> costs = {{1'500'000'000, 4'000'000, 0, 33'333'333},
                                    {1'000'003, 3'001, 0, 7'919},
                                    {6'000'000'000, 4'000'000, 2'000'000'000, 0}};
  const std::vector<std::int64_t> Ms = {1, 2, 7, 100, 255, 256, 257, 1000, 3001};
  const std::vector<std::int64_t> Bs = {1, 3, 16, 256};
  int runs = 0, skipped = 0;
  // For the docs: the largest |simulated / predicted - 1| where the row is an approximation, and
  // the smallest simulated / predicted where it is an upper bound.
  std::map<double, std::pair<double, std::string>> worst;  // by promised tolerance
  double lowest = 1.0;
  std::string lowest_at;
  // Cubes of 1 to 7 dimensions; the quick tier (the sanitizer run) stops at 3.
  const int max_n = test::quick_tier() ? 3 : 7;
  for (int n = 1; n <= max_n; ++n) {
    for (std::int64_t M : Ms) {
      for (std::int64_t B : Bs) {
        const Costs& c = costs[static_cast<std::size_t>((n + M + B) % 3)];
        RunPoint rp;
        cubesim::Setup& s = rp.setup;
        s.machine.name = "grid";
        s.machine.tau = Time::ps(c.tau);
        s.machine.t_c = Time::ps(c.t_c);
        s.machine.tau_msg = Time::ps(c.tau_msg);
        s.machine.t_a = Time::ps(c.t_a);
        s.machine.packet_elements = 256;
        s.machine.ports = GetParam().ports;
        s.topology = Topology::hypercube(n);
        s.params.M = M;
        s.params.B = B;
        s.params.root = (n * 7 + M) % s.topology.size();  // roots other than 0 too
        s.params.k = (n * 5 + M + B) % (n + 1);           // first-phase dimensions, 0..n
        cubesim::test::fill_grid_params(s.params, n, n * 31 + M + B);
        ASSERT_FALSE(info->check(s).has_value());
        const Prediction pred = info->predict(s);
        // Keep the suite fast: skip points with more than ~300k packet transmissions.
        if (s.topology.size() * pred.startups > 300'000) {
          ++skipped;
          continue;
        }
        SCOPED_TRACE("n=" + std::to_string(n) + " M=" + std::to_string(M) + " B=" + std::to_string(B) + " tau=" +
                     std::to_string(c.tau) + " t_c=" + std::to_string(c.t_c) + " tau_msg=" + std::to_string(c.tau_msg));
        const RunOutcome o = run_point(rp, *info, true);
        ASSERT_TRUE(o.error.empty()) << o.error;
        EXPECT_TRUE(o.verified) << o.verify_message;
        EXPECT_TRUE(o.relation_holds) << relation_name(pred.relation) << " tol " << pred.tolerance << ": sim "
                                      << o.stats.time.count() << " pred " << pred.time.count();
        const double ratio = pred.time.count() == 0
                                 ? 1.0
                                 : static_cast<double>(o.stats.time.count()) / static_cast<double>(pred.time.count());
        const std::string at = "n=" + std::to_string(n) + " M=" + std::to_string(M) + " B=" + std::to_string(B);
        if (pred.relation == Relation::approx) {
          auto& w = worst[pred.tolerance];
          if (w.second.empty() || std::abs(ratio - 1) > w.first) w = {std::abs(ratio - 1), at};
        }
        if (pred.relation == Relation::upper_bound && ratio < lowest) {
          lowest = ratio;
          lowest_at = at;
        }
        if (pred.relation != Relation::exact) {  // a departure the algorithm's file documents
          ++runs;
          continue;
        }
        EXPECT_EQ(o.stats.time, pred.time) << pred.source;
        EXPECT_EQ(o.stats.critical_path.startups, pred.startups);
        EXPECT_EQ(o.stats.critical_path.element_transfers, pred.element_transfers);
        EXPECT_EQ(o.stats.critical_path.msg_startups, pred.msg_startups);
        if (c.t_a > 0) {  // free flops lie on no chain
          EXPECT_EQ(o.stats.critical_path.flops, pred.flops);
        }
        EXPECT_TRUE(o.terms_match);
        EXPECT_TRUE(o.relation_holds);
        ++runs;
        if (HasFailure()) return;  // one clear failure, not hundreds
      }
    }
  }
  EXPECT_GT(runs, test::quick_tier() ? 60 : 150) << "the grid must really run (" << skipped << " skipped)";
  std::cout << "[ relation ] " << GetParam().algorithm << " " << GetParam().ports.name();
  for (const auto& [tol, w] : worst)
    std::cout << "; approx (tolerance " << tol << "): worst |sim/pred - 1| = " << w.first << " at " << w.second;
  if (!lowest_at.empty()) std::cout << "; bound: lowest sim/pred = " << lowest << " at " << lowest_at;
  std::cout << "\n";
  // The registry documents what this grid measures (docs/primitives.md is generated from it):
  // the figures must be the ones measured here, to 3 significant digits, so they cannot drift.
  const PortKind kind = GetParam().ports.kind;
  if (kind == PortKind::k) return;  // k-port runs the one-port schedules; documented as one-port
  if (test::quick_tier()) return;   // the figures are the whole grid's: the plain build checks them
  std::vector<Deviation> measured;
  for (const auto& [tol, w] : worst) measured.push_back({Relation::approx, tol, three_digits(w.first), w.second});
  if (!lowest_at.empty()) measured.push_back({Relation::upper_bound, 0, three_digits(lowest), lowest_at});
  const std::vector<Deviation>& documented =
      kind == PortKind::all ? info->all_port.deviations : info->one_port.deviations;
  EXPECT_EQ(describe(documented), describe(measured))
      << "the deviations registered for " << info->name << " (" << (kind == PortKind::all ? "all_port" : "one_port")
      << ") differ from what the grid measures; register these:\n"
      << describe(measured);
}

INSTANTIATE_TEST_SUITE_P(Tr530Tables, ExactFormula,
                         ::testing::ValuesIn(cubesim::test::every_algorithm_case({"broadcast.sbt", "broadcast.gc",
                                                                                  "broadcast.nesbt", "reduce.sbt"})),
                         case_name);

// Timing mode moves no items: the step form sizes its messages from the plan (issue 35 point 3),
// the all-to-alls keep no O(N) state. Every counter of the run must still equal data mode's, on
// one port and all ports, for block sizes that do and do not divide among the trees.
TEST(ExactFormula, TimingOnlyModeGivesTheSameTimes) {
  const Registry reg = make_registry();
  for (const AlgorithmInfo* info : reg.all()) {
    if (cubesim::test::takes_matrix(*info) || cubesim::test::multiplies(*info)) continue;  // their own test files
    for (const PortModel& ports : {cubesim::test::kOne, cubesim::test::kAll})
      for (std::int64_t M : {1, 7, 100}) {
        RunPoint rp;
        rp.setup.machine.tau = Time::ps(1'000'003);
        rp.setup.machine.t_c = Time::ps(3'001);
        rp.setup.machine.t_a = Time::ps(7);
        rp.setup.machine.packet_elements = 64;
        rp.setup.machine.ports = ports;
        rp.setup.topology = Topology::hypercube(5);
        rp.setup.params.M = M;
        rp.setup.params.B = 64;
        cubesim::test::fill_grid_params(rp.setup.params, 5, 100);
        if (info->check(rp.setup).has_value()) continue;
        SCOPED_TRACE(info->name + " " + ports.name() + " M=" + std::to_string(M));
        const RunOutcome data = run_point(rp, *info, true);
        rp.setup.data_mode = false;
        // The engine's timing mode (the lockstep simulator, which counts events its own way, is
        // checked against the engine in tests/test_lockstep.cpp).
        RunLimits engine_only;
        engine_only.lockstep = false;
        const RunOutcome timing = run_point(rp, *info, true, nullptr, engine_only);
        EXPECT_TRUE(data.verified && timing.verified);
        EXPECT_EQ(data.stats.time, timing.stats.time);
        EXPECT_EQ(data.stats.critical_path, timing.stats.critical_path);
        EXPECT_EQ(data.stats.events, timing.stats.events);
        EXPECT_EQ(data.stats.messages, timing.stats.messages);
        EXPECT_EQ(data.stats.packet_hops, timing.stats.packet_hops);
        EXPECT_EQ(data.stats.element_hops, timing.stats.element_hops);
        EXPECT_EQ(data.stats.max_link_load, timing.stats.max_link_load);
        EXPECT_EQ(data.stats.largest_message, timing.stats.largest_message);
      }
  }
}

TEST(ExactFormula, VerificationCatchesWrongData) {
  const Registry reg = make_registry();
  const AlgorithmInfo* info = reg.find("allgather.sbt");
  cubesim::Setup s;
  s.topology = Topology::hypercube(2);
  s.params.M = 2;
  std::vector<Buffer> results(4, Buffer::of({0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(info->verify(s, results).ok);
  results[2] = Buffer::of({0, 1, 2, 3, 4, 5, 7, 6});
  const Verdict v = info->verify(s, results);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.message.find("node 2 element 6"), std::string::npos) << v.message;
  results[2] = Buffer::of({0, 1});
  EXPECT_FALSE(info->verify(s, results).ok);
}

}  // namespace
