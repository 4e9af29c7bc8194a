#include "algorithms/mesh/lattice.hpp"

#include <algorithm>
#include <cmath>

namespace cubesim::mesh {

Lattice::Lattice(const Topology& t, const std::vector<std::int64_t>& extents) : topo_(&t) {
  if (t.kind() == Topology::Kind::hypercube) {
    embed_ = Embed::cube;
    dims_ = static_cast<int>(extents.size());
    int bit = 0;
    for (int a = 0; a < dims_; ++a) {
      ext_[static_cast<std::size_t>(a)] = extents[static_cast<std::size_t>(a)];
      shift_[static_cast<std::size_t>(a)] = bit;
      bit += log2_exact(extents[static_cast<std::size_t>(a)]);
    }
  } else {
    embed_ = t.kind() == Topology::Kind::torus             ? Embed::torus
             : t.kind() == Topology::Kind::mesh_of_trees   ? Embed::tree
             : t.kind() == Topology::Kind::mesh_of_cliques ? Embed::clique
                                                           : Embed::mesh;
    dims_ = t.dim();
    ext_ = t.shape();
    std::vector<std::int64_t> shape(t.shape().begin(), t.shape().begin() + t.dim());
    if (!extents.empty() && extents != shape) {
      emulated_ = true;
      dims_ = static_cast<int>(extents.size());
      ext_ = {1, 1, 1};
      for (std::size_t a = 0; a < extents.size(); ++a) ext_[a] = extents[a];
      construction_b_ = t.dim() == 2 && dims_ == 3;
    }
  }
}

std::array<std::int64_t, 3> Lattice::coords(NodeId x) const {
  if (emulated_) {
    if (construction_b_) {  // (a, b) = (x || z_low, y || z_high)
      const auto t = topo_->coords(x);
      const std::int64_t zl = topo_->shape()[0] / ext_[0], zh = topo_->shape()[1] / ext_[1];
      return {t[0] / zl, t[1] / zh, (t[1] % zh) * zl + t[0] % zl};
    }
    return {x % ext_[0], (x / ext_[0]) % ext_[1], x / (ext_[0] * ext_[1])};  // the identity map
  }
  if (embed_ != Embed::cube) return topo_->coords(x);
  std::array<std::int64_t, 3> c{0, 0, 0};
  for (std::size_t a = 0; a < static_cast<std::size_t>(dims_); ++a)
    c[a] = gray::decode((x >> shift_[a]) & (ext_[a] - 1));
  return c;
}

NodeId Lattice::node(const std::array<std::int64_t, 3>& c) const {
  if (emulated_) {
    if (construction_b_) {
      const std::int64_t zl = topo_->shape()[0] / ext_[0], zh = topo_->shape()[1] / ext_[1];
      return topo_->node_at({c[0] * zl + c[2] % zl, c[1] * zh + c[2] / zl, 0});
    }
    return c[0] + ext_[0] * (c[1] + ext_[1] * c[2]);
  }
  if (embed_ != Embed::cube) return topo_->node_at(c);
  NodeId x = 0;
  for (std::size_t a = 0; a < static_cast<std::size_t>(dims_); ++a) x |= gray::encode(c[a]) << shift_[a];
  return x;
}

std::int64_t Lattice::fold(int a, std::int64_t q) const {
  const std::int64_t L = extent(a);
  if (wraps()) return q;
  return q < (L + 1) / 2 ? 2 * q : 2 * (L - 1 - q) + 1;
}

std::int64_t Lattice::unfold(int a, std::int64_t c) const {
  if (wraps()) return c;
  return c % 2 == 0 ? c / 2 : extent(a) - 1 - (c - 1) / 2;
}

std::int64_t Lattice::ring_pos(NodeId x, int a) const { return unfold(a, coord(x, a)); }

NodeId Lattice::ring_node(NodeId x, int a, std::int64_t q) const {
  const std::int64_t L = extent(a);
  auto c = coords(x);
  c[static_cast<std::size_t>(a)] = fold(a, ((q % L) + L) % L);
  return node(c);
}

int Lattice::edge_hops(int a, std::int64_t q) const {
  const std::int64_t L = extent(a);
  if (L == 1) return 0;
  if (emulated_) return topo_->distance(ring_node(0, a, q), ring_node(0, a, q + 1));
  if (wraps()) return 1;  // a ring of single links (the cube's Gray code, a torus)
  const std::int64_t c0 = fold(a, ((q % L) + L) % L), c1 = fold(a, (((q + 1) % L) + L) % L);
  return static_cast<int>(c0 > c1 ? c0 - c1 : c1 - c0);
}

int Lattice::ring_hops(int a) const {
  const std::int64_t L = extent(a);
  if (L == 1) return 0;
  if (emulated_) {
    int h = 0;
    for (std::int64_t q = 0; q < L; ++q) h = std::max(h, edge_hops(a, q));
    return h;
  }
  return embed_ == Embed::mesh && L >= 3 ? 2 : 1;
}

std::vector<std::int64_t> grid_extents(const Topology& t, const Params& p, int dims) {
  if (!p.grid.empty()) return p.grid;
  if (t.kind() != Topology::Kind::hypercube) {
    std::vector<std::int64_t> e;
    for (int a = 0; a < t.dim(); ++a) e.push_back(t.shape()[static_cast<std::size_t>(a)]);
    if (t.dim() < dims) {  // emulate a grid of q^dims nodes where N is a dims-th power
      const auto q = static_cast<std::int64_t>(std::llround(std::pow(static_cast<double>(t.size()), 1.0 / dims)));
      std::int64_t qd = 1;
      for (int a = 0; a < dims; ++a) qd *= q;
      if (qd == t.size()) return std::vector<std::int64_t>(static_cast<std::size_t>(dims), q);
    }
    return e;
  }
  const int n = t.dim();
  std::vector<std::int64_t> e;
  for (int a = 0; a < dims; ++a) {
    const int bits = n / dims + (a >= dims - n % dims ? 1 : 0);  // the higher axes take the extra bits
    e.push_back(std::int64_t{1} << bits);
  }
  return e;
}

std::optional<SetupError> lattice_error(const Setup& s, const std::vector<std::int64_t>& extents, int want_dims,
                                        bool uses_axis) {
  const Topology& t = s.topology;
  const auto list = [](const std::vector<std::int64_t>& v) {
    std::string r = "[";
    for (std::size_t i = 0; i < v.size(); ++i) r += (i ? ", " : "") + std::to_string(v[i]);
    return r + "]";
  };
  if (t.kind() == Topology::Kind::mesh_of_trees || t.kind() == Topology::Kind::mesh_of_cliques)
    return SetupError{"/topology/kind", "this algorithm runs on a hypercube, a mesh or a torus, not a " +
                                            t.kind_name() +
                                            " (Gao §4's meshes of trees and of cliques run matmul.gao3d)"};
  if (t.kind() == Topology::Kind::hypercube) {
    if (extents.empty() || extents.size() > 3)
      return SetupError{"/params/grid", "grid " + list(extents) + " must have 1 to 3 extents"};
    std::int64_t product = 1;
    for (std::size_t a = 0; a < extents.size(); ++a) {
      if (log2_exact(extents[a]) < 0)
        return SetupError{"/params/grid/" + std::to_string(a),
                          "grid extent " + std::to_string(extents[a]) + " must be a power of two on a hypercube"};
      product *= extents[a];
      if (product > t.size()) break;
    }
    if (product != t.size())
      return SetupError{"/params/grid", "grid " + list(extents) + " must multiply to the " + t.describe() + "'s " +
                                            std::to_string(t.size()) + " nodes"};
  } else {
    const std::vector<std::int64_t> shape(t.shape().begin(), t.shape().begin() + t.dim());
    if (extents != shape) {  // an emulated grid (Gao Lemma 4)
      const std::string what = "grid " + list(extents) + " on the " + t.describe();
      std::int64_t product = 1;
      for (std::int64_t e : extents) product = e < 1 || product > t.size() ? -1 : product * e;
      if (extents.empty() || extents.size() > 3 || product != t.size())
        return SetupError{"/params/grid",
                          what + ": a grid has 1 to 3 extents multiplying to the nodes, " + std::to_string(t.size())};
      if (static_cast<int>(extents.size()) <= t.dim())
        return SetupError{"/params/grid", what + ": a virtual grid needs more axes than the " +
                                              std::to_string(t.dim()) +
                                              "-D target (or leave it out: the topology's shape)"};
      if (t.dim() == 2 && (t.shape()[0] % extents[0] != 0 || t.shape()[1] % extents[1] != 0 ||
                           (t.shape()[0] / extents[0]) * (t.shape()[1] / extents[1]) != extents[2]))
        return SetupError{"/params/grid", what + ": Gao's Construction B needs x | a, y | b and (a/x)(b/y) = z"};
    }
  }
  if (want_dims != 0 && static_cast<int>(extents.size()) != want_dims)
    return SetupError{t.kind() == Topology::Kind::hypercube ? "/params/grid" : "/topology/shape",
                      "this algorithm runs on a " + std::to_string(want_dims) + "-D grid, not " + list(extents)};
  if (uses_axis && (s.params.axis < 0 || s.params.axis >= static_cast<std::int64_t>(extents.size())))
    return SetupError{"/params/axis",
                      "axis " + std::to_string(s.params.axis) + " is not an axis of the grid " + list(extents)};
  return std::nullopt;
}

RowTerms route_terms(std::int64_t M, std::int64_t B, std::int64_t h) {
  if (h <= 0) return {};
  const std::int64_t k = std::max<std::int64_t>(ceil_div(M, B), 1), b1 = std::min(M, B);
  return {k + h - 1, M + (h - 1) * b1, h};
}

}  // namespace cubesim::mesh
