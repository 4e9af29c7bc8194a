#pragma once
/// The two-rooted complete binary tree (TR-530 §4.1.6): "A complete binary tree cannot be
/// embedded in a Boolean cube of the same size preserving adjacency, but it can be embedded such
/// that only one tree edge is mapped into a path of length two, and the intermediate node is the
/// 'extra' node of the cube." On N = 2^n nodes: two adjacent roots a and b, a with one child
/// alpha and b with one child beta, each the root of a complete binary tree of 2^(n-1) - 1 nodes
/// (the complete binary tree of 2^n - 1 nodes with its root edge to beta subdivided by b).
///
/// Construction (the classic induction of the double-rooted complete binary tree, as in Bhatt and
/// Ipsen's "How to embed trees in hypercubes", 1985; written out here, not copied): given the tree
/// T_n in the n-cube with (a, alpha, b, beta), take a cube automorphism phi with phi(alpha) = a,
/// phi(a) = b, phi(b) = beta (distances 1, 1, 2 are preserved, so phi = a permutation of
/// dimensions sending alpha^a -> a^b -> b^beta, then a translation), and put the copy phi(T_n) in
/// the half of the (n+1)-cube with bit n set. Then the new tree T_{n+1} has
///   roots    A = b and B = phi(a) + 2^n = b + 2^n            (adjacent across dimension n),
///   children P = a of A, with children alpha and a + 2^n = phi(alpha) + 2^n,
///            Q = beta + 2^n = phi(b) + 2^n of B, with children phi(beta) + 2^n and beta,
/// every other edge kept from the two copies. Base n = 2: the path alpha - a - b - beta on 10, 00,
/// 01, 11; n = 1: the single edge a - b.
///
/// The tree is returned rooted at node 0 (the broadcast source, root A, translated there), as a
/// parent function with the subtree heights that order a node's children for one-port sending.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace cubesim::trees {

struct TwoRootedTree {
  int n = 0;
  std::vector<std::int64_t> parent;  ///< node -> its parent node; -1 at the source, node 0
  std::vector<std::int8_t> height;   ///< height of the subtree below each node (0 at a leaf)
  /// The cube dimensions to node x's children, the deeper subtree first (then ascending dimension):
  /// a one-port node sends to them in this order.
  [[nodiscard]] std::vector<int> children_dims(std::int64_t x) const {
    std::vector<int> out;
    for (int d = 0; d < n; ++d) {
      const std::int64_t c = x ^ (std::int64_t{1} << d);
      if (parent[static_cast<std::size_t>(c)] == x) out.push_back(d);
    }
    std::stable_sort(out.begin(), out.end(), [&](int l, int r) {
      return height[static_cast<std::size_t>(x ^ (std::int64_t{1} << l))] >
             height[static_cast<std::size_t>(x ^ (std::int64_t{1} << r))];
    });
    return out;
  }
  /// The dimension across which x's parent lies; -1 at the source.
  [[nodiscard]] int parent_dim(std::int64_t x) const {
    const std::int64_t p = parent[static_cast<std::size_t>(x)];
    return p < 0 ? -1 : std::countr_zero(static_cast<std::uint64_t>(p ^ x));
  }
};

/// The two-rooted complete binary tree spanning the n-cube (0 <= n <= 30), rooted at node 0.
inline TwoRootedTree two_rooted_tree(int n) {
  if (n < 0 || n > 30) throw std::invalid_argument("two_rooted_tree: n out of range");
  TwoRootedTree t;
  t.n = n;
  const std::int64_t N = std::int64_t{1} << n;
  std::vector<std::int64_t> par(static_cast<std::size_t>(N), -1);
  std::int64_t root = 0;
  if (n == 1) {
    par[1] = 0;
  } else if (n >= 2) {
    std::int64_t a = 0b00, alpha = 0b10, b = 0b01, beta = 0b11;  // T_2: alpha - a - b - beta
    par[static_cast<std::size_t>(alpha)] = a;
    par[static_cast<std::size_t>(b)] = a;
    par[static_cast<std::size_t>(beta)] = b;
    for (int m = 2; m < n; ++m) {
      const std::int64_t H = std::int64_t{1} << m;
      // phi(x) = pi(x ^ a) ^ b with pi a permutation of dimensions: i -> j -> k (a swap if k = i).
      const int i = std::countr_zero(static_cast<std::uint64_t>(alpha ^ a));
      const int j = std::countr_zero(static_cast<std::uint64_t>(a ^ b));
      const int k = std::countr_zero(static_cast<std::uint64_t>(b ^ beta));
      std::vector<int> pi(static_cast<std::size_t>(m));
      for (int d = 0; d < m; ++d) pi[static_cast<std::size_t>(d)] = d;
      pi[static_cast<std::size_t>(i)] = j;
      pi[static_cast<std::size_t>(j)] = k;
      if (k != i) pi[static_cast<std::size_t>(k)] = i;
      auto phi = [&](std::int64_t x) {
        const std::int64_t y = x ^ a;
        std::int64_t z = 0;
        for (int d = 0; d < m; ++d)
          if ((y >> d) & 1) z |= std::int64_t{1} << pi[static_cast<std::size_t>(d)];
        return z ^ b;
      };
      for (std::int64_t x = 0; x < H; ++x) {  // the copy in the upper half
        const std::int64_t px = par[static_cast<std::size_t>(x)];
        par[static_cast<std::size_t>(phi(x) | H)] = px < 0 ? -1 : (phi(px) | H);
      }
      // The new edges between the extra nodes (the old root edge a - b reverses).
      par[static_cast<std::size_t>(b)] = -1;           // A, the new first root
      par[static_cast<std::size_t>(b | H)] = b;        // B = phi(a) + H, the second root
      par[static_cast<std::size_t>(a)] = b;            // P, child of A
      par[static_cast<std::size_t>(a | H)] = a;        // phi(alpha) + H, child of P
      par[static_cast<std::size_t>(beta)] = beta | H;  // beta, child of Q = phi(b) + H
      const std::int64_t na = b, nalpha = a, nb = b | H, nbeta = beta | H;
      a = na, alpha = nalpha, b = nb, beta = nbeta;
    }
    root = a;
  }
  // Translate so that the source (root A) is node 0.
  t.parent.assign(static_cast<std::size_t>(N), -1);
  for (std::int64_t x = 0; x < N; ++x) {
    const std::int64_t p = par[static_cast<std::size_t>(x)];
    t.parent[static_cast<std::size_t>(x ^ root)] = p < 0 ? -1 : (p ^ root);
  }
  // Subtree heights: children before parents in order of decreasing depth.
  std::vector<int> depth(static_cast<std::size_t>(N), -1);
  depth[0] = 0;
  std::vector<std::int64_t> order;
  order.reserve(static_cast<std::size_t>(N));
  for (std::int64_t x = 0; x < N; ++x) {
    std::vector<std::int64_t> chain;  // walk up to a node of known depth
    std::int64_t y = x;
    while (depth[static_cast<std::size_t>(y)] < 0) {
      if (y < 0 || static_cast<std::int64_t>(chain.size()) > N) throw std::logic_error("two_rooted_tree: not a tree");
      chain.push_back(y);
      y = t.parent[static_cast<std::size_t>(y)];
    }
    for (auto it = chain.rbegin(); it != chain.rend(); ++it)
      depth[static_cast<std::size_t>(*it)] =
          depth[static_cast<std::size_t>(t.parent[static_cast<std::size_t>(*it)])] + 1;
    order.push_back(x);
  }
  std::sort(order.begin(), order.end(), [&](std::int64_t l, std::int64_t r) {
    return depth[static_cast<std::size_t>(l)] > depth[static_cast<std::size_t>(r)];
  });
  t.height.assign(static_cast<std::size_t>(N), 0);
  for (std::int64_t x : order) {
    const std::int64_t p = t.parent[static_cast<std::size_t>(x)];
    if (p >= 0)
      t.height[static_cast<std::size_t>(p)] = static_cast<std::int8_t>(
          std::max<int>(t.height[static_cast<std::size_t>(p)], t.height[static_cast<std::size_t>(x)] + 1));
  }
  return t;
}

}  // namespace cubesim::trees
