#pragma once
/// Topologies: the Boolean n-cube, 1-3 dimensional meshes and tori, and Gao's (UBC TR 89-27 §4)
/// meshes of trees and of cliques. Pure functions of the node address, unit-tested with sweeps and
/// invalid inputs (STYLE.md habit 7).
///
/// Ports: on a hypercube port d connects node x to x XOR 2^d (d = 0..n-1). On a mesh or torus of
/// extents (e_0, e_1, e_2), port 2k goes to coordinate k minus one and port 2k+1 to coordinate k
/// plus one; a port that leaves a mesh, or that a torus of extent <= 2 would duplicate, has no
/// neighbour (-1). Node addresses on meshes are row-major with coordinate 0 varying fastest.
///
/// Gao §4: "the 3-D mesh of cliques ... is obtained by replacing every 1-D ring in each of the three
/// dimensions of the 3-D mesh with a clique. Similarly, the 3-D mesh of trees is obtained by
/// replacing every ring in each of the three dimensions with a balanced binary tree" (his variant,
/// not Ullman's: the line's own processors are the tree's nodes, no extra switch nodes). Both keep
/// the mesh's nodes and row-major addresses (1 to 3 extents):
///  - mesh_of_trees: the line of extent e along axis k is a balanced binary tree in heap order
///    (coordinate 0 the root, c's children 2c+1 and 2c+2, its parent (c-1)/2); ports 3k (parent),
///    3k+1 (left child), 3k+2 (right child), -1 where absent;
///  - mesh_of_cliques: the line is a complete graph; port base_k + o - 1 (o = 1..e-1) goes to
///    coordinate (c + o) mod e, base_k = the sum of (e_j - 1) over the axes j < k.
/// On these two the port at the far end of a link depends on the node (reverse_port(node, port)).
///
/// Routing (routed sends, DESIGN.md cost model): dimension order, lowest dimension first. On a
/// hypercube that is the e-cube route (correct the lowest differing bit first); on a torus each
/// dimension goes the shorter way round, the plus direction on a tie; in a tree up to the lowest
/// common ancestor and down; in a clique directly.
#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

namespace cubesim {

using NodeId = std::int64_t;

class Topology {
 public:
  enum class Kind { hypercube, mesh, torus, mesh_of_trees, mesh_of_cliques };

  /// Throws std::invalid_argument on a dimension outside 0..kMaxCubeDim.
  static Topology hypercube(int dim);
  /// Throws std::invalid_argument on 0 or more than 3 extents, an extent < 1, or too many nodes.
  static Topology mesh(const std::vector<std::int64_t>& shape, bool wrap);
  /// A mesh of trees or of cliques (Gao §4) of that shape; the same refusals as mesh(), and a mesh
  /// of cliques of more than kMaxPortLinks ports times nodes.
  static Topology lines(Kind kind, const std::vector<std::int64_t>& shape);

  static constexpr int kMaxCubeDim = 24;
  static constexpr std::int64_t kMaxNodes = std::int64_t{1} << 24;
  static constexpr std::int64_t kMaxPortLinks = std::int64_t{1} << 26;  ///< nodes x ports (engine tables)

  [[nodiscard]] Kind kind() const { return kind_; }
  [[nodiscard]] std::string kind_name() const;
  [[nodiscard]] std::string describe() const;  ///< "hypercube n=5 (32 nodes)"
  [[nodiscard]] NodeId size() const { return size_; }
  [[nodiscard]] int dim() const { return dim_; }  ///< cube dimension, or number of mesh dims
  [[nodiscard]] const std::array<std::int64_t, 3>& shape() const { return shape_; }
  [[nodiscard]] int num_ports() const { return ports_; }
  /// True on the grids of lines (mesh, torus, mesh of trees, mesh of cliques): shape() applies.
  [[nodiscard]] bool has_shape() const { return kind_ != Kind::hypercube; }

  /// The neighbour through `port`, or -1 when that port has no link. (The hypercube's here, inline:
  /// a send, a receive and the network ask for it in every message.)
  [[nodiscard]] NodeId neighbor(NodeId node, int port) const {
    if (kind_ != Kind::hypercube) return grid_neighbor(node, port);
    return node >= 0 && node < size_ && port >= 0 && port < ports_ ? node ^ (NodeId{1} << port) : -1;
  }
  /// The port of `node` that reaches the adjacent node `other`, or -1 when not adjacent.
  [[nodiscard]] int port_to(NodeId node, NodeId other) const {
    if (kind_ != Kind::hypercube) return grid_port_to(node, other);
    if (node < 0 || node >= size_ || other < 0 || other >= size_) return -1;
    const auto x = static_cast<std::uint64_t>(node ^ other);
    // One bit set (not std::popcount, a library call without -mpopcnt: 1 % of a per-packet run).
    return x != 0 && (x & (x - 1)) == 0 ? std::countr_zero(x) : -1;
  }
  /// The port of neighbor(node, port) through which the link from `node` arrives.
  [[nodiscard]] int reverse_port(NodeId node, int port) const;
  /// Next port of the dimension-order route from `cur` to `dst` (cur != dst); -1 when they are
  /// the same node. (The hypercube's e-cube hop inline: the network asks for it in every message.)
  [[nodiscard]] int next_hop(NodeId cur, NodeId dst) const {
    if (cur == dst) return -1;
    if (kind_ != Kind::hypercube) return grid_next_hop(cur, dst);
    return std::countr_zero(static_cast<std::uint64_t>(cur ^ dst));
  }
  /// Number of hops of the dimension-order route.
  [[nodiscard]] int distance(NodeId a, NodeId b) const;
  /// The nodes of the dimension-order route, both ends included.
  [[nodiscard]] std::vector<NodeId> route(NodeId src, NodeId dst) const;

  [[nodiscard]] std::array<std::int64_t, 3> coords(NodeId node) const;
  [[nodiscard]] NodeId node_at(const std::array<std::int64_t, 3>& c) const;

 private:
  Kind kind_ = Kind::hypercube;
  int dim_ = 0;
  std::array<std::int64_t, 3> shape_{1, 1, 1};
  std::array<std::int64_t, 3> stride_{1, 1, 1};
  NodeId size_ = 1;
  int ports_ = 0;
  std::array<int, 3> base_{0, 0, 0};  // mesh of cliques: first port of each axis
  [[nodiscard]] std::int64_t coord(NodeId node, int k) const { return (node / stride_[k]) % shape_[k]; }
  [[nodiscard]] int clique_axis(int port) const;
  [[nodiscard]] NodeId grid_neighbor(NodeId node, int port) const;  ///< neighbor() off the hypercube
  [[nodiscard]] int grid_port_to(NodeId node, NodeId other) const;  ///< port_to() off the hypercube
  [[nodiscard]] int grid_next_hop(NodeId cur, NodeId dst) const;    ///< next_hop() off the hypercube, cur != dst
};

}  // namespace cubesim
