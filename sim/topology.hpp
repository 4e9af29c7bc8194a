#pragma once
/// Topologies: the Boolean n-cube and 1-3 dimensional meshes and tori. Pure functions of the
/// node address, unit-tested with sweeps and invalid inputs (STYLE.md habit 7).
///
/// Ports: on a hypercube port d connects node x to x XOR 2^d (d = 0..n-1). On a mesh or torus of
/// extents (e_0, e_1, e_2), port 2k goes to coordinate k minus one and port 2k+1 to coordinate k
/// plus one; a port that leaves a mesh, or that a torus of extent <= 2 would duplicate, has no
/// neighbour (-1). Node addresses on meshes are row-major with coordinate 0 varying fastest.
///
/// Routing (routed sends, DESIGN.md cost model): dimension order, lowest dimension first. On a
/// hypercube that is the e-cube route (correct the lowest differing bit first); on a torus each
/// dimension goes the shorter way round, the plus direction on a tie.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace cubesim {

using NodeId = std::int64_t;

class Topology {
 public:
  enum class Kind { hypercube, mesh, torus };

  /// Throws std::invalid_argument on a dimension outside 0..kMaxCubeDim.
  static Topology hypercube(int dim);
  /// Throws std::invalid_argument on 0 or more than 3 extents, an extent < 1, or too many nodes.
  static Topology mesh(const std::vector<std::int64_t>& shape, bool wrap);

  static constexpr int kMaxCubeDim = 24;
  static constexpr std::int64_t kMaxNodes = std::int64_t{1} << 24;

  [[nodiscard]] Kind kind() const { return kind_; }
  [[nodiscard]] std::string kind_name() const;
  [[nodiscard]] std::string describe() const;  ///< "hypercube n=5 (32 nodes)"
  [[nodiscard]] NodeId size() const { return size_; }
  [[nodiscard]] int dim() const { return dim_; }  ///< cube dimension, or number of mesh dims
  [[nodiscard]] const std::array<std::int64_t, 3>& shape() const { return shape_; }
  [[nodiscard]] int num_ports() const { return kind_ == Kind::hypercube ? dim_ : 2 * dim_; }

  /// The neighbour through `port`, or -1 when that port has no link.
  [[nodiscard]] NodeId neighbor(NodeId node, int port) const;
  /// The port of `node` that reaches the adjacent node `other`, or -1 when not adjacent.
  [[nodiscard]] int port_to(NodeId node, NodeId other) const;
  /// The port on the far side of (node, port) through which the link arrives.
  [[nodiscard]] int reverse_port(int port) const { return kind_ == Kind::hypercube ? port : (port ^ 1); }
  /// Next port of the dimension-order route from `cur` to `dst` (cur != dst).
  [[nodiscard]] int next_hop(NodeId cur, NodeId dst) const;
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
};

}  // namespace cubesim
