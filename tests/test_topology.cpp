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
      EXPECT_EQ(t.reverse_port(x, d), d);
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
  EXPECT_EQ(t.reverse_port(0, 1), 0);
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

// Gao §4's meshes of trees and of cliques: on every shape, every link is symmetric
// (reverse_port), port_to inverts neighbor, routes follow next_hop to the destination in
// distance() hops, and the degrees are those of the construction.
TEST(Topology, MeshesOfTreesAndCliquesAreConsistentGraphs) {
  for (auto kind : {Topology::Kind::mesh_of_trees, Topology::Kind::mesh_of_cliques})
    for (const std::vector<std::int64_t>& shape :
         std::vector<std::vector<std::int64_t>>{{1}, {2}, {7}, {8}, {3, 5}, {4, 4}, {2, 3, 4}, {4, 4, 4}, {1, 6, 1}}) {
      const Topology t = Topology::lines(kind, shape);
      SCOPED_TRACE(t.describe());
      std::int64_t links = 0;
      for (NodeId x = 0; x < t.size(); ++x) {
        for (int p = 0; p < t.num_ports(); ++p) {
          const NodeId y = t.neighbor(x, p);
          if (y < 0) continue;
          ++links;
          ASSERT_NE(y, x);
          EXPECT_EQ(t.port_to(x, y), p);
          EXPECT_EQ(t.neighbor(y, t.reverse_port(x, p)), x);
          EXPECT_EQ(t.distance(x, y), 1);
        }
        for (NodeId y = 0; y < t.size(); ++y) {
          const auto r = t.route(x, y);
          ASSERT_EQ(static_cast<int>(r.size()) - 1, t.distance(x, y));
          EXPECT_EQ(r.back(), y);
          if (t.port_to(x, y) >= 0) {
            EXPECT_EQ(r.size(), 2U);
          }
        }
      }
      // A tree of e nodes has e - 1 edges, a clique e (e - 1) / 2; each counted from both ends.
      std::int64_t want = 0;
      for (std::size_t k = 0; k < shape.size(); ++k) {
        const std::int64_t e = shape[k], lines = t.size() / e;
        want += lines * (kind == Topology::Kind::mesh_of_trees ? 2 * (e - 1) : e * (e - 1));
      }
      EXPECT_EQ(links, want);
    }
}

TEST(Topology, MeshOfTreesIsAHeapOrderedTreeOnEachLine) {
  const Topology t = Topology::lines(Topology::Kind::mesh_of_trees, {7, 2});
  EXPECT_EQ(t.num_ports(), 6);
  EXPECT_EQ(t.neighbor(0, 0), -1);  // the root has no parent
  EXPECT_EQ(t.neighbor(0, 1), 1);
  EXPECT_EQ(t.neighbor(0, 2), 2);
  EXPECT_EQ(t.neighbor(2, 1), 5);
  EXPECT_EQ(t.neighbor(5, 0), 2);
  EXPECT_EQ(t.reverse_port(5, 0), 1);  // 5 = 2 * 2 + 1: its parent hears it on its left port
  EXPECT_EQ(t.reverse_port(6, 0), 2);
  EXPECT_EQ(t.neighbor(3, 1), -1);  // 7 is past the line
  EXPECT_EQ(t.neighbor(0, 4), 7);   // axis 1: nodes 0 and 7 form a tree of two
  // 3 -> 6: up to 1, up to 0, down to 2, down to 6 (the lowest common ancestor is the root).
  EXPECT_EQ(t.route(3, 6), (std::vector<NodeId>{3, 1, 0, 2, 6}));
  EXPECT_EQ(t.route(3, 13), (std::vector<NodeId>{3, 1, 0, 2, 6, 13}));
  EXPECT_EQ(t.describe(), "mesh_of_trees 7x2 (14 nodes)");
}

TEST(Topology, MeshOfCliquesReachesEveryNodeOfALineInOneHop) {
  const Topology t = Topology::lines(Topology::Kind::mesh_of_cliques, {4, 3});
  EXPECT_EQ(t.num_ports(), 3 + 2);
  for (int o = 1; o < 4; ++o) EXPECT_EQ(t.neighbor(1, o - 1), (1 + o) % 4);
  EXPECT_EQ(t.neighbor(1, 3), 5);
  EXPECT_EQ(t.neighbor(1, 4), 9);
  EXPECT_EQ(t.route(0, 11), (std::vector<NodeId>{0, 3, 11}));
  EXPECT_THROW(Topology::lines(Topology::Kind::mesh_of_cliques, {4096, 4096}), std::invalid_argument);
  EXPECT_THROW(Topology::lines(Topology::Kind::hypercube, {4}), std::invalid_argument);
}
