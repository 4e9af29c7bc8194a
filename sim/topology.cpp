#include "sim/topology.hpp"

#include <bit>
#include <stdexcept>

namespace cubesim {

Topology Topology::hypercube(int dim) {
  if (dim < 0 || dim > kMaxCubeDim)
    throw std::invalid_argument("hypercube dimension " + std::to_string(dim) + " is outside 0.." +
                                std::to_string(kMaxCubeDim));
  Topology t;
  t.kind_ = Kind::hypercube;
  t.dim_ = dim;
  t.size_ = NodeId{1} << dim;
  return t;
}

Topology Topology::mesh(const std::vector<std::int64_t>& shape, bool wrap) {
  if (shape.empty() || shape.size() > 3)
    throw std::invalid_argument("a mesh or torus has 1 to 3 extents, not " + std::to_string(shape.size()));
  Topology t;
  t.kind_ = wrap ? Kind::torus : Kind::mesh;
  t.dim_ = static_cast<int>(shape.size());
  NodeId n = 1;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] < 1)
      throw std::invalid_argument("extent " + std::to_string(k) + " is " + std::to_string(shape[k]) +
                                  ", must be at least 1");
    if (shape[k] > kMaxNodes || n * shape[k] > kMaxNodes)
      throw std::invalid_argument("mesh has more than " + std::to_string(kMaxNodes) + " nodes");
    t.shape_[k] = shape[k];
    t.stride_[k] = n;
    n *= shape[k];
  }
  t.size_ = n;
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
  for (int k = 0; k < dim_ && kind_ != Kind::hypercube; ++k) c[k] = (node / stride_[k]) % shape_[k];
  return c;
}

NodeId Topology::node_at(const std::array<std::int64_t, 3>& c) const {
  NodeId n = 0;
  for (int k = 0; k < dim_; ++k) n += c[k] * stride_[k];
  return n;
}

NodeId Topology::neighbor(NodeId node, int port) const {
  if (node < 0 || node >= size_ || port < 0 || port >= num_ports()) return -1;
  if (kind_ == Kind::hypercube) return node ^ (NodeId{1} << port);
  int k = port / 2;
  bool plus = (port & 1) != 0;
  std::int64_t e = shape_[k];
  std::int64_t c = (node / stride_[k]) % e;
  if (kind_ == Kind::mesh || e <= 2) {
    // A torus of extent 2 has one link between its two nodes, not two: treat it as a mesh.
    if (plus) return c + 1 < e ? node + stride_[k] : -1;
    return c > 0 ? node - stride_[k] : -1;
  }
  std::int64_t nc = plus ? (c + 1) % e : (c + e - 1) % e;
  return node + (nc - c) * stride_[k];
}

int Topology::port_to(NodeId node, NodeId other) const {
  if (node < 0 || node >= size_ || other < 0 || other >= size_ || node == other) return -1;
  if (kind_ == Kind::hypercube) {
    NodeId x = node ^ other;
    if (std::popcount(static_cast<std::uint64_t>(x)) != 1) return -1;
    return std::countr_zero(static_cast<std::uint64_t>(x));
  }
  for (int p = 0; p < num_ports(); ++p)
    if (neighbor(node, p) == other) return p;
  return -1;
}

int Topology::next_hop(NodeId cur, NodeId dst) const {
  if (cur == dst) return -1;
  if (kind_ == Kind::hypercube) return std::countr_zero(static_cast<std::uint64_t>(cur ^ dst));
  for (int k = 0; k < dim_; ++k) {
    std::int64_t e = shape_[k];
    std::int64_t a = (cur / stride_[k]) % e, b = (dst / stride_[k]) % e;
    if (a == b) continue;
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
    std::int64_t x = (a / stride_[k]) % e, y = (b / stride_[k]) % e;
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
