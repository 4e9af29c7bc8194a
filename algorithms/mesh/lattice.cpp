#include "algorithms/mesh/lattice.hpp"

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
    embed_ = t.kind() == Topology::Kind::torus ? Embed::torus : Embed::mesh;
    dims_ = t.dim();
    ext_ = t.shape();
  }
}

std::array<std::int64_t, 3> Lattice::coords(NodeId x) const {
  if (embed_ != Embed::cube) return topo_->coords(x);
  std::array<std::int64_t, 3> c{0, 0, 0};
  for (std::size_t a = 0; a < static_cast<std::size_t>(dims_); ++a)
    c[a] = gray::decode((x >> shift_[a]) & (ext_[a] - 1));
  return c;
}

NodeId Lattice::node(const std::array<std::int64_t, 3>& c) const {
  if (embed_ != Embed::cube) return topo_->node_at(c);
  NodeId x = 0;
  for (std::size_t a = 0; a < static_cast<std::size_t>(dims_); ++a) x |= gray::encode(c[a]) << shift_[a];
  return x;
}

std::int64_t Lattice::fold(int a, std::int64_t q) const {
  const std::int64_t L = extent(a);
  if (embed_ != Embed::mesh) return q;
  return q < (L + 1) / 2 ? 2 * q : 2 * (L - 1 - q) + 1;
}

std::int64_t Lattice::unfold(int a, std::int64_t c) const {
  if (embed_ != Embed::mesh) return c;
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
  const std::int64_t c0 = fold(a, ((q % L) + L) % L), c1 = fold(a, (((q + 1) % L) + L) % L);
  return static_cast<int>(c0 > c1 ? c0 - c1 : c1 - c0);
}

int Lattice::ring_hops(int a) const {
  const std::int64_t L = extent(a);
  return L == 1 ? 0 : (embed_ == Embed::mesh && L >= 3 ? 2 : 1);
}

std::vector<std::int64_t> grid_extents(const Topology& t, const Params& p, int dims) {
  if (t.kind() != Topology::Kind::hypercube) {
    std::vector<std::int64_t> e;
    for (int a = 0; a < t.dim(); ++a) e.push_back(t.shape()[static_cast<std::size_t>(a)]);
    return e;
  }
  if (!p.grid.empty()) return p.grid;
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
  } else if (!s.params.grid.empty() && s.params.grid != extents) {
    return SetupError{"/params/grid", "grid " + list(s.params.grid) + " differs from the " + t.describe() +
                                          "'s shape " + list(extents) + " (leave it out on a mesh or torus)"};
  }
  if (want_dims != 0 && static_cast<int>(extents.size()) != want_dims)
    return SetupError{t.kind() == Topology::Kind::hypercube ? "/params/grid" : "/topology/shape",
                      "this algorithm runs on a " + std::to_string(want_dims) + "-D grid, not " + list(extents)};
  if (uses_axis && (s.params.axis < 0 || s.params.axis >= static_cast<std::int64_t>(extents.size())))
    return SetupError{"/params/axis", "axis " + std::to_string(s.params.axis) + " is not an axis of the grid " + list(extents)};
  return std::nullopt;
}

RowTerms route_terms(std::int64_t M, std::int64_t B, std::int64_t h) {
  if (h <= 0) return {};
  const std::int64_t k = std::max<std::int64_t>(ceil_div(M, B), 1), b1 = std::min(M, B);
  return {k + h - 1, M + (h - 1) * b1, h};
}

}  // namespace cubesim::mesh
