#include <gtest/gtest.h>

#include <bit>

#include "sim/topology.hpp"

using namespace cubesim;

class CubeTopology : public ::testing::TestWithParam<int> {};

TEST_P(CubeTopology, NeighboursPortsAndEcubeRoutes) {
  const int n = GetParam();
  const Topology t = Topology::hypercube(n);
  EXPECT_EQ(t.size(), NodeId{1} << n);
  EXPECT_EQ(t.num_ports(), n);
  for (NodeId x = 0; x < t.size(); ++x) {
    for (int d = 0; d < n; ++d) {
      const NodeId y = t.neighbor(x, d);
      EXPECT_EQ(y, x ^ (NodeId{1} << d));
      EXPECT_EQ(t.port_to(x, y), d);
      EXPECT_EQ(t.reverse_port(d), d);
    }
    for (NodeId y = 0; y < t.size(); ++y) {
      const auto r = t.route(x, y);
      ASSERT_EQ(static_cast<int>(r.size()) - 1, std::popcount(static_cast<std::uint64_t>(x ^ y)));
      EXPECT_EQ(t.distance(x, y), static_cast<int>(r.size()) - 1);
      // e-cube: the differing bits are corrected from the lowest dimension up.
      int last = -1;
      for (std::size_t k = 1; k < r.size(); ++k) {
        const int d = std::countr_zero(static_cast<std::uint64_t>(r[k - 1] ^ r[k]));
        EXPECT_GT(d, last);
        last = d;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dims, CubeTopology, ::testing::Range(0, 7));

TEST(Topology, HypercubeRejectsBadDimensions) {
  EXPECT_THROW(Topology::hypercube(-1), std::invalid_argument);
  EXPECT_THROW(Topology::hypercube(Topology::kMaxCubeDim + 1), std::invalid_argument);
  const Topology t = Topology::hypercube(3);
  EXPECT_EQ(t.neighbor(0, 3), -1);
  EXPECT_EQ(t.neighbor(8, 0), -1);
  EXPECT_EQ(t.neighbor(-1, 0), -1);
  EXPECT_EQ(t.port_to(0, 3), -1);  // not adjacent
  EXPECT_EQ(t.port_to(0, 0), -1);
}

TEST(Topology, Mesh2dNeighboursAndRoutes) {
  const Topology t = Topology::mesh({4, 3}, false);
  EXPECT_EQ(t.size(), 12);
  EXPECT_EQ(t.num_ports(), 4);
  // node 0 is (0,0): no minus neighbours
  EXPECT_EQ(t.neighbor(0, 0), -1);
  EXPECT_EQ(t.neighbor(0, 1), 1);
  EXPECT_EQ(t.neighbor(0, 2), -1);
  EXPECT_EQ(t.neighbor(0, 3), 4);
  EXPECT_EQ(t.neighbor(3, 1), -1);  // (3,0) has no plus-x neighbour
  EXPECT_EQ(t.reverse_port(1), 0);
  // dimension order: x first, then y
  EXPECT_EQ(t.route(0, 11), (std::vector<NodeId>{0, 1, 2, 3, 7, 11}));
  EXPECT_EQ(t.distance(0, 11), 5);
}

TEST(Topology, TorusGoesTheShortWayRound) {
  const Topology t = Topology::mesh({5}, true);
  EXPECT_EQ(t.neighbor(0, 0), 4);
  EXPECT_EQ(t.neighbor(4, 1), 0);
  EXPECT_EQ(t.route(0, 3), (std::vector<NodeId>{0, 4, 3}));
  EXPECT_EQ(t.distance(0, 3), 2);
  const Topology t3 = Topology::mesh({4, 4, 4}, true);
  EXPECT_EQ(t3.size(), 64);
  EXPECT_EQ(t3.distance(0, 63), 3);
  EXPECT_EQ(t3.route(0, 2).size(), 3u);  // tie on extent 4: plus direction, 2 hops
  EXPECT_EQ(t3.route(0, 2)[1], 1);
}

TEST(Topology, TorusOfExtentTwoHasOneLinkNotTwo) {
  const Topology t = Topology::mesh({2, 3}, true);
  EXPECT_EQ(t.neighbor(0, 1), 1);
  EXPECT_EQ(t.neighbor(0, 0), -1);
}

TEST(Topology, MeshRejectsBadShapes) {
  EXPECT_THROW(Topology::mesh({}, false), std::invalid_argument);
  EXPECT_THROW(Topology::mesh({2, 2, 2, 2}, false), std::invalid_argument);
  EXPECT_THROW(Topology::mesh({4, 0}, false), std::invalid_argument);
  EXPECT_THROW(Topology::mesh({-3}, true), std::invalid_argument);
  EXPECT_THROW(Topology::mesh({1 << 20, 1 << 20}, false), std::invalid_argument);
}
