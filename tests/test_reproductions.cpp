// Paper items reproduced by simulation, with their expected outcome.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "app/runner.hpp"

using namespace cubesim;

namespace {
Time simulate(const Registry& reg, const std::string& algo, int n, std::int64_t M, const Machine& m) {
  RunPoint rp;
  rp.setup.machine = m;
  rp.setup.topology = Topology::hypercube(n);
  rp.setup.params.M = M;
  rp.setup.params.B = m.packet_elements;
  const RunOutcome o = run_point(rp, *reg.find(algo), true);
  EXPECT_TRUE(o.error.empty() && o.verified) << algo << " " << o.error << o.verify_message;
  return o.stats.time;
}

Machine ipsc_nx() {  // the preset's communication numbers
  Machine m;
  m.tau = Time::ps(1'500'000'000);
  m.t_c = Time::ps(4'000'000);
  m.packet_elements = 256;
  return m;
}
}  // namespace

// TR-530 §4.1.6: "routing according to a Hamiltonian path yields a lower complexity than the SBT
// routing if M/B_m > (N-3)/(n-2)". Simulated (iPSC NX, one-port, M a whole number K of packets),
// the path wins exactly when K + N - 2 < nK, i.e. K > (N-2)/(n-1): the paper's condition is
// sufficient (it implies this one, since (N-3)/(n-2) >= (N-2)/(n-1)) but not tight.
TEST(Reproduction, Tr530GrayCodePathBeatsSbtAboveTheCrossover) {
  const Registry reg = make_registry();
  const Machine m = ipsc_nx();
  for (int n = 3; n <= 7; ++n) {
    const std::int64_t N = std::int64_t{1} << n;
    for (std::int64_t K = 1; K <= 2 * N / (n - 1) + 2; ++K) {
      const Time gc = simulate(reg, "broadcast.gc", n, K * 256, m);
      const Time sbt = simulate(reg, "broadcast.sbt", n, K * 256, m);
      SCOPED_TRACE("n=" + std::to_string(n) + " K=" + std::to_string(K));
      if (K * (n - 1) > N - 2) {
        EXPECT_LT(gc, sbt);
      } else if (K * (n - 1) == N - 2) {
        EXPECT_EQ(gc, sbt);
      } else {
        EXPECT_GT(gc, sbt);
      }
      // The paper's (sufficient) condition.
      if (K * (n - 2) > N - 3) {
        EXPECT_LT(gc, sbt);
      }
    }
  }
}

TEST(Reproduction, Tr530CrossoverConfigsAtN4) {
  // configs/tr530/s4.1.6-{gc,sbt}.json: n = 4, K = 1..16; GC wins from K = 5 (4.67), not 7 (6.5).
  const Registry reg = make_registry();
  const Machine m = ipsc_nx();
  EXPECT_GT(simulate(reg, "broadcast.gc", 4, 4 * 256, m), simulate(reg, "broadcast.sbt", 4, 4 * 256, m));
  EXPECT_LT(simulate(reg, "broadcast.gc", 4, 5 * 256, m), simulate(reg, "broadcast.sbt", 4, 5 * 256, m));
}

// TR-530 Fig. 3: SBT and nESBT broadcast of 60 KB in 1 KB packets on the one-port iPSC, n = 1..7,
// and the speed-up, against the paper's dashed line "speed-up = log N". configs/tr530/fig3-*.json
// run the same points; configs/tr530/fig3.csv holds the curve for plotting and must match.
TEST(Reproduction, Tr530Fig3NesbtSpeedUpOverSbtGrowsTowardsLogN) {
  const Registry reg = make_registry();
  const Machine m = ipsc_nx();
  const std::int64_t M = 15360, P = 60;  // 60 packets of 256 elements
  std::string csv = "n,nodes,sbt_s,nesbt_s,speedup,log2_N\n";
  double previous = 0;
  for (int n = 1; n <= 7; ++n) {
    const Time sbt = simulate(reg, "broadcast.sbt", n, M, m);
    const Time nesbt = simulate(reg, "broadcast.nesbt", n, M, m);
    const double speedup = static_cast<double>(sbt.count()) / static_cast<double>(nesbt.count());
    SCOPED_TRACE("n=" + std::to_string(n));
    // The shape: growing with n, below log N = n, and n P / (P + n) once the trees are disjoint
    // from the source's half (n >= 2; on a 1-cube both are the same single path).
    EXPECT_GT(speedup, previous);
    if (n == 1)
      EXPECT_DOUBLE_EQ(speedup, 1.0);
    else {
      EXPECT_LT(speedup, n);
      EXPECT_NEAR(speedup, static_cast<double>(n * P) / static_cast<double>(P + n), 1e-12);
    }
    previous = speedup;
    char line[160];
    std::snprintf(line, sizeof line, "%d,%d,%.9f,%.9f,%.6f,%d\n", n, 1 << n, sbt.seconds(), nesbt.seconds(), speedup,
                  n);
    csv += line;
  }
  std::ifstream f("configs/tr530/fig3.csv");
  std::stringstream have;
  have << f.rdbuf();
  if (std::getenv("CUBESIM_UPDATE_FIG3") != nullptr)
    std::ofstream("configs/tr530/fig3.csv") << csv;
  else
    EXPECT_EQ(have.str(), csv) << "regenerate with CUBESIM_UPDATE_FIG3=1 ./build/cubesim_tests --gtest_filter='*Fig3*'";
}

// TR-530 §5.1, Fig. 10: the hybrid of k SBT steps and 2^(n-k) - 1 GCEA steps on a 5-cube of the
// iPSC, for the all-to-all broadcast of P = Q = R = 32 (blocks of PQ/N = 32 elements), B_m = 1 KB.
// "The optimum buffer sizes required for the 4- and the 5-cubes exceed the 1k bytes internal
// packet size of the iPSC, so the total time decreases only up to the 3-dimensional cube", and
// "the algorithm with k = n is the same as that of k = n - 1". In the model the communication
// time falls strictly up to k = 3 (buffer 2^3 32 = 256 elements = B_m) and stays level at k = 4
// and 5 (the paper measures them higher, from overheads outside the communication model).
// configs/tr530/fig10-hybrid.json sweeps k.
TEST(Reproduction, Tr530Fig10HybridTimeFallsUntilTheBufferExceedsThePacket) {
  const Registry reg = make_registry();
  const Machine m = ipsc_nx();
  std::vector<Time> t;
  for (int k = 0; k <= 5; ++k) {
    RunPoint rp;
    rp.setup.machine = m;
    rp.setup.topology = Topology::hypercube(5);
    rp.setup.params.M = 32;
    rp.setup.params.B = 256;
    rp.setup.params.k = k;
    const RunOutcome o = run_point(rp, *reg.find("allgather.hybrid"), true);
    ASSERT_TRUE(o.error.empty() && o.verified);
    EXPECT_EQ(o.stats.time, o.prediction.time);
    EXPECT_EQ(*o.prediction.b_opt, 32.0 * (1 << k)) << "temporary storage and optimum buffer 2^k PQ/N";
    // Measured: the largest message sent is the super-block, 2^k PQ/N (k = n runs as k = n - 1).
    EXPECT_EQ(o.stats.largest_message, 32 << std::min(k, 4)) << "k=" << k;
    t.push_back(o.stats.time);
  }
  for (int k = 1; k <= 3; ++k) EXPECT_LT(t[k], t[k - 1]) << "k=" << k;
  EXPECT_EQ(t[4], t[3]);
  EXPECT_EQ(t[5], t[4]) << "k = n is the same as k = n - 1";
}
