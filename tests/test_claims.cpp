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

#include "algorithms/embedding/trees.hpp"
#include "app/runner.hpp"
#include "helpers.hpp"

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
      const Time gc = sim.time("broadcast.gc", m, n, M, (M + n - 1) / n);  // B_opt = M/n
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

namespace {
/// A lower bound of TR-530 §4.2-4.4: max(elements t_c, n tau).
Time lower_bound(const Machine& m, double elements, int n) {
  return std::max(Time::ps(static_cast<std::int64_t>(std::ceil(elements * static_cast<double>(m.t_c.count())))),
                  m.tau * n);
}
std::int64_t ceil_to(double x) { return static_cast<std::int64_t>(std::ceil(x - 1e-9)); }
/// The SBnT's largest subtree of the root over the even share (N-1)/n.
double sbnt_imbalance(int n) {
  std::vector<std::int64_t> size(static_cast<std::size_t>(n));
  for (trees::Address i = 1; i < (trees::Address{1} << n); ++i)
    ++size[static_cast<std::size_t>(trees::sbnt_base(i, n))];
  return static_cast<double>(*std::max_element(size.begin(), size.end())) * n /
         static_cast<double>((std::int64_t{1} << n) - 1);
}
}  // namespace

// "Optimal within a factor of 2" (TR-530 §4.2.4, §4.3, §4.4; TR-572 §3.1-3.2): with the packet
// size each claim names, the simulated time is at most twice the lower bound it names. Checked for
// n = 2..7, M = n and 12n elements (n | M, as the n-part routings assume), two cost ratios.
TEST(Claims, Tr530OptimalWithinTwoOfTheLowerBounds) {
  const Sim sim;
  struct Claim {
    const char* algo;
    PortModel ports;
    std::function<double(double N, double n, double M)> packet;    // the B_m the claim needs
    std::function<double(double N, double n, double M)> elements;  // the bound's t_c term
  };
  // The packet sizes and lower-bound element counts the claims name, as functions of N, n, M.
  using Term = std::function<double(double, double, double)>;
  const Term half_nm = [](double N, double, double M) { return N * M / 2; };
  const Term all_but_one = [](double N, double, double M) { return (N - 1) * M; };
  const Term balanced_packet = [](double N, double n, double M) {
    return std::sqrt(2 / M_PI) * N * M / std::pow(n, 1.5);
  };
  const Term balanced_share = [](double N, double n, double M) { return (N - 1) * M / n; };
  const std::vector<Claim> claims = {
      // §4.2.4: SBT-b(1,N) for B_m >= NM/2; lower bound max((N-1) M t_c, n tau).
      {"allgather.sbt", test::kOne, half_nm, all_but_one},
      // §4.2.4: nRSBT-b(n,N), SBnT-b(n,N) for B_m >= sqrt(2/pi) N M / n^1.5; bound (N-1) M / n.
      {"allgather.nrsbt", test::kAll, balanced_packet, balanced_share},
      {"allgather.sbnt", test::kAll, balanced_packet, balanced_share},
      // §4.3: SBT-p(1,1) for B_m >= NM/2; bound (N-1) M.
      {"scatter.sbt", test::kOne, half_nm, all_but_one},
      // §4.3: nRSBT-p(n,1), SBnT-p(n,1) for B_m >= sqrt(2/pi) N M / n^1.5; bound (N-1) M / n.
      {"scatter.nrsbt", test::kAll, balanced_packet, balanced_share},
      {"scatter.sbnt", test::kAll, balanced_packet, balanced_share},
      // §4.4: SBT-p(1,N) for B >= NM/2; one-port bound: n N M / 2 element-hops per node.
      {"alltoall.sbt", test::kOne, half_nm, [](double N, double n, double M) { return n * N * M / 2; }},
      // §4.4: nRSBT-p(n,N) for B_m >= NM/(2n), SBnT-p(n,N) for B_m >= (N-1)M/n; bound NM/2.
      {"alltoall.nrsbt", test::kAll, [](double N, double n, double M) { return N * M / (2 * n); }, half_nm},
      {"alltoall.sbnt", test::kAll, balanced_share, half_nm},
  };
  for (const Claim& c : claims) {
    double worst = 0;
    for (std::int64_t tau : {1'500'000'000, 40'000'000}) {  // tau / t_c = 375 and 10
      for (int n = 2; n <= 7; ++n) {
        for (std::int64_t M : {std::int64_t{n}, std::int64_t{12} * n}) {
          const double N = std::ldexp(1.0, n);
          Machine m = ipsc(c.ports);
          m.tau = Time::ps(tau);
          const bool sbnt = std::string(c.algo).ends_with(".sbnt");
          double packet = c.packet(N, n, static_cast<double>(M));
          if (sbnt) packet *= sbnt_imbalance(n);  // the busiest subtree's share, not (N-1)/n
          m.packet_elements = std::max<std::int64_t>(1, ceil_to(packet));
          const Time t = sim.time(c.algo, m, n, M, m.packet_elements);
          const Time lb = lower_bound(m, c.elements(N, n, static_cast<double>(M)), n);
          // The SBnT claims assume n equal subtrees; the SBnT's are only nearly equal (n = 6:
          // 13, 12, 11, 9, 9, 9 nodes against 10.5), and its busiest subtree sets the time. So
          // for the SBnT the packet size and the factor 2 are scaled by that imbalance (the
          // largest subtree over (N-1)/n: 4/3 at n = 2 and 4, 1.24 at n = 6, 1.05 at n = 7).
          double factor = 2;
          if (sbnt) factor *= sbnt_imbalance(n);
          worst = std::max(worst, ratio(t, lb) * 2 / factor);
          EXPECT_LE(static_cast<double>(t.count()), factor * static_cast<double>(lb.count()))
              << c.algo << " n=" << n << " M=" << M << " tau=" << tau;
        }
      }
    }
    std::printf("[ within 2 ] %s %s: worst T / T_lb = %.3f%s\n", c.algo, c.ports.name().c_str(), worst,
                std::string(c.algo).ends_with(".sbnt") ? " (divided by the SBnT imbalance)" : "");
  }
}

// §4.2.4: "For B_m <= M the routing complexity of all algorithms presented here are approximately
// equal" (one-port), and "for B_m <= (N-1)M/n the routing complexity of SBT-b(1,N), SBnT-b(1,N)
// and nRSBT-b(1,N) are approximately equal". Simulated spreads (slowest / fastest), n = 2..6:
// within 1.33 for all five (the widest at n = 2, M = B = 12) and 1.24 for the three trees.
TEST(Claims, Tr530S424AllToAllBroadcastsAboutEqualForSmallPackets) {
  const Sim sim;
  const Machine base = ipsc(test::kOne);
  double worst_all = 1, worst_trees = 1;
  for (int n = 2; n <= 6; ++n) {
    for (std::int64_t M : {std::int64_t{6} * n, std::int64_t{60} * n}) {
      const std::int64_t N = std::int64_t{1} << n;
      for (std::int64_t B : {M, M / 2, M / 3}) {  // B_m <= M
        Machine m = base;
        m.packet_elements = B;
        std::vector<Time> t;
        for (const char* a : {"allgather.cra", "allgather.gcea", "allgather.sbt", "allgather.sbnt", "allgather.nrsbt"})
          t.push_back(sim.time(a, m, n, M, B));
        const auto [lo, hi] = std::minmax_element(t.begin(), t.end());
        worst_all = std::max(worst_all, ratio(*hi, *lo));
        EXPECT_LE(ratio(*hi, *lo), 1.35) << "n=" << n << " M=" << M << " B=" << B;
      }
      const std::int64_t B = (N - 1) * M / n;  // B_m <= (N-1)M/n: the three tree routings
      Machine m = base;
      m.packet_elements = B;
      std::vector<Time> t;
      for (const char* a : {"allgather.sbt", "allgather.sbnt", "allgather.nrsbt"}) t.push_back(sim.time(a, m, n, M, B));
      const auto [lo, hi] = std::minmax_element(t.begin(), t.end());
      worst_trees = std::max(worst_trees, ratio(*hi, *lo));
      EXPECT_LE(ratio(*hi, *lo), 1.5) << "n=" << n << " M=" << M << " B=" << B;
    }
  }
  std::printf("[ about equal ] B_m <= M: all five within %.3f; B_m = (N-1)M/n: the three trees within %.3f\n",
              worst_all, worst_trees);
}

// §4.2.4, n-port: "For B_m <= M/n these two routings [nRSBT-b(n,N), SBnT-b(n,N)] are no better
// than the GCEA(n,N) routing. The SBT-b(n,N) routing is inferior."
TEST(Claims, Tr530S424AllPortGceaAsGoodForSmallPacketsAndSbtInferior) {
  const Sim sim;
  double worst = 1;
  for (int n = 2; n <= 6; ++n) {
    for (std::int64_t M : {std::int64_t{4} * n, std::int64_t{40} * n}) {
      Machine m = ipsc(test::kAll);
      m.packet_elements = M / n;  // B_m <= M/n
      const Time gcea = sim.time("allgather.gcea", m, n, M, M / n);
      const Time nrsbt = sim.time("allgather.nrsbt", m, n, M, M / n);
      const Time sbnt = sim.time("allgather.sbnt", m, n, M, M / n);
      // "no better than": the tree routings are not faster than GCEA by more than a few %.
      worst = std::min({worst, ratio(nrsbt, gcea), ratio(sbnt, gcea)});
      EXPECT_GE(ratio(nrsbt, gcea), 0.95) << "n=" << n << " M=" << M;
      EXPECT_GE(ratio(sbnt, gcea), 0.95) << "n=" << n << " M=" << M;
      // SBT-b(n,N) against nRSBT-b(n,N), each at its table B_opt (capped by B_m = 2^16).
      Machine big = ipsc(test::kAll);
      const double N = std::ldexp(1.0, n);
      const auto b_sbt = std::min<std::int64_t>(ceil_to(N * static_cast<double>(M) / std::sqrt(2 * M_PI * (n - 1))),
                                                big.packet_elements);
      const auto b_nr = std::min<std::int64_t>(
          ceil_to(std::sqrt(2 / M_PI) * N * static_cast<double>(M) / std::pow(n, 1.5)), big.packet_elements);
      if (n > 2) {
        EXPECT_GT(sim.time("allgather.sbt", big, n, M, b_sbt), sim.time("allgather.nrsbt", big, n, M, b_nr))
            << "SBT-b(n,N) inferior, n=" << n << " M=" << M;
      }
    }
  }
  std::printf("[ no better than GCEA ] fastest tree routing / GCEA(n,N) = %.3f\n", worst);
}

// Optimum packet sizes (TR-530 Table 1): every packet size run, the simulated minimum next to
// the table's B_opt. The table's B_opt minimises the continuous time (M/B + k)(tau + B t_c), i.e.
// a packet count p = L / B_opt (L = M, or the part ceil(M/n) for nESBT(n,1)). Simulated, packets
// are whole and the last one holds the remainder, so the best B is ceil(L/p) for a whole p, at
// most a few counts from the table's (the curve is flat there). Checked: the better of the two
// whole counts next to the table's p is within 0.5 % of the simulated minimum.
// configs/tr530/bopt-nesbt.json sweeps one of these for plotting.
TEST(Claims, Tr530OptimumPacketSizesMatchSimulatedSweeps) {
  const Sim sim;
  struct Row {
    const char* algo;
    PortModel ports;
  };
  for (const Row& r : {Row{"broadcast.gc", test::kOne}, Row{"broadcast.nesbt", test::kOne},
                       Row{"broadcast.sbt", test::kAll}, Row{"broadcast.nesbt", test::kAll}}) {
    for (int n : {3, 6}) {
      for (std::int64_t M : {1024, 4096}) {
        const Machine m = ipsc(r.ports);
        const auto [best, best_b] = sim.best(r.algo, m, n, M);
        const RunOutcome at = sim.run(r.algo, m, n, M, 1);  // for the prediction's B_opt only
        ASSERT_TRUE(at.prediction.b_opt.has_value()) << r.algo;
        const double b_opt = *at.prediction.b_opt;
        const bool part = r.ports.kind == PortKind::all && std::string(r.algo) == "broadcast.nesbt";
        const std::int64_t L = part ? (M + n - 1) / n : M;
        const double p = static_cast<double>(L) / b_opt;
        Time near = Time::ps(INT64_MAX);
        for (double q : {std::floor(p), std::ceil(p)}) {
          const auto count = std::clamp<std::int64_t>(static_cast<std::int64_t>(q), 1, L);
          near = std::min(near, sim.time(r.algo, m, n, M, (L + count - 1) / count));
        }
        EXPECT_LE(ratio(near, best), 1.005) << r.algo << " n=" << n << " M=" << M;
        std::printf(
            "[ B_opt ] %-16s %-3s n=%d M=%-5lld table B_opt %7.1f (%5.1f packets)  simulated best B %5lld "
            "(%5.1f packets) %.4f ms  next to B_opt %.4f ms\n",
            r.algo, r.ports.name().c_str(), n, static_cast<long long>(M), b_opt, p, static_cast<long long>(best_b),
            static_cast<double>(L) / static_cast<double>(best_b), best.seconds() * 1e3, near.seconds() * 1e3);
      }
    }
  }
}
