// Gao §4's tree and clique lines (algorithms/mesh/lines.hpp has the schedules and their sources).
#include "algorithms/mesh/lines.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "algorithms/collectives/tree_routing.hpp"
#include "algorithms/mesh/ring.hpp"

namespace cubesim::mesh {

namespace {

// A balanced binary tree of q nodes in heap order: c's children 2c+1 and 2c+2, its parent (c-1)/2.
struct Heap {
  std::int64_t q;
  [[nodiscard]] std::vector<std::int64_t> kids(std::int64_t c) const {
    std::vector<std::int64_t> k;
    for (std::int64_t d : {2 * c + 1, 2 * c + 2})
      if (d < q) k.push_back(d);
    return k;
  }
  [[nodiscard]] std::int64_t size(std::int64_t c) const {  // nodes of c's subtree
    if (c >= q) return 0;
    return 1 + size(2 * c + 1) + size(2 * c + 2);
  }
  void preorder(std::int64_t c, std::vector<std::int64_t>& out) const {
    if (c >= q) return;
    out.push_back(c);
    preorder(2 * c + 1, out);
    preorder(2 * c + 2, out);
  }
};

/// The next message from each child of this node (coordinate c) in its line's tree, received at
/// once, left child first.
Task<std::vector<Buffer>> from_children(Node& self, const Lattice& lat, int axis, const Heap& h, std::int64_t c,
                                        int tag) {
  std::vector<Buffer> got;
  const auto kids = h.kids(c);
  if (kids.empty()) co_return got;
  std::vector<Op> rs;
  for (std::int64_t k : kids) rs.push_back(self.recv_from(lat.line_node(self.id(), axis, k), tag));
  co_await all_of(rs);
  for (Op& r : rs) got.push_back(r.take());
  co_return got;
}

/// True when a node serves its two tree neighbours of one phase at once: all ports, or k >= 2.
bool concurrent(const Machine& m) {
  return m.ports.kind == PortKind::all || (m.ports.kind == PortKind::k && m.ports.k >= 2);
}

Task<Buffer> tree_allgather(Node& self, Lattice lat, int axis, Buffer mine, int tag) {
  const Heap h{lat.extent(axis)};
  const std::int64_t c = lat.coord(self.id(), axis), M = mine.size();
  const auto at = [&](std::int64_t i) { return lat.line_node(self.id(), axis, i); };
  const auto kids = h.kids(c);
  // Up: this subtree's blocks in preorder (own, left subtree, right subtree).
  Buffer batch = std::move(mine);
  const std::vector<Buffer> up = co_await from_children(self, lat, axis, h, c, tag);
  for (const Buffer& b : up) batch.append(b);
  if (batch.size() != h.size(c) * M) throw std::logic_error("line_allgather: a batch of the wrong size");
  Buffer full;
  if (c > 0) {
    co_await self.send_to(at((c - 1) / 2), std::move(batch), tag);
    full = co_await self.recv_from(at((c - 1) / 2), tag);
  } else {  // the root: preorder to coordinate order
    std::vector<std::int64_t> order;
    h.preorder(0, order);
    std::vector<std::int64_t> slot(static_cast<std::size_t>(h.q));
    for (std::size_t i = 0; i < order.size(); ++i)
      slot[static_cast<std::size_t>(order[i])] = static_cast<std::int64_t>(i);
    for (std::int64_t x = 0; x < h.q; ++x) full.append(batch.slice(slot[static_cast<std::size_t>(x)] * M, M));
  }
  if (full.size() != h.q * M) throw std::logic_error("line_allgather: the line's data of the wrong size");
  // Down: the whole line's data to every child.
  if (!kids.empty()) {
    std::vector<Op> ss;
    for (std::int64_t k : kids) ss.push_back(self.send_to(at(k), full, tag));
    co_await all_of(ss);
  }
  co_return full;
}

Task<Buffer> tree_reduce_scatter(Node& self, Lattice lat, int axis, std::int64_t M, Buffer blocks, int tag) {
  const Heap h{lat.extent(axis)};
  const std::int64_t c = lat.coord(self.id(), axis);
  const auto at = [&](std::int64_t i) { return lat.line_node(self.id(), axis, i); };
  const auto kids = h.kids(c);
  // Up: the partial sums of all q pieces, children's added in.
  Buffer acc = std::move(blocks);
  const std::vector<Buffer> up = co_await from_children(self, lat, axis, h, c, tag);
  for (const Buffer& b : up) routing::add_into(acc, b);
  if (!kids.empty()) co_await self.compute(static_cast<std::int64_t>(kids.size()) * h.q * M);
  // Down: the pieces of this subtree, in preorder.
  Buffer mine;
  if (c > 0) {
    co_await self.send_to(at((c - 1) / 2), std::move(acc), tag);
    mine = co_await self.recv_from(at((c - 1) / 2), tag);
  } else {
    std::vector<std::int64_t> order;
    h.preorder(0, order);
    for (std::int64_t x : order) mine.append(acc.slice(x * M, M));
  }
  if (mine.size() != h.size(c) * M) throw std::logic_error("line_reduce_scatter: pieces of the wrong size");
  if (!kids.empty()) {
    std::vector<Op> ss;
    std::int64_t off = M;
    for (std::int64_t k : kids) {
      const std::int64_t n = h.size(k) * M;
      ss.push_back(self.send_to(at(k), mine.slice(off, n), tag));
      off += n;
    }
    co_await all_of(ss);
  }
  co_return mine.slice(0, M);
}

Task<Buffer> clique_allgather(Node& self, Lattice lat, int axis, Buffer mine, int tag) {
  const std::int64_t q = lat.extent(axis), c = lat.coord(self.id(), axis);
  const auto at = [&](std::int64_t i) { return lat.line_node(self.id(), axis, ((i % q) + q) % q); };
  std::vector<Buffer> got(static_cast<std::size_t>(q));
  if (self.machine().ports.kind == PortKind::all) {
    std::vector<Op> ops;
    for (std::int64_t o = 1; o < q; ++o) ops.push_back(self.send_to(at(c + o), mine, tag));
    for (std::int64_t o = 1; o < q; ++o) ops.push_back(self.recv_from(at(c - o), tag));
    co_await all_of(ops);
    for (std::int64_t o = 1; o < q; ++o)
      got[static_cast<std::size_t>((c - o + q) % q)] = ops[static_cast<std::size_t>(q - 1 + o - 1)].take();
  } else {
    for (std::int64_t o = 1; o < q; ++o) {  // step o: a permutation, c -> c + o
      auto s = self.send_to(at(c + o), mine, tag);
      auto r = self.recv_from(at(c - o), tag);
      co_await all_of(s, r);
      got[static_cast<std::size_t>((c - o + q) % q)] = r.take();
    }
  }
  got[static_cast<std::size_t>(c)] = std::move(mine);
  Buffer full;
  for (Buffer& b : got) full.append(b);
  co_return full;
}

Task<Buffer> clique_reduce_scatter(Node& self, Lattice lat, int axis, std::int64_t M, Buffer blocks, int tag) {
  const std::int64_t q = lat.extent(axis), c = lat.coord(self.id(), axis);
  const auto at = [&](std::int64_t i) { return lat.line_node(self.id(), axis, ((i % q) + q) % q); };
  const auto piece = [&](std::int64_t x) { return blocks.slice(((x % q) + q) % q * M, M); };
  Buffer acc = piece(c);
  if (self.machine().ports.kind == PortKind::all) {
    std::vector<Op> ops;
    for (std::int64_t o = 1; o < q; ++o) ops.push_back(self.send_to(at(c + o), piece(c + o), tag));
    for (std::int64_t o = 1; o < q; ++o) ops.push_back(self.recv_from(at(c - o), tag));
    co_await all_of(ops);
    for (std::int64_t o = 1; o < q; ++o) routing::add_into(acc, ops[static_cast<std::size_t>(q - 1 + o - 1)].take());
    if (q > 1) co_await self.compute((q - 1) * M);
  } else {
    for (std::int64_t o = 1; o < q; ++o) {
      auto s = self.send_to(at(c + o), piece(c + o), tag);
      auto r = self.recv_from(at(c - o), tag);
      co_await all_of(s, r);
      routing::add_into(acc, r.take());
      co_await self.compute(M);
    }
  }
  co_return acc;
}

// ---- Costs -----------------------------------------------------------------------------------

LineCost plus(LineCost a, const LineCost& b) {
  a.terms += b.terms;
  a.flops += b.flops;
  return a;
}
LineCost hop(std::int64_t elements, std::int64_t B) { return {route_terms(elements, B, 1), 0}; }

/// When the last of some messages has arrived at one node: each is released at its sender's
/// ready cost and takes its hop; on all ports (or k >= 2: a tree node has two children) they
/// travel at once, on one port the node's incoming slot serves them first come first served
/// (the earliest released first; a single server, work-conserving: its last finish does not
/// depend on how their packets interleave).
LineCost arrivals(const Machine& m, std::vector<std::pair<LineCost, LineCost>> msgs) {
  const auto t = [&](const LineCost& c) { return line_time(m, c); };
  LineCost done;
  if (concurrent(m)) {
    for (const auto& [ready, h] : msgs)
      if (LineCost a = plus(ready, h); t(a) > t(done)) done = a;
    return done;
  }
  std::stable_sort(msgs.begin(), msgs.end(), [&](const auto& a, const auto& b) { return t(a.first) < t(b.first); });
  for (const auto& [ready, h] : msgs) done = plus(t(ready) > t(done) ? ready : done, h);
  return done;
}

/// The tree's up phase: when each node is ready to send to its parent (after its children's
/// messages, of `up(k)` elements each, have arrived, and `adds(c)` flops).
template <class Up, class Adds>
std::vector<LineCost> up_phase(const Machine& m, const Heap& h, std::int64_t B, Up up, Adds adds) {
  std::vector<LineCost> ready(static_cast<std::size_t>(h.q));
  for (std::int64_t c = h.q - 1; c >= 0; --c) {
    std::vector<std::pair<LineCost, LineCost>> msgs;
    for (std::int64_t k : h.kids(c)) msgs.emplace_back(ready[static_cast<std::size_t>(k)], hop(up(k), B));
    LineCost r = msgs.empty() ? LineCost{} : arrivals(m, msgs);
    r.flops += adds(c);
    ready[static_cast<std::size_t>(c)] = r;
  }
  return ready;
}

/// The down phase from the root ready at `root`: a node's messages to its children (`down(k)`
/// elements) at once on all ports, one after the other (left first) on one; the latest arrival.
template <class Down>
LineCost down_phase(const Machine& m, const Heap& h, std::int64_t B, LineCost root, Down down) {
  std::vector<LineCost> have(static_cast<std::size_t>(h.q));
  have[0] = root;
  LineCost last = root;
  for (std::int64_t c = 0; c < h.q; ++c) {
    LineCost out = have[static_cast<std::size_t>(c)];
    for (std::int64_t k : h.kids(c)) {
      const LineCost a = plus(concurrent(m) ? have[static_cast<std::size_t>(c)] : out, hop(down(k), B));
      out = a;
      have[static_cast<std::size_t>(k)] = a;
      if (line_time(m, a) > line_time(m, last)) last = a;
    }
  }
  return last;
}

bool is_tree(const Lattice& lat) { return lat.topology().kind() == Topology::Kind::mesh_of_trees; }

}  // namespace

Time line_time(const Machine& m, const LineCost& c) { return terms_time(m, c.terms) + m.t_a * c.flops; }

Task<Buffer> line_allgather(Node& self, Lattice lat, int axis, Buffer mine, int tag) {
  if (lat.extent(axis) == 1) co_return mine;
  if (is_tree(lat)) co_return co_await tree_allgather(self, lat, axis, std::move(mine), tag);
  co_return co_await clique_allgather(self, lat, axis, std::move(mine), tag);
}

Task<Buffer> line_reduce_scatter(Node& self, Lattice lat, int axis, std::int64_t M, Buffer blocks, int tag) {
  if (lat.extent(axis) == 1) co_return blocks;
  if (is_tree(lat)) co_return co_await tree_reduce_scatter(self, lat, axis, M, std::move(blocks), tag);
  co_return co_await clique_reduce_scatter(self, lat, axis, M, std::move(blocks), tag);
}

LineCost line_allgather_cost(const Machine& m, const Lattice& lat, int axis, std::int64_t M, std::int64_t B) {
  const std::int64_t q = lat.extent(axis);
  if (q == 1) return {};
  if (!is_tree(lat)) {
    const LineCost one = hop(M, B);
    return m.ports.kind == PortKind::all ? one : LineCost{one.terms.times(q - 1), 0};
  }
  const Heap h{q};
  const auto ready = up_phase(
      m, h, B, [&](std::int64_t k) { return h.size(k) * M; }, [](std::int64_t) { return 0; });
  return down_phase(m, h, B, ready[0], [&](std::int64_t) { return q * M; });
}

LineCost line_reduce_scatter_cost(const Machine& m, const Lattice& lat, int axis, std::int64_t M, std::int64_t B) {
  const std::int64_t q = lat.extent(axis);
  if (q == 1) return {};
  if (!is_tree(lat)) {
    const LineCost step{hop(M, B).terms, M};
    return m.ports.kind == PortKind::all ? LineCost{step.terms, (q - 1) * M}
                                         : LineCost{step.terms.times(q - 1), (q - 1) * M};
  }
  const Heap h{q};
  const auto ready = up_phase(
      m, h, B, [&](std::int64_t) { return q * M; },
      [&](std::int64_t c) { return static_cast<std::int64_t>(h.kids(c).size()) * q * M; });
  return down_phase(m, h, B, ready[0], [&](std::int64_t k) { return h.size(k) * M; });
}

}  // namespace cubesim::mesh
