// The two-dimensional algorithms that transpose an operand — Johnsson & Ho, TR-530 §5.2 (Fig. 15,
// Tables 8-12) with the transposition of §5.2.2. A <- C D + E (matmul.hpp) on the Gray-coded
// N1 x N2 grid of grid.hpp with nested blocks (P, Q, R padded to multiples of max(N1, N2)).
// ↔ is within processor rows (the N2 nodes of a row subcube), ↕ within processor columns.
//
//  matmul2d.a2  txp C, brd Cᵀ ↔, mpy [QR], red A ↕:  Cᵀ(Q_k, P_l) -> Cᵀ(Q_k, all P); the partial
//               C(:, Q_k) D(Q_k, R_l) (P̃ x R̃/N2) reduced over the column so that (k, l) gets A_kl.
//  matmul2d.a3  txp C, brd D ↔, mpy [PQ], red A ↕, txp A:  D(Q_k, all R); the partial
//               C(P_l, Q_k) D(Q_k, :) reduced over the column to A(P_l, R_k), which is block (k, l)
//               of Aᵀ; transposing Aᵀ gives A_kl.
//  matmul2d.a4  txp D, brd Dᵀ ↕, mpy [PR], red A ↔:  Dᵀ(R_k, Q_l) -> D(Q_l, all R); the partial
//               C_kl D(Q_l, :) reduced over the row.
//  matmul2d.a5  txp D, brd C ↕, mpy [QR], red A ↔, txp A:  C(all P, Q_l); the partial
//               C(:, Q_l) D(Q_l, R_k) reduced over the row to A(P_l, R_k), transposed back.
//  matmul2d.a3v2  A3 version 2 (§5.2.3): txp C, brd D ↔, mpy [PQ] as a3; then red A ↕ onto one
//               node a processor row ("the diagonal") and personalized communication ↔ in place
//               of a3's all-to-all reduction and txp A (below).
// (X_k: index range k of X cut into N1 parts; X_l: range l cut into N2 parts.) The brd rows are
// SBT-b(1,.) one-port and nRSBT-b(n,.) all-port; red is the same backwards (matmul.hpp).
//
// Version 2 of A3 (TR-530 §5.2.3; no table row). The paper: "the all-to-all reduction is carried
// out such that the inner products for the set of P/N2 rows of A allocated to a column of
// processors are accumulated with contiguous sets of P/N1 inner products per processor in the
// same column, and in the processor row in which the inner product shall finally reside. The
// divide and conquer strategy is applied to P/N2 (if N1 > N2), and repeated R times ... After
// this reduction operation the elements of A are in the proper processor row, but all elements
// of a row are confined to one or a few processors in that row. The desired distribution is
// obtained by one-to-all personalized communication, or some-to-all personalized communication
// if N1 < N2. For one-port communication we choose the SBT-p(1,*) algorithm, and for n-port
// communication either the SBnT-p(n,*) or nRSBT-p(n,*) algorithm."
// After a3's multiply, processor column l holds, as N1 partial sums over Q_k, the rows P_l of A
// (bP2 = P̃/N2 of them) with all R̃ columns; row i of A belongs to processor row ⌊i/bP1⌋. Let
// m = max(n1 - n2, 0), d = min(n1, n2), m' = max(n2 - n1, 0) and c = min(bP1, bP2). The row field
// of node (k, l) is G(k) (n1 bits), the column field G(l) (n2 bits); call (k, l) diagonal when the
// high d bits of the two agree, i.e. ⌊k/2^m⌋ = ⌊l/2^m'⌋ (the Gray code of a prefix is the prefix
// of the Gray code). Every processor row and column holds diagonal nodes: one a row and 2^m a
// column when N1 >= N2, 2^m' a row and one a column when N1 <= N2.
//  1. red ↕, divide and conquer (only when N1 > N2, m > 0): the partial bP2 x R̃ is cut into its
//     2^m sets of c = bP1 contiguous rows, set j for processor row l 2^m + j, and reduced by
//     recursive halving (SBT-b(1,2^m) backwards; all-port nRSBT-b backwards, as a3's reduction)
//     over the m low dimensions of the row field: the node whose low row bits are those of
//     G(l 2^m + j) gets set j summed over its m-subcube, c x R̃ (each message carries the R̃
//     columns at once: the paper's "repeated R times").
//  2. red ↕, accumulation over the d high dimensions of the row field onto the diagonal node of
//     the m-subcube: the SBT broadcast backwards (reduce.sbt's order, d steps of c R̃ elements
//     and c R̃ additions); all-port the d rotated SBTs backwards, phased (part j of the block on
//     tree j, routing::reduce_to): d steps of ⌈c R̃/d⌉ a port, c R̃ additions each. The diagonal
//     node (k, l) now holds A(P_k ∩ P_l, :), c x R̃: with N1 >= N2 its processor row's own rows
//     P_k, with N1 < N2 the rows P_l, a part of P_k.
//  3. ↔ personalized (TR-572 §3.3, routing::sometoall): the 2^m' diagonal nodes of each row send
//     node (k, l') its c x bR2 block A(P_k ∩ P_l, R_l'). One-to-all when m' = 0, some-to-all when
//     N1 < N2: the splitting across the d high dimensions of the column field (one-port halves
//     from the highest dimension down: SBT-p(1,N2), Table 3's row, when m' = 0; all-port the
//     rotated SBTs phased, nRSBT-p(n,.)), then the all-to-all inside the m'-subcubes of the low
//     column dimensions (standard exchange; all-port nRSBT-p). Node (k, l') assembles A_kl' from
//     its 2^m' blocks and adds E.
// Readings where the paper is silent. N1 = N2: no halving; the column's whole bP1 x R̃ is
// accumulated at (k, k), then one-to-all from the diagonal. N1 < N2: "applied to P/N2 (if
// N1 > N2)" read as no division: the column's bP2 x R̃ accumulated whole at its one diagonal node
// (the accumulation at one node is what "confined to ... a few processors" leaves). The paper
// names no routing for the reduction: we use the SBT backwards (the reverse of the broadcast the
// paper pairs with reductions, §4.1.2) and, n-port, the rotated SBTs the personalized step uses.
// The one-to-all case runs the same splitting as the some-to-all (one source), not TR-572
// §3.1's reverse breadth-first order; one-port they coincide with Table 3's SBT-p(1,1).
// Prediction (predict_a3v2): the steps' rows summed. One-port exact over the grid. All-port, the
// accumulation's diagonal node adds d parts a step and its children fewer, so their next parts
// arrive while it still adds: an upper bound when d > 1 (lowest simulated/predicted 0.959 over
// the grid), exact when d <= 1, approx (as a2, a4) where an nRSBT block does not divide evenly.
// Against a3 (one port, B >= every block) the tail takes n start-ups instead of n1 + n, and on
// square grids from 4 x 4 more element transfers (the diagonal node gathers d times c R̃).
//
// The transposition (§5.2.2). Node (k, l) holds block (k, l) of an a x b matrix (rows cut by N1,
// columns by N2) and ends with block (k, l) of its b x a transpose. In address bits this is: with
// m = |n1 - n2|, an all-to-all personalized exchange over the m "middle" dimensions (the low m bits
// of the longer index field: N_max/N_min pieces of X/2^m, X = (a/N1)(b/N2), each to the node whose
// field it will end in), then the swap of the other n_min bit pairs (row-field bit n_max + i with
// the column-field bit of the same weight; the Gray code of a prefix is the prefix of the Gray
// code, so the swap is a plain bit swap). One-port, each pair takes two steps of X elements (a node
// whose pair differs sends its block across the row bit, the partner forwards it across the column
// bit): 2 n_min steps of X and m exchanges of X/2, i.e. "2 log N_min steps exchanging X elements and
// log(N_max/N_min) steps exchanging X/2" — element transfers (n/2 + n_min) X and n start-ups for
// B >= X. All-port: the middle exchange by nRSBT-p(m,.), then the Single Path Transpose over the
// 2 n_min pair dimensions (TR-572 §6.1.1), packets of B pipelined: (⌈X/B⌉ + 2 n_min - 1)(B t_c + tau).
//
// Arithmetic (Table 10): (2 q - 1) flops an element of the partial product (q the inner block),
// one flop an element received by the reduction, and E added to the final block.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "algorithms/matmul/grid.hpp"
#include "algorithms/registry.hpp"

namespace cubesim {
namespace {

using matmul::Grid;
using matmul::Operand;
using matmul::Rect;
using matmul::Which;

/// The address-bit geometry of §5.2.2's transposition on a grid.
struct Txp {
  int nmin = 0, nmax = 0, m = 0;
  routing::SubCube mid;
  std::vector<int> rdim, cdim;  ///< pair i: row-field bit rdim[i] <-> column-field bit cdim[i]
  explicit Txp(const Grid& g) : nmin(std::min(g.n1, g.n2)), nmax(std::max(g.n1, g.n2)), m(nmax - nmin) {
    mid = g.n1 >= g.n2 ? routing::SubCube::range(g.n2, m) : routing::SubCube::range(0, m);
    rdim.reserve(static_cast<std::size_t>(nmin));
    cdim.reserve(static_cast<std::size_t>(nmin));
    for (int i = 0; i < nmin; ++i) {
      rdim.push_back(nmax + i);
      cdim.push_back((g.n2 > g.n1 ? m : 0) + i);
    }
  }
  [[nodiscard]] bool differs(NodeId y, int i) const { return (((y >> rdim[i]) ^ (y >> cdim[i])) & 1) != 0; }
  [[nodiscard]] NodeId flip(int i) const { return (NodeId{1} << rdim[i]) | (NodeId{1} << cdim[i]); }
  /// y with the pairs i >= from swapped.
  [[nodiscard]] NodeId swap(NodeId y, int from = 0) const {
    for (int i = from; i < nmin; ++i)
      if (differs(y, i)) y ^= flip(i);
    return y;
  }
  /// The SPT path of the block that starts at s: the differing pairs, highest first, row bit first;
  /// into `dims` (a node's paths reuse one vector: growing a fresh one was four allocations a path).
  void path(NodeId s, std::vector<int>& dims) const {
    dims.clear();
    for (int i = nmin - 1; i >= 0; --i)
      if (differs(s, i)) dims.insert(dims.end(), {rdim[i], cdim[i]});
  }
};

/// One-port pair swap: for each pair, two steps (send across the row bit or forward across the
/// column bit). `held`: this node's X elements; returns those of the node whose pairs are ours swapped.
Task<Buffer> pair_steps(Node& self, const Txp& t, Buffer held) {
  const NodeId x = self.id();
  for (int i = t.nmin - 1; i >= 0; --i) {
    if (t.differs(x, i)) {
      co_await self.send(t.rdim[i], std::move(held));
      held = co_await self.recv(t.cdim[i]);
    } else {
      Buffer guest = co_await self.recv(t.rdim[i]);
      co_await self.send(t.cdim[i], std::move(guest));
    }
  }
  co_return held;
}

/// All-port pair swap: every block on its SPT path at once, in packets (routing::pipelined_path).
/// The paths through x are those of the sources x is reached from after the pairs >= j are done
/// (s = swap(x, j)) or in the middle of pair j (s = swap(x ^ row bit j, j + 1), when pair j of s
/// differs, i.e. pair j of x does not).
Task<Buffer> pair_spt(Node& self, const Txp& t, std::int64_t X, Buffer mine) {
  const NodeId x = self.id();
  std::vector<NodeId> sources;
  sources.reserve(static_cast<std::size_t>(2 * t.nmin + 1));
  auto add = [&](NodeId s) {
    if (t.swap(s) != s && std::find(sources.begin(), sources.end(), s) == sources.end()) sources.push_back(s);
  };
  for (int j = t.nmin; j >= 0; --j) add(t.swap(x, j));
  for (int j = 0; j < t.nmin; ++j)
    if (!t.differs(x, j)) add(t.swap(x ^ (NodeId{1} << t.rdim[j]), j + 1));
  std::vector<Buffer> got(sources.size());
  std::vector<int> dims;
  dims.reserve(static_cast<std::size_t>(2 * t.nmin));
  // Paths of one packet, unobserved: the relays as Forwards and this node's own send as a request,
  // begun in the order in which their coroutines would begin them (the own path is the first
  // source, sources[0]), the destination a coroutine as before (docs/performance.md "Forwards").
  routing::PathParts parts(self, sources.size(), !self.observed() && X <= self.packet_elements());
  for (std::size_t i = 0; i < sources.size(); ++i) {
    t.path(sources[i], dims);
    parts.add(dims, sources[i], static_cast<int>(1 + sources[i]), X, sources[i] == x ? mine : Buffer{}, &got[i]);
  }
  co_await parts.done();
  const NodeId from = t.swap(x);
  if (from == x) co_return mine;
  for (std::size_t i = 0; i < sources.size(); ++i)
    if (sources[i] == from) co_return std::move(got[i]);
  throw std::logic_error("matmul2d transpose: no path ends at node " + std::to_string(x));
}

/// TR-530 §5.2.2: node (k, l)'s block (k, l) of the a x b matrix (row-major, a/N1 x b/N2) becomes
/// its block (k, l) of the b x a transpose (row-major, b/N1 x a/N2). a and b are multiples of
/// max(N1, N2).
Task<Buffer> grid_transpose(Node& self, Grid g, std::int64_t a, std::int64_t b, Buffer blk) {
  const Txp t(g);
  const NodeId x = self.id();
  const bool data = self.data_mode();
  const std::int64_t a1 = a / g.N1, b2 = b / g.N2, b1 = b / g.N1, a2 = a / g.N2;
  const std::int64_t X = a1 * b2, piece = X >> t.m;
  auto src_rect = [&](NodeId y) { return Rect{g.row_of(y) * a1, a1, g.col_of(y) * b2, b2}; };  // in a x b
  auto dst_rect = [&](NodeId y) { return Rect{g.row_of(y) * b1, b1, g.col_of(y) * a2, a2}; };  // in b x a
  // The elements of source s's block that end at d, in the transpose's coordinates.
  auto overlap = [&](NodeId s, NodeId d) {
    const Rect S = src_rect(s), D = dst_rect(d);
    const std::int64_t r0 = std::max(D.r0, S.c0), r1 = std::min(D.r0 + D.rows, S.c0 + S.cols);
    const std::int64_t c0 = std::max(D.c0, S.r0), c1 = std::min(D.c0 + D.cols, S.r0 + S.rows);
    return Rect{r0, std::max<std::int64_t>(0, r1 - r0), c0, std::max<std::int64_t>(0, c1 - c0)};
  };
  // 1. The pieces by middle address: slot u for the node that the pair swap takes from the
  // middle node u of my subcube, already transposed.
  Buffer slots = Buffer::sized(X);
  if (data) {
    slots = Buffer::of({});
    const Rect S = src_rect(x);
    const auto v = blk.values();
    for (NodeId u = 0; u < t.mid.size(); ++u) {
      const Rect o = overlap(x, t.swap(t.mid.member(x, u)));
      if (o.size() != piece)
        throw std::logic_error("matmul2d transpose: a piece of " + std::to_string(o.size()) + " elements, expected " +
                               std::to_string(piece));
      std::vector<Element> pc;
      pc.reserve(static_cast<std::size_t>(piece));
      for (std::int64_t j = o.r0; j < o.r0 + o.rows; ++j)
        for (std::int64_t i = o.c0; i < o.c0 + o.cols; ++i) pc.push_back(v[(i - S.r0) * b2 + (j - S.c0)]);
      slots.append(Buffer::of(std::move(pc)));
    }
  }
  if (t.m > 0) slots = co_await matmul::alltoall(self, piece, std::move(slots), t.mid);
  // 2. The pair swap.
  Buffer held;
  if (self.machine().ports.kind == PortKind::all && t.nmin > 0)
    held = co_await pair_spt(self, t, X, std::move(slots));
  else
    held = co_await pair_steps(self, t, std::move(slots));
  // 3. The pieces into place: slot u came from the middle node u of swap(x)'s subcube.
  if (!data) co_return Buffer::sized(X);
  std::vector<Element> out(static_cast<std::size_t>(X));
  const Rect D = dst_rect(x);
  const NodeId h = t.swap(x);
  const auto v = held.values();
  std::int64_t pos = 0;
  for (NodeId u = 0; u < t.mid.size(); ++u) {
    const Rect o = overlap(t.mid.member(h, u), x);
    for (std::int64_t j = o.r0; j < o.r0 + o.rows; ++j)
      for (std::int64_t i = o.c0; i < o.c0 + o.cols; ++i) out[(j - D.r0) * a2 + (i - D.c0)] = v[pos++];
  }
  co_return Buffer::of(std::move(out));
}

Buffer zeros(std::int64_t n, bool data) {
  return Buffer::make(n, data, [](std::int64_t) { return Element{0}; });
}

/// The reduction's result plus E's block; one flop an element.
Task<> finish(Node& self, const Grid& g, Buffer A) {
  routing::add_into(A, matmul::block(self.data_mode(), g.sh, Which::E, g.a_block(self.id())));
  co_await self.compute(A.size());
  self.set_result(std::move(A));
}

std::int64_t G(std::int64_t i) { return gray::encode(i); }

Task<> a2(Node& self, Params p) {
  const Grid g(p, self.topology(), true);
  const NodeId x = self.id();
  const bool data = self.data_mode();
  const std::int64_t k = g.row_of(x), l = g.col_of(x);
  // txp C: Cᵀ(Q_k, P_l), bQ1 x bP2; brd ↔: Cᵀ(Q_k, all P) as N2 blocks by local address G(l').
  Buffer Ct = co_await grid_transpose(self, g, g.Pt, g.Qt,
                                      matmul::block(data, g.sh, Which::C, {k * g.bP1, g.bP1, l * g.bQ2, g.bQ2}));
  const Buffer Crow = co_await matmul::gather(self, g.bQ1 * g.bP2, std::move(Ct), g.row_cube());
  // mpy: C(:, Q_k) D(Q_k, R_l), P̃ x bR2, in blocks of bP1 rows by the column node G(k') they go to.
  const Buffer D = matmul::block(data, g.sh, Which::D, {k * g.bQ1, g.bQ1, l * g.bR2, g.bR2});
  Buffer part = zeros(g.Pt * g.bR2, data);
  const std::int64_t c = std::min(g.bP1, g.bP2);
  for (std::int64_t i0 = 0; i0 < g.Pt && data; i0 += c)
    matmul::multiply_add(part, G(i0 / g.bP1) * g.bP1 * g.bR2 + (i0 % g.bP1) * g.bR2, g.bR2,
                         Operand{&Crow, G(i0 / g.bP2) * g.bQ1 * g.bP2 + i0 % g.bP2, 1, g.bP2}, Operand{&D, 0, g.bR2}, c,
                         g.bQ1, g.bR2);
  co_await self.compute((2 * g.bQ1 - 1) * g.Pt * g.bR2);
  // red ↕: A_kl.
  Buffer A = co_await matmul::reduce(self, g.bP1 * g.bR2, std::move(part), g.col_cube());
  co_await finish(self, g, std::move(A));
}

Task<> a3(Node& self, Params p) {
  const Grid g(p, self.topology(), true);
  const NodeId x = self.id();
  const bool data = self.data_mode();
  const std::int64_t k = g.row_of(x), l = g.col_of(x);
  // txp C: Cᵀ(Q_k, P_l), bQ1 x bP2. brd D ↔: D(Q_k, all R) as N2 blocks bQ1 x bR2 by G(l').
  const Buffer Ct = co_await grid_transpose(self, g, g.Pt, g.Qt,
                                            matmul::block(data, g.sh, Which::C, {k * g.bP1, g.bP1, l * g.bQ2, g.bQ2}));
  const Buffer Drow = co_await matmul::gather(
      self, g.bQ1 * g.bR2, matmul::block(data, g.sh, Which::D, {k * g.bQ1, g.bQ1, l * g.bR2, g.bR2}), g.row_cube());
  // mpy, computed as Aᵀ(:, P_l) = D(Q_k, :)ᵀ Cᵀ(Q_k, P_l): R̃ x bP2 in blocks of bR1 rows by the
  // column node G(k') they go to.
  Buffer part = zeros(g.Rt * g.bP2, data);
  const std::int64_t c = std::min(g.bR1, g.bR2);
  for (std::int64_t j0 = 0; j0 < g.Rt && data; j0 += c)
    matmul::multiply_add(part, G(j0 / g.bR1) * g.bR1 * g.bP2 + (j0 % g.bR1) * g.bP2, g.bP2,
                         Operand{&Drow, G(j0 / g.bR2) * g.bQ1 * g.bR2 + j0 % g.bR2, 1, g.bR2}, Operand{&Ct, 0, g.bP2},
                         c, g.bQ1, g.bP2);
  co_await self.compute((2 * g.bQ1 - 1) * g.Rt * g.bP2);
  // red ↕: Aᵀ(R_k, P_l), block (k, l) of Aᵀ; txp A.
  Buffer At = co_await matmul::reduce(self, g.bR1 * g.bP2, std::move(part), g.col_cube());
  Buffer A = co_await grid_transpose(self, g, g.Rt, g.Pt, std::move(At));
  co_await finish(self, g, std::move(A));
}

/// The address geometry of A3 version 2 on a grid (the head of this file).
struct A3v2Geometry {
  int m = 0, d = 0, mp = 0;
  std::int64_t c = 0;           ///< the rows of A a diagonal node gathers: min(bP1, bP2)
  routing::SubCube halve, acc;  ///< the low m and the high d dimensions of the row field
  explicit A3v2Geometry(const Grid& g)
      : m(std::max(g.n1 - g.n2, 0)), d(std::min(g.n1, g.n2)), mp(std::max(g.n2 - g.n1, 0)), c(std::min(g.bP1, g.bP2)) {
    halve = routing::SubCube::range(g.n2, m);
    acc = routing::SubCube::range(g.n2 + m, d);
  }
  /// The high d bits of the row field and of the column field of x.
  [[nodiscard]] NodeId row_high(const Grid& g, NodeId x) const { return (x >> g.n2) >> m; }
  [[nodiscard]] NodeId col_high(const Grid& g, NodeId x) const { return (x & (g.N2 - 1)) >> mp; }
};

Task<> a3v2(Node& self, Params p) {
  const Grid g(p, self.topology(), true);
  const A3v2Geometry v(g);
  const NodeId x = self.id();
  const bool data = self.data_mode(), ap = self.machine().ports.kind == PortKind::all;
  const std::int64_t k = g.row_of(x), l = g.col_of(x);
  // txp C, brd D ↔: as a3.
  const Buffer Ct = co_await grid_transpose(self, g, g.Pt, g.Qt,
                                            matmul::block(data, g.sh, Which::C, {k * g.bP1, g.bP1, l * g.bQ2, g.bQ2}));
  const Buffer Drow = co_await matmul::gather(
      self, g.bQ1 * g.bR2, matmul::block(data, g.sh, Which::D, {k * g.bQ1, g.bQ1, l * g.bR2, g.bR2}), g.row_cube());
  // mpy: the partial A(P_l, :) = C(P_l, Q_k) D(Q_k, :), bP2 x R̃ row-major, as 2^m sets of c rows,
  // set j (rows l bP2 + j c ..) at the halving address of the processor row it goes to.
  const std::int64_t V = v.c * g.Rt, sets = std::int64_t{1} << v.m;
  Buffer part = zeros(g.bP2 * g.Rt, data);
  for (std::int64_t j = 0; j < sets && data; ++j) {
    const std::int64_t u = G(l * sets + j) & (sets - 1);
    for (std::int64_t l2 = 0; l2 < g.N2; ++l2)
      matmul::multiply_add(part, u * V + l2 * g.bR2, g.Rt, Operand{&Ct, j * v.c, 1, g.bP2},
                           Operand{&Drow, G(l2) * g.bQ1 * g.bR2, g.bR2}, v.c, g.bQ1, g.bR2);
  }
  co_await self.compute((2 * g.bQ1 - 1) * g.bP2 * g.Rt);
  // red ↕: 1. recursive halving over the low m row dimensions; 2. accumulation over the high d
  // onto the diagonal node, whose high row bits are the column's high bits.
  // (Not `m > 0 ? co_await ... : std::move(part)`: with GCC 12 that ran into a double free.)
  Buffer held = std::move(part);
  if (v.m > 0) held = co_await matmul::reduce(self, V, std::move(held), v.halve);
  if (v.d > 0) {
    auto plan = ap ? routing::plan(routing::Family::nrsbt, routing::Schedule::phased, v.d)
                   : routing::plan(routing::Family::sbt, routing::Schedule::cyclic, v.d);
    held = co_await routing::reduce_to(self, v.col_high(g, x), V, std::move(held), plan, v.acc);
  }
  // ↔ one-to-all / some-to-all personalized from the diagonal nodes: to node G(l') of the row the
  // c x bR2 block A(rows, R_l').
  const std::int64_t Mb = v.c * g.bR2;
  Buffer mine;
  if (v.row_high(g, x) == v.col_high(g, x)) {
    mine = Buffer::sized(g.N2 * Mb);
    if (data) {
      std::vector<Element> out;
      out.reserve(static_cast<std::size_t>(g.N2 * Mb));
      const auto h = held.values();
      for (NodeId w = 0; w < g.N2; ++w)
        for (std::int64_t i = 0; i < v.c; ++i) {
          const auto* row = h.data() + i * g.Rt + gray::decode(w) * g.bR2;
          out.insert(out.end(), row, row + g.bR2);
        }
      mine = Buffer::of(std::move(out));
    }
  }
  Buffer got = co_await routing::sometoall(self, Mb, std::move(mine), g.row_cube(), v.mp, v.row_high(g, x), ap);
  // A_kl from the blocks of the 2^m' sources (k, l_s), G(l_s) = (G(k) << m') | w: rows P_{l_s}.
  Buffer A = Buffer::sized(g.bP1 * g.bR2);
  if (v.mp == 0) {
    A = std::move(got);
  } else if (data) {
    A = zeros(g.bP1 * g.bR2, data);
    for (NodeId w = 0; w < (NodeId{1} << v.mp); ++w) {
      const std::int64_t ls = gray::decode((G(k) << v.mp) | w);
      A.write((ls * g.bP2 - k * g.bP1) * g.bR2, got.slice(w * Mb, Mb));
    }
  }
  co_await finish(self, g, std::move(A));
}

Task<> a4(Node& self, Params p) {
  const Grid g(p, self.topology(), true);
  const NodeId x = self.id();
  const bool data = self.data_mode();
  const std::int64_t k = g.row_of(x), l = g.col_of(x);
  // txp D: Dᵀ(R_k, Q_l), bR1 x bQ2; brd ↕: Dᵀ(all R, Q_l) as N1 blocks by G(k').
  Buffer Dt = co_await grid_transpose(self, g, g.Qt, g.Rt,
                                      matmul::block(data, g.sh, Which::D, {k * g.bQ1, g.bQ1, l * g.bR2, g.bR2}));
  const Buffer Dcol = co_await matmul::gather(self, g.bR1 * g.bQ2, std::move(Dt), g.col_cube());
  // mpy: C_kl D(Q_l, :), bP1 x R̃, in blocks of bR2 columns by the row node G(l') they go to.
  const Buffer C = matmul::block(data, g.sh, Which::C, {k * g.bP1, g.bP1, l * g.bQ2, g.bQ2});
  Buffer part = zeros(g.bP1 * g.Rt, data);
  const std::int64_t c = std::min(g.bR1, g.bR2);
  for (std::int64_t j0 = 0; j0 < g.Rt && data; j0 += c)
    matmul::multiply_add(part, G(j0 / g.bR2) * g.bP1 * g.bR2 + j0 % g.bR2, g.bR2, Operand{&C, 0, g.bQ2},
                         Operand{&Dcol, G(j0 / g.bR1) * g.bR1 * g.bQ2 + (j0 % g.bR1) * g.bQ2, 1, g.bQ2}, g.bP1, g.bQ2,
                         c);
  co_await self.compute((2 * g.bQ2 - 1) * g.bP1 * g.Rt);
  // red ↔: A_kl.
  Buffer A = co_await matmul::reduce(self, g.bP1 * g.bR2, std::move(part), g.row_cube());
  co_await finish(self, g, std::move(A));
}

Task<> a5(Node& self, Params p) {
  const Grid g(p, self.topology(), true);
  const NodeId x = self.id();
  const bool data = self.data_mode();
  const std::int64_t k = g.row_of(x), l = g.col_of(x);
  // txp D: Dᵀ(R_k, Q_l), bR1 x bQ2. brd C ↕: C(all P, Q_l) as N1 blocks bP1 x bQ2 by G(k').
  const Buffer Dt = co_await grid_transpose(self, g, g.Qt, g.Rt,
                                            matmul::block(data, g.sh, Which::D, {k * g.bQ1, g.bQ1, l * g.bR2, g.bR2}));
  const Buffer Ccol = co_await matmul::gather(
      self, g.bP1 * g.bQ2, matmul::block(data, g.sh, Which::C, {k * g.bP1, g.bP1, l * g.bQ2, g.bQ2}), g.col_cube());
  // mpy, computed as Aᵀ(R_k, :) = Dᵀ(R_k, Q_l) C(:, Q_l)ᵀ: bR1 x P̃ in blocks of bP2 columns by
  // the row node G(l') they go to.
  Buffer part = zeros(g.bR1 * g.Pt, data);
  const std::int64_t c = std::min(g.bP1, g.bP2);
  for (std::int64_t i0 = 0; i0 < g.Pt && data; i0 += c)
    matmul::multiply_add(part, G(i0 / g.bP2) * g.bR1 * g.bP2 + i0 % g.bP2, g.bP2, Operand{&Dt, 0, g.bQ2},
                         Operand{&Ccol, G(i0 / g.bP1) * g.bP1 * g.bQ2 + (i0 % g.bP1) * g.bQ2, 1, g.bQ2}, g.bR1, g.bQ2,
                         c);
  co_await self.compute((2 * g.bQ2 - 1) * g.bR1 * g.Pt);
  // red ↔: Aᵀ(R_k, P_l); txp A.
  Buffer At = co_await matmul::reduce(self, g.bR1 * g.bP2, std::move(part), g.row_cube());
  Buffer A = co_await grid_transpose(self, g, g.Rt, g.Pt, std::move(At));
  co_await finish(self, g, std::move(A));
}

// ---- predictions: Tables 9-11 ----

/// §5.2.2's transposition of X = (a/N1)(b/N2) elements a node, as built above.
RowTerms txp_terms(const Grid& g, std::int64_t X, std::int64_t B, bool all_port) {
  const Txp t(g);
  const std::int64_t piece = X >> t.m;
  RowTerms r = all_port && t.m > 1 ? nrsbt_alltoall_terms(piece, t.m, B) : standard_exchange_terms(piece, t.m, B);
  if (t.nmin == 0) return r;
  const std::int64_t h = 2 * t.nmin, packets = ceil_div(X, B);
  if (all_port) {  // SPT: the last of ⌈X/B⌉ packets crosses h links, each packet its own message
    r += RowTerms{packets + h - 1, X + (h - 1) * std::min(B, X), packets + h - 1};
  } else {
    r += RowTerms{packets, X, 1}.times(h);
  }
  return r;
}

/// An all-to-all broadcast or reduction of M elements a node within a subcube of d dimensions.
RowTerms brd_terms(std::int64_t M, int d, std::int64_t B, bool all_port) {
  return all_port && d > 1 ? balanced_levels_terms(M, d, B) : sbt_doubling_terms(M, d, B);
}

/// Table 9 (one-port) / Table 8 with TXP(n,N) and SBnT-b (all-port), each term on the blocks the
/// algorithm moves, plus Table 10's arithmetic.
Prediction predict_txp(const Setup& s, int alg) {
  const Grid g(s.params, s.topology, true);
  const std::int64_t B = s.params.B;
  const bool ap = s.machine.ports.kind == PortKind::all;
  RowTerms t;
  std::int64_t flops = 0;
  // All-port: a block that an nRSBT phase cannot cut into equal parts (an all-to-all piece of the
  // middle exchange over m > 1 dimensions, a broadcast or reduction block over d > 1).
  bool uneven = false;
  const Txp tx(g);
  auto txp = [&](std::int64_t X) {
    uneven = uneven || (tx.m > 1 && (X >> tx.m) % tx.m != 0);
    return txp_terms(g, X, B, ap);
  };
  auto brd = [&](std::int64_t M, int d) {
    uneven = uneven || (d > 1 && M % d != 0);
    return brd_terms(M, d, B, ap);
  };
  switch (alg) {
    case 2:
      t += txp(g.bP1 * g.bQ2);
      t += brd(g.bQ1 * g.bP2, g.n2);
      t += brd(g.bP1 * g.bR2, g.n1);
      flops = (2 * g.bQ1 - 1) * g.Pt * g.bR2 + g.N1 * g.bP1 * g.bR2;
      break;
    case 3:
      t += txp(g.bP1 * g.bQ2);
      t += brd(g.bQ1 * g.bR2, g.n2);
      t += brd(g.bR1 * g.bP2, g.n1);
      t += txp(g.bR1 * g.bP2);
      flops = (2 * g.bQ1 - 1) * g.Rt * g.bP2 + g.N1 * g.bR1 * g.bP2;
      break;
    case 4:
      t += txp(g.bQ1 * g.bR2);
      t += brd(g.bR1 * g.bQ2, g.n1);
      t += brd(g.bP1 * g.bR2, g.n2);
      flops = (2 * g.bQ2 - 1) * g.bP1 * g.Rt + g.N2 * g.bP1 * g.bR2;
      break;
    default:
      t += txp(g.bQ1 * g.bR2);
      t += brd(g.bP1 * g.bQ2, g.n1);
      t += brd(g.bR1 * g.bP2, g.n2);
      t += txp(g.bR1 * g.bP2);
      flops = (2 * g.bQ2 - 1) * g.bR1 * g.Pt + g.N2 * g.bR1 * g.bP2;
      break;
  }
  const char name[] = {'A', static_cast<char>('0' + alg), '\0'};  // "A2" .. "A5"
  Prediction pr = matmul::from_terms(
      s, t, flops,
      ap ? std::string("TR-530 Table 8 ") + name + "(n): TXP(n,N) (middle nRSBT-p + SPT) + nRSBT-b rows + Table 10"
         : std::string("TR-530 Table 9 ") + name +
               "(1), each TXP as §5.2.2's 2 log N_min steps of X + log(N_max/N_min) of X/2 (Table 9's n(X t_c + tau) "
               "bounds it) + Table 10");
  // Measured over the grid test: at most +35 % (A2, A4) and +62 % (A3, A5, two transpositions),
  // all at one-element blocks where the nRSBT's parts are empty on most trees.
  // The table's optimum N1. One-port, Table 12: A2 √(QN/R), A3 √(QN/P), A4 √(PN/Q), A5 √(RN/Q).
  // All-port, §5.2.4 (Fig. 24): the N1 = 2^n1 minimising u(N1 - 1)/n1 + v(N2 - 1)/n2 with (u, v) =
  // (R, Q) for A2 and, "replacing (Q, R)", (P, Q) for A3, (Q, P) for A4 and (Q, R) for A5.
  const double P = static_cast<double>(g.sh.P), Q = static_cast<double>(g.sh.Q), R = static_cast<double>(g.sh.R),
               N = static_cast<double>(g.N);
  if (!ap) {
    const double num[] = {0, 0, Q, Q, P, R}, den[] = {1, 1, R, P, Q, Q};
    pr.n1_opt = std::sqrt(num[alg] * N / den[alg]);
  } else {
    const double u[] = {0, 0, R, P, Q, Q}, v[] = {0, 0, Q, Q, P, R};
    double best = INFINITY;
    for (int n1 = 0; n1 <= g.n; ++n1) {
      const int n2 = g.n - n1;
      const double f = (n1 > 0 ? u[alg] * (std::ldexp(1.0, n1) - 1) / n1 : 0) +
                       (n2 > 0 ? v[alg] * (std::ldexp(1.0, n2) - 1) / n2 : 0);
      if (f < best) best = f, pr.n1_opt = std::ldexp(1.0, n1);
    }
  }
  if (ap && uneven) pr.relation = Relation::approx, pr.tolerance = alg == 3 || alg == 5 ? 0.75 : 0.5;
  return pr;
}

/// A3 version 2, derived from the schedule (the paper gives no row): TXP[C] + SBT-b(1,N2)[D] as
/// a3, then with V = c R̃ (the head of this file)
///   one-port  SBT-b(1,2^m)[V] backwards + d (⌈V/B⌉ tau + V t_c) + some-to-all(c bR2; d, m'),
///   all-port  nRSBT-b(m,2^m)[V] backwards + d (⌈⌈V/d⌉/B⌉ tau + ⌈V/d⌉ t_c) + its n-port form,
/// the some-to-all as TR-572 Table 3 (sometoall_terms; SBT-p(1,N2) of Table 3 when m' = 0), and
/// the arithmetic: a3's multiply (2 bQ1 - 1) bP2 R̃, (2^m - 1) V additions in the halving, d V in
/// the accumulation (each step adds a whole block at the diagonal node), bP1 bR2 for E.
Prediction predict_a3v2(const Setup& s) {
  const Grid g(s.params, s.topology, true);
  const A3v2Geometry v(g);
  const Txp tx(g);
  const std::int64_t B = s.params.B, V = v.c * g.Rt, Mb = v.c * g.bR2;
  const bool ap = s.machine.ports.kind == PortKind::all;
  RowTerms t = txp_terms(g, g.bP1 * g.bQ2, B, ap);
  t += brd_terms(g.bQ1 * g.bR2, g.n2, B, ap);
  t += brd_terms(V, v.m, B, ap);
  if (v.d > 0) {
    const std::int64_t part = ap ? ceil_div(V, v.d) : V;
    t += RowTerms{ceil_div(part, B), part, 1}.times(v.d);
  }
  t += sometoall_terms(Mb, v.d, v.mp, B, ap);
  const std::int64_t flops =
      (2 * g.bQ1 - 1) * g.bP2 * g.Rt + ((std::int64_t{1} << v.m) - 1) * V + v.d * V + g.bP1 * g.bR2;
  Prediction pr = matmul::from_terms(
      s, t, flops,
      ap ? "TR-530 §5.2.3 A3 version 2 (n): TXP(n,N)[C] + nRSBT-b[D] + nRSBT-b backwards and rotated SBTs backwards "
           "[A] + nRSBT-p some-to-all (TR-572 Table 3) [A] + Table 10's multiply"
         : "TR-530 §5.2.3 A3 version 2 (1), derived: TXP[C] + SBT-b(1,N2)[D] + SBT-b(1,N1/N2) and SBT-b(1,1) "
           "backwards [A] + SBT-p(1,N2) / some-to-all (TR-572 Table 3) [A] + Table 10's multiply");
  // All-port: a block an nRSBT phase cannot cut into equal parts.
  const bool uneven = (tx.m > 1 && ((g.bP1 * g.bQ2) >> tx.m) % tx.m != 0) ||
                      (g.n2 > 1 && (g.bQ1 * g.bR2) % g.n2 != 0) || (v.m > 1 && V % v.m != 0) ||
                      (v.d > 1 && V % v.d != 0) || (v.d > 1 && (Mb << v.mp) % v.d != 0) || (v.mp > 1 && Mb % v.mp != 0);
  if (ap && uneven) {  // as a2 and a4 (one TXP): measured 34.5 % over the grid, at one-element blocks
    pr.relation = Relation::approx, pr.tolerance = 0.5;
  } else if (ap && v.d > 1) {
    // The accumulation on d > 1 rotated trees: the diagonal node receives d parts in every step
    // and adds them all, a child fewer; a child that has added less sends earlier and its part
    // arrives while the diagonal node is still adding, so the steps overlap: a bound.
    pr.relation = Relation::upper_bound;
  }
  return pr;
}

Prediction predict_a2(const Setup& s) { return predict_txp(s, 2); }
Prediction predict_a3(const Setup& s) { return predict_txp(s, 3); }
Prediction predict_a4(const Setup& s) { return predict_txp(s, 4); }
Prediction predict_a5(const Setup& s) { return predict_txp(s, 5); }

std::optional<SetupError> check_txp(const Setup& s) {
  if (auto e = matmul::check_grid(s)) return e;
  const Grid g(s.params, s.topology, true);
  // the largest of the four: an operand gathered over a row or column, a partial product, blocks
  const std::int64_t peak = std::max({g.bQ1 * g.Pt + g.Pt * g.bR2, g.bQ1 * g.Rt + g.Rt * g.bP2,
                                      g.Rt * g.bQ2 + g.bP1 * g.Rt, g.Pt * g.bQ2 + g.bR1 * g.Pt}) +
                            4 * g.bP1 * g.bQ2 + 4 * g.bQ1 * g.bR2 + 4 * g.bP1 * g.bR2;
  return matmul::check(s, peak);
}

Verdict verify_txp(const Setup& s, const std::vector<Buffer>& results) {
  const Grid g(s.params, s.topology, true);
  return matmul::verify_product(s, results, [&](NodeId x) { return g.a_block(x); });
}

const Registration kRegistrationMatmul2dTxp{[](Registry& r) {
  const std::vector<std::string> params = {"P", "Q", "R", "N1", "N2", "B"};
  struct Info {
    const char *name, *summary, *ops;
    double tolerance, measured;
  };
  for (const Info& a :
       {Info{"matmul2d.a2",
             "A <- CD + E on an N1 x N2 grid: transpose C, broadcast it in rows, multiply, reduce A in columns (A2)",
             "TXP[C] + SBT-b(1,N2)[C] + SBT-b(1,N1)[A]", 0.5, 0.345},
        Info{"matmul2d.a3",
             "A <- CD + E on an N1 x N2 grid: transpose C, broadcast D in rows, multiply, reduce A in columns, "
             "transpose A (A3)",
             "TXP[C] + SBT-b(1,N2)[D] + SBT-b(1,N1)[A] + TXP[A]", 0.75, 0.619},
        Info{"matmul2d.a4",
             "A <- CD + E on an N1 x N2 grid: transpose D, broadcast it in columns, multiply, reduce A in rows (A4)",
             "TXP[D] + SBT-b(1,N1)[D] + SBT-b(1,N2)[A]", 0.5, 0.345},
        Info{"matmul2d.a5",
             "A <- CD + E on an N1 x N2 grid: transpose D, broadcast C in columns, multiply, reduce A in rows, "
             "transpose A (A5)",
             "TXP[D] + SBT-b(1,N1)[C] + SBT-b(1,N2)[A] + TXP[A]", 0.75, 0.619}}) {
    const std::string n = std::string(a.name).substr(9);  // "a2"
    const int alg = n[1] - '0';
    r.add({.name = a.name,
           .summary = a.summary,
           .source = "TR-530 §5.2, §5.2.2, Tables 8-11 A" + std::to_string(alg),
           .params = params,
           .required = {"P", "Q", "R"},
           .check = check_txp,
           .process = alg == 2   ? a2
                      : alg == 3 ? a3
                      : alg == 4 ? a4
                                 : a5,
           .predict = alg == 2   ? predict_a2
                      : alg == 3 ? predict_a3
                      : alg == 4 ? predict_a4
                                 : predict_a5,
           .verify = verify_txp,
           .one_port = {.row = std::string("T9 A") + std::to_string(alg) + "(1): " + a.ops +
                               ", TXP by §5.2.2's steps, + T10",
                        .relation = "exact"},
           .all_port = {.row = std::string("T8 A") + std::to_string(alg) + "(n): TXP(n,N) + nRSBT-b rows + T10",
                        .relation = "exact when every nRSBT block divides into its parts; otherwise approx <= " +
                                    std::to_string(static_cast<int>(a.tolerance * 100)) + " %",
                        .deviations = {{Relation::approx, a.tolerance, a.measured, "n=4 P=1 Q=1 R=1 B=1 N1=16"}}}});
  }
  r.add(
      {.name = "matmul2d.a3v2",
       .summary = "A <- CD + E on an N1 x N2 grid: transpose C, broadcast D in rows, multiply, reduce A in columns "
                  "onto one node a row, one-to-all (some-to-all if N1 < N2) personalized in rows (A3 version 2)",
       .source = "TR-530 §5.2.3 (A3 version 2; no table row: derived from the schedule), §5.2.2, TR-572 §3.3",
       .params = params,
       .required = {"P", "Q", "R"},
       .check = check_txp,
       .process = a3v2,
       .predict = predict_a3v2,
       .verify = verify_txp,
       .one_port = {.row = "derived: TXP[C] + SBT-b(1,N2)[D] + SBT-b(1,N1/N2) and SBT-b(1,1) backwards[A] + "
                           "SBT-p(1,N2) or some-to-all (TR-572 T3)[A] + T10",
                    .relation = "exact"},
       .all_port = {.row = "derived: TXP(n,N) + nRSBT-b[D] + nRSBT-b and rotated SBTs backwards[A] + nRSBT-p "
                           "some-to-all[A] + T10",
                    .relation = "where every nRSBT block divides into its parts: exact when min(n1, n2) <= 1, else an "
                                "upper bound (the accumulation's steps overlap); otherwise approx <= 50 %",
                    .deviations = {{Relation::upper_bound, 0, 0.959, "n=6 P=64 Q=16 R=48 B=256 N1=8"},
                                   {Relation::approx, 0.5, 0.345, "n=4 P=1 Q=1 R=1 B=1 N1=16"}}}});
}};

}  // namespace
}  // namespace cubesim
