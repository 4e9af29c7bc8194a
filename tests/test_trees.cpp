// The spanning trees of TR-530 §4.1.2-4.1.5 (algorithms/embedding/trees.hpp) and the schedules
// built on them (algorithms/collectives/tree_routing): shapes, the paper's children function, the
// SBnT's balance, and the one-port property of the cyclic schedules; then every registered
// algorithm verifying its data on a 10-cube.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <set>
#include <tuple>

#include "algorithms/collectives/tree_routing.hpp"
#include "algorithms/embedding/tcbt.hpp"
#include "algorithms/embedding/trees.hpp"
#include "app/runner.hpp"
#include "helpers.hpp"

using namespace cubesim;
using trees::Address;

namespace {

/// Follows parent dimensions from q to the root; returns the number of hops, or -1 on a loop or
/// an edge that does not clear a 1-bit.
template <class ParentDim>
int hops_to_root(Address q, int n, ParentDim parent_dim) {
  int hops = 0;
  while (q != 0) {
    const int k = parent_dim(q);
    if (k < 0 || k >= n || ((q >> k) & 1) == 0 || hops > n) return -1;
    q ^= Address{1} << k;
    ++hops;
  }
  return hops;
}

TEST(Trees, BaseIsTheLeastRightRotationGivingTheSmallestValue) {
  EXPECT_EQ(trees::rotate_right(0b011, 3), 0b101u);  // R(a2 a1 a0) = (a0 a2 a1)
  EXPECT_EQ(trees::sbnt_base(0, 5), -1);
  EXPECT_EQ(trees::sbnt_base(0b00100, 5), 2);
  EXPECT_EQ(trees::sbnt_base(0b01010, 5), 1);  // R^1 = 00101 = 5 is the least rotation
  EXPECT_EQ(trees::sbnt_base(0b0101, 4), 0);   // J = {0, 2}: base is j_0 = 0
  for (int n = 1; n <= 10; ++n)
    for (Address i = 1; i < (Address{1} << n); ++i) {
      const int j = trees::sbnt_base(i, n);
      ASSERT_EQ(trees::rotate_right(i, n, j) & 1, 1u) << "the least rotation is odd";
      ASSERT_EQ((i >> j) & 1, 1u);
    }
}

TEST(Trees, SbntIsAShortestPathSpanningTreeWhoseChildrenAreThePapersFunction) {
  for (int n = 1; n <= 10; ++n) {
    const Address N = Address{1} << n;
    for (Address i = 0; i < N; ++i) {
      ASSERT_EQ(hops_to_root(i, n, [&](Address q) { return trees::sbnt_parent_dim(q, n); }), std::popcount(i))
          << "n=" << n << " i=" << i;
      // children_SBnT(i, 0) of §4.1.5 are exactly the nodes whose parent is i.
      std::vector<int> want;
      for (int m = 0; m < n; ++m) {
        const Address c = i ^ (Address{1} << m);
        if (c != 0 && trees::sbnt_parent_dim(c, n) == m) want.push_back(m);
      }
      ASSERT_EQ(trees::sbnt_children_dims(i, n), want) << "n=" << n << " i=" << i;
      if (i != 0) {  // every node lies in the subtree of the root's child across base(i)
        Address a = i;
        while (std::popcount(a) > 1) a ^= Address{1} << trees::sbnt_parent_dim(a, n);
        ASSERT_EQ(a, Address{1} << trees::sbnt_base(i, n));
      }
    }
  }
}

TEST(Trees, SbntSplitsTheNodesIntoNearlyEqualSubtrees) {
  for (int n = 2; n <= 12; ++n) {
    std::vector<std::int64_t> size(static_cast<std::size_t>(n));
    for (Address i = 1; i < (Address{1} << n); ++i) ++size[static_cast<std::size_t>(trees::sbnt_base(i, n))];
    const auto [lo, hi] = std::minmax_element(size.begin(), size.end());
    const double even = static_cast<double>((std::int64_t{1} << n) - 1) / n;  // (N-1)/n
    EXPECT_LE(static_cast<double>(*hi), even * (1 + 2.0 / n)) << "n=" << n;
    EXPECT_GE(static_cast<double>(*lo), even * (1 - 2.0 / n)) << "n=" << n;
    const bool prime = n == 2 || n == 3 || n == 5 || n == 7 || n == 11;
    if (prime) {
      EXPECT_LE(*hi - *lo, 1) << "n=" << n << ": every necklace but 1..1 has n rotations";
    }
  }
}

/// The blocks the busiest port carries in each step of the all-port SBnT all-to-all (depth
/// schedule): for every tree edge of that step and dimension, the subtree below it.
std::vector<std::int64_t> sbnt_alltoall_step_loads(int n) {
  const auto plan = routing::plan(routing::Family::sbnt, routing::Schedule::depth, n, true);
  std::vector<std::int64_t> busiest(static_cast<std::size_t>(plan->steps), 0);
  for (int s = 0; s < plan->steps; ++s)
    for (int d = 0; d < n; ++d) {
      std::int64_t blocks = 0;
      for (const routing::Entry& e : plan->at(s, d))
        blocks += static_cast<std::int64_t>(plan->below(static_cast<int>(e.tree), e.q).size());
      busiest[static_cast<std::size_t>(s)] = std::max(busiest[static_cast<std::size_t>(s)], blocks);
    }
  return busiest;
}

TEST(Trees, SbntAllToAllPortsCarryAtMostFiveThirdsOfTableFourRow) {
  // Table 4's SBnT-p(n,N) row gives every port sum_{j>=i} C(n,j) M/n elements in step i; the
  // SBnT's busiest port carries V_i M. The simulated/predicted ratio is at most the larger of
  // sum V_i / (N/2) (element transfers) and sum ceil(V_i M/B) / sum ceil(A_i M/B) (start-ups):
  // the tolerance alltoall.sbnt promises (2/3) rests on this being <= 5/3.
  EXPECT_EQ(sbnt_alltoall_step_loads(2), (std::vector<std::int64_t>{2, 1}));     // for 1.5, 0.5
  EXPECT_EQ(sbnt_alltoall_step_loads(3), (std::vector<std::int64_t>{3, 2, 1}));  // for 7/3, 4/3, 1/3
  for (int n = 2; n <= 11; ++n) {
    const std::vector<std::int64_t> V = sbnt_alltoall_step_loads(n);
    ASSERT_EQ(static_cast<int>(V.size()), n);
    std::vector<std::int64_t> C(static_cast<std::size_t>(n));  // n * A_i = sum_{j>=i} C(n,j)
    for (int i = 1; i <= n; ++i)
      for (int j = i; j <= n; ++j) C[static_cast<std::size_t>(i - 1)] += binomial(n, j);
    std::int64_t elements = 0;
    for (std::int64_t v : V) elements += v;
    EXPECT_LE(2.0 * static_cast<double>(elements) / static_cast<double>(std::int64_t{1} << n), 1.5) << "n=" << n;
    double worst = 0;
    for (std::int64_t B : {1, 7, 256})
      for (std::int64_t M = 1; M <= 3 * B + 600; ++M) {
        std::int64_t sim = 0, row = 0;
        for (int i = 0; i < n; ++i) {
          sim += ceil_div(V[static_cast<std::size_t>(i)] * M, B);
          row += ceil_div(C[static_cast<std::size_t>(i)] * M, n * B);
        }
        worst = std::max(worst, static_cast<double>(sim) / static_cast<double>(row));
      }
    EXPECT_LE(worst, 5.0 / 3.0 + 1e-12) << "n=" << n;
    if (n == 2 || n == 3) {
      EXPECT_DOUBLE_EQ(worst, 5.0 / 3.0) << "n=" << n << ": the bound is reached";
    }
  }
}

/// alltoall.sbnt all-port on an n-cube with the given costs (picoseconds): simulated / predicted.
RunOutcome sbnt_alltoall(int n, std::int64_t M, std::int64_t B, std::int64_t tau, std::int64_t t_c) {
  const Registry reg = make_registry();
  RunPoint rp;
  rp.setup.machine.tau = Time::ps(tau);
  rp.setup.machine.t_c = Time::ps(t_c);
  rp.setup.machine.packet_elements = 256;
  rp.setup.machine.ports = test::kAll;
  rp.setup.topology = Topology::hypercube(n);
  rp.setup.params.M = M;
  rp.setup.params.B = B;
  return run_point(rp, *reg.find("alltoall.sbnt"), true);
}

TEST(Trees, SbntAllToAllHoldsItsToleranceOnTheIpscAtTheWorstPoints) {
  // The point the claims config found (issue 32): iPSC NX costs (tau = 1.5 ms, t_c = 4 us), n = 2,
  // M = 300, B = 256: 900 t_c + 5 tau simulated against 600 t_c + 3 tau, 1.609 (and 1.614 at
  // M = 257), beyond the 60 % promised before; within the bound 5/3.
  for (std::int64_t M : {300, 257}) {
    const RunOutcome o = sbnt_alltoall(2, M, 256, 1'500'000'000, 4'000'000);
    ASSERT_TRUE(o.error.empty()) << o.error;
    EXPECT_TRUE(o.verified);
    EXPECT_EQ(o.stats.critical_path.startups, 5);
    EXPECT_EQ(o.stats.critical_path.element_transfers, 3 * M);
    EXPECT_GT(o.ratio, 1.6);
    EXPECT_TRUE(o.relation_holds) << "sim/pred " << o.ratio << ", tolerance " << o.prediction.tolerance;
  }
  // Where the start-ups dominate, the ratio approaches the bound: 5 start-ups for 3 (n = 2, M/B
  // just above 1; n = 3: 15 for 9 at M = 15, B = 7); where the elements do, 3/2.
  for (const auto& [n, M, B] : {std::tuple{2, 257, 256}, std::tuple{3, 15, 7}}) {
    const RunOutcome o = sbnt_alltoall(n, M, B, 1'000'000'000'000, 1);
    EXPECT_GT(o.ratio, 1.666) << "n=" << n;
    EXPECT_TRUE(o.relation_holds) << "n=" << n << ": sim/pred " << o.ratio;
  }
  const RunOutcome e = sbnt_alltoall(3, 4096, 1 << 20, 1, 1'000'000);
  EXPECT_NEAR(e.ratio, 1.5, 1e-6);
  EXPECT_TRUE(e.relation_holds);
}

TEST(Trees, RotatedSbtIsTheSbtWithDimensionsTurned) {
  for (int n = 1; n <= 8; ++n)
    for (int rho = 0; rho < n; ++rho)
      for (Address i = 1; i < (Address{1} << n); ++i) {
        if (rho == 0) {
          ASSERT_EQ(trees::rsbt_parent_dim(i, n, 0), std::countr_zero(i));
        }
        // Tree rho maps tree 0 by rotating addresses left by rho.
        const Address back = trees::rotate_right(i, n, rho);
        ASSERT_EQ(trees::rsbt_parent_dim(i, n, rho), (trees::rsbt_parent_dim(back, n, 0) + rho) % n);
      }
}

TEST(Trees, CyclicSchedulesUseOneDimensionPerStepIn2nMinus1Steps) {
  using routing::Family;
  using routing::Schedule;
  for (Family f : {Family::sbt, Family::nrsbt, Family::sbnt}) {
    for (int n = 1; n <= 9; ++n) {
      const auto plan = routing::plan(f, Schedule::cyclic, n);
      EXPECT_LE(plan->steps, 2 * n - 1);
      for (int s = 0; s < plan->steps; ++s) {
        std::set<int> dims;
        for (int d = 0; d < n; ++d)
          if (!plan->at(s, d).empty()) dims.insert(d);
        EXPECT_LE(dims.size(), 1u) << "one-port: step " << s;
      }
      for (int j = 0; j < plan->trees; ++j)  // an edge comes after the edge into its tail
        for (std::int64_t q = 1; q < plan->N; ++q) {
          const std::int64_t par = q ^ (std::int64_t{1} << plan->parent_dim(j, q));
          if (par != 0) {
            ASSERT_GT(plan->step_of(j, q), plan->step_of(j, par));
          }
        }
      const auto depth = routing::plan(f, Schedule::depth, n);
      EXPECT_EQ(depth->steps, n);
    }
  }
  // nRSBT on one port: the step volumes of TR-530 Table 1 nRSBT-b(1,1), 1, 2, ..., n, ..., 2, 1
  // parts leaving the root.
  const int n = 5;
  const auto plan = routing::plan(Family::nrsbt, Schedule::cyclic, n);
  ASSERT_EQ(plan->steps, 2 * n - 1);
  for (int s = 0; s < plan->steps; ++s) {
    int from_root = 0;
    for (int d = 0; d < n; ++d)
      for (const routing::Entry& e : plan->at(s, d))
        if (std::popcount(e.q) == 1) ++from_root;
    EXPECT_EQ(from_root, std::min(s + 1, 2 * n - 1 - s)) << "step " << s;
  }
}

// Every edge's subtree size is counted, not listed (routing::plan_sizes, the all-to-alls' timing
// mode, keeps no lists): the counts are the lengths of the full plan's subtree lists, for every
// family and schedule, and both plans send the same step messages.
TEST(Trees, ThePlanOfSizesAloneCountsWhatTheSubtreeListsHold) {
  using routing::Family;
  using routing::Schedule;
  for (Family f : {Family::sbt, Family::nrsbt, Family::sbnt})
    for (Schedule sch : {Schedule::cyclic, Schedule::depth, Schedule::phased})
      for (int n = 1; n <= 8; ++n) {
        if (sch == Schedule::phased && f != Family::nrsbt) continue;
        const auto full = routing::plan(f, sch, n, true);
        const auto sizes = routing::plan_sizes(f, sch, n);
        std::vector<std::int64_t> listed(full->edge_count.size(), 0);
        for (int s = 0; s < full->steps; ++s)
          for (int d = 0; d < n; ++d)
            for (const routing::Entry& e : full->at(s, d))
              listed[static_cast<std::size_t>((s * n + d) * full->trees) + e.tree] +=
                  static_cast<std::int64_t>(full->below(static_cast<int>(e.tree), e.q).size());
        EXPECT_EQ(full->edge_below, listed) << routing::family_name(f) << " n=" << n;
        EXPECT_EQ(sizes->edge_below, listed) << routing::family_name(f) << " n=" << n;
        EXPECT_EQ(sizes->edge_count, full->edge_count);
        EXPECT_EQ(sizes->steps, full->steps);
        EXPECT_TRUE(sizes->subtree.empty() && sizes->level_count.empty());
        for (const std::int64_t M : {1, 7, 64})
          EXPECT_EQ(sizes->step_sends(M, true).sends, full->step_sends(M, true).sends) << "M=" << M;
      }
}

/// Every algorithm moves and verifies real data on a 10-cube, one-port and all-port.
/// The ten-cube setup of the test below: M = 20 (two elements a part for the n-part algorithms),
/// B = 16, root 777, k = 4 (allgather.hybrid: SBT steps; some-to-all: splitting steps).
Setup ten_cube(const PortModel& ports) {
  Setup s;
  s.machine = test::simple_machine(ports, 64);
  s.topology = Topology::hypercube(10);
  s.params.M = 20;
  s.params.B = 16;
  s.params.root = 777;
  s.params.k = 4;
  return s;
}

// TR-530 §4.1.6: the two-rooted complete binary tree spans the cube with cube edges only, and is
// the complete binary tree of 2^n - 1 nodes with one edge subdivided by the extra node: every
// internal node has two children but one (the second root), which has one; contracting it leaves
// every leaf at depth n - 1.
TEST(Trees, TwoRootedCompleteBinaryTreeSpansTheCubeWithOneEdgeSubdivided) {
  for (int n = 0; n <= 16; ++n) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const trees::TwoRootedTree t = trees::two_rooted_tree(n);
    const std::int64_t N = std::int64_t{1} << n;
    ASSERT_EQ(static_cast<std::int64_t>(t.parent.size()), N);
    EXPECT_EQ(t.parent[0], -1);
    std::vector<int> kids(static_cast<std::size_t>(N), 0);
    for (std::int64_t x = 1; x < N; ++x) {
      const std::int64_t p = t.parent[static_cast<std::size_t>(x)];
      ASSERT_GE(p, 0);
      ASSERT_EQ(std::popcount(static_cast<std::uint64_t>(p ^ x)), 1) << "not a cube edge at " << x;
      ++kids[static_cast<std::size_t>(p)];
    }
    std::int64_t one = 0, two = 0, subdivided = -1;
    for (std::int64_t x = 0; x < N; ++x) {
      EXPECT_LE(kids[static_cast<std::size_t>(x)], 2);
      if (kids[static_cast<std::size_t>(x)] == 1) ++one, subdivided = x;
      if (kids[static_cast<std::size_t>(x)] == 2) ++two;
    }
    if (n < 2) continue;  // n = 1: the single edge a - b
    EXPECT_EQ(one, 1);
    EXPECT_EQ(two, N / 2 - 1);
    EXPECT_EQ(t.parent[static_cast<std::size_t>(subdivided)], 0) << "the extra node is the source's child";
    EXPECT_EQ(t.height[0], n);
    // Depths with the extra node contracted: every leaf at n - 1, every node reached (a tree).
    for (std::int64_t x = 0; x < N; ++x) {
      if (kids[static_cast<std::size_t>(x)] != 0 || x == subdivided) continue;
      int depth = 0;
      for (std::int64_t y = x; y != 0; y = t.parent[static_cast<std::size_t>(y)]) {
        if (y != subdivided) ++depth;
        ASSERT_LE(depth, n) << "a loop through " << x;
      }
      EXPECT_EQ(depth, n - 1) << "leaf " << x;
    }
    // One-port order: the source sends to the extra node's side (the deeper subtree) first.
    const std::vector<int> first = t.children_dims(0);
    ASSERT_FALSE(first.empty());
    EXPECT_EQ(std::int64_t{1} << first[0], subdivided);
  }
}

/// Every registered algorithm that runs with these parameters (not the matrix and mesh ones,
/// which their own files verify on ten-cubes), by name.
std::vector<std::string> algorithm_names() {
  const Registry reg = make_registry();
  std::vector<std::string> names;
  for (const AlgorithmInfo* info : reg.all())
    if (!info->check(ten_cube(test::kOne)).has_value() || !info->check(ten_cube(test::kAll)).has_value())
      names.push_back(info->name);
  return names;
}

/// Each on a ten-cube, one-port and all-port, moving real data: one test an algorithm.
class TenCube : public ::testing::TestWithParam<std::string> {};

TEST_P(TenCube, VerifiesItsData) {
  const Registry reg = make_registry();
  const AlgorithmInfo* info = reg.find(GetParam());
  ASSERT_NE(info, nullptr);
  for (const PortModel& ports : {test::kOne, test::kAll}) {
    RunPoint rp;
    rp.setup = ten_cube(ports);
    if (info->check(rp.setup).has_value()) continue;
    const RunOutcome o = run_point(rp, *info, true);
    EXPECT_TRUE(o.error.empty()) << info->name << ": " << o.error;
    EXPECT_TRUE(o.verified) << info->name << " " << ports.name() << ": " << o.verify_message;
    EXPECT_TRUE(o.relation_holds) << info->name << " " << ports.name();
  }
}

TEST(Trees, ThirtyOrMoreAlgorithmsRunOnTheTenCube) { EXPECT_GE(algorithm_names().size(), 30U); }

INSTANTIATE_TEST_SUITE_P(Trees, TenCube, ::testing::ValuesIn(algorithm_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param;
                           for (char& c : n)
                             if (c == '.' || c == '-') c = '_';
                           return n;
                         });

}  // namespace
