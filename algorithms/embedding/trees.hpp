#pragma once
/// Spanning trees of the Boolean n-cube rooted at node 0 (addresses relative to the root), as
/// parent functions: the dimension a node's parent lies across, -1 at the root. All of them are
/// shortest-path trees (a parent clears one 1-bit), so a node's depth is its number of 1-bits.
///
///  - Spanning binomial tree, SBT (TR-530 §4.1.2): the parent of i clears its lowest 1-bit, so a
///    path from the root sets bits from the highest down. Rotated by rho (nRSBT, TR-530 §4.1.4:
///    "dimension k of the initial tree is translated into dimension (k + rho) mod n"): the parent
///    clears the first 1-bit at or cyclically above bit rho.
///  - Spanning balanced n-tree, SBnT (TR-530 §4.1.5, Fig. 4): base(i) is the number of right
///    rotations that makes i smallest (the least such); the parent of i clears bit k, the first
///    1-bit cyclically to the right of bit base(i) (k = base(i) when i has one 1-bit); the
///    children of i flip the 0-bits of M(i, base(i)), the run of 0-bits immediately to the right of
///    bit base(i) cyclically, that keep the base. Every node other than the root lies in the subtree
///    of the root's child across dimension base(i), so the node set splits into n nearly equal parts.
#include <algorithm>
#include <bit>
#include <concepts>
#include <cstdint>
#include <vector>

namespace cubesim::trees {

/// Addresses relative to the root: non-negative n-bit values of the caller's integer type.
using Address = std::uint64_t;

/// R(i) of TR-530 §4.1.5: `times` right rotations of the n-bit value i (any integer type, n < 63
/// for a signed one).
template <std::integral T>
constexpr T rotate_right(T i, int n, int times = 1) {
  const auto u = static_cast<std::uint64_t>(i);
  const std::uint64_t mask = n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
  times %= n;
  if (times == 0) return static_cast<T>(u & mask);
  return static_cast<T>(((u >> times) | (u << (n - times))) & mask);
}

/// `times` left rotations of the n-bit value i: dimension d moves to (d + times) mod n.
template <std::integral T>
constexpr T rotate_left(T i, int n, int times = 1) {
  return rotate_right(i, n, (n - times % n) % n);
}

/// base(i): the least j for which R^j(i) is smallest; -1 for i = 0 (the root).
constexpr int sbnt_base(Address i, int n) {
  if (i == 0) return -1;
  int best = 0;
  Address min = i;
  for (int j = 1; j < n; ++j) {
    const Address r = rotate_right(i, n, j);
    if (r < min) {
      min = r;
      best = j;
    }
  }
  return best;
}

/// The dimension across which i's parent lies in the SBnT: k of TR-530 §4.1.5; -1 at the root.
constexpr int sbnt_parent_dim(Address i, int n) {
  const int j = sbnt_base(i, n);
  if (j < 0) return -1;
  for (int s = 1; s < n; ++s) {
    const int k = ((j - s) % n + n) % n;  // cyclically to the right of bit j
    if ((i >> k) & 1) return k;
  }
  return j;  // i = (0...0 1_j 0...0)
}

/// children_SBnT(i, 0) of TR-530 §4.1.5, as the dimensions to flip (ascending).
inline std::vector<int> sbnt_children_dims(Address i, int n) {
  std::vector<int> out;
  if (i == 0) {
    for (int m = 0; m < n; ++m) out.push_back(m);
    return out;
  }
  const int j = sbnt_base(i, n);
  for (int s = 1; s < n; ++s) {
    const int m = ((j - s) % n + n) % n;
    if ((i >> m) & 1) break;  // the end of M(i, j)
    if (sbnt_base(i ^ (Address{1} << m), n) == j) out.push_back(m);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// The parent dimension of i in the SBT rotated by rho (rho = 0: the plain SBT); -1 at the root.
constexpr int rsbt_parent_dim(Address i, int n, int rho) {
  if (i == 0) return -1;
  for (int s = 0; s < n; ++s) {
    const int k = (rho + s) % n;
    if ((i >> k) & 1) return k;
  }
  return -1;
}

}  // namespace cubesim::trees
