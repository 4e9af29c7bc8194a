#include "algorithms/mesh/ring.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "algorithms/collectives/tree_routing.hpp"

namespace cubesim::mesh {

namespace {
std::int64_t mod(std::int64_t a, std::int64_t L) { return ((a % L) + L) % L; }
}  // namespace

Arms broadcast_arms(const Lattice& lat, int axis, std::int64_t root, bool split) {
  const std::int64_t L = lat.extent(axis);
  if (!lat.wraps()) return {L - 1 - root, root};
  return split ? Arms{L / 2, (L - 1) / 2} : Arms{L - 1, 0};  // ⌈(L-1)/2⌉ and ⌊(L-1)/2⌋
}

Arms broadcast_hops(const Lattice& lat, int axis, std::int64_t root, bool split) {
  const Arms nodes = broadcast_arms(lat, axis, root, split);
  if (!lat.emulated()) return nodes;
  Arms hops;  // an emulated grid's ring edges are routes of several hops
  for (std::int64_t i = 0; i < nodes.plus; ++i) hops.plus += lat.edge_hops(axis, root + i);
  for (std::int64_t i = 0; i < nodes.minus; ++i) hops.minus += lat.edge_hops(axis, root - 1 - i);
  return hops;
}

Task<Buffer> line_broadcast(Node& self, Lattice lat, int axis, std::int64_t root, std::int64_t M, Buffer msg,
                            bool split, int tag) {
  const std::int64_t L = lat.extent(axis), c = lat.coord(self.id(), axis);
  const Arms arms = broadcast_arms(lat, axis, root, split);
  const std::int64_t B = self.packet_elements(), packets = std::max<std::int64_t>(ceil_div(M, B), 1);
  // This node's arm (+1 or -1) and index on it (0: the root).
  std::int64_t d = lat.wraps() ? mod(c - root, L) : c - root;
  int dir = 1;
  if (d < 0 || (lat.wraps() && d > arms.plus)) {
    dir = -1;
    d = lat.wraps() ? L - d : -d;
  }
  const auto at = [&](int sgn, std::int64_t i) {
    return lat.line_node(self.id(), axis, lat.wraps() ? mod(root + sgn * i, L) : root + sgn * i);
  };
  if (d == 0) {
    const bool one_port = self.machine().ports.kind != PortKind::all;
    for (std::int64_t j = 0; j < packets; ++j) {
      const Buffer chunk = msg.slice(std::min(j * B, M), std::min(B, M - std::min(j * B, M)));
      if (arms.plus > 0 && arms.minus > 0 && !one_port) {
        auto a = self.send_to(at(1, 1), chunk, tag);
        auto b = self.send_to(at(-1, 1), chunk, tag);
        co_await all_of(a, b);
      } else {
        if (arms.plus > 0) co_await self.send_to(at(1, 1), chunk, tag);
        if (arms.minus > 0) co_await self.send_to(at(-1, 1), chunk, tag);
      }
    }
    co_return msg;
  }
  const std::int64_t reach = dir > 0 ? arms.plus : arms.minus;
  const NodeId from = at(dir, d - 1);
  Buffer all;
  for (std::int64_t j = 0; j < packets; ++j) {
    Buffer chunk = co_await self.recv_from(from, tag);
    if (d < reach) co_await self.send_to(at(dir, d + 1), chunk, tag);
    all.append(chunk);
  }
  co_return all;
}

namespace {
/// The tree's positions: relative to the root (cube: XOR of the Gray segment's bits; else mod L).
struct TreeLine {
  const Lattice& lat;
  int axis;
  std::int64_t root, L;
  [[nodiscard]] bool cube() const { return lat.embed() == Embed::cube; }
  [[nodiscard]] std::int64_t pos(NodeId x) const {
    const std::int64_t c = lat.coord(x, axis);
    return cube() ? (gray::encode(c) ^ gray::encode(root)) : mod(c - root, L);
  }
  [[nodiscard]] NodeId at(NodeId x, std::int64_t d) const {
    return lat.line_node(x, axis, cube() ? gray::decode(d ^ gray::encode(root)) : mod(root + d, L));
  }
  /// The children of d, the farthest first.
  [[nodiscard]] std::vector<std::int64_t> children(std::int64_t d) const {
    std::vector<std::int64_t> out;
    std::int64_t top = 1;
    while (top < L) top *= 2;
    const std::int64_t below = d == 0 ? top : (d & -d);
    for (std::int64_t b = below / 2; b >= 1; b /= 2)
      if (d + b < L) out.push_back(d + b);
    return out;
  }
};
}  // namespace

Task<Buffer> line_tree_broadcast(Node& self, Lattice lat, int axis, std::int64_t root, std::int64_t M, Buffer msg,
                                 int tag) {
  const TreeLine t{lat, axis, root, lat.extent(axis)};
  const std::int64_t d = t.pos(self.id());
  if (d != 0) msg = co_await self.recv_from(t.at(self.id(), d & (d - 1)), tag);
  if (msg.size() != M) throw std::logic_error("line_tree_broadcast: a message of the wrong size");
  const auto kids = t.children(d);
  if (t.cube() && self.machine().ports.kind == PortKind::all) {
    std::vector<Request> sends;
    for (std::int64_t c : kids) sends.push_back(self.start(self.send_to(t.at(self.id(), c), msg, tag)));
    for (Request& r : sends) co_await r;
  } else {
    for (std::int64_t c : kids) co_await self.send_to(t.at(self.id(), c), msg, tag);
  }
  co_return msg;
}

Task<Buffer> ring_shift(Node& self, Lattice lat, int axis, Buffer mine, int tag) {
  if (lat.extent(axis) == 1) co_return mine;
  const std::int64_t q = lat.ring_pos(self.id(), axis);
  auto snd = self.send_to(lat.ring_node(self.id(), axis, q + 1), std::move(mine), tag);
  auto rcv = self.recv_from(lat.ring_node(self.id(), axis, q - 1), tag);
  co_await all_of(snd, rcv);
  co_return rcv.take();
}

Task<Buffer> ring_allgather(Node& self, Lattice lat, int axis, Buffer mine, int tag) {
  const std::int64_t L = lat.extent(axis), q = lat.ring_pos(self.id(), axis), M = mine.size();
  Buffer all = Buffer::sized(L * M);
  if (mine.has_data()) all = Buffer::make(L * M, true, [](std::int64_t) { return Element{0}; });
  const NodeId next = lat.ring_node(self.id(), axis, q + 1), prev = lat.ring_node(self.id(), axis, q - 1);
  all.write(lat.coord(self.id(), axis) * M, mine);
  Buffer cur = std::move(mine);
  for (std::int64_t s = 1; s < L; ++s) {
    auto snd = self.send_to(next, std::move(cur), tag);
    auto rcv = self.recv_from(prev, tag);
    co_await all_of(snd, rcv);
    cur = rcv.take();
    all.write(lat.coord(lat.ring_node(self.id(), axis, q - s), axis) * M, cur);
  }
  co_return all;
}

Task<Buffer> ring_reduce_scatter(Node& self, Lattice lat, int axis, std::int64_t M, Buffer blocks, int tag) {
  const std::int64_t L = lat.extent(axis), q = lat.ring_pos(self.id(), axis);
  const auto own = [&](std::int64_t pos) {  // this node's block for the node at ring position pos
    return blocks.slice(lat.coord(lat.ring_node(self.id(), axis, pos), axis) * M, M);
  };
  if (L == 1) co_return own(q);
  const NodeId next = lat.ring_node(self.id(), axis, q + 1), prev = lat.ring_node(self.id(), axis, q - 1);
  Buffer cur = own(q - 1);  // the partial for the predecessor goes first: L - 1 hops ahead
  for (std::int64_t s = 1; s < L; ++s) {
    auto snd = self.send_to(next, std::move(cur), tag);
    auto rcv = self.recv_from(prev, tag);
    co_await all_of(snd, rcv);
    cur = rcv.take();  // the partial for the node s + 1 positions back
    routing::add_into(cur, own(q - 1 - s));
    co_await self.compute(M);
  }
  co_return cur;
}

Time terms_time(const Machine& m, const RowTerms& t) {
  return m.tau * t.startups + m.t_c * t.elements + m.tau_msg * t.messages;
}

RowTerms broadcast_terms(const Machine& m, std::int64_t M, std::int64_t B, Arms arms) {
  const std::int64_t k = std::max<std::int64_t>(ceil_div(M, B), 1);
  if (m.ports.kind == PortKind::all || arms.plus == 0 || arms.minus == 0) {
    // Each arm a flow shop of k packets through H equal stages: sum of the packets plus H - 1
    // times the first (the largest).
    // Every packet is a message of its own: a message start-up with each.
    RowTerms p = route_terms(M, B, arms.plus), q = route_terms(M, B, arms.minus);
    p.messages = p.startups, q.messages = q.startups;
    return terms_time(m, p) >= terms_time(m, q) ? p : q;
  }
  // One port, two arms: the root's k sends to the + arm are released every two packet times,
  // those to the - arm one packet time later. A packet j released at r_j into a flow shop of H
  // stages ends at most r_j + the longest lattice path from (j, 1) to (k, H): t_j + ... + t_k +
  // (H - 1) max(t_j..t_k). Only j = k - 1 and j = k can be the longest (earlier j lose 2t of
  // release per packet gained). Full packets b = min(B, M), the last b' = M - (k - 1) b.
  const std::int64_t b = std::min(B, M), last = M - (k - 1) * b;
  const auto terms = [&](std::int64_t full, std::int64_t lasts) {
    return RowTerms{full + lasts, full * b + lasts * last, full + lasts};
  };
  std::vector<RowTerms> cands;
  if (k >= 2) {
    cands.push_back(terms(2 * (k - 2) + arms.plus, 1));       // + arm, j = k - 1
    cands.push_back(terms(2 * (k - 2) + 1 + arms.minus, 1));  // - arm, j = k - 1
    cands.push_back(terms(2 * (k - 1), arms.plus));           // + arm, j = k
    cands.push_back(terms(2 * (k - 1), 1 + arms.minus));      // - arm, j = k
  } else {
    cands.push_back(terms(0, arms.plus));
    cands.push_back(terms(0, 1 + arms.minus));
  }
  return *std::max_element(cands.begin(), cands.end(),
                           [&](const RowTerms& x, const RowTerms& y) { return terms_time(m, x) < terms_time(m, y); });
}

RowTerms tree_broadcast_terms(const Machine& m, const Lattice& lat, int axis, std::int64_t root, std::int64_t M,
                              std::int64_t B) {
  const TreeLine t{lat, axis, root, lat.extent(axis)};
  const bool together = t.cube() && m.ports.kind == PortKind::all;
  const RowTerms busy = route_terms(M, B, 1);  // the sender's port: every packet's first hop
  const auto plus = [](RowTerms a, const RowTerms& b) { return a += b; };
  std::vector<RowTerms> arrive(static_cast<std::size_t>(t.L));
  RowTerms latest;
  for (std::int64_t d = 0; d < t.L; ++d) {  // parents before children (a child's d is larger)
    RowTerms start = arrive[static_cast<std::size_t>(d)];
    for (std::int64_t c : t.children(d)) {
      const int h = lat.topology().distance(t.at(0, d), t.at(0, c));
      arrive[static_cast<std::size_t>(c)] = plus(start, route_terms(M, B, h));
      if (terms_time(m, arrive[static_cast<std::size_t>(c)]) > terms_time(m, latest))
        latest = arrive[static_cast<std::size_t>(c)];
      if (!together) start += busy;
    }
  }
  return latest;
}

RowTerms shift_terms(const Lattice& lat, int axis, std::int64_t M, std::int64_t B) {
  return route_terms(M, B, lat.ring_hops(axis));
}

RowTerms ring_steps_terms(const Lattice& lat, int axis, std::int64_t M, std::int64_t B) {
  const std::int64_t L = lat.extent(axis);
  if (L == 1) return {};
  const int h = lat.ring_hops(axis);
  if (h == 1) return route_terms(M, B, 1).times(L - 1);
  // The steps chain along L - 1 consecutive ring edges: all but one, the slowest chain leaving
  // out the shortest edge (a message's terms grow with its hops). The folded ring: L - 2 edges of
  // two hops and the two of one at the folds; an emulated grid: its routes.
  RowTerms t;
  int shortest = h;
  for (std::int64_t q = 0; q < L; ++q) {
    const int e = lat.edge_hops(axis, q);
    t += route_terms(M, B, e);
    shortest = std::min(shortest, e);
  }
  const RowTerms cut = route_terms(M, B, shortest);
  return {t.startups - cut.startups, t.elements - cut.elements, t.messages - cut.messages};
}

}  // namespace cubesim::mesh
