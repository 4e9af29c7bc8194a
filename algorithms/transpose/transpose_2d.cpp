// Two-dimensional transposition on the Boolean n-cube (TR-572 §6.1, §6.3, §8.2): n even, a
// 2^(n/2) x 2^(n/2) grid of consecutive blocks of D = PQ/N elements (algorithms/transpose/
// matrix.hpp); node x = (x_r || x_c) sends its whole block to tr(x) = (x_c || x_r), 2H(x) hops
// away, H(x) = Hamming(x_r, x_c). g(i) = n/2 + i is the i-th row dimension, f(i) = i the i-th
// column dimension.
//
//  transpose.spt        Single Path Transpose (§6.1.1), all-port, pipelined: the block goes in
//            packets of B along g(n/2-1), f(n/2-1), ..., g(0), f(0), crossing those where the
//            row and column bits differ; relays forward packet by packet. The paths of
//            different nodes are edge-disjoint. Prediction (⌈D/B⌉ + n - 1)(B t_c + tau), exact
//            when B divides D (packets of b = min(B, D)); otherwise an upper bound (the last
//            packet is shorter). B_opt and T_min as printed.
//  transpose.dpt        Dual Paths Transpose (§6.1.2): half the block along the SPT path, half
//            along f(n/2-1), g(n/2-1), ..., f(0), g(0). Prediction (⌈D/2B⌉ + n - 1)(B t_c + tau).
//  transpose.spt_steps  SPT step by step, one-port, as run on the iPSC (§8.2.1): n steps, one
//            per dimension of the SPT order; in each, every block that must cross that dimension
//            does, whole. The block is copied into a send buffer first and out of the receive
//            buffer last. Prediction n(D t_c + ⌈D/B⌉ tau) + 2 D t_copy (§8.2.1 and §9's T^2d).
//  transpose.router_2d  Every node sends its block to tr(x) with one routed send (Fig. 14(b): 'direct
//            send through the routing logic'; on a pipelined machine the Connection Machine's
//            router, §8.2.2, Figs 16-18). Prediction: lower bounds. Store-and-forward: the
//            anti-diagonal block's packets pipelined over n hops without contention,
//            (⌈D/B⌉ + n - 1)(b t_c + tau). Pipelined: tau + (⌈D/B⌉ + n - 1) dimension cycles (a
//            router sends one packet a cycle; the anti-diagonal's last one then crosses n - 1 more).
//  transpose.gray_naive  Rows binary, columns Gray (§6.3: block (u, v) on (u || G(v)), to
//            (v || G(u))): binary -> Gray conversion of the row field in each column subcube
//            (n/2 - 1 exchange steps), Gray -> binary of the column field in each row subcube
//            (n/2 - 1), then the n steps of spt_steps without copies: 2n - 2 steps, one-port.
//            Prediction (2n - 2)(D t_c + ⌈D/B⌉ tau), an upper bound.
//  transpose.gray_combined  The same data movement in n steps by §6.3's pseudo-code (n/2
//            iterations of two routing steps, the case table on (even-block-row,
//            even-parity-block-column, bit j + n/2, bit j)). Prediction n(D t_c + ⌈D/B⌉ tau).
#include <algorithm>
#include <cmath>
#include <vector>

#include "algorithms/collectives/tree_routing.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/transpose/matrix.hpp"

namespace cubesim {
namespace {

using tr572::TwoD;

/// The dimensions of an SPT path (row dimension first in each pair) or of the DPT's second path.
std::vector<int> path_dims(const TwoD& t, NodeId x, bool column_first) {
  std::vector<int> dims;
  const NodeId xr = x >> t.h, xc = x & (t.side - 1);
  for (int i = t.h - 1; i >= 0; --i) {
    if (((xr ^ xc) >> i & 1) == 0) continue;
    if (column_first)
      dims.insert(dims.end(), {i, t.h + i});
    else
      dims.insert(dims.end(), {t.h + i, i});
  }
  return dims;
}

/// The sources whose SPT or DPT paths can pass through x, ascending: a superset, each to be
/// checked by walking its path. A path crosses the pairs (g(i), f(i)) from i = h-1 down to 0, so
/// a node on it holds the source's row and column bits swapped at every position above some i,
/// unchanged below i, and any of the four combinations at i (between the pair's two hops, or at
/// the boundary), or swapped at every position. Hence 4h + 1 candidates a node instead of all N
/// sources: the walk over every source took O(N^2 n) for the run (2^16 processors: minutes).
std::vector<NodeId> path_sources_through(const TwoD& t, NodeId x) {
  std::vector<NodeId> c;
  const NodeId xr = x >> t.h, xc = x & (t.side - 1);
  c.push_back((xc << t.h) | xr);  // every pair crossed: the source whose block ends here
  for (int i = 0; i < t.h; ++i) {
    const NodeId above = (t.side - 1) & ~((NodeId{1} << (i + 1)) - 1);
    const NodeId below = (NodeId{1} << i) - 1;
    // Row bits: x's column bits above i, x's row bits below i; column bits the other way round.
    const NodeId r = (xc & above) | (xr & below), col = (xr & above) | (xc & below);
    const NodeId bit = NodeId{1} << i;
    for (NodeId rb : {NodeId{0}, bit})
      for (NodeId cb : {NodeId{0}, bit}) c.push_back(((r | rb) << t.h) | (col | cb));
  }
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}

/// SPT (one path) or DPT (two paths, the block halved), all-port pipelined.
Task<> paths_transpose(Node& self, Params p, int paths) {
  const TwoD t = tr572::two_d(p, self.topology(), false);
  const NodeId x = self.id();
  const std::int64_t D = t.D();
  const Buffer mine = t.initial(x, self.data_mode());
  // The paths through this node, (source, path, its dimensions), one role each: a node on the
  // diagonal keeps its block and may still relay others'.
  struct Role {
    NodeId source;
    int path;
    std::vector<int> dims;
  };
  std::vector<Role> mine_roles;
  {
    const std::vector<NodeId> candidates = path_sources_through(t, x);
    mine_roles.reserve(candidates.size() * static_cast<std::size_t>(paths));
    for (const NodeId s : candidates) {
      if (t.target(s) == s) continue;
      for (int k = 0; k < paths; ++k) {
        std::vector<int> dims = path_dims(t, s, k == 1);
        NodeId at = s;
        bool on = at == x;
        for (int d : dims) on = on || (at ^= NodeId{1} << d) == x;
        if (on) mine_roles.push_back({s, k, std::move(dims)});
      }
    }
  }
  // A million roles on 2^16 processors: while the paths run the node keeps a task and a buffer a
  // role and where the target's parts land, but not its list of roles with their dimensions.
  std::vector<Buffer> got(mine_roles.size());
  std::vector<std::size_t> target_parts;  // the indices of the roles of the path(s) ending here, by path
  for (int k = 0; k < paths; ++k)
    for (std::size_t i = 0; i < mine_roles.size(); ++i)
      if (mine_roles[i].source == t.target(x) && mine_roles[i].path == k) target_parts.push_back(i);
  // Paths of one packet, unobserved: the relays as Forwards and this node's own sends as requests,
  // begun in the order of the roles, in which their coroutines would begin them (no other part
  // sends: a destination only receives). docs/performance.md "Forwards".
  const bool direct = !self.observed() && (paths == 1 ? D : D - D / 2) <= self.packet_elements();  // the longer part
  routing::PathParts parts(self, mine_roles.size(), direct);
  for (std::size_t i = 0; i < mine_roles.size(); ++i) {
    Role& r = mine_roles[i];
    const std::int64_t half = paths == 1 ? D : (r.path == 0 ? D - D / 2 : D / 2);
    parts.add(r.dims, r.source, static_cast<int>(r.source * 2 + r.path), half,
              r.source == x ? mine.slice(r.path == 0 ? 0 : D - D / 2, half) : Buffer{}, &got[i]);
  }
  std::vector<Role>().swap(mine_roles);
  co_await parts.done();
  if (t.target(x) == x) {
    self.set_result(t.assemble(mine, self.data_mode()));
    co_return;
  }
  Buffer mine_t;
  for (const std::size_t i : target_parts) mine_t.append(got[i]);
  // The block arriving here is the one of the node whose target is x: tr is an involution.
  self.set_result(t.assemble(mine_t, self.data_mode()));
}

Task<> transpose_spt(Node& self, Params p) { return paths_transpose(self, std::move(p), 1); }
Task<> transpose_dpt(Node& self, Params p) { return paths_transpose(self, std::move(p), 2); }

Prediction predict_paths(const Setup& s, int paths) {
  const TwoD t = tr572::two_d(s.params, s.topology, false);
  const std::int64_t D = t.D(), part = ceil_div(D, paths), B = s.params.B;
  const std::int64_t b = std::min(B, part), packets = ceil_div(part, B);
  Prediction pr;
  pr.source = paths == 1 ? "TR-572 §6.1.1, SPT: (⌈PQ/(BN)⌉ + n - 1)(B t_c + tau)"
                         : "TR-572 §6.1.2, DPT: (⌈PQ/(2BN)⌉ + n - 1)(B t_c + tau)";
  if (t.n > 0) {
    const std::int64_t steps = packets + t.n - 1;
    pr.startups = steps;
    pr.msg_startups = steps;
    pr.element_transfers = steps * b;
  }
  // Exact when every packet is full; an upper bound otherwise (the last packet is shorter).
  pr.relation = part % b == 0 && (paths == 1 || D % 2 == 0) ? Relation::exact : Relation::upper_bound;
  // An all-port schedule: on fewer ports the paths through a node queue. Then the pipeline's own
  // bound: every packet over the first link, the last one over the n - 1 others.
  if (s.machine.ports.kind != PortKind::all) {
    pr.relation = Relation::lower_bound;
    if (t.n > 0) pr.element_transfers = part + (t.n - 1) * (part - (packets - 1) * B);
  }
  if (t.n > 1 && s.machine.t_c > Time{}) {
    const double tau = s.machine.tau.seconds(), tc = s.machine.t_c.seconds(), d = static_cast<double>(part);
    pr.b_opt = std::sqrt(d * tau / ((t.n - 1) * tc));  // §6.1.1: sqrt(PQ tau / (N (n-1) t_c))
  }
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

// ---- step by step (one-port): spt_steps, and the Gray-code variants ----

std::vector<int> spt_order(const TwoD& t) {
  std::vector<int> dims;
  for (int i = t.h - 1; i >= 0; --i) dims.insert(dims.end(), {t.h + i, i});
  return dims;
}

Task<> transpose_spt_steps(Node& self, Params p) {
  const TwoD t = tr572::two_d(p, self.topology(), false);
  const NodeId x = self.id();
  const bool moves = t.target(x) != x;
  Buffer mine = t.initial(x, self.data_mode());
  if (moves) co_await self.copy(t.D());  // 2-D array -> 1-D send buffer (§8.2.1)
  const auto relative = [&](NodeId s) { return s ^ t.target(s); };
  std::vector<std::pair<NodeId, Buffer>> held;
  held.emplace_back(x, std::move(mine));
  // The blocks move along the SPT's paths (the same dimensions in the same order), so only the
  // sources of the paths through x can pass here.
  Buffer got = co_await tr572::step_by_step(
      self, spt_order(t), [](NodeId s) { return s; }, relative, std::move(held), path_sources_through(t, x));
  if (moves) co_await self.copy(t.D());  // receive buffer -> 2-D array
  self.set_result(t.assemble(got, self.data_mode()));
}

Prediction predict_spt_steps(const Setup& s) {
  const TwoD t = tr572::two_d(s.params, s.topology, false);
  Prediction pr;
  pr.source = "TR-572 §8.2.1 and §9: T^2d = n((PQ/N) t_c + ⌈PQ/(B N)⌉ tau) + 2 (PQ/N) t_copy";
  pr.startups = t.n * ceil_div(t.D(), s.params.B);
  pr.msg_startups = t.n;
  pr.element_transfers = t.n * t.D();
  pr.copies = t.n > 0 ? 2 * t.D() : 0;
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

Task<> transpose_router_2d(Node& self, Params p) {
  const TwoD t = tr572::two_d(p, self.topology(), false);
  const NodeId x = self.id(), to = t.target(x);
  Buffer mine = t.initial(x, self.data_mode());
  if (to == x) {
    self.set_result(t.assemble(mine, self.data_mode()));
    co_return;
  }
  // The iPSC rearranges the 2-D array into a send buffer and back on this path as on the SPT's
  // (§8.2.1, Fig. 14(b)): the same two copies of the block. The Connection Machine's router sends
  // from each processor's memory (§8.2.2): no copies there.
  const bool copies = self.machine().switching == Switching::store_and_forward;
  if (copies) co_await self.copy(t.D());
  auto s = self.send_to(to, std::move(mine));
  auto r = self.recv_from(to);  // tr is an involution: the block for x comes from tr(x)
  co_await all_of(s, r);
  if (copies) co_await self.copy(t.D());
  self.set_result(t.assemble(r.take(), self.data_mode()));
}

Prediction predict_router_2d(const Setup& s) {
  const TwoD t = tr572::two_d(s.params, s.topology, false);
  const std::int64_t D = t.D(), B = s.params.B, packets = ceil_div(D, B);
  Prediction pr;
  pr.relation = Relation::lower_bound;
  if (t.n == 0) return pr;
  if (s.machine.switching == Switching::pipelined) {
    pr.source =
        "TR-572 §2, §8.2.2: the start-up once, then the larger of the latency (a router sends one packet a "
        "dimension cycle, the last must cross n - 1 more) and the throughput (each dimension served once a petit "
        "cycle, one packet a router: T >= tau + (K/2) n cycles for K packets a node)";
    pr.startups = 1;
    pr.msg_startups = 1;
    const Time cycle = s.machine.t_hop + s.machine.t_c * B;
    const Time ready = prediction_time(s.machine, pr);
    // Latency: the last packet leaves its source no earlier than K cycles after the start-up and
    // has up to n dimensions to cross, one a cycle.
    Time bound = ready + cycle * (packets + t.n - 1);
    // Throughput (issue 32): cycle k serves dimension k mod n_r of the routers' cube, and a router
    // sends at most one packet across it, so H_d crossings of dimension d take ceil(H_d / R)
    // of its cycles, counted from the first cycle that starts after the start-up; a packet leaves
    // at the end of the cycle that brings it home. Routers of 2^g processors (the CM-2's 16):
    // a packet crosses the routers' dimensions where its source and target routers differ.
    const std::int64_t ppr = std::max<std::int64_t>(1, s.machine.processors_per_router);
    const int g = log2_exact(ppr) > 0 ? log2_exact(ppr) : 0;
    const int nr = t.n - g;
    const std::int64_t N = std::int64_t{1} << t.n, routers = N >> g;
    const std::int64_t c = cycle.count();
    const std::int64_t k0 = c > 0 ? ceil_div(ready.count(), c) : 0;  // the first cycle after the start-up
    if (c > 0 && nr > 0) {
      std::vector<std::int64_t> crossings(static_cast<std::size_t>(nr), 0);
      for (NodeId x = 0; x < N; ++x) {
        const std::uint64_t diff = static_cast<std::uint64_t>((x >> g) ^ (t.target(x) >> g));
        for (int d = 0; d < nr; ++d)
          if ((diff >> d) & 1U) ++crossings[static_cast<std::size_t>(d)];
      }
      for (int d = 0; d < nr; ++d) {
        const std::int64_t m =
            ceil_div(checked_mul(crossings[static_cast<std::size_t>(d)], packets, "router crossings"), routers);
        if (m == 0) continue;
        const std::int64_t first = k0 + ((d - k0 % nr) % nr + nr) % nr;  // the first cycle of dimension d
        bound = std::max(bound, cycle * (first + (m - 1) * nr + 1));
      }
    }
    // Injection: a router chip that takes at most I packets a cycle from its processors needs
    // ceil(ppr K / I) cycles to take them all.
    if (c > 0 && s.machine.router_injections > 0)
      bound = std::max(
          bound, cycle * (k0 + ceil_div(checked_mul(ppr, packets, "router injections"), s.machine.router_injections)));
    pr.time = bound;
    return pr;
  }
  pr.source = "TR-572 Fig. 14(b): the anti-diagonal block pipelined over n hops, no contention";
  const std::int64_t steps = packets + t.n - 1;
  pr.startups = steps;
  pr.msg_startups = t.n;
  pr.element_transfers = steps * std::min(B, D);
  if (D % std::min(B, D) != 0) pr.element_transfers = (t.n - 1) * std::min(B, D) + D;  // last packet shorter
  pr.copies = 2 * D;  // to the send buffer and back (§8.2.1), as on the SPT path
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

// ---- Gray-coded columns (§6.3) ----

Task<> transpose_gray_naive(Node& self, Params p) {
  const TwoD t = tr572::two_d(p, self.topology(), true);
  const NodeId x = self.id(), cmask = t.side - 1;
  const int h = t.h;
  // Where each block is after the two conversions: (G(I) || J) from (I || G(J)).
  const auto converted = [&](NodeId s) { return (gray::encode(s >> h) << h) | gray::decode(s & cmask); };
  Buffer mine = t.initial(x, self.data_mode());
  // Row field binary -> Gray, bit i flipped where bit i+1 is set (i = 0 .. h-2), in each column
  // subcube; then column field Gray -> binary, i = h-2 down to 0, bit i flipped where bit i+1
  // (already binary) is set: exchanges between pairs that share that bit.
  std::vector<int> dims;
  std::vector<std::function<bool(NodeId)>> moves;
  for (int i = 0; i + 1 < h; ++i) {
    dims.push_back(h + i);
    moves.push_back([=](NodeId node) { return ((node >> (h + i + 1)) & 1) != 0; });
  }
  for (int i = h - 2; i >= 0; --i) {
    dims.push_back(i);
    moves.push_back([=](NodeId node) { return ((node >> (i + 1)) & 1) != 0; });
  }
  for (std::size_t k = 0; k < dims.size(); ++k) {
    if (!moves[k](x)) continue;  // the condition bit is never the one flipped: x's and its partner's
    auto s = self.send(dims[k], std::move(mine));
    auto r = self.recv(dims[k]);
    co_await all_of(s, r);
    mine = r.take();
  }
  // Then the plain SPT steps on the converted addresses: the block now at c goes to tr(c).
  const auto tr = [&](NodeId c) { return ((c & cmask) << h) | (c >> h); };
  // The conversion's inverse: the source whose block is at c after it.
  const auto source_at = [&](NodeId c) { return (gray::decode(c >> h) << h) | gray::encode(c & cmask); };
  std::vector<std::pair<NodeId, Buffer>> held;
  held.emplace_back(source_at(x), std::move(mine));
  // The blocks that can pass here: those now at the start of an SPT path through x.
  std::vector<NodeId> candidates;
  for (const NodeId c : path_sources_through(t, x)) candidates.push_back(source_at(c));
  std::sort(candidates.begin(), candidates.end());
  Buffer got = co_await tr572::step_by_step(
      self, spt_order(t), [&](NodeId s) { return converted(s); },
      [&](NodeId s) { return converted(s) ^ tr(converted(s)); }, std::move(held), std::move(candidates));
  self.set_result(t.assemble(got, self.data_mode()));
}

Task<> transpose_gray_combined(Node& self, Params p) {
  const TwoD t = tr572::two_d(p, self.topology(), true);
  const NodeId x = self.id();
  const int h = t.h;
  Buffer buf = t.initial(x, self.data_mode());
  bool even_row = true, even_parity_col = true;
  for (int j = h - 1; j >= 0; --j) {
    const int r = j + h, c = j;
    const bool br = ((x >> r) & 1) != 0, bc = ((x >> c) & 1) != 0;
    // TR-572 §6.3, the case table on (even-block-row, even-parity-block-column, bit j+n/2, bit j).
    const bool relay = (even_row && even_parity_col && br == bc) || (!even_row && !even_parity_col && br != bc);
    const bool col_first = (even_row && !even_parity_col && br == bc) || (!even_row && even_parity_col && br != bc);
    if (relay) {  // (TT00), (TT11), (FF01), (FF10): recv(tmp, j+n/2); send(tmp, j)
      Buffer tmp = co_await self.recv(r);
      co_await self.send(c, std::move(tmp));
    } else if (col_first) {  // (TF00), (TF11), (FT01), (FT10): send(buf, j); recv(buf, j+n/2)
      co_await self.send(c, std::move(buf));
      buf = co_await self.recv(r);
    } else {  // the other eight: send(buf, j+n/2); recv(buf, j)
      co_await self.send(r, std::move(buf));
      buf = co_await self.recv(c);
    }
    even_row = !br;
    if (bc) even_parity_col = !even_parity_col;
  }
  self.set_result(t.assemble(buf, self.data_mode()));
}

Prediction predict_gray(const Setup& s, bool naive) {
  const TwoD t = tr572::two_d(s.params, s.topology, true);
  Prediction pr;
  const std::int64_t steps = t.n == 0 ? 0 : (naive ? 2 * t.n - 2 : t.n);
  pr.source = naive ? "TR-572 §6.3: conversions then transpose, 2n - 2 routing steps of PQ/N"
                    : "TR-572 §6.3: combined transpose and conversion, n routing steps of PQ/N";
  pr.startups = steps * ceil_div(t.D(), s.params.B);
  pr.msg_startups = steps;
  pr.element_transfers = steps * t.D();
  // Naive: steps are not synchronized; a node that skips a conversion step runs ahead and its
  // sends queue at a partner still busy, so the 2n - 2 steps are an approximation (measured).
  pr.relation = naive ? Relation::approx : Relation::exact;
  pr.tolerance = naive ? 0.25 : 0.0;
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

const std::vector<std::string> kParams2d = {"P", "Q", "B"};

Verdict verify_binary(const Setup& s, const std::vector<Buffer>& results) {
  return tr572::two_d(s.params, s.topology, false).verify(s, results);
}
Verdict verify_gray(const Setup& s, const std::vector<Buffer>& results) {
  return tr572::two_d(s.params, s.topology, true).verify(s, results);
}

const Registration kRegistrationTranspose2d{[](Registry& r) {
  r.add({.name = "transpose.spt",
         .summary = "2-D transpose along one path per node, pipelined in packets of B (Single Path Transpose)",
         .source = "TR-572 §6.1.1",
         .params = kParams2d,
         .required = {"P", "Q"},
         .check = tr572::check_two_d,
         .process = transpose_spt,
         .predict = [](const Setup& s) { return predict_paths(s, 1); },
         .verify = verify_binary,
         .one_port = {.row = "(⌈PQ/(BN)⌉ + n - 1)(B t_c + tau), an all-port schedule",
                      .relation = "lower bound (the paths queue at one port)",
                      .deviations = {{Relation::lower_bound, 0, 9.02, "n=8 P=2^6 Q=2^12 B=1"}}},
         .all_port = {.row = "(⌈PQ/(BN)⌉ + n - 1)(B t_c + tau)",
                      .relation = "exact when B divides PQ/N, else upper bound",
                      .deviations = {{Relation::upper_bound, 0, 0.999, "n=2 P=2^2 Q=2^3 B=3"}}}});
  r.add({.name = "transpose.dpt",
         .summary = "2-D transpose along two paths per node, each half the block (Dual Paths Transpose)",
         .source = "TR-572 §6.1.2",
         .params = kParams2d,
         .required = {"P", "Q"},
         .check = tr572::check_two_d,
         .process = transpose_dpt,
         .predict = [](const Setup& s) { return predict_paths(s, 2); },
         .verify = verify_binary,
         .one_port = {.row = "(⌈PQ/(2BN)⌉ + n - 1)(B t_c + tau), an all-port schedule",
                      .relation = "lower bound (the paths queue at one port)",
                      .deviations = {{Relation::lower_bound, 0, 18, "n=8 P=2^10 Q=2^11 B=3"}}},
         .all_port = {.row = "(⌈PQ/(2BN)⌉ + n - 1)(B t_c + tau)",
                      .relation = "exact when B divides PQ/2N, else upper bound",
                      .deviations = {{Relation::upper_bound, 0, 0.998, "n=2 P=2^2 Q=2^3 B=3"}}}});
  r.add({.name = "transpose.spt_steps",
         .summary = "2-D transpose step by step on one port, as on the iPSC: n steps of whole blocks",
         .source = "TR-572 §8.2.1, §9",
         .params = kParams2d,
         .required = {"P", "Q"},
         .check = tr572::check_two_d,
         .process = transpose_spt_steps,
         .predict = predict_spt_steps,
         .verify = verify_binary,
         .one_port = {.row = "n((PQ/N) t_c + ⌈PQ/(BN)⌉ tau) + 2 (PQ/N) t_copy", .relation = "exact"},
         .all_port = {.row = "the same", .relation = "exact"}});
  r.add({.name = "transpose.router_2d",
         .summary = "2-D transpose by one routed send per node (the routing logic: iPSC Fig. 14(b), the CM router)",
         .source = "TR-572 §8.2.1 Fig. 14(b), §8.2.2",
         .params = kParams2d,
         .required = {"P", "Q"},
         .check = tr572::check_two_d,
         .process = transpose_router_2d,
         .predict = predict_router_2d,
         .verify = verify_binary,
         .one_port = {.row = "store-and-forward: (⌈PQ/(BN)⌉ + n - 1)(b t_c + tau) + 2 (PQ/N) t_copy; pipelined: tau + "
                             "the larger of ⌈PQ/(BN)⌉ + n - 1 dimension cycles and each dimension's crossings over "
                             "the routers, one a router in each of its cycles (about (K/2) n cycles for K packets "
                             "a node)",
                      .relation = "lower bound (routes collide)",
                      .deviations = {{Relation::lower_bound, 0, 17.4, "n=8 P=2^6 Q=2^12 B=1"}}},
         .all_port = {.row = "the same",
                      .relation = "lower bound (routes collide)",
                      .deviations = {{Relation::lower_bound, 0, 7.85, "n=8 P=2^6 Q=2^12 B=1"}}}});
  r.add({.name = "transpose.gray_naive",
         .summary = "2-D transpose with Gray-coded columns: convert, then transpose (2n - 2 steps)",
         .source = "TR-572 §6.3, Fig. 15",
         .params = kParams2d,
         .required = {"P", "Q"},
         .check = tr572::check_two_d,
         .process = transpose_gray_naive,
         .predict = [](const Setup& s) { return predict_gray(s, true); },
         .verify = verify_gray,
         .one_port = {.row = "(2n - 2)((PQ/N) t_c + ⌈PQ/(BN)⌉ tau)",
                      .relation = "approx <= 25 % (unsynchronized steps)",
                      .deviations = {{Relation::approx, 0.25, 0.149, "n=6 P=2^8 Q=2^8 B=3"}}},
         .all_port = {.row = "the same",
                      .relation = "approx <= 25 %",
                      .deviations = {{Relation::approx, 0.25, 0.167, "n=4 P=2^2 Q=2^3 B=1"}}}});
  r.add({.name = "transpose.gray_combined",
         .summary = "2-D transpose with Gray-coded columns, conversion combined with the transpose (n steps)",
         .source = "TR-572 §6.3 pseudo-code, Fig. 15",
         .params = kParams2d,
         .required = {"P", "Q"},
         .check = tr572::check_two_d,
         .process = transpose_gray_combined,
         .predict = [](const Setup& s) { return predict_gray(s, false); },
         .verify = verify_gray,
         .one_port = {.row = "n((PQ/N) t_c + ⌈PQ/(BN)⌉ tau)", .relation = "exact"},
         .all_port = {.row = "the same", .relation = "exact"}});
}};

}  // namespace
}  // namespace cubesim
