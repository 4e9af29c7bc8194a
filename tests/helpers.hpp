#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "algorithms/registry.hpp"
#include "app/runner.hpp"
#include "sim/engine.hpp"

namespace cubesim::test {

/// The test tier (docs/reliability.md "Test tiers"): CUBESIM_TEST_TIER=quick, set by the sanitizer
/// run, makes the few grid tests that ask run a thinner grid (named where they do); unset, every
/// test runs its whole grid, as the README's test command does.
inline bool quick_tier() {
  const char* v = std::getenv("CUBESIM_TEST_TIER");
  return v != nullptr && std::string_view(v) == "quick";
}

/// A machine with easy numbers: tau = 1000 ps, t_c = 10 ps, t_a = 3 ps, t_copy = 7 ps.
inline Machine simple_machine(PortModel ports = {PortKind::one, 1}, std::int64_t bm = 1 << 20) {
  Machine m;
  m.name = "test";
  m.tau = Time::ps(1000);
  m.t_c = Time::ps(10);
  m.t_a = Time::ps(3);
  m.t_copy = Time::ps(7);
  m.packet_elements = bm;
  m.ports = ports;
  return m;
}

/// One case of a parameterized test over algorithms: a name and the port model it runs on.
struct AlgorithmCase {
  std::string algorithm;
  PortModel ports;
};
inline void PrintTo(const AlgorithmCase& c, std::ostream* os) { *os << c.algorithm << " ports " << c.ports.name(); }
/// "broadcast_sbt_one": a test name gtest accepts.
inline std::string case_label(const AlgorithmCase& c) {
  std::string s = c.algorithm + "_" + c.ports.name();
  for (char& ch : s)
    if (ch == '.') ch = '_';
  return s;
}
inline std::string case_name(const ::testing::TestParamInfo<AlgorithmCase>& i) { return case_label(i.param); }

inline const PortModel kOne{PortKind::one, 1}, kAll{PortKind::all, 0}, kThree{PortKind::k, 3};

/// A run of one process a node of the n-cube with packets of B elements, trains (and closed
/// forms) on or off; each process may leave what it received in `got`.
struct EngineOutcome {
  RunStats st;
  std::vector<Buffer> got;
};
inline EngineOutcome run_cube(const Machine& m, int n, std::int64_t B, bool trains,
                              const std::function<Task<>(Node&, std::vector<Buffer>*)>& f) {
  EngineOptions o{B, true};
  o.packet_trains = trains;
  Engine e(m, Topology::hypercube(n), o);
  EngineOutcome out;
  out.got.resize(static_cast<std::size_t>(1) << n);
  out.st = e.run([&](Node& node) { return f(node, &out.got); });
  return out;
}

/// Every result of two runs the same, the engine's own counters aside (events, resumes, trains).
inline void expect_same_results(const RunStats& a, const RunStats& b) {
  EXPECT_EQ(a.time, b.time);
  EXPECT_EQ(a.critical_path, b.critical_path);
  EXPECT_EQ(a.messages, b.messages);
  EXPECT_EQ(a.packets, b.packets);
  EXPECT_EQ(a.packet_hops, b.packet_hops);
  EXPECT_EQ(a.element_hops, b.element_hops);
  EXPECT_EQ(a.max_link_load, b.max_link_load);
  EXPECT_EQ(a.mean_link_load, b.mean_link_load);
  EXPECT_EQ(a.busiest_link_node, b.busiest_link_node);
  EXPECT_EQ(a.busiest_link_port, b.busiest_link_port);
  EXPECT_EQ(a.max_node_comm_busy, b.max_node_comm_busy);
  EXPECT_EQ(a.mean_node_comm_busy_s, b.mean_node_comm_busy_s);
  EXPECT_EQ(a.max_node_compute_busy, b.max_node_compute_busy);
  EXPECT_EQ(a.mean_node_compute_busy_s, b.mean_node_compute_busy_s);
  EXPECT_EQ(a.unreceived_messages, b.unreceived_messages);
  EXPECT_EQ(a.queued_transmissions, b.queued_transmissions);
  EXPECT_EQ(a.routed_messages, b.routed_messages);
  EXPECT_EQ(a.slot_ties, b.slot_ties);
  EXPECT_EQ(a.largest_message, b.largest_message);
}

/// True for the matrix multiplications (TR-530 §5: P, Q and R; tests/test_matmul.cpp).
inline bool multiplies(const AlgorithmInfo& info) {
  return std::find(info.params.begin(), info.params.end(), "R") != info.params.end();
}
/// True for the algorithms on a P x Q matrix (TR-572's transpositions: tests/test_transpose.cpp
/// holds their grids); the others take a block of M elements (TR-530's primitives) or multiply.
inline bool takes_matrix(const AlgorithmInfo& info) {
  return !multiplies(info) && std::find(info.params.begin(), info.params.end(), "P") != info.params.end();
}

/// The list and choice parameters of the grids, deterministic per point: a dimension
/// permutation of the cube (a different one for each seed: a Fisher-Yates shuffle by a small
/// LCG) and the variant, alternating 0 and 1.
inline void fill_grid_params(Params& p, int n, std::int64_t seed) {
  p.perm.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) p.perm[static_cast<std::size_t>(i)] = i;
  std::uint64_t r = static_cast<std::uint64_t>(seed) * 6364136223846793005ULL + 1442695040888963407ULL;
  for (int i = n - 1; i > 0; --i) {
    r = r * 6364136223846793005ULL + 1442695040888963407ULL;
    std::swap(p.perm[static_cast<std::size_t>(i)],
              p.perm[static_cast<std::size_t>((r >> 33) % static_cast<std::uint64_t>(i + 1))]);
  }
  p.variant = seed % 2;
}

/// Every registered algorithm of one family (matrix or not) on one port and on all ports, and on
/// three ports those named: the cases of the grids that must cover every algorithm (a new one
/// joins them by registering).
inline std::vector<AlgorithmCase> every_algorithm_case(const std::set<std::string>& three_port, bool matrix = false,
                                                       bool multiply = false) {
  std::vector<AlgorithmCase> cases;
  const Registry reg = make_registry();
  for (const AlgorithmInfo* info : reg.all()) {
    if (takes_matrix(*info) != matrix || multiplies(*info) != multiply) continue;
    cases.push_back({info->name, kOne});
    cases.push_back({info->name, kAll});
    if (three_port.count(info->name)) cases.push_back({info->name, kThree});
  }
  return cases;
}

/// A figure rounded to 3 significant digits, as the registry documents deviations.
inline double three_digits(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return std::stod(buf);
}

/// Deviations as the C++ that registers them, sorted (relation, tolerance).
inline std::string describe(std::vector<Deviation> v) {
  std::sort(v.begin(), v.end(), [](const Deviation& a, const Deviation& b) {
    return std::tie(a.relation, a.tolerance) < std::tie(b.relation, b.tolerance);
  });
  std::string s = "{";
  for (const Deviation& d : v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g, %.3g", d.tolerance, d.worst);
    s += std::string(s.size() > 1 ? ", " : "") + "{Relation::" + relation_name(d.relation) + ", " + buf + ", \"" +
         d.at + "\"}";
  }
  return s + "}";
}

/// The worst departures a grid test measures, by promised relation, and the check that they
/// equal what the algorithm registers (so that the registered figures cannot drift).
struct Departures {
  std::map<double, std::pair<double, std::string>> approx;  ///< tolerance -> (worst |ratio - 1|, where)
  double lowest = 1.0, highest = 1.0;                       ///< upper bounds: lowest ratio; lower bounds: highest
  std::string lowest_at, highest_at;
  void add(const Prediction& pred, double ratio, const std::string& at) {
    if (pred.relation == Relation::approx) {
      auto& w = approx[pred.tolerance];
      if (w.second.empty() || std::abs(ratio - 1) > w.first) w = {std::abs(ratio - 1), at};
    }
    if (pred.relation == Relation::upper_bound && ratio < lowest) lowest = ratio, lowest_at = at;
    if (pred.relation == Relation::lower_bound && ratio > highest) highest = ratio, highest_at = at;
  }
  void check(const AlgorithmInfo& info, const AlgorithmCase& c, int runs) const {
    std::vector<Deviation> measured;
    for (const auto& [tol, w] : approx) measured.push_back({Relation::approx, tol, three_digits(w.first), w.second});
    if (!lowest_at.empty()) measured.push_back({Relation::upper_bound, 0, three_digits(lowest), lowest_at});
    if (!highest_at.empty()) measured.push_back({Relation::lower_bound, 0, three_digits(highest), highest_at});
    std::cout << "[ relation ] " << c.algorithm << " " << c.ports.name() << " " << runs
              << " runs: " << describe(measured) << "\n";
    if (quick_tier()) return;  // the registered figures are the whole grid's: the plain build checks them
    const bool all = c.ports.kind == PortKind::all;
    EXPECT_EQ(describe(all ? info.all_port.deviations : info.one_port.deviations), describe(measured))
        << "register these for " << info.name << (all ? " all_port" : " one_port") << ":\n"
        << describe(measured);
  }
};

/// The checks every grid test makes of one run: its data verified, no message left unreceived,
/// its relation held, and an exact row equal to the picosecond with its critical-path terms.
inline void expect_as_predicted(const RunOutcome& o, const Prediction& pred) {
  EXPECT_TRUE(o.verified) << o.verify_message;
  EXPECT_EQ(o.stats.unreceived_messages, 0) << "every message sent is received";
  EXPECT_TRUE(o.relation_holds) << relation_name(pred.relation) << " tol " << pred.tolerance << ": sim "
                                << o.stats.time.count() << " pred " << pred.time.count();
  if (pred.relation != Relation::exact) return;
  EXPECT_EQ(o.stats.time, pred.time) << pred.source;
  EXPECT_TRUE(o.terms_match) << "startups " << o.stats.critical_path.startups << " vs " << pred.startups
                             << ", elements " << o.stats.critical_path.element_transfers << " vs "
                             << pred.element_transfers << ", messages " << o.stats.critical_path.msg_startups << " vs "
                             << pred.msg_startups << ", flops " << o.stats.critical_path.flops << " vs " << pred.flops;
}

}  // namespace cubesim::test
