#include "sim/topology.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace cubesim {

namespace {
/// Depth of heap position c (the root 0 at depth 0).
int heap_depth(std::int64_t c) { return std::bit_width(static_cast<std::uint64_t>(c) + 1) - 1; }
/// True when heap position a is an ancestor of (or equal to) b.
bool heap_ancestor(std::int64_t a, std::int64_t b) {
  const int up = heap_depth(b) - heap_depth(a);
  if (up < 0) return false;
  for (int i = 0; i < up; ++i) b = (b - 1) / 2;
  return a == b;
}
}  // namespace

Topology Topology::hypercube(int dim) {
  if (dim < 0 || dim > kMaxCubeDim)
    throw std::invalid_argument("hypercube dimension " + std::to_string(dim) + " is outside 0.." +
                                std::to_string(kMaxCubeDim));
  Topology t;
  t.kind_ = Kind::hypercube;
  t.dim_ = dim;
  t.size_ = NodeId{1} << dim;
  t.ports_ = dim;
  return t;
}

Topology Topology::mesh(const std::vector<std::int64_t>& shape, bool wrap) {
  return lines(wrap ? Kind::torus : Kind::mesh, shape);
}

Topology Topology::lines(Kind kind, const std::vector<std::int64_t>& shape) {
  if (kind == Kind::hypercube) throw std::invalid_argument("a hypercube has a dimension, not a shape");
  if (shape.empty() || shape.size() > 3)
    throw std::invalid_argument("a mesh or torus has 1 to 3 extents, not " + std::to_string(shape.size()));
  Topology t;
  t.kind_ = kind;
  t.dim_ = static_cast<int>(shape.size());
  NodeId n = 1;
  std::int64_t ports = 0;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] < 1)
      throw std::invalid_argument("extent " + std::to_string(k) + " is " + std::to_string(shape[k]) +
                                  ", must be at least 1");
    if (shape[k] > kMaxNodes || n * shape[k] > kMaxNodes)
      throw std::invalid_argument("mesh has more than " + std::to_string(kMaxNodes) + " nodes");
    t.shape_[k] = shape[k];
    t.stride_[k] = n;
    t.base_[k] = static_cast<int>(ports);
    n *= shape[k];
    ports += kind == Kind::mesh_of_cliques ? shape[k] - 1 : kind == Kind::mesh_of_trees ? 3 : 2;
  }
  if (ports > kMaxPortLinks / n)
    throw std::invalid_argument("a mesh of cliques of " + std::to_string(n) + " nodes and " + std::to_string(ports) +
                                " ports a node has more than " + std::to_string(kMaxPortLinks) + " links");
  t.size_ = n;
  t.ports_ = static_cast<int>(ports);
  return t;
}

std::string Topology::kind_name() const {
  switch (kind_) {
    case Kind::hypercube:
      return "hypercube";
    case Kind::mesh:
      return "mesh";
    case Kind::torus:
      return "torus";
    case Kind::mesh_of_trees:
      return "mesh_of_trees";
    case Kind::mesh_of_cliques:
      return "mesh_of_cliques";
  }
  return "?";
}

std::string Topology::describe() const {
  std::string s = kind_name();
  if (kind_ == Kind::hypercube) {
    s += " n=" + std::to_string(dim_);
  } else {
    s += " ";
    for (int k = 0; k < dim_; ++k) s += (k ? "x" : "") + std::to_string(shape_[k]);
  }
  return s + " (" + std::to_string(size_) + " nodes)";
}

std::array<std::int64_t, 3> Topology::coords(NodeId node) const {
  std::array<std::int64_t, 3> c{0, 0, 0};
  for (int k = 0; k < dim_ && kind_ != Kind::hypercube; ++k) c[k] = coord(node, k);
  return c;
}

NodeId Topology::node_at(const std::array<std::int64_t, 3>& c) const {
  NodeId n = 0;
  for (int k = 0; k < dim_; ++k) n += c[k] * stride_[k];
  return n;
}

int Topology::clique_axis(int port) const {
  int k = dim_ - 1;
  while (k > 0 && port < base_[k]) --k;
  return k;
}

NodeId Topology::grid_neighbor(NodeId node, int port) const {
  if (node < 0 || node >= size_ || port < 0 || port >= ports_) return -1;
  switch (kind_) {
    case Kind::hypercube:
      return node ^ (NodeId{1} << port);
    case Kind::mesh_of_trees: {
      const int k = port / 3, r = port % 3;
      const std::int64_t e = shape_[k], c = coord(node, k);
      const std::int64_t nc = r == 0 ? (c > 0 ? (c - 1) / 2 : -1) : 2 * c + r;
      return nc >= 0 && nc < e ? node + (nc - c) * stride_[k] : -1;
    }
    case Kind::mesh_of_cliques: {
      const int k = clique_axis(port);
      const std::int64_t e = shape_[k], c = coord(node, k), o = port - base_[k] + 1;
      return node + ((c + o) % e - c) * stride_[k];
    }
    case Kind::mesh:
    case Kind::torus:
      break;
  }
  int k = port / 2;
  bool plus = (port & 1) != 0;
  std::int64_t e = shape_[k];
  std::int64_t c = coord(node, k);
  if (kind_ == Kind::mesh || e <= 2) {
    // A torus of extent 2 has one link between its two nodes, not two: treat it as a mesh.
    if (plus) return c + 1 < e ? node + stride_[k] : -1;
    return c > 0 ? node - stride_[k] : -1;
  }
  std::int64_t nc = plus ? (c + 1) % e : (c + e - 1) % e;
  return node + (nc - c) * stride_[k];
}

int Topology::reverse_port(NodeId node, int port) const {
  switch (kind_) {
    case Kind::hypercube:
      return port;
    case Kind::mesh:
    case Kind::torus:
      return port ^ 1;
    case Kind::mesh_of_trees: {
      const int k = port / 3;
      if (port % 3 != 0) return 3 * k;                   // to a child: it hears on its parent port
      return 3 * k + (coord(node, k) % 2 == 1 ? 1 : 2);  // to the parent: odd c is its left child
    }
    case Kind::mesh_of_cliques: {
      const int k = clique_axis(port);
      const std::int64_t e = shape_[k], o = port - base_[k] + 1;
      return base_[k] + static_cast<int>(e - o) - 1;
    }
  }
  return -1;
}

int Topology::grid_port_to(NodeId node, NodeId other) const {
  if (node < 0 || node >= size_ || other < 0 || other >= size_ || node == other) return -1;
  if (kind_ == Kind::mesh_of_trees || kind_ == Kind::mesh_of_cliques) {
    int axis = -1;
    for (int k = 0; k < dim_; ++k)
      if (coord(node, k) != coord(other, k)) {
        if (axis >= 0) return -1;  // differs on two axes
        axis = k;
      }
    const std::int64_t e = shape_[axis], a = coord(node, axis), b = coord(other, axis);
    if (kind_ == Kind::mesh_of_cliques) return base_[axis] + static_cast<int>((b - a + e) % e) - 1;
    if (a > 0 && b == (a - 1) / 2) return 3 * axis;
    if (b == 2 * a + 1 || b == 2 * a + 2) return 3 * axis + static_cast<int>(b - 2 * a);
    return -1;
  }
  for (int p = 0; p < num_ports(); ++p)
    if (neighbor(node, p) == other) return p;
  return -1;
}

int Topology::grid_next_hop(NodeId cur, NodeId dst) const {
  for (int k = 0; k < dim_; ++k) {
    std::int64_t e = shape_[k];
    std::int64_t a = coord(cur, k), b = coord(dst, k);
    if (a == b) continue;
    if (kind_ == Kind::mesh_of_cliques) return base_[k] + static_cast<int>((b - a + e) % e) - 1;
    if (kind_ == Kind::mesh_of_trees) {
      if (!heap_ancestor(a, b)) return 3 * k;    // up towards the common ancestor
      while ((b - 1) / 2 != a) b = (b - 1) / 2;  // the child of a on the way down to b
      return 3 * k + static_cast<int>(b - 2 * a);
    }
    if (kind_ == Kind::mesh || e <= 2) return 2 * k + (b > a ? 1 : 0);
    std::int64_t fwd = (b - a + e) % e;  // hops going plus
    return 2 * k + (fwd <= e - fwd ? 1 : 0);
  }
  return -1;
}

int Topology::distance(NodeId a, NodeId b) const {
  if (kind_ == Kind::hypercube) return std::popcount(static_cast<std::uint64_t>(a ^ b));
  int d = 0;
  for (int k = 0; k < dim_; ++k) {
    std::int64_t e = shape_[k];
    std::int64_t x = coord(a, k), y = coord(b, k);
    if (x == y) continue;
    if (kind_ == Kind::mesh_of_cliques) {
      ++d;
      continue;
    }
    if (kind_ == Kind::mesh_of_trees) {
      std::int64_t u = x, v = y;  // climb the deeper one until they meet
      while (u != v) {
        if (heap_depth(u) >= heap_depth(v))
          u = (u - 1) / 2;
        else
          v = (v - 1) / 2;
        ++d;
      }
      continue;
    }
    std::int64_t diff = x > y ? x - y : y - x;
    if (kind_ == Kind::torus && e > 2) diff = std::min(diff, e - diff);
    d += static_cast<int>(diff);
  }
  return d;
}

std::vector<NodeId> Topology::route(NodeId src, NodeId dst) const {
  std::vector<NodeId> r{src};
  NodeId cur = src;
  while (cur != dst) {
    cur = neighbor(cur, next_hop(cur, dst));
    r.push_back(cur);
  }
  return r;
}

}  // namespace cubesim
