// Two-dimensional matrix multiplication on the Boolean n-cube — Johnsson & Ho, TR-530 §5.2,
// Tables 8-12, Figs 15-19. A <- C D + E (matmul.hpp) on an N1 x N2 processor grid, N1 N2 = N,
// Gray-coded (§5.2): the grid row index k is IG of the high n1 address bits, the column index l IG
// of the low n2 bits, so a processor row is a subcube of the least n2 dimensions and a processor
// column one of the other n1 (the Cannon code: "rid = IG(⌊pid/N2⌋), cid = IG(pid mod N2)").
// Processor (k, l) holds the blocks C_kl (⌈P/N1⌉ x ⌈Q/N2⌉), D_kl (⌈Q/N1⌉ x ⌈R/N2⌉) and E_kl, and
// ends with A_kl (⌈P/N1⌉ x ⌈R/N2⌉). N1 defaults to 2^⌈n/2⌉.
//
//  matmul2d.a1      A1 (Fig. 15, the SBT-based variant of §5.2.1): all-to-all broadcast of C
//                   within processor rows and of D within processor columns, then one multiply
//                   C_{k*} D_{*l}. One-port: SBT-b(1,N2) then SBT-b(1,N1) (Table 9 A1(1), exact).
//                   All-port: nRSBT-b(n2,N2) and nRSBT-b(n1,N1) at once on their disjoint
//                   dimensions, so the slower sets the time: Table 11's max (the §5.2.1 text's
//                   "min" does not hold; docs/matmul.md).
//  matmul2d.cannon  Cannon's algorithm (Fig. 17, §5.2.1 code) on an N1 x N2 grid, L = max(N1, N2):
//                   C's inner index cut into L blocks, a ring of L items along each processor
//                   row (N1/N2 items a node when N1 > N2) and likewise D's along each column.
//                   Alignment by CRA shifts along the Gray-code rings (row k of C k places left
//                   and column l of D l places up on a square grid), each the shorter way round
//                   (at most ⌊L/2⌋ steps), then L multiplies and L - 1 rolls of C left and D up.
//                   One-port: the C and D shifts one after the other; all-port: at once.
//                   variant 1: the cube alignment (§5.2.1: "at most 2 log N1 and 2 log N2
//                   steps"): the shift by r nodes as shifts by the powers of two of r, each one
//                   hop (2^0) or two (2^j: Gray-code positions 2^j apart differ in two bits).
#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>

#include "algorithms/collectives/tree_routing.hpp"
#include "algorithms/embedding/gray.hpp"
#include "algorithms/matmul/grid.hpp"
#include "algorithms/registry.hpp"

namespace cubesim {
namespace {

using matmul::Operand;
using matmul::Rect;
using matmul::Which;

using matmul::check_grid;
using matmul::Grid;

/// The all-to-all broadcast inside a subcube into `out` (matmul::gather).
Task<> gather_into(Node& self, std::int64_t M, Buffer own, routing::SubCube sub, Buffer& out) {
  out = co_await matmul::gather(self, M, std::move(own), sub);
}

Task<> a1(Node& self, Params p) {
  const Grid g(p, self.topology());
  const NodeId x = self.id();
  const bool data = self.data_mode();
  const std::int64_t k = g.row_of(x), l = g.col_of(x);
  Buffer C, D;
  Buffer Cown = matmul::block(data, g.sh, Which::C, {k * g.bP1, g.bP1, l * g.bQ2, g.bQ2});
  Buffer Down = matmul::block(data, g.sh, Which::D, {k * g.bQ1, g.bQ1, l * g.bR2, g.bR2});
  // Disjoint dimensions: all-port, both broadcasts at once (Table 11's max).
  co_await matmul::both(self, gather_into(self, g.bP1 * g.bQ2, std::move(Cown), g.row_cube(), C),
                        gather_into(self, g.bQ1 * g.bR2, std::move(Down), g.col_cube(), D));
  // C_{k*}: the row's blocks by local address G(l'); D_{*l}: the column's by G(k').
  Buffer A = matmul::block(data, g.sh, Which::E, g.a_block(x));
  for (std::int64_t q = 0; q < g.sh.Q && data; ++q) {
    const std::int64_t cpos = gray::encode(q / g.bQ2) * g.bP1 * g.bQ2 + q % g.bQ2;
    const std::int64_t dpos = gray::encode(q / g.bQ1) * g.bQ1 * g.bR2 + (q % g.bQ1) * g.bR2;
    matmul::multiply_add(A, 0, g.bR2, Operand{&C, cpos, g.bQ2}, Operand{&D, dpos, g.bR2}, g.bP1, 1, g.bR2);
  }
  co_await self.compute(2 * g.sh.Q * g.bP1 * g.bR2);
  self.set_result(std::move(A));
}

/// Table 9 A1(1) (one-port) or Table 11 A1(n) (all-port, the broadcasts at once) + Table 10's
/// arithmetic 2Q⌈P/N1⌉⌈R/N2⌉.
Prediction predict_a1(const Setup& s) {
  const Grid g(s.params, s.topology);
  const std::int64_t B = s.params.B, X = g.bP1 * g.bQ2, Y = g.bQ1 * g.bR2, flops = 2 * g.sh.Q * g.bP1 * g.bR2;
  if (s.machine.ports.kind != PortKind::all) {
    RowTerms t = sbt_doubling_terms(X, g.n2, B);
    t += sbt_doubling_terms(Y, g.n1, B);
    Prediction pr = matmul::from_terms(s, t, flops, "TR-530 Table 9 A1(1) + Table 10 arithmetic");
    pr.n1_opt = std::sqrt(static_cast<double>(g.sh.P * g.N) / static_cast<double>(g.sh.R));  // Table 12
    return pr;
  }
  auto terms = [&](std::int64_t M, int d) {
    return d > 1 ? balanced_levels_terms(M, d, B) : sbt_doubling_terms(M, d, B);
  };
  const RowTerms row = terms(X, g.n2), col = terms(Y, g.n1);
  Prediction pr =
      matmul::from_terms(s, matmul::terms_time(s, row) >= matmul::terms_time(s, col) ? row : col, flops,
                         "TR-530 Table 11 A1(n): max(row nRSBT-b(n2,N2), column nRSBT-b(n1,N1)) + Table 10");
  if ((g.n2 > 1 && X % g.n2) || (g.n1 > 1 && Y % g.n1)) pr.relation = Relation::approx, pr.tolerance = 2.5;
  return pr;
}

// ---- Cannon ----

/// A ring of L items along a Gray-coded processor row or column (`sub`, Lnodes nodes), each node
/// holding k = L / Lnodes consecutive ones (k = 1 on a square grid): shifting by one item sends a
/// node's boundary item to its ring neighbour and takes the other neighbour's.
struct Ring {
  routing::SubCube sub;
  std::int64_t nodes = 1;
  std::vector<Buffer> items;
};

/// The ports of one CRA step of a ring of more than one node, toward lower ring positions
/// (dir = -1) or higher (dir = +1): the boundary item goes to `to`, the other neighbour's comes
/// from `from`. A byte each (a hypercube has at most 63 dimensions): CannonSteps keeps two
/// rings' of them for every node.
struct ShiftPorts {
  std::uint8_t to = 0, from = 0;
};
ShiftPorts shift_ports(const Topology& t, NodeId x, const routing::SubCube& sub, std::int64_t L, int dir) {
  const std::int64_t pos = gray::decode(sub.local(x));
  auto at = [&](std::int64_t q) { return sub.member(x, gray::encode(((q % L) + L) % L)); };
  return {static_cast<std::uint8_t>(t.port_to(x, at(pos + dir))),
          static_cast<std::uint8_t>(t.port_to(x, at(pos - dir)))};
}
ShiftPorts shift_ports(Node& self, const Ring& ring, int dir) {
  return shift_ports(self.topology(), self.id(), ring.sub, ring.nodes, dir);
}
/// The boundary item that leaves in a shift toward `dir`, taken off the ring.
Buffer shift_out(Ring& ring, int dir) {
  Buffer out = dir < 0 ? std::move(ring.items.front()) : std::move(ring.items.back());
  if (dir < 0)
    ring.items.erase(ring.items.begin());
  else
    ring.items.pop_back();
  return out;
}
/// The item that came in, put on the ring's other end.
void shift_in(Ring& ring, int dir, Buffer got) {
  if (dir < 0)
    ring.items.push_back(std::move(got));
  else
    ring.items.insert(ring.items.begin(), std::move(got));
}

/// `steps` items toward lower ring positions (dir = -1) or higher (dir = +1), one CRA step each,
/// in this one frame (a coroutine a step was a frame of 592 bytes a step on every node).
Task<> shift(Node& self, Ring& ring, int dir, std::int64_t steps = 1) {
  if (ring.nodes == 1) {  // a ring of one node (N1 = 1 or N2 = 1): the items rotate in place
    for (std::int64_t t = 0; t < steps; ++t)
      if (dir < 0)
        std::rotate(ring.items.begin(), ring.items.begin() + 1, ring.items.end());
      else
        std::rotate(ring.items.rbegin(), ring.items.rbegin() + 1, ring.items.rend());
    co_return;
  }
  const ShiftPorts sp = shift_ports(self, ring, dir);
  for (std::int64_t t = 0; t < steps; ++t) {
    auto snd = self.send(sp.to, shift_out(ring, dir));
    auto rcv = self.recv(sp.from);
    co_await all_of(snd, rcv);
    shift_in(ring, dir, rcv.take());
  }
}

/// A shift by `amount` of L items toward lower positions, the shorter way round: its direction
/// (-1: toward lower positions) and its steps.
struct Shorter {
  int dir;
  std::int64_t steps;
};
Shorter shorter_way(std::int64_t L, std::int64_t amount) {
  const bool down = amount <= L / 2;
  return {down ? -1 : 1, down ? amount : L - amount};
}

/// Shifts the ring of L items by `amount` toward lower positions, the shorter way round.
Task<> align(Node& self, Ring* ring, std::int64_t L, std::int64_t amount) {
  const Shorter w = shorter_way(L, amount);
  return shift(self, *ring, w.dir, w.steps);
}

Task<> roll(Node& self, Ring* ring) { return shift(self, *ring, -1); }

/// The cube alignment (§5.2.1: "can be reduced to at most 2 log N1 and 2 log N2 steps"): every
/// node's items move 2^j nodes toward lower ring positions. Ring positions 2^j apart are cube
/// neighbours for j = 0 and two hops apart for j >= 1 (the binary-reflected Gray code), so a
/// block goes straight across, or to the neighbour across the lower differing bit (hop 1, tag 1)
/// and on across the other (hop 2, tag 2); a node forwards what comes to it in hop 1.
Task<> cube_shift(Node& self, Ring* ring, std::int64_t j) {
  const NodeId x = self.id();
  const std::int64_t L = ring->nodes, d = std::int64_t{1} << j, pos = gray::decode(ring->sub.local(x));
  auto at = [&](std::int64_t q) { return ring->sub.member(x, gray::encode(((q % L) + L) % L)); };
  auto hops = [](NodeId a, NodeId b) { return std::popcount(static_cast<std::uint64_t>(a ^ b)); };
  auto first_hop = [&](NodeId from, NodeId to) {  // across the lower of the two differing bits
    const NodeId diff = from ^ to;
    return from ^ (diff & (~diff + 1));
  };
  const std::int64_t k = static_cast<std::int64_t>(ring->items.size()), M = ring->items.front().size();
  Buffer mine;
  for (Buffer& b : ring->items) mine.append(b);
  const NodeId dst = at(pos - d), src = at(pos + d);
  const bool two = hops(x, dst) == 2;
  // The sources whose hop 1 ends here: those two hops away whose lower differing bit leads to x.
  std::vector<NodeId> relay_for;
  for (std::int64_t q = 0; q < L && j > 0; ++q) {
    const NodeId s = ring->sub.member(x, gray::encode(q)), t = at(q - d);
    if (hops(s, t) == 2 && first_hop(s, t) == x) relay_for.push_back(s);
  }
  std::vector<Task<>> parts;
  auto send_own = [&]() -> Task<> {
    if (two)
      co_await self.send(self.topology().port_to(x, first_hop(x, dst)), mine, 1);
    else
      co_await self.send(self.topology().port_to(x, dst), mine, 2);
  };
  auto relay = [&](NodeId s) -> Task<> {
    Buffer b = co_await self.recv(self.topology().port_to(x, s), 1);
    const NodeId t = at(gray::decode(ring->sub.local(s)) - d);
    co_await self.send(self.topology().port_to(x, t), std::move(b), 2);
  };
  Buffer got;
  auto receive = [&]() -> Task<> {
    const NodeId via = hops(src, x) == 2 ? first_hop(src, x) : src;
    got = co_await self.recv(self.topology().port_to(x, via), 2);
  };
  parts.push_back(send_own());
  for (NodeId s : relay_for) parts.push_back(relay(s));
  parts.push_back(receive());
  co_await all_of(std::move(parts));
  for (std::int64_t i = 0; i < k; ++i) ring->items[static_cast<std::size_t>(i)] = got.slice(i * M, M);
}

/// Aligns by `amount` items with the cube shifts: whole nodes by the powers of two of
/// ⌊amount/k⌋, then the remaining amount mod k items (k items a node) by single CRA steps.
Task<> cube_align(Node& self, Ring* ring, std::int64_t amount) {
  const std::int64_t k = static_cast<std::int64_t>(ring->items.size()), q = amount / k;
  for (std::int64_t j = 0; (q >> j) != 0; ++j)
    if ((q >> j) & 1) co_await cube_shift(self, ring, j);
  if (amount % k != 0) co_await shift(self, *ring, -1, amount % k);
}

/// C's and D's rings on an N1 x N2 grid: L = max(N1, N2) blocks of the inner index (Q̃/L each).
/// The row ring (C) has N2 nodes of kC = L/N2 items, the column ring (D) N1 nodes of kD = L/N1.
struct CannonGrid {
  Grid g;
  std::int64_t L, kC, kD, bq;
  bool cube;  ///< variant 1: the cube alignment
  CannonGrid(const Params& p, const Topology& t)
      : g(p, t, true), L(std::max(g.N1, g.N2)), kC(L / g.N2), kD(L / g.N1), bq(g.Qt / L), cube(p.variant == 1) {}
};

/// One product by Cannon's algorithm; appended to `out`.
///
/// Node (r, c) starts with C's inner blocks c kC .. c kC + kC - 1 and D's r kD .. r kD + kD - 1.
/// The alignment shifts row r's C ring left by r kD items and column c's D ring up by c kC, so
/// the first C item and the first D item at (r, c) are both inner block c kC + r kD; each of the
/// L - 1 rolls then moves both rings by one item. On a square grid this is Fig. 17 exactly;
/// with N1 = k N2 it is the paper's code's "CRA_row(C[1]) ... left rotate C[i] locally" — one
/// C sub-block a roll — with the alignment also done by sub-blocks (the code's alignment by
/// whole blocks does not pair the indices when k > 1; docs/matmul.md).
Task<> cannon_one(Node& self, const CannonGrid& cg, Buffer& out) {
  const Grid& g = cg.g;
  const NodeId x = self.id();
  const bool data = self.data_mode(), all_port = self.machine().ports.kind == PortKind::all;
  const std::int64_t L = cg.L, r = g.row_of(x), c = g.col_of(x);
  Ring C{g.row_cube(), g.N2, {}}, D{g.col_cube(), g.N1, {}};
  for (std::int64_t i = 0; i < cg.kC; ++i)
    C.items.push_back(matmul::block(data, g.sh, Which::C, {r * g.bP1, g.bP1, (c * cg.kC + i) * cg.bq, cg.bq}));
  for (std::int64_t i = 0; i < cg.kD; ++i)
    D.items.push_back(matmul::block(data, g.sh, Which::D, {(r * cg.kD + i) * cg.bq, cg.bq, c * g.bR2, g.bR2}));
  Buffer A = matmul::block(data, g.sh, Which::E, g.a_block(x));
  if (cg.cube && g.N1 > 1 && g.N2 > 1)
    co_await matmul::both(self, cube_align(self, &C, (r * cg.kD) % L), cube_align(self, &D, (c * cg.kC) % L));
  else
    co_await matmul::both(self, align(self, &C, L, (r * cg.kD) % L), align(self, &D, L, (c * cg.kC) % L));
  const bool rolls = C.nodes > 1 && D.nodes > 1;
  const ShiftPorts pc = rolls ? shift_ports(self, C, -1) : ShiftPorts{},
                   pd = rolls ? shift_ports(self, D, -1) : ShiftPorts{};
  for (std::int64_t t = 0; t < L; ++t) {
    if (t > 0) {
      if (rolls) {
        // matmul::both(roll C, roll D) without a coroutine a ring (five frames -- both, two rolls, two shifts -- and a
        // list of two tasks a step, 255 steps on 2^16 nodes): the same operations, begun in the same order, all four at
        // once (all-port) or C's pair then D's (one-port), in this frame.
        auto sc = self.send(pc.to, shift_out(C, -1));
        auto rc = self.recv(pc.from);
        auto sd = self.send(pd.to, shift_out(D, -1));
        auto rd = self.recv(pd.from);
        if (all_port) {
          co_await all_of(sc, rc, sd, rd);
        } else {
          co_await all_of(sc, rc);
          co_await all_of(sd, rd);
        }
        shift_in(C, -1, rc.take());
        shift_in(D, -1, rd.take());
      } else {
        co_await matmul::both(self, roll(self, &C), roll(self, &D));
      }
    }
    const std::int64_t s = (c * cg.kC + r * cg.kD + t) % L;  // the inner block both first items hold
    const std::int64_t inner = std::clamp(g.sh.Q - s * cg.bq, std::int64_t{0}, cg.bq);
    if (data)  // (timing mode: no values, and reading A's buffer was a miss a step)
      matmul::multiply_add(A, 0, g.bR2, Operand{&C.items.front(), 0, cg.bq}, Operand{&D.items.front(), 0, g.bR2}, g.bP1,
                           inner, g.bR2);
    co_await self.compute(2 * g.bP1 * cg.bq * g.bR2);
  }
  out.append(A);
}

/// K products (param K) one after the other, each aligned afresh: TR-530 §5.2.1 compares the
/// pipelined outer product's (K + 1)√N + 1 steps with "approximately 3K/2·√N steps by Cannon's".
Task<> cannon(Node& self, Params p) {
  const CannonGrid cg(p, self.topology());
  Buffer out;
  for (std::int64_t i = 0; i < std::max<std::int64_t>(p.K, 1); ++i) co_await cannon_one(self, cg, out);
  self.set_result(std::move(out));
}

/// Cannon with the CRA alignment (variant 0) as a step program (sim/steps.hpp), the lockstep
/// simulators': cannon_one's operations, product by product. One-port: one_port_step. All-port:
/// the alignment's C and D
/// shifts are matmul::both's two Tasks, strands 1 and 2 (a ring of one node shifts in place and
/// posts nothing), A steps (the longest alignment on the grid; a node shorter posts nothing in the
/// last ones); then the join and the first multiply; then the L - 1 rolls, each one group of C's
/// send and receive and D's (or the one ring's that has more than one node: the other's Task ends
/// at once) and a multiply.
class CannonSteps final : public StepProgram {
 public:
  explicit CannonSteps(const Setup& s)
      : cg_(s.params, s.topology),
        products_(std::max<std::int64_t>(s.params.K, 1)),
        X_(cg_.g.bP1 * cg_.bq),
        Y_(cg_.bq * cg_.g.bR2),
        flops_(2 * cg_.g.bP1 * cg_.bq * cg_.g.bR2),
        one_port_(s.machine.ports.kind == PortKind::one) {
    const Grid& g = cg_.g;
    const std::int64_t L = cg_.L;
    nodes_.resize(static_cast<std::size_t>(g.N));
    for (NodeId x = 0; x < g.N; ++x) {
      Plan& p = nodes_[static_cast<std::size_t>(x)];
      const std::int64_t r = g.row_of(x), c = g.col_of(x);
      // align(): the shorter way round, one item a step.
      auto aligned = [&](Ring& ring, const routing::SubCube& sub, std::int64_t nodes, std::int64_t amount) {
        ring.moves = nodes > 1;
        if (!ring.moves) return;
        const Shorter w = shorter_way(L, amount);
        ring.steps = static_cast<std::uint32_t>(w.steps);  // (L <= N < 2^32: a node is a 32-bit index)
        ring.align = shift_ports(s.topology, x, sub, nodes, w.dir);
        ring.roll = shift_ports(s.topology, x, sub, nodes, -1);
      };
      aligned(p.C, g.row_cube(), g.N2, (r * cg_.kD) % L);
      aligned(p.D, g.col_cube(), g.N1, (c * cg_.kC) % L);
      align_c_ = std::max<std::int64_t>(align_c_, p.C.steps);
      align_d_ = std::max<std::int64_t>(align_d_, p.D.steps);
      align_steps_ = std::max(align_c_, align_d_);
    }
    if (one_port_) align_steps_ = align_c_ + align_d_;
  }
  [[nodiscard]] bool wide() const override { return true; }
  [[nodiscard]] int strands() const override { return one_port_ ? 1 : 3; }
  /// The program's state a node (its rings).
  static constexpr std::int64_t plan_bytes() { return sizeof(Plan); }
  void prefetch(NodeId x) const override { ask(&nodes_[static_cast<std::size_t>(x)]); }
  [[nodiscard]] std::int64_t steps() const override { return products_ * (align_steps_ + (one_port_ ? 2 : 1) * cg_.L); }
  [[nodiscard]] std::int64_t result_elements(NodeId /*x*/) const override { return products_ * cg_.g.bP1 * cg_.g.bR2; }
  [[gnu::flatten]] void step(NodeId x, std::int64_t s, std::vector<StepOp>& ops) const override {
    const Plan& p = nodes_[static_cast<std::size_t>(x)];
    using enum StepOp::Kind;
    if (one_port_) {
      one_port_step(p, s % (align_steps_ + 2 * cg_.L), ops);
      return;
    }
    const std::int64_t q = s % (align_steps_ + cg_.L);
    if (q < align_steps_) {  // matmul::both(align C, align D)
      if (q < p.C.steps) {
        ops.push_back({.kind = send, .strand = 1, .port = p.C.align.to, .elements = X_});
        ops.push_back({.kind = recv, .strand = 1, .port = p.C.align.from});
      }
      if (q < p.D.steps) {
        ops.push_back({.kind = send, .strand = 2, .port = p.D.align.to, .elements = Y_});
        ops.push_back({.kind = recv, .strand = 2, .port = p.D.align.from});
      }
      return;
    }
    if (q == align_steps_) {
      ops.push_back({.kind = join});
    } else {  // a roll
      if (p.C.moves) {
        ops.push_back({.kind = send, .port = p.C.roll.to, .elements = X_});
        ops.push_back({.kind = recv, .port = p.C.roll.from});
      }
      if (p.D.moves) {
        ops.push_back({.kind = send, .port = p.D.roll.to, .elements = Y_});
        ops.push_back({.kind = recv, .port = p.D.roll.from});
      }
    }
    ops.push_back({.kind = compute, .elements = flops_});
  }

 private:
  /// A node's place on one ring: 12 bytes, so that the plan of 2^16 nodes (1.5 MiB) stays in a
  /// core's cache beside the simulator's records (64 bytes a node before).
  struct Ring {
    std::uint32_t steps = 0;  ///< the alignment's: the shorter way round, at most L / 2
    ShiftPorts align, roll;
    bool moves = false;  ///< more than one node
  };
  struct Plan {
    Ring C, D;
  };
  /// One-port (matmul::both one Task after the other; a step an awaited group): C's alignment
  /// shifts, D's, then for each of the L multiplies C's roll and D's roll (none before the first),
  /// the multiply after D's.
  void one_port_step(const Plan& p, std::int64_t q, std::vector<StepOp>& ops) const {
    using enum StepOp::Kind;
    auto group = [&](const ShiftPorts& sp, std::int64_t elements) {
      ops.push_back({.kind = send, .port = sp.to, .elements = elements});
      ops.push_back({.kind = recv, .port = sp.from});
    };
    if (q < align_c_) {
      if (q < p.C.steps) group(p.C.align, X_);
      return;
    }
    if (q < align_steps_) {
      if (q - align_c_ < p.D.steps) group(p.D.align, Y_);
      return;
    }
    const std::int64_t t = (q - align_steps_) / 2;
    if ((q - align_steps_) % 2 == 0) {
      if (t > 0 && p.C.moves) group(p.C.roll, X_);
      return;
    }
    if (t > 0 && p.D.moves) group(p.D.roll, Y_);
    ops.push_back({.kind = compute, .elements = flops_});
  }

  CannonGrid cg_;
  std::int64_t products_, X_, Y_, flops_;
  bool one_port_;
  std::int64_t align_steps_ = 0, align_c_ = 0, align_d_ = 0;  ///< (one-port: C's and D's, one after the other)
  std::vector<Plan> nodes_;
};

/// Its part in the memory of its run: wide chains, C's and D's strands beside strand 0 all-port
/// (matmul::both's all_of), and a node's rings (`Plan`) for every node.
bool cannon_program_for(const Setup& s) {
  return (s.machine.ports.kind == PortKind::all || s.machine.ports.kind == PortKind::one) && s.params.variant == 0;
}
std::optional<StepsMemory> cannon_program_memory(const Setup& s) {
  if (!cannon_program_for(s)) return std::nullopt;
  return StepsMemory{.wide = true,
                     .strands = s.machine.ports.kind == PortKind::all ? 3 : 1,
                     .program_bytes = s.topology.size() * CannonSteps::plan_bytes()};
}

std::unique_ptr<StepProgram> cannon_steps(const Setup& s) {
  if (!cannon_program_for(s)) return nullptr;
  return std::make_unique<CannonSteps>(s);
}

/// §5.2.1 (Fig. 17): an alignment of at most ⌊L/2⌋ item shifts of C then of D, then L - 1 rolls of
/// both; L multiplies of 2⌈P/N1⌉(Q̃/L)⌈R/N2⌉ flops; L = max(N1, N2), an item Q̃/L wide. One-port:
/// the C and D shifts add; all-port: the larger of the two each time. (The paper's alignment moves
/// whole blocks ⌊N2/2⌋ and ⌊N1/2⌋ times: the same volume in fewer start-ups when N1 != N2.)
Prediction predict_cannon(const Setup& s) {
  const CannonGrid cg(s.params, s.topology);
  const Grid& g = cg.g;
  const std::int64_t L = cg.L, K = std::max<std::int64_t>(s.params.K, 1), B = s.params.B;
  auto time_of = [&](const RowTerms& r) { return matmul::terms_time(s, r); };
  // A ring of one node (N2 = 1 for C, N1 = 1 for D) rotates in place: no steps.
  auto farthest = [&](std::int64_t nodes, std::int64_t stride) {  // the longest alignment, the shorter way round
    std::int64_t far = 0;
    for (std::int64_t i = 0; i < nodes; ++i) far = std::max(far, std::min((i * stride) % L, L - (i * stride) % L));
    return far;
  };
  const std::int64_t X = g.bP1 * cg.bq, Y = cg.bq * g.bR2;
  const RowTerms cx{ceil_div(X, B), X, 1}, dy{ceil_div(Y, B), Y, 1};
  const std::int64_t aC = g.N2 > 1 ? farthest(g.N1, cg.kD) : 0, aD = g.N1 > 1 ? farthest(g.N2, cg.kC) : 0;
  const bool rC = g.N2 > 1, rD = g.N1 > 1;
  // The cube alignment (variant 1): ⌊a/k⌋ nodes by powers of two (one hop for 2^0, two for
  // 2^j, j >= 1, each of a node's k items at once), then a mod k single items; the worst node.
  auto cube_align_terms = [&](std::int64_t nodes, std::int64_t stride, std::int64_t k, const RowTerms& item,
                              std::int64_t M) {
    const std::int64_t whole = k * M;
    const RowTerms block{ceil_div(whole, B), whole, 1};
    RowTerms worst;
    for (std::int64_t i = 0; i < nodes; ++i) {
      const std::int64_t a = (i * stride) % L, q = a / k;
      RowTerms t = item.times(a % k);
      for (std::int64_t j = 0; (q >> j) != 0; ++j)
        if ((q >> j) & 1) t += block.times(j == 0 ? 1 : 2);
      if (time_of(t) > time_of(worst)) worst = t;
    }
    return worst;
  };
  const bool cube = cg.cube && g.N1 > 1 && g.N2 > 1;
  const RowTerms alC = cube ? cube_align_terms(g.N1, cg.kD, cg.kC, cx, X) : cx.times(aC);
  const RowTerms alD = cube ? cube_align_terms(g.N2, cg.kC, cg.kD, dy, Y) : dy.times(aD);
  RowTerms one;
  if (s.machine.ports.kind == PortKind::all) {  // C on the row's links, D on the column's, at once
    one += time_of(alD) > time_of(alC) ? alD : alC;
  } else {
    one += alC;
    one += alD;
  }
  one += matmul::block_step(s, X, Y, rC, rD).times(L - 1);  // the rolls (none on a one-node ring)
  const RowTerms t = one.times(K);
  Prediction pr = matmul::from_terms(
      s, t, K * L * 2 * g.bP1 * cg.bq * g.bR2,
      "TR-530 §5.2.1 Cannon (Fig. 17): ⌊L/2⌋ alignment shifts + (L-1) rolls of C and D + L multiplies, K times");
  // One port: the rows shift C by different amounts, so nodes leave the alignment at different
  // times; a node already rolling C then holds a receiver's one input slot that a column
  // neighbour still aligning D needs. The count assumes lockstep steps, which the asynchronous
  // nodes do not keep (docs/matmul.md).
  if (s.machine.ports.kind != PortKind::all && L > 1) pr.relation = Relation::approx, pr.tolerance = 0.5;
  // The cube alignment: exact with all ports (measured over the grid: a node's own block and the
  // one it forwards leave on different links); one-port approximate as the CRA alignment.
  if (cube) {
    pr.source +=
        "; the cube alignment (variant 1): ⌊a/k⌋ nodes by power-of-two shifts of 1 or 2 hops, a mod k items by CRA "
        "steps";
  }
  return pr;
}

std::optional<SetupError> check_a1(const Setup& s) {
  if (auto e = check_grid(s)) return e;
  const Grid g(s.params, s.topology);
  return matmul::check(s, g.bP1 * g.N2 * g.bQ2 + g.N1 * g.bQ1 * g.bR2 + 2 * g.bP1 * g.bR2);
}

std::optional<SetupError> check_cannon(const Setup& s) {
  if (auto e = check_grid(s)) return e;
  if (s.params.K > 1024)
    return SetupError{"/params/K", "K = " + std::to_string(s.params.K) + " successive products: at most 1024"};
  if (s.params.variant > 1)
    return SetupError{"/params/variant",
                      "variant " + std::to_string(s.params.variant) +
                          ": Cannon's alignment is 0 (CRA shifts) or 1 (the cube's power-of-two shifts)"};
  const CannonGrid cg(s.params, s.topology);
  const Grid& g = cg.g;
  return matmul::check(
      s, 2 * g.bP1 * g.bQ2 + 2 * g.bQ1 * g.bR2 + (std::max<std::int64_t>(s.params.K, 1) + 1) * g.bP1 * g.bR2);
}

Verdict verify_2d(const Setup& s, const std::vector<Buffer>& results) {
  const Grid g(s.params, s.topology);
  return matmul::verify_product(s, results, [&](NodeId x) { return g.a_block(x); });
}

Verdict verify_cannon(const Setup& s, const std::vector<Buffer>& results) {
  const Grid g(s.params, s.topology, true);
  return matmul::verify_products(s, results, std::max<std::int64_t>(s.params.K, 1),
                                 [&](NodeId x) { return g.a_block(x); });
}

const Registration kRegistrationMatmul2d{[](Registry& r) {
  r.add({.name = "matmul2d.a1",
         .summary = "A <- CD + E on an N1 x N2 grid: broadcast C in rows and D in columns, one multiply (A1)",
         .source = "TR-530 §5.2, Tables 8-12 A1(1), A1(n)",
         .params = {"P", "Q", "R", "N1", "N2", "B"},
         .required = {"P", "Q", "R"},
         .check = check_a1,
         .process = a1,
         .predict = predict_a1,
         .verify = verify_2d,
         .one_port = {.row = "T9 A1(1) + T10", .relation = "exact"},
         .all_port = {.row = "T11 A1(n): the max of the row and column nRSBT-b + T10",
                      .relation = "exact when n2 | ⌈P/N1⌉⌈Q/N2⌉ and n1 | ⌈Q/N1⌉⌈R/N2⌉; approx <= 250 %",
                      .deviations = {{Relation::approx, 2.5, 1.46, "n=6 P=1 Q=1 R=1 B=1 N1=64"}}}});
  r.add({.name = "matmul2d.cannon",
         .summary = "A <- CD + E on an N1 x N2 grid: Cannon's alignment by CRA shifts, then max(N1, N2) - 1 rolls (K "
                    "products, param K)",
         .source = "TR-530 §5.2.1, Fig. 17",
         .params = {"P", "Q", "R", "N1", "N2", "B", "K", "variant"},
         .required = {"P", "Q", "R"},
         .check = check_cannon,
         .process = cannon,
         .predict = predict_cannon,
         .verify = verify_cannon,
         // Memory (docs/reliability.md "Budgets"): each node holds its blocks of the matrices and
         // the pair it is rolling, about 10 bytes an element of P Q + Q R + P R (P = Q = R = 512 on
         // 64 nodes, data mode: 6.3 MiB).
         .memory =
             [](const Setup& s) {
               return model_bytes(s, {1024, 10}, static_cast<double>(default_elements(s)));
             },
         .steps = cannon_steps,
         .steps_memory = cannon_program_memory,
         .one_port = {.row = "§5.2.1: ⌊L/2⌋ + L - 1 shifts of C then D + L multiplies, L = max(N1, N2)",
                      .relation = "approx <= 50 % (nodes leave the unequal alignment out of step)",
                      .deviations = {{Relation::approx, 0.5, 0.473, "n=5 P=32 Q=32 R=32 B=1 N1=4"}}},
         .all_port = {
             .row = "§5.2.1, C and D shifted at once (variant 1: the cube alignment, 1 or 2 hops a power of two)",
             .relation = "exact"}});
}};

}  // namespace
}  // namespace cubesim
