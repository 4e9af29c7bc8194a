// TR-572 §7: dimension permutations. Lemma 15's count (floor or ceiling of log2 n), Fig. 8's
// eight dimensions in three parallel swappings, the two-involution decomposition, and both
// algorithms moving real data on cubes up to n = 10. The exact grid of every algorithm
// (tests/test_algorithms_exact.cpp) holds their step formulas to the picosecond.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <numeric>

#include "algorithms/transpose/matrix.hpp"
#include "app/runner.hpp"
#include "helpers.hpp"
#include "machines/machine_loader.hpp"

using namespace cubesim;

namespace {

/// Applies the swappings to the positions: where the content of each bit position ends.
std::vector<int> realized(const std::vector<tr572::Swapping>& phases, int n) {
  std::vector<int> content(static_cast<std::size_t>(n));  // content[q]: the original position now at q
  std::iota(content.begin(), content.end(), 0);
  for (const auto& sw : phases) {
    std::vector<bool> used(static_cast<std::size_t>(n));
    for (auto [a, b] : sw) {
      EXPECT_FALSE(used[static_cast<std::size_t>(a)] || used[static_cast<std::size_t>(b)]) << "pairs must be disjoint";
      used[static_cast<std::size_t>(a)] = used[static_cast<std::size_t>(b)] = true;
      std::swap(content[static_cast<std::size_t>(a)], content[static_cast<std::size_t>(b)]);
    }
  }
  std::vector<int> where(static_cast<std::size_t>(n));
  for (int q = 0; q < n; ++q) where[static_cast<std::size_t>(content[static_cast<std::size_t>(q)])] = q;
  return where;
}

int floor_log2(int n) { return std::bit_width(static_cast<unsigned>(n)) - 1; }
int ceil_log2(int n) { return n <= 1 ? 0 : std::bit_width(static_cast<unsigned>(n - 1)); }

}  // namespace

TEST(Permute, Lemma15HoldsWithTheCeilingNotTheFloor) {
  // Every permutation of n = 1..8 dimensions (46,233 of them): Lemma 15's construction realizes
  // it, in at most ⌈log2 n⌉ parallel swappings; for n = 3, 5, 6, 7 some need more than the
  // printed ⌊log2 n⌋. Two involutions always realize it in at most 2.
  for (int n = 1; n <= 8; ++n) {
    std::vector<int> perm(static_cast<std::size_t>(n));
    std::iota(perm.begin(), perm.end(), 0);
    std::size_t most = 0, most_two = 0;
    do {
      const auto l15 = tr572::dimension_swappings(perm, 0), two = tr572::dimension_swappings(perm, 1);
      ASSERT_EQ(realized(l15, n), perm);
      ASSERT_EQ(realized(two, n), perm);
      most = std::max(most, l15.size());
      most_two = std::max(most_two, two.size());
    } while (std::next_permutation(perm.begin(), perm.end()));
    SCOPED_TRACE("n = " + std::to_string(n));
    EXPECT_EQ(static_cast<int>(most), ceil_log2(n));
    EXPECT_LE(most_two, 2U);
    if (n >= 3) {
      EXPECT_EQ(most_two, 2U);
    }
    if (std::has_single_bit(static_cast<unsigned>(n))) {
      EXPECT_EQ(static_cast<int>(most), floor_log2(n));
    } else if (n > 2) {
      EXPECT_GT(static_cast<int>(most), floor_log2(n)) << "the printed floor would be enough";
    }
  }
  // The smallest counterexample to the floor: a 3-cycle is no parallel swapping (Def. 18: an
  // involution), so it takes two, and ⌊log2 3⌋ = 1.
  EXPECT_EQ(tr572::dimension_swappings(std::vector<int>{1, 2, 0}, 0).size(), 2U);
}

TEST(Permute, Figure8EightDimensionsInThreeParallelSwappings) {
  // Fig. 8: 8 dimensions permuted in 3 steps; the reversal (an involution) in one.
  EXPECT_EQ(tr572::dimension_swappings(std::vector<int>{7, 6, 5, 4, 3, 2, 1, 0}, 1).size(), 1U);
  EXPECT_EQ(tr572::dimension_swappings(std::vector<int>{1, 2, 3, 4, 5, 6, 7, 0}, 0).size(), 3U);
  // A k-shuffle (rotation) is a dimension permutation (§7).
  EXPECT_EQ(realized(tr572::dimension_swappings(std::vector<int>{3, 4, 5, 6, 7, 0, 1, 2}, 0), 8),
            (std::vector<int>{3, 4, 5, 6, 7, 0, 1, 2}));
}

namespace {
RunOutcome run_permutation(const std::string& algorithm, const cubesim::Setup& s) {
  static const Registry reg = make_registry();
  const AlgorithmInfo* info = reg.find(algorithm);
  EXPECT_NE(info, nullptr);
  EXPECT_FALSE(info->check(s).has_value()) << info->check(s)->message;
  RunPoint rp;
  rp.setup = s;
  return run_point(rp, *info, true);
}
cubesim::Setup setup(int n, std::int64_t M) {
  cubesim::Setup s;
  s.machine = machine_from_json(*preset_json("ipsc-nx"), "ipsc-nx", "", true);
  s.topology = Topology::hypercube(n);
  s.params.M = M;
  s.params.B = s.machine.packet_elements;
  return s;
}
}  // namespace

TEST(Permute, BothAlgorithmsMoveRealDataOnATenCubeExactly) {
  for (const PortModel& ports : {test::kOne, test::kAll}) {
    cubesim::Setup s = setup(10, 300);
    s.machine.ports = ports;
    const RunOutcome br = run_permutation("permute.bitreverse", s);
    EXPECT_TRUE(br.verified) << br.verify_message;
    EXPECT_TRUE(br.relation_holds && br.terms_match);
    for (int variant : {0, 1}) {
      test::fill_grid_params(s.params, 10, 7 + variant);
      s.params.variant = variant;
      const RunOutcome o = run_permutation("permute.dimensions", s);
      EXPECT_TRUE(o.verified) << o.verify_message;
      EXPECT_TRUE(o.relation_holds && o.terms_match) << "variant " << variant;
    }
    // The bit reversal as a dimension permutation: one involution, the same steps and time.
    for (int i = 0; i < 10; ++i) s.params.perm[static_cast<std::size_t>(i)] = 9 - i;
    s.params.variant = 1;
    const RunOutcome as_perm = run_permutation("permute.dimensions", s);
    EXPECT_EQ(as_perm.stats.time, br.stats.time);
  }
}

TEST(Permute, EveryPermutationOfAFourCubeVerifies) {
  cubesim::Setup s = setup(4, 5);
  std::vector<std::int64_t> perm = {0, 1, 2, 3};
  int runs = 0;
  do {
    for (int variant : {0, 1}) {
      s.params.perm = perm;
      s.params.variant = variant;
      const RunOutcome o = run_permutation("permute.dimensions", s);
      ASSERT_TRUE(o.verified) << o.verify_message;
      ASSERT_TRUE(o.relation_holds);
      ++runs;
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
  EXPECT_EQ(runs, 48);
}
