#pragma once
/// A processor grid of 1-3 dimensions, the ground the mesh algorithms stand on (FOH's torus, Gao's
/// 1-, 2- and 3-D meshes), on any topology:
///  - torus: the topology's own shape; a line along an axis is a ring of physical links;
///  - hypercube: a torus of extents 2^d_a embedded by the binary-reflected Gray code (FOH §2 "the
///    usual binary Grey code scheme"; Gao §6, Prop. 4: the address cut into segments, each
///    Gray-coded, so that a line is a subcube and a ring of cube edges). Axis 0 holds the lowest
///    address bits. The extents are the `grid` param, else the algorithm's default;
///  - mesh: the topology's shape, and each line is made a ring by folding it (ring position q at
///    coordinate 2q for the first half, 2(L-1-q)+1 for the second): every ring edge is a route of
///    at most two hops, and no directed link carries two ring edges of one direction
///    (docs/meshes.md). Gao's "1-D mesh" is a ring, so a mesh machine runs the ring algorithms on
///    the folded ring, paying the second hop where it must.
///  - emulated (Gao Lemma 4): a mesh or torus with a `grid` of more axes than it has, a virtual
///    grid embedded by the identity map: node ids read as the grid's row-major address (Gao's
///    Construction A, "z || y || x" in binary, on a 1-D target), or on a 2-D target with a 3-D grid
///    Gao's Construction B (a = x || z_low, b = y || z_high). Ring edges are routed sends along
///    the target's dimension-order routes; lines are rings in coordinate order.
///
/// A collective on a line runs on every line of its axis at once: a row, a column, an axis of a
/// 3-D grid. Coordinates: axis 0 varies fastest (DESIGN.md's mesh addresses; on the cube, TR-530
/// §5.2's column index on the low bits).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/embedding/gray.hpp"
#include "algorithms/rows.hpp"

namespace cubesim::mesh {

/// tree / clique: Gao's mesh of trees / of cliques, whose lines are no rings (algorithms/mesh/lines.hpp).
enum class Embed { cube, torus, mesh, tree, clique };

class Lattice {
 public:
  /// The grid of topology `t` (a mesh's or torus's shape), or on a hypercube `extents` (powers of
  /// two whose product is N; checked by lattice_error first).
  Lattice(const Topology& t, const std::vector<std::int64_t>& extents);

  [[nodiscard]] Embed embed() const { return embed_; }
  [[nodiscard]] const Topology& topology() const { return *topo_; }
  /// True for a virtual grid on a mesh or torus of fewer axes (Gao Lemma 4).
  [[nodiscard]] bool emulated() const { return emulated_; }
  [[nodiscard]] int dims() const { return dims_; }
  [[nodiscard]] std::int64_t extent(int a) const { return ext_[static_cast<std::size_t>(a)]; }
  [[nodiscard]] std::int64_t size() const { return ext_[0] * ext_[1] * ext_[2]; }

  [[nodiscard]] std::array<std::int64_t, 3> coords(NodeId x) const;
  [[nodiscard]] NodeId node(const std::array<std::int64_t, 3>& c) const;
  [[nodiscard]] std::int64_t coord(NodeId x, int a) const { return coords(x)[static_cast<std::size_t>(a)]; }

  /// The node of x's line along axis a at coordinate c (no wrap, no folding).
  [[nodiscard]] NodeId line_node(NodeId x, int a, std::int64_t c) const {
    auto cs = coords(x);
    cs[static_cast<std::size_t>(a)] = c;
    return node(cs);
  }
  /// True when a line is a ring (torus, cube, an emulated grid); false on a mesh's own lines.
  [[nodiscard]] bool wraps() const { return embed_ != Embed::mesh || emulated_; }

  /// Position of x on the ring of its line along axis a (its coordinate, unfolded on a mesh).
  [[nodiscard]] std::int64_t ring_pos(NodeId x, int a) const;
  /// The node of x's line along axis a at ring position q (taken mod the extent).
  [[nodiscard]] NodeId ring_node(NodeId x, int a, std::int64_t q) const;
  /// The largest number of hops of a ring edge along axis a: 2 on a folded mesh line of 3 or
  /// more nodes, the longest route on an emulated grid, else 1 (0 on a line of one node).
  [[nodiscard]] int ring_hops(int a) const;
  /// The hops of the ring edge from ring position q to q + 1 along axis a (on the line through
  /// node 0; every line has the same, by translation).
  [[nodiscard]] int edge_hops(int a, std::int64_t q) const;

 private:
  [[nodiscard]] std::int64_t fold(int a, std::int64_t q) const;    // ring position -> coordinate
  [[nodiscard]] std::int64_t unfold(int a, std::int64_t c) const;  // coordinate -> ring position
  const Topology* topo_;
  Embed embed_ = Embed::cube;
  bool emulated_ = false;
  bool construction_b_ = false;  // a 3-D grid on a 2-D target: Gao's Construction B
  int dims_ = 1;
  std::array<std::int64_t, 3> ext_{1, 1, 1};
  std::array<int, 3> shift_{0, 0, 0};  // cube: the lowest address bit of each axis
};

/// The problem with a grid for an algorithm: extents that do not multiply to N, or more than 3; on
/// a cube extents that are not powers of two; on a mesh or torus a virtual grid that does not embed
/// (fewer axes than the target, or a 3-D grid whose x and y extents do not divide a 2-D target's);
/// a grid of the wrong number of dimensions (`want_dims` 0: any). `axis` checked when `uses_axis`.
std::optional<SetupError> lattice_error(const Setup& s, const std::vector<std::int64_t>& extents, int want_dims,
                                        bool uses_axis);

/// The extents an algorithm runs on: the `grid` param; else on a cube `dims` axes splitting the n
/// address bits as evenly as possible, the higher axes taking the extra bits (dims 2: TR-530
/// §5.2's N1 = 2^⌈n/2⌉ rows on the high bits); else the topology's shape, or where it has fewer
/// than `dims` axes and N is a `dims`-th power q^dims, the emulated grid [q, ..., q].
std::vector<std::int64_t> grid_extents(const Topology& t, const Params& p, int dims);

/// The cost of one message of M elements in packets of B (the first packet the largest) over a
/// route of h store-and-forward hops, its packets pipelined hop to hop: the start-ups, element
/// transfers and message start-ups of DESIGN.md's cost model (flow shop with equal stages:
/// sum of the packets' times plus (h - 1) times the first's).
RowTerms route_terms(std::int64_t M, std::int64_t B, std::int64_t h);

}  // namespace cubesim::mesh
