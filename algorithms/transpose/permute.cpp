// Dimension permutations (TR-572 §7, Definitions 17-18, Lemma 15, Fig. 8): every node holds a
// block of M elements (node x's element j carries x M + j) and sends it to the node whose address
// is x's with its bits permuted.
//
// The params' `perm` gives where each address bit goes: perm[p] = the bit that bit p of the
// source becomes (the paper's δ is its inverse: processor (x_{n-1} ... x_0) sends to
// (x_{δ(n-1)} ... x_{δ(0)})).
//
// Both algorithms realize the permutation as a sequence of parallel swappings (Definition 18: a
// set of disjoint pairs of dimensions exchanged at once), each executed as the general exchange
// on pairs of real dimensions: for each pair (a, b), a routing step across a and one across b;
// a block whose address has different bits a and b crosses both (distance 2, as SPT crosses
// (g(i), f(i)), §6.1.1), a block with equal bits stays. Whole blocks, one-port steps, as on the
// iPSC (§8.2.1); an all-port machine runs the same steps.
//
//  permute.bitreverse   f(i) = i, g(i) = n - 1 - i for i < n/2: one parallel swapping of
//            ⌊n/2⌋ pairs, 2⌊n/2⌋ routing steps (the middle bit of an odd n stays).
//  permute.dimensions   any permutation. variant 0: Lemma 15's construction (the proof, Fig. 8):
//            split the dimensions (padded with fixed virtual ones to a power of two) into halves,
//            swap the k of one half bound for the other with the k bound back, recurse on both
//            halves at once: at most ⌈log2 n⌉ parallel swappings. Lemma 15 prints ⌊log2 n⌋,
//            which fails for n = 3 (a 3-cycle is not a parallel swapping, so it needs 2 > ⌊log2 3⌋
//            = 1; tests/test_permute.cpp); the proof's padding gives ⌈log2 n⌉, which holds.
//            variant 1 (ours, not the paper's): every permutation is the product of two
//            involutions (each cycle c_0 .. c_{k-1} is the reflection c_j <-> c_{1-j} after the
//            reflection c_j <-> c_{-j}), so two parallel swappings always suffice.
//
// Prediction: 2 (pairs over all swappings) routing steps of one block, each M t_c + ⌈M/B⌉ tau:
// exact (the general exchange's step count, §3/§5, with the pairs this decomposition makes).
#include <algorithm>
#include <bit>

#include "algorithms/collectives/verify.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/transpose/matrix.hpp"

namespace cubesim {
namespace {

using tr572::Swapping;

NodeId swap_bits(const Swapping& s, NodeId z) {
  for (auto [a, b] : s)
    if (((z >> a) ^ (z >> b)) & 1) z ^= (NodeId{1} << a) | (NodeId{1} << b);
  return z;
}

/// Lemma 15's proof: sigma[p] = the position the content of position p must reach.
std::vector<Swapping> lemma15(std::vector<int> sigma) {
  const int n = static_cast<int>(sigma.size());
  const int size = static_cast<int>(std::bit_ceil(static_cast<unsigned>(std::max(n, 1))));
  for (int p = n; p < size; ++p) sigma.push_back(p);  // virtual dimensions stay put
  std::vector<Swapping> phases;
  for (int width = size; width > 1; width /= 2) {
    Swapping pairs;
    for (int lo = 0; lo < size; lo += width) {
      const int mid = lo + width / 2, hi = lo + width;
      std::vector<int> up, down;  // in the low half bound for the high half, and the reverse
      for (int p = lo; p < mid; ++p)
        if (sigma[static_cast<std::size_t>(p)] >= mid) up.push_back(p);
      for (int p = mid; p < hi; ++p)
        if (sigma[static_cast<std::size_t>(p)] < mid) down.push_back(p);
      for (std::size_t i = 0; i < up.size(); ++i) {  // |up| = |down|: sigma is a bijection
        pairs.emplace_back(down[i], up[i]);
        std::swap(sigma[static_cast<std::size_t>(up[i])], sigma[static_cast<std::size_t>(down[i])]);
      }
    }
    if (!pairs.empty()) phases.push_back(std::move(pairs));
  }
  return phases;
}

/// Two involutions: sigma = r2 . r1 on each cycle (c_{j+1} = sigma(c_j)).
std::vector<Swapping> two_involutions(const std::vector<int>& sigma) {
  Swapping r1, r2;
  std::vector<bool> seen(sigma.size());
  for (std::size_t p = 0; p < sigma.size(); ++p) {
    if (seen[p]) continue;
    std::vector<int> c;
    for (auto q = static_cast<int>(p); !seen[static_cast<std::size_t>(q)]; q = sigma[static_cast<std::size_t>(q)]) {
      seen[static_cast<std::size_t>(q)] = true;
      c.push_back(q);
    }
    const auto k = static_cast<int>(c.size());
    for (int j = 0; j < k; ++j) {
      const int m1 = (k - j) % k, m2 = (1 - j + k) % k;
      if (j < m1) r1.emplace_back(c[static_cast<std::size_t>(j)], c[static_cast<std::size_t>(m1)]);
      if (j < m2) r2.emplace_back(c[static_cast<std::size_t>(j)], c[static_cast<std::size_t>(m2)]);
    }
  }
  std::vector<Swapping> phases;
  for (Swapping* s : {&r1, &r2})
    if (!s->empty()) phases.push_back(std::move(*s));
  return phases;
}

std::vector<int> sigma_of(const Params& p, int n, bool bitreverse) {
  std::vector<int> sigma(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    sigma[static_cast<std::size_t>(i)] = bitreverse ? n - 1 - i : static_cast<int>(p.perm[static_cast<std::size_t>(i)]);
  return sigma;
}

std::vector<Swapping> phases_of(const Params& p, int n, bool bitreverse) {
  if (bitreverse) {
    Swapping s;
    for (int i = n / 2 - 1; i >= 0; --i) s.emplace_back(n - 1 - i, i);  // (g(i), f(i)), high pairs first
    return s.empty() ? std::vector<Swapping>{} : std::vector<Swapping>{s};
  }
  return tr572::dimension_swappings(sigma_of(p, n, false), static_cast<int>(p.variant));
}

NodeId destination(const std::vector<int>& sigma, NodeId x) {
  NodeId y = 0;
  for (std::size_t q = 0; q < sigma.size(); ++q) y |= ((x >> q) & 1) << sigma[q];
  return y;
}

Buffer block_of(NodeId x, std::int64_t M, bool data) {
  return Buffer::make(M, data, [&](std::int64_t j) { return static_cast<Element>(x * M + j); });
}

Task<> permute(Node& self, Params p, bool bitreverse) {
  const int n = self.topology().dim();
  const NodeId x = self.id(), N = self.size();
  const std::vector<Swapping> phases = phases_of(p, n, bitreverse);
  std::vector<NodeId> at(static_cast<std::size_t>(N));  // where each source's block is
  for (NodeId s = 0; s < N; ++s) at[static_cast<std::size_t>(s)] = s;
  NodeId here = x;  // whose block this node holds
  Buffer mine = block_of(x, p.M, self.data_mode());
  for (const Swapping& sw : phases) {
    std::vector<int> dims;
    for (auto [a, b] : sw) dims.insert(dims.end(), {a, b});
    std::vector<std::pair<NodeId, Buffer>> held;
    held.emplace_back(here, std::move(mine));
    mine = co_await tr572::step_by_step(
        self, dims, [&](NodeId s) { return at[static_cast<std::size_t>(s)]; },
        [&](NodeId s) { return at[static_cast<std::size_t>(s)] ^ swap_bits(sw, at[static_cast<std::size_t>(s)]); },
        std::move(held));
    for (NodeId s = 0; s < N; ++s) {
      NodeId& z = at[static_cast<std::size_t>(s)];
      z = swap_bits(sw, z);
      if (z == x) here = s;
    }
  }
  self.set_result(std::move(mine));
}

Task<> permute_bitreverse(Node& self, Params p) { return permute(self, std::move(p), true); }
Task<> permute_dimensions(Node& self, Params p) { return permute(self, std::move(p), false); }

std::optional<SetupError> check_permute(const Setup& s, bool bitreverse) {
  if (auto e = check_cube_collective(s, false)) return e;  // a hypercube, M >= 1, 1 <= B <= B_m
  const Params& p = s.params;
  const std::int64_t limit = std::int64_t{1} << (s.data_mode ? 24 : 40);
  if (p.M > limit / s.topology.size())
    return SetupError{"/params/M", "M N = " + std::to_string(p.M) + " x " + std::to_string(s.topology.size()) +
                                       " elements exceeds the " +
                                       (s.data_mode ? "data-mode limit 2^24" : "limit 2^40")};
  if (bitreverse) return std::nullopt;
  const int n = s.topology.dim();
  if (std::cmp_not_equal(p.perm.size(), n))
    return SetupError{"/params/perm", "perm must list one target for each of the " + std::to_string(n) +
                                          " address bits, got " + std::to_string(p.perm.size())};
  std::vector<bool> hit(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < p.perm.size(); ++i) {
    const std::int64_t d = p.perm[i];
    if (d < 0 || d >= n || hit[static_cast<std::size_t>(d)])
      return SetupError{"/params/perm/" + std::to_string(i),
                        "perm must be a permutation of 0.." + std::to_string(n - 1) +
                            (d < 0 || d >= n ? ": " + std::to_string(d) + " is out of range"
                                             : ": " + std::to_string(d) + " appears twice")};
    hit[static_cast<std::size_t>(d)] = true;
  }
  if (p.variant != 0 && p.variant != 1)
    return SetupError{"/params/variant", "permute.dimensions has variant 0 (Lemma 15) or 1 (two involutions), got " +
                                             std::to_string(p.variant)};
  return std::nullopt;
}

Prediction predict_permute(const Setup& s, bool bitreverse) {
  const int n = s.topology.dim();
  std::int64_t pairs = 0;
  const std::vector<Swapping> phases = phases_of(s.params, n, bitreverse);
  for (const Swapping& sw : phases) pairs += static_cast<std::int64_t>(sw.size());
  Prediction pr;
  pr.source =
      bitreverse
          ? "TR-572 §7: the general exchange with f(i) = i, g(i) = n - 1 - i: 2⌊n/2⌋ steps of M t_c + ⌈M/B⌉ tau"
          : (s.params.variant == 1
                 ? "TR-572 §7, Def. 18: two parallel swappings (two involutions), 2 (pairs) steps of M t_c + ⌈M/B⌉ tau"
                 : "TR-572 §7, Lemma 15: " + std::to_string(phases.size()) +
                       " parallel swappings, 2 (pairs) steps of M t_c + ⌈M/B⌉ tau");
  const std::int64_t steps = 2 * pairs;
  pr.startups = steps * ceil_div(s.params.M, s.params.B);
  pr.msg_startups = steps;
  pr.element_transfers = steps * s.params.M;
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

Verdict verify_permute(const Setup& s, const std::vector<Buffer>& results, bool bitreverse) {
  const int n = s.topology.dim();
  const std::vector<int> sigma = sigma_of(s.params, n, bitreverse);
  std::vector<NodeId> from(results.size());
  for (NodeId x = 0; std::cmp_less(x, results.size()); ++x) from[static_cast<std::size_t>(destination(sigma, x))] = x;
  return verify_each(
      s, results, [&](NodeId) { return s.params.M; },
      [&](NodeId y, std::int64_t j) {
        return static_cast<Element>(from[static_cast<std::size_t>(y)] * s.params.M + j);
      });
}

const std::vector<std::string> kParamsPermute = {"M", "B"};

const Registration kRegistrationPermute{[](Registry& r) {
  r.add({.name = "permute.bitreverse",
         .summary = "bit-reversal permutation of the node addresses by the general exchange (pairs i, n-1-i)",
         .source = "TR-572 §7",
         .params = kParamsPermute,
         .required = {"M"},
         .check = [](const Setup& s) { return check_permute(s, true); },
         .process = permute_bitreverse,
         .predict = [](const Setup& s) { return predict_permute(s, true); },
         .verify = [](const Setup& s, const std::vector<Buffer>& b) { return verify_permute(s, b, true); },
         .one_port = {.row = "2⌊n/2⌋(M t_c + ⌈M/B⌉ tau)", .relation = "exact"},
         .all_port = {.row = "the same (one-port steps)", .relation = "exact"}});
  r.add(
      {.name = "permute.dimensions",
       .summary = "any dimension permutation (perm) by parallel swappings: Lemma 15 (variant 0) or two involutions (1)",
       .source = "TR-572 §7, Lemma 15, Fig. 8",
       .params = {"M", "B", "perm", "variant"},
       .required = {"M", "perm"},
       .check = [](const Setup& s) { return check_permute(s, false); },
       .process = permute_dimensions,
       .predict = [](const Setup& s) { return predict_permute(s, false); },
       .verify = [](const Setup& s, const std::vector<Buffer>& b) { return verify_permute(s, b, false); },
       .one_port = {.row = "2 (pairs in the swappings)(M t_c + ⌈M/B⌉ tau)", .relation = "exact"},
       .all_port = {.row = "the same (one-port steps)", .relation = "exact"}});
}};

}  // namespace

std::vector<tr572::Swapping> tr572::dimension_swappings(const std::vector<int>& perm, int variant) {
  return variant == 1 ? two_involutions(perm) : lemma15(perm);
}

}  // namespace cubesim
