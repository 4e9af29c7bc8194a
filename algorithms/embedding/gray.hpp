#pragma once
/// Binary-reflected Gray code (TR-530 §3): G(i) = i XOR (i >> 1). Successive codes differ in one
/// bit, and the sequence is cyclic, so it embeds a path or ring of 2^n nodes in the n-cube with
/// dilation one.
#include <bit>
#include <cstdint>
#include <stdexcept>

namespace cubesim::gray {

constexpr std::uint64_t encode(std::uint64_t i) { return i ^ (i >> 1); }

/// The inverse Gray code IG: the position of code g in the sequence.
constexpr std::uint64_t decode(std::uint64_t g) {
  for (int s = 1; s < 64; s <<= 1) g ^= g >> s;
  return g;
}

/// The dimension crossed going from G(i) to G(i+1) in the cyclic n-bit sequence: the position of
/// the rightmost 0-bit of i (TR-530 §4.2.1, GCEA: "j = the position of the rightmost 0-bit of
/// i-1" for step i); from the last code back to G(0) it is bit n-1.
constexpr int transition(std::uint64_t i, int n) {
  if (n <= 0) throw std::invalid_argument("gray::transition needs n >= 1");
  const std::uint64_t last = (std::uint64_t{1} << n) - 1;
  if (i > last) throw std::invalid_argument("gray::transition: position outside the n-bit sequence");
  if (i == last) return n - 1;
  return std::countr_one(i);
}

}  // namespace cubesim::gray
