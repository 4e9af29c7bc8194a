// transpose.mpt: the Multiple Paths Transpose (TR-572 §6.1.3, Figs 3-4, Lemmas 9-14, Theorem 2),
// all-port. Same data layout as transpose.spt (algorithms/transpose/matrix.hpp): node
// x = (x_r || x_c) sends its block of D = PQ/N elements to tr(x) = (x_c || x_r).
//
// Paths. The row dimensions to route, in descending order, are α_{H-1} > ... > α_0 and the
// matching column dimensions β_{H-1} > ... > β_0 (H = H(x) = Hamming(x_r, x_c), α_j = β_j + n/2).
// Path p < H crosses the pairs in the cyclic order (p-1), (p-2), ..., p (mod H), α before β;
// path H + j the same pairs as path j with β before α. The 2H(x) paths of a node are
// edge-disjoint (Lemma 9); paths of nodes in different classes of ~_s (same anti-diagonal and the
// same x XOR tr(x)) are edge-disjoint (Lemma 13); inside a class they are (2, 2H)-disjoint
// (Lemma 14): packets may enter every path during the first two of every 2H cycles.
//
// Schedule, "the 4kH(x)-packet schedule": the block is cut into 4kH packets of b = ⌈D/(4kH)⌉
// (the last ones shorter or empty). In round r = 0..k-1 the node waits for cycle 2Hr and sends
// one packet down every path, then a second one behind it (cycles 2Hr and 2Hr + 1). Relays
// forward each packet at the next cycle boundary of its class (cycle = tau + tau_msg + b t_c, the
// time of one packet over one link), so a packet that arrives on time goes straight on; one held
// up by a conflict the paper's Lemma 14 says cannot happen waits for the next cycle, and the run
// shows it. k: the node's best integer k >= ⌈D/(4HB)⌉ (packets no larger than the run's B) for
// its own time (2kH + 1)(tau + ⌈D/(4kH)⌉ t_c), searched around the paper's optimum
// k = sqrt(PQ t_c / (2N tau)) / (2H); all nodes of a class have the same H, hence the same k.
//
// Prediction: the paragraph before Theorem 2, T = (2kH + 1)(tau + PQ t_c / (4kHN)) for each class
// at its k, the largest over H = 1..n/2; exact when every class's packets are full (4kH divides
// D), an upper bound otherwise. Theorem 2's closed form (the optimum over real k, four cases) is
// compared with the simulation in tests/test_transpose.cpp and docs/transpose.md: its middle
// cases count n/2 + 3 and n/2 + 2 start-ups, fewer than the n hops of an anti-diagonal node, so
// they cannot be met by this (or any store-and-forward) schedule; the test measures by how much.
// Theorem 3's bound max(n tau, (PQ/2N) t_c) is checked there for every two-dimensional transpose.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

#include "algorithms/registry.hpp"
#include "algorithms/transpose/matrix.hpp"

namespace cubesim {
namespace {

using tr572::TwoD;

int hamming_h(const TwoD& t, NodeId x) {
  return std::popcount(static_cast<std::uint64_t>((x >> t.h) ^ (x & (t.side - 1))));
}

/// The differing column dimensions of node x, β_0 < β_1 < ..., into `idx`; returns H(x).
int differing_columns(const TwoD& t, NodeId x, std::array<int, Topology::kMaxCubeDim>& idx) {
  const NodeId d = (x >> t.h) ^ (x & (t.side - 1));
  int H = 0;
  for (int i = 0; i < t.h; ++i)
    if ((d >> i) & 1) idx[static_cast<std::size_t>(H++)] = i;
  return H;
}

/// Path p of a node with differing column dimensions idx[0, H) (§6.1.3): its 2H dimensions into
/// `dims`, in order.
void mpt_path(const TwoD& t, const std::array<int, Topology::kMaxCubeDim>& idx, int H, int p,
              std::array<int, Topology::kMaxCubeDim>& dims) {
  const int base = p % H;
  const bool beta_first = p >= H;
  std::size_t at = 0;
  for (int s = 1; s <= H; ++s) {
    const int j = (base + H - s) % H;
    const int alpha = t.h + idx[static_cast<std::size_t>(j)], beta = idx[static_cast<std::size_t>(j)];
    dims[at++] = beta_first ? beta : alpha;
    dims[at++] = beta_first ? alpha : beta;
  }
}

/// The 2H(x) paths of node x (§6.1.3), as dimension sequences.
std::vector<std::vector<int>> mpt_paths(const TwoD& t, NodeId x) {
  std::array<int, Topology::kMaxCubeDim> idx{}, dims{};
  const int H = differing_columns(t, x, idx);
  std::vector<std::vector<int>> paths;
  for (int p = 0; p < 2 * H; ++p) {
    mpt_path(t, idx, H, p, dims);
    paths.emplace_back(dims.begin(), dims.begin() + 2 * H);
  }
  return paths;
}

/// One class's schedule: k rounds of 4H packets of b elements, a cycle of `cycle`.
struct Plan {
  int H = 0;
  std::int64_t k = 1, b = 0, D = 0;
  Time cycle;
  [[nodiscard]] std::int64_t packets() const { return 4 * k * H; }
  [[nodiscard]] std::int64_t size(std::int64_t j) const { return std::clamp<std::int64_t>(D - j * b, 0, b); }
  [[nodiscard]] int path(std::int64_t j) const { return static_cast<int>(j % (2 * H)); }
  /// The cycle in which packet j leaves its source: round j / 4H, the second of its two cycles
  /// for the second 2H packets of the round.
  [[nodiscard]] std::int64_t first_cycle(std::int64_t j) const { return 2 * H * (j / (4 * H)) + (j / (2 * H)) % 2; }
};

Time cycle_of(const Machine& m, std::int64_t b) { return m.tau + m.tau_msg + m.t_c * b; }

/// The node's best k (see the header): its own (2kH + 1) cycles, packets at most B.
Plan plan_for(int H, std::int64_t D, std::int64_t B, const Machine& m) {
  Plan pl;
  pl.H = H;
  pl.D = D;
  const std::int64_t k_min = std::max<std::int64_t>(1, ceil_div(D, 4 * H * B));
  const std::int64_t k_max = std::max(k_min, ceil_div(D, 4 * H));
  const double tau = static_cast<double>((m.tau + m.tau_msg).count()), tc = static_cast<double>(m.t_c.count());
  std::vector<std::int64_t> candidates = {k_min, k_max};
  if (tau > 0 && tc > 0) {
    const double k_opt = std::sqrt(static_cast<double>(D) * tc / (2 * tau)) / (2.0 * H);  // §6.1.3
    for (std::int64_t d = -2; d <= 2; ++d) candidates.push_back(static_cast<std::int64_t>(std::floor(k_opt)) + d);
  }
  long double best = -1;
  for (std::int64_t k : candidates) {
    k = std::clamp(k, k_min, k_max);
    const std::int64_t b = ceil_div(D, 4 * k * H);
    const long double cost = static_cast<long double>(2 * k * H + 1) * (tau + static_cast<long double>(b) * tc);
    if (best < 0 || cost < best || (cost == best && k < pl.k)) best = cost, pl.k = k, pl.b = b;
  }
  pl.cycle = cycle_of(m, pl.b);
  return pl;
}

/// Waits for the next boundary of this class's cycles (now, when the packet is on time).
Task<> to_cycle_boundary(Node& self, Time cycle) {
  if (cycle <= Time{}) co_return;
  const Time now = self.now();
  const std::int64_t c = ceil_div(now.count(), cycle.count());
  if (cycle * c > now) co_await self.delay(cycle * c - now);
}

/// The source: k rounds, two packets down every path at the start of each.
Task<> mpt_source(Node& self, const Plan& pl, const std::vector<std::vector<int>>& paths, const Buffer& mine,
                  int tag0) {
  std::vector<Request> sends;
  for (std::int64_t j = 0; j < pl.packets(); ++j) {
    if (pl.size(j) == 0) break;
    const Time at = pl.cycle * pl.first_cycle(j);
    if (self.now() < at) co_await self.delay(at - self.now());
    const int p = pl.path(j);
    sends.push_back(
        self.start(self.send(paths[static_cast<std::size_t>(p)][0], mine.slice(j * pl.b, pl.size(j)), tag0 + p)));
  }
  for (Request& r : sends) co_await r;
}

/// A relay (hop 0 < e < 2H) or the destination (e = 2H) on path p of a source with plan pl.
Task<> mpt_hop(Node& self, const Plan& pl, std::vector<int> dims, int p, std::size_t e, int tag,
               std::vector<Buffer>* out) {
  std::vector<Request> sends;
  for (std::int64_t j = p; j < pl.packets() && pl.size(j) > 0; j += 2 * pl.H) {
    Buffer pkt = co_await self.recv(dims[e - 1], tag);
    if (e == dims.size()) {
      (*out)[static_cast<std::size_t>(j)] = std::move(pkt);
      continue;
    }
    co_await to_cycle_boundary(self, pl.cycle);
    sends.push_back(self.start(self.send(dims[e], std::move(pkt), tag)));
  }
  for (Request& r : sends) co_await r;
}

/// The sources s that can have x on one of their paths, ascending (a superset: each is checked by
/// walking its paths). A path crosses s's differing pairs (row bit != column bit) one after the
/// other, each pair's two dimensions in turn, so a node on it has, at each such position, s's
/// pair or the two bits exchanged, and at no more than one position a pair half crossed, which
/// shows as two equal bits; every other position is s's. Read from x: at a position where x's bits
/// differ, s has x's pair or the exchanged one; where they are equal, s has x's pair, except at
/// one position at most, where it has (0, 1) or (1, 0). That is 2^H(x) (1 + 2(h - H(x))) sources
/// at most, instead of all N (the walk over every source cost 2^32 tests and 10^8 path
/// constructions a run on 2^16 processors).
std::vector<NodeId> sources_in_reach(const TwoD& t, NodeId x) {
  std::vector<NodeId> base{x};
  std::vector<int> equal;  // positions where x's row and column bits are equal
  for (int i = 0; i < t.h; ++i) {
    const NodeId both = (NodeId{1} << (t.h + i)) | (NodeId{1} << i);
    if (std::popcount(static_cast<std::uint64_t>(x & both)) == 1) {
      const std::size_t m = base.size();
      for (std::size_t j = 0; j < m; ++j) base.push_back(base[j] ^ both);  // the pair exchanged
    } else {
      equal.push_back(i);
    }
  }
  std::vector<NodeId> c = base;
  for (const int i : equal) {
    const NodeId rbit = NodeId{1} << (t.h + i), cbit = NodeId{1} << i;
    for (const NodeId s : base) {
      const NodeId rest = s & ~(rbit | cbit);
      c.push_back(rest | rbit);
      c.push_back(rest | cbit);
    }
  }
  std::sort(c.begin(), c.end());
  return c;
}

Task<> transpose_mpt(Node& self, Params prm) {
  const TwoD t = tr572::two_d(prm, self.topology(), false);
  const NodeId x = self.id();
  const std::int64_t D = t.D();
  const Buffer mine = t.initial(x, self.data_mode());
  const std::int64_t B = self.packet_elements();
  std::vector<Plan> plans(static_cast<std::size_t>(t.h) + 1);
  for (int H = 1; H <= t.h; ++H) plans[static_cast<std::size_t>(H)] = plan_for(H, D, B, self.machine());
  const auto tag0 = [&](NodeId s) { return static_cast<int>(s) * std::max(t.n, 1); };
  // This node's roles: a path of source s passes here at hop e. Only sources whose paths stay in
  // the subcube spanned by their own pairs of dimensions can pass here.
  std::vector<Task<>> roles;
  std::vector<Buffer> arrived;
  const NodeId from = t.target(x);  // tr is an involution: x's block of A^T comes from tr(x)
  if (from != x) arrived.resize(static_cast<std::size_t>(plans[static_cast<std::size_t>(hamming_h(t, x))].packets()));
  std::vector<std::vector<int>> own;  // this node's own paths, alive as long as its source role
  std::array<int, Topology::kMaxCubeDim> idx{}, dims{};
  for (const NodeId s : sources_in_reach(t, x)) {
    const NodeId d = (s >> t.h) ^ (s & (t.side - 1));
    if (d == 0 || ((s ^ x) & ~((d << t.h) | d)) != 0) continue;
    const Plan& pl = plans[static_cast<std::size_t>(hamming_h(t, s))];
    if (s == x) {
      own = mpt_paths(t, s);
      roles.push_back(mpt_source(self, pl, own, mine, tag0(s)));
      continue;
    }
    // s's paths walked in place (building them as vectors for every source in reach was 10 % of a
    // 2^14-processor run, and most of its 17 M small allocations); a hop copies its path's.
    // A path whose first packet (packet p) is empty carries none (sizes only fall with j): its hops
    // would start and end at once, with no operation, so they are not made (the simulation is the
    // same; a recorded trace lists no strand for them). On 2^16 processors with one element each
    // only path 0 carries anything, and the 4.7 M hops made before (640-byte frames, 2.9 GB) were
    // nearly all of the run's memory.
    const int H = differing_columns(t, s, idx);
    for (int p = 0; p < 2 * H && pl.size(p) > 0; ++p) {
      mpt_path(t, idx, H, p, dims);
      NodeId at = s;
      for (std::size_t e = 1; e <= static_cast<std::size_t>(2 * H); ++e) {
        at ^= NodeId{1} << dims[e - 1];
        if (at == x)
          roles.push_back(
              mpt_hop(self, pl, std::vector<int>(dims.begin(), dims.begin() + 2 * H), p, e, tag0(s) + p, &arrived));
      }
    }
  }
  co_await all_of(std::move(roles));
  if (from == x) {
    self.set_result(t.assemble(mine, self.data_mode()));
    co_return;
  }
  Buffer got;
  for (Buffer& b : arrived) got.append(b);
  self.set_result(t.assemble(got, self.data_mode()));
}

Prediction predict_mpt(const Setup& s) {
  const TwoD t = tr572::two_d(s.params, s.topology, false);
  const std::int64_t D = t.D();
  Prediction pr;
  pr.source = "TR-572 §6.1.3: (2kH + 1)(tau + PQ t_c / (4kHN)) at each class's k, the largest over H";
  if (t.n == 0) return pr;
  if (s.machine.ports.kind != PortKind::all) {
    // One port: the anti-diagonal source's packets queue at its port; then the last one's
    // 2H - 1 more hops. A lower bound.
    const Plan pl = plan_for(t.h, D, s.params.B, s.machine);
    const std::int64_t sent = ceil_div(D, pl.b), last = D - (sent - 1) * pl.b;
    pr.source = "TR-572 §6.1.3 on one port: the anti-diagonal node's packets in turn, the last over n - 1 more links";
    pr.relation = Relation::lower_bound;
    pr.startups = sent + t.n - 1;
    pr.msg_startups = pr.startups;
    pr.element_transfers = D + (t.n - 1) * last;
  } else {
    bool full = true;
    Time worst = Time::ps(-1);
    Plan at;
    for (int H = 1; H <= t.h; ++H) {
      const Plan pl = plan_for(H, D, s.params.B, s.machine);
      full = full && D % pl.packets() == 0;
      const Time T = pl.cycle * (2 * pl.k * H + 1);
      if (T > worst) worst = T, at = pl;  // ties: the smaller H (the critical path ends in its chain)
    }
    // The chain of the last packet: the source waits for its cycle, 2H(k - 1) + 1, then 2H hops.
    pr.startups = 2 * at.H;
    pr.msg_startups = pr.startups;
    pr.element_transfers = pr.startups * at.b;
    pr.delays = at.cycle * (2 * at.H * (at.k - 1) + 1);
    pr.relation = full ? Relation::exact : Relation::upper_bound;
  }
  const double tau = (s.machine.tau + s.machine.tau_msg).seconds(), tc = s.machine.t_c.seconds();
  if (tau > 0 && tc > 0) pr.b_opt = tr572::theorem2(D, t.n, tau, tc).b_opt;
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

Verdict verify_mpt(const Setup& s, const std::vector<Buffer>& results) {
  return tr572::two_d(s.params, s.topology, false).verify(s, results);
}

const Registration kRegistrationTransposeMpt{[](Registry& r) {
  r.add({.name = "transpose.mpt",
         .summary = "2-D transpose along 2H(x) edge-disjoint paths per node, 4kH packets (Multiple Paths Transpose)",
         .source = "TR-572 §6.1.3, Theorem 2",
         .params = {"P", "Q", "B"},
         .required = {"P", "Q"},
         .check = tr572::check_two_d,
         .process = transpose_mpt,
         .predict = predict_mpt,
         .verify = verify_mpt,
         .one_port = {.row = "⌈PQ/(bN)⌉ + n - 1 packet times (the source's port, then n - 1 hops)",
                      .relation = "lower bound (the paths queue at one port)",
                      .deviations = {{Relation::lower_bound, 0, 7.7, "n=8 P=2^6 Q=2^12 B=3"}}},
         .all_port = {.row = "max over H of (2kH + 1)(tau + ⌈PQ/(4kHN)⌉ t_c)",
                      .relation = "exact when 4kH divides PQ/N, else upper bound",
                      .deviations = {{Relation::upper_bound, 0, 0.667, "n=2 P=2^1 Q=2^1 B=1"}}}});
}};

}  // namespace

tr572::Theorem2 tr572::theorem2(std::int64_t D, int n, double tau, double tc) {
  Theorem2 r;
  const double d = static_cast<double>(D), x = d * tc / tau;  // PQ t_c / (N tau)
  if (n >= std::sqrt(x)) {
    r.case_number = 1;
    r.time = (n + 1) * tau + (n + 1.0) / (2.0 * n) * d * tc;
    r.b_opt = std::ceil(d / (2.0 * n));  // 4H packets, H = n/2
  } else if (n > std::sqrt(x / 2)) {
    const bool even = (n / 2) % 2 == 0;
    r.case_number = even ? 2 : 3;
    r.time = even ? (n / 2.0 + 3) * tau + (n + 6.0) / (2.0 * n + 8) * d * tc
                  : (n / 2.0 + 2) * tau + (n + 4.0) / (2.0 * n + 4) * d * tc;
    r.b_opt = std::ceil(d / (even ? n + 4.0 : n + 2.0));
  } else {
    r.case_number = 4;
    r.time = std::pow(std::sqrt(tau) + std::sqrt(d * tc / 2), 2);
    r.b_opt = std::sqrt(d * tau / (2 * tc));
  }
  return r;
}

}  // namespace cubesim
