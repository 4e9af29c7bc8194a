// The comparative claims of TR-530 §4.1.6, §4.2.4, §4.3 and §4.4, each checked by simulation on
// a grid of parameters, and the tables' optimum packet sizes against simulated sweeps over B.
// Where a claim is an approximation, the test states the exact form the simulation obeys and
// where the paper's wording departs from it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "helpers.hpp"
#include "sim/runner.hpp"

using namespace cubesim;

namespace {

/// The iPSC numbers of TR-530 (tau = 1.5 ms, t_c = 4 us an element), with a large B_m so that
/// the packet size is free; ports as given.
Machine ipsc(PortModel ports, std::int64_t bm = 1 << 16) {
  Machine m;
  m.name = "ipsc-like";
  m.tau = Time::ps(1'500'000'000);
  m.t_c = Time::ps(4'000'000);
  m.packet_elements = bm;
  m.ports = ports;
  return m;
}

struct Sim {
  const Registry reg = make_registry();
  RunOutcome run(const std::string& algo, const Machine& m, int n, std::int64_t M, std::int64_t B) const {
    RunPoint rp;
    rp.setup.machine = m;
    rp.setup.topology = Topology::hypercube(n);
    rp.setup.params.M = M;
    rp.setup.params.B = B;
    const AlgorithmInfo* info = reg.find(algo);
    EXPECT_NE(info, nullptr) << algo;
    const RunOutcome o = run_point(rp, *info, true);
    EXPECT_TRUE(o.error.empty() && o.verified) << algo << ": " << o.error << o.verify_message;
    return o;
  }
  Time time(const std::string& algo, const Machine& m, int n, std::int64_t M, std::int64_t B) const {
    return run(algo, m, n, M, B).stats.time;
  }
  /// The fastest time over every packet size 1 <= B <= min(M, B_m), and the B that gives it (the
  /// smallest such). A message (or a part of ceil(M/n) elements) of L elements cut into k packets
  /// is fastest with the smallest B that gives k packets, ceil(L/k); so only those are run.
  std::pair<Time, std::int64_t> best(const std::string& algo, const Machine& m, int n, std::int64_t M) const {
    std::set<std::int64_t> sizes;
    for (std::int64_t L : {M, (M + n - 1) / n})
      for (std::int64_t k = 1; k <= L; ++k) sizes.insert((L + k - 1) / k);
    std::pair<Time, std::int64_t> b{Time::ps(INT64_MAX), 0};
    for (std::int64_t B : sizes) {
      if (B > m.packet_elements) continue;
      const Time t = time(algo, m, n, M, B);
      if (t < b.first) b = {t, B};
    }
    return b;
  }
};

double ratio(Time a, Time b) { return static_cast<double>(a.count()) / static_cast<double>(b.count()); }

}  // namespace

// §4.1.6: "The nESBT(1,1) routing is of lowest complexity, except if B_m >= M and M <= tau/(n t_c)
// in which case the SBT(1,1) requires one less cycle." Every routing at its best packet size.
// Simulated: where M <= tau/(n t_c) and B_m >= M, nESBT's best packet is the whole message and
// SBT wins by exactly one cycle tau + M t_c, as stated. Above it, nESBT wins once
// M t_c + 2 sqrt(n M tau t_c) < n M t_c, i.e. M > 4 n tau / ((n-1)^2 t_c) (the continuous
// optimum), a threshold up to 4n^2/(n-1)^2 times the paper's; between the two SBT still wins.
TEST(Claims, Tr530S416NesbtOnePortFastestExceptForShortMessages) {
  const Sim sim;
  const Machine m = ipsc(test::kOne);
  const double tau_tc = 375.0;  // tau / t_c
  for (int n = 2; n <= 6; ++n) {
    for (std::int64_t M : {8, 16, 32, 64, 128, 256, 512}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " M=" + std::to_string(M));
      const auto [nesbt, nesbt_b] = sim.best("broadcast.nesbt", m, n, M);
      const Time sbt = sim.time("broadcast.sbt", m, n, M, M);  // SBT-b(1,1): B_opt = M
      const auto gc = sim.best("broadcast.gc", m, n, M).first;
      const Time nrsbt = sim.time("broadcast.nrsbt", m, n, M, M);  // nRSBT-b(1,1): B_opt = M
      // On a 2-cube the Gray-code path has N - 2 = n further stages, nESBT's row exactly.
      // On a 2-cube nRSBT(1,1)'s 2n - 1 start-ups equal nESBT's n + 1 as well, and it wins up
      // to M = 8 tau / t_c: the 2-cube is the degenerate case of both comparisons.
      if (n > 2) {
        EXPECT_LE(nesbt, gc);
        EXPECT_LE(nesbt, nrsbt);
      }
      const double Md = static_cast<double>(M);
      if (Md <= tau_tc / n) {
        EXPECT_EQ(nesbt_b, M) << "the whole message is nESBT's best packet";
        EXPECT_EQ(nesbt - sbt, m.tau + m.t_c * M) << "SBT(1,1) one cycle faster";
      } else if (Md > 4 * n * tau_tc / ((n - 1) * (n - 1))) {
        EXPECT_LT(nesbt, sbt) << "nESBT(1,1) fastest";
      }
    }
  }
}

// §4.1.6: "the nESBT(n,1) routing is superior to the other routings, except if B_m >= M/n and
// M <= tau/t_c in which case the nRSBT(n,1) routing is superior." All-port, best packet sizes.
// Simulated: with M <= tau/t_c nRSBT(n,1) (n tau + M t_c) beats every other routing, as stated.
// nESBT(n,1) at its optimum takes about n tau + M t_c/n + 2 sqrt(M tau t_c), so it overtakes
// nRSBT(n,1) only for M > 4 n^2 tau / ((n-1)^2 t_c), and with whole packets clearly so from twice
// that; from there it is the fastest. Between the thresholds nRSBT(n,1) still wins: the paper's
// boundary gives the order of magnitude, not the line.
TEST(Claims, Tr530S416NesbtAllPortFastestExceptForShortMessages) {
  const Sim sim;
  const Machine m = ipsc(test::kAll);
  const double tau_tc = 375.0;
  for (int n = 2; n <= 6; ++n) {
    for (std::int64_t M : {60, 120, 240, 375, 960, 2400, 7680, 15360}) {
      if (M == 15360 && n > 2) continue;  // only the 2-cube needs it to clear the threshold
      SCOPED_TRACE("n=" + std::to_string(n) + " M=" + std::to_string(M));
      const auto nesbt = sim.best("broadcast.nesbt", m, n, M).first;
      const Time nrsbt = sim.time("broadcast.nrsbt", m, n, M, (M + n - 1) / n);  // B_opt = M/n
      const auto sbt = sim.best("broadcast.sbt", m, n, M).first;
      const Time gc = sim.time("broadcast.gc", m, n, M, (M + n - 1) / n);          // B_opt = M/n
      const auto sbnt = sim.best("broadcast.sbnt", m, n, M).first;
      const double Md = static_cast<double>(M);
      if (Md <= tau_tc) {
        EXPECT_LE(nrsbt, nesbt) << "nRSBT(n,1) superior";
        EXPECT_LE(nrsbt, sbt);
        EXPECT_LE(nrsbt, gc);
        EXPECT_LE(nrsbt, sbnt);
      } else if (Md > 8 * n * n * tau_tc / ((n - 1) * (n - 1))) {
        EXPECT_LT(nesbt, nrsbt) << "nESBT(n,1) superior";
        EXPECT_LT(nesbt, sbt);
        EXPECT_LT(nesbt, gc);
        EXPECT_LT(nesbt, sbnt);
      }
    }
  }
}
