#pragma once
/// Binary-reflected Gray code (TR-530 §3): G(i) = i XOR (i >> 1). Successive codes differ in one
/// bit, and the sequence is cyclic, so it embeds a path or ring of 2^n nodes in the n-cube with
/// dilation one.
#include <bit>
#include <concepts>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

namespace cubesim::gray {

// Positions and codes are non-negative; every function takes and returns the caller's integer
// type (NodeId, std::uint64_t, ...), so that algorithms need no casts.

/// G(i), the i-th code of the sequence.
template <std::integral T>
constexpr T encode(T i) {
  return i ^ (i >> 1);
}

/// The inverse Gray code IG: the position of code g in the sequence.
template <std::integral T>
constexpr T decode(T g) {
  // Shifts up to the type's width only: g >> 32 on a 32-bit T is undefined (UBSan found it).
  for (int s = 1; s < static_cast<int>(8 * sizeof(T)); s <<= 1) g ^= g >> s;
  return g;
}

/// The dimension crossed going from G(i) to G(i+1) in the cyclic n-bit sequence: the position of
/// the rightmost 0-bit of i (TR-530 §4.2.1, GCEA: "j = the position of the rightmost 0-bit of
/// i-1" for step i); from the last code back to G(0) it is bit n-1.
template <std::integral T>
constexpr int transition(T i, int n) {
  if (n <= 0) throw std::invalid_argument("gray::transition needs n >= 1");
  const auto u = static_cast<std::uint64_t>(i);
  const std::uint64_t last = (std::uint64_t{1} << n) - 1;
  if (i < 0 || u > last) throw std::invalid_argument("gray::transition: position outside the n-bit sequence");
  if (u == last) return n - 1;
  return std::countr_one(u);
}

}  // namespace cubesim::gray
