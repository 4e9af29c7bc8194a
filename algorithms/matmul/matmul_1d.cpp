// One-dimensional matrix multiplication on the Boolean n-cube — Johnsson & Ho, TR-530 §5.1,
// Tables 5-7, Figs 6-10. A <- C D + E (matmul.hpp), column partitioning: node x holds block
// column x of C (P x bQ), of D (Q x bR) and of E, and ends with block column x of A (P x bR),
// bX = ceil(X/N), consecutive storage, binary block numbering (§6: "only the local data accessing
// schemes differ" for Gray).
//
//  matmul1d.a1.cra     A1ˡ(1) with CRA(1,N) (the linear-array version, §5.1 code): multiply by
//                      the own block of C, then N-1 times: rotate C one step along the Gray-code
//                      ring, multiply the block that arrived by the matching block row of D.
//                      N multiply steps, N-1 communication steps. All-port machines run the same
//                      schedule (Table 5 gives A1ˡ(n) only with the GCEA).
//  matmul1d.a1.gcea    A1ˡ(1) with GCEA(1,N); all-port A1ˡ(n) with GCEA(n,N): the C block cut
//                      into n parts by rows, part k exchanged across dimension (j + k) mod n.
//  matmul1d.a1.sbt     A1(1): SBT-b(1,N) (recursive doubling) on C, then one multiply. All-port
//                      A1(n): nRSBT-b(n,N) on C (Table 5: "SBnT-b(n,N)[C] or nRSBT-b(n,N)[C]").
//  matmul1d.a1.hybrid  §5.1, Fig. 10: k SBT steps (dimensions 0..k-1) gather 2^k blocks, one
//                      multiply, then GCEA on the other n-k dimensions with 2^k-block super
//                      blocks, a multiply after each: 2^(n-k) multiply steps.
//  matmul1d.a3         A3: transpose C (SBT-p(1,N), the standard exchange), broadcast D (SBT-b),
//                      multiply the row block, transpose A back, add E. All-port: nRSBT-p(n,N)
//                      and nRSBT-b(n,N).
//  matmul1d.a4         A4: transpose D, multiply C's block column by D's block row into a P x R
//                      partial, all-to-all reduction of the partials (the SBT reversed: recursive
//                      halving), add E. All-port: nRSBT-p(n,N) and nRSBT-b(n,N) reversed.
//
// Arithmetic is charged as compute (t_a a flop), serially with the communication as in the
// paper's codes. Every node charges the table's count on padded blocks (matmul.hpp). Predictions:
// Table 6 (communication) and Table 7 (arithmetic), read with padded blocks and the A3(1) start-up
// term with QR for the printed PR (the broadcast of D; docs/matmul.md).
#include "algorithms/collectives/tree_routing.hpp"
#include "algorithms/embedding/gray.hpp"
#include "algorithms/embedding/trees.hpp"
#include "algorithms/matmul/matmul.hpp"
#include "algorithms/registry.hpp"

namespace cubesim {
namespace {

using matmul::Operand;
using matmul::Rect;
using matmul::Which;

/// The sizes of one run: N = 2^n nodes, padded blocks bP, bQ, bR.
struct Dims {
  matmul::Shape sh;
  std::int64_t N = 1, bP = 0, bQ = 0, bR = 0;
  int n = 0;
  Dims(const Params& p, const Topology& t) : sh{p.P, p.Q, p.R}, N(t.size()), n(t.dim()) {
    bP = ceil_div(p.P, N), bQ = ceil_div(p.Q, N), bR = ceil_div(p.R, N);
  }
  /// Block column x of C (P x bQ), D (Q x bR), E (P x bR).
  [[nodiscard]] Buffer col_block(bool data, Which m, NodeId x) const {
    const std::int64_t w = m == Which::C ? bQ : bR;
    return matmul::block(data, sh, m, {0, sh.rows(m), x * w, w});
  }
  /// 2 P (N bQ) bR: A1's arithmetic, Table 7 2PQ⌈R/N⌉ on padded blocks.
  [[nodiscard]] std::int64_t a1_flops() const { return 2 * sh.P * N * bQ * bR; }
};

/// The A1 multiply by one block of C (P x bQ, block j of the inner index): A += C_j D_x[j].
struct A1 {
  const Dims& g;
  Buffer A, D;
  A1(Node& self, const Dims& g) : g(g) {
    A = g.col_block(self.data_mode(), Which::E, self.id());
    D = g.col_block(self.data_mode(), Which::D, self.id());
  }
  /// Rows [r0, r0 + rows) of the block of C at `off` of `C` (inner index block j).
  void multiply(const Buffer& C, std::int64_t off, std::int64_t j, std::int64_t r0, std::int64_t rows) {
    const std::int64_t k = std::clamp(g.sh.Q - j * g.bQ, std::int64_t{0}, g.bQ);  // D's padding rows are absent
    matmul::multiply_add(A, r0 * g.bR, g.bR, Operand{&C, off + r0 * g.bQ, g.bQ}, Operand{&D, j * g.bQ * g.bR, g.bR},
                         rows, k, g.bR);
  }
  /// Multiplies by `blocks` blocks of C from inner block j (at once: values are not simulated
  /// time) and returns the computation the caller awaits: an operation, not a coroutine, so that
  /// the N - 1 steps of the ring forms make no frame each.
  Op step(Node& self, const Buffer& C, std::int64_t j, std::int64_t blocks = 1) {
    if (self.data_mode())
      for (std::int64_t b = 0; b < blocks; ++b) multiply(C, b * g.sh.P * g.bQ, j + b, 0, g.sh.P);
    return self.compute(2 * g.sh.P * blocks * g.bQ * g.bR);
  }
};

bool all_port(const Node& self) { return self.machine().ports.kind == PortKind::all && self.topology().dim() > 1; }

Task<> a1_ring(Node& self, Params p, bool gcea) {
  const Dims g(p, self.topology());
  const NodeId x = self.id();
  A1 a(self, g);
  Buffer cur = g.col_block(self.data_mode(), Which::C, x);
  co_await a.step(self, cur, x);
  const auto pos = gray::decode(x);
  auto at = [&](std::int64_t q) { return gray::encode(((q % g.N) + g.N) % g.N); };
  for (std::int64_t s = 1; s < g.N; ++s) {
    int out = 0, in = 0;
    NodeId j = 0;
    if (gcea) {
      out = in = gray::transition(s - 1, g.n);
      j = x ^ gray::encode(s);
    } else {
      out = self.topology().port_to(x, at(pos + 1));
      in = self.topology().port_to(x, at(pos - 1));
      j = at(pos - s);  // the block of the node s places back on the ring
    }
    auto snd = self.send(out, std::move(cur));
    auto rcv = self.recv(in);
    co_await all_of(snd, rcv);
    cur = rcv.take();
    co_await a.step(self, cur, j);
  }
  self.set_result(std::move(a.A));
}

/// GCEA(n,N) on C: part k (rows part_offset(P, n, k) ..) of every block travels the GCEA
/// sequence rotated by k: in step s it crosses dimension (j + k) mod n and the node then holds
/// part k of the block of x XOR rot_k(G(s)). The n parts of a step are multiplied after the step.
Task<> a1_gcea_all_port(Node& self, Params p) {
  const Dims g(p, self.topology());
  const NodeId x = self.id();
  const int n = g.n;
  A1 a(self, g);
  const Buffer own = g.col_block(self.data_mode(), Which::C, x);
  co_await a.step(self, own, x);
  std::vector<Buffer> parts(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) parts[k] = own.slice(part_offset(g.sh.P, n, k) * g.bQ, part_size(g.sh.P, n, k) * g.bQ);
  for (std::int64_t s = 1; s < g.N; ++s) {
    const int j = gray::transition(s - 1, n);
    std::vector<Op> ops;
    std::vector<int> ks;
    for (int k = 0; k < n; ++k) {
      if (part_size(g.sh.P, n, k) == 0) continue;
      ops.push_back(self.send((j + k) % n, std::move(parts[k]), k));
      ops.push_back(self.recv((j + k) % n, k));
      ks.push_back(k);
    }
    co_await all_of(ops);
    for (std::size_t i = 0; i < ks.size(); ++i) {
      const int k = ks[i];
      parts[k] = ops[2 * i + 1].take();
      const auto from = static_cast<std::int64_t>(x ^ static_cast<NodeId>(trees::rotate_left(gray::encode(s), n, k)));
      // The part holds rows r0 .. of the block of C of node `from`: A's rows r0 .. gain it times
      // D's block row `from`.
      const std::int64_t r0 = part_offset(g.sh.P, n, k);
      const std::int64_t k_inner = std::clamp(g.sh.Q - from * g.bQ, std::int64_t{0}, g.bQ);
      matmul::multiply_add(a.A, r0 * g.bR, g.bR, Operand{&parts[k], 0, g.bQ}, Operand{&a.D, from * g.bQ * g.bR, g.bR},
                           part_size(g.sh.P, n, k), k_inner, g.bR);
    }
    co_await self.compute(2 * g.sh.P * g.bQ * g.bR);
  }
  self.set_result(std::move(a.A));
}

Task<> a1_cra(Node& self, Params p) { return a1_ring(self, p, false); }
Task<> a1_gcea(Node& self, Params p) {
  if (all_port(self)) return a1_gcea_all_port(self, p);
  return a1_ring(self, p, true);
}

/// The whole-cube collectives (matmul::gather, reduce, alltoall).
routing::SubCube whole(const Node& self) { return routing::SubCube::whole(self.topology().dim()); }
Task<Buffer> gather(Node& self, std::int64_t M, Buffer own) {
  return matmul::gather(self, M, std::move(own), whole(self));
}
Task<Buffer> reduce(Node& self, std::int64_t M, Buffer partials) {
  return matmul::reduce(self, M, std::move(partials), whole(self));
}

Task<> a1_sbt(Node& self, Params p) {
  const Dims g(p, self.topology());
  A1 a(self, g);
  Buffer own = g.col_block(self.data_mode(), Which::C, self.id());
  const std::int64_t M = g.sh.P * g.bQ;
  const Buffer C = co_await gather(self, M, std::move(own));
  co_await a.step(self, C, 0, g.N);
  self.set_result(std::move(a.A));
}

Task<> a1_hybrid(Node& self, Params p) {
  const Dims g(p, self.topology());
  const NodeId x = self.id();
  const int k = static_cast<int>(p.k);
  const std::int64_t M = g.sh.P * g.bQ, sub = std::int64_t{1} << k;
  A1 a(self, g);
  Buffer cur = co_await routing::allgather_doubling(self, M, g.col_block(self.data_mode(), Which::C, x),
                                                    routing::SubCube::range(0, k));
  const NodeId low = x & ~(sub - 1);
  co_await a.step(self, cur, low, sub);
  // GCEA(1, 2^(n-k)) on the quotient cube: step s crosses dimension k + (the rightmost 0-bit of
  // s-1) and brings the super-block of the k-subcube low XOR (G(s) << k).
  for (std::int64_t s = 1; s < (std::int64_t{1} << (g.n - k)); ++s) {
    const int d = k + gray::transition(s - 1, g.n - k);
    auto snd = self.send(d, std::move(cur));
    auto rcv = self.recv(d);
    co_await all_of(snd, rcv);
    cur = rcv.take();
    co_await a.step(self, cur, low ^ (gray::encode(s) << k), sub);
  }
  self.set_result(std::move(a.A));
}

/// All-to-all personalized on the whole cube: `slots` holds N blocks of M by destination;
/// returns them by source.
Task<Buffer> transpose(Node& self, std::int64_t M, Buffer slots) {
  return matmul::alltoall(self, M, std::move(slots), whole(self));
}

Task<> a3(Node& self, Params p) {
  const Dims g(p, self.topology());
  const NodeId x = self.id();
  const bool data = self.data_mode();
  // txp C: to node y the rows y bP .. of my block column: C's block column, padded to N bP rows,
  // is already N row blocks of bP x bQ by destination. Back: the blocks of row block x by source,
  // i.e. C_{x*} as N column blocks of bP x bQ.
  const Buffer Cx =
      co_await transpose(self, g.bP * g.bQ, matmul::block(data, g.sh, Which::C, {0, g.N * g.bP, x * g.bQ, g.bQ}));
  // brd D: all N block columns (Q x bR each).
  const Buffer D = co_await gather(self, g.sh.Q * g.bR, g.col_block(data, Which::D, x));
  // mpy: A_{x*} (bP x N bR) = C_{x*} D, block column v of A from D's block column v.
  Buffer Ax = Buffer::make(g.bP * g.N * g.bR, data, [](std::int64_t) { return Element{0}; });
  for (std::int64_t v = 0; v < g.N && data; ++v)
    for (std::int64_t j = 0; j * g.bQ < g.sh.Q; ++j) {  // the blocks of the inner index that hold any of it
      const std::int64_t k = std::min(g.sh.Q - j * g.bQ, g.bQ);
      matmul::multiply_add(Ax, v * g.bP * g.bR, g.bR, Operand{&Cx, j * g.bP * g.bQ, g.bQ},
                           Operand{&D, v * g.sh.Q * g.bR + j * g.bQ * g.bR, g.bR}, g.bP, k, g.bR);
    }
  // 2Q - 1 flops an element of the bP x N bR row block (the E term is added after txp A).
  co_await self.compute((2 * g.sh.Q - 1) * g.bP * g.N * g.bR);
  // txp A: block v of A_{x*} (bP x bR) to node v; back, the N row blocks of my block column.
  Buffer A = co_await transpose(self, g.bP * g.bR, std::move(Ax));
  routing::add_into(A, matmul::block(data, g.sh, Which::E, {0, g.N * g.bP, x * g.bR, g.bR}));
  co_await self.compute(g.N * g.bP * g.bR);
  self.set_result(A.slice(0, g.sh.P * g.bR));
}

Task<> a4(Node& self, Params p) {
  const Dims g(p, self.topology());
  const NodeId x = self.id();
  const bool data = self.data_mode();
  // txp D: D's block column padded to N bQ rows is N row blocks (bQ x bR) by destination; back,
  // block v = D(rows x bQ .., columns v bR ..): D's row block x as N blocks of bQ x bR.
  const Buffer Dx =
      co_await transpose(self, g.bQ * g.bR, matmul::block(data, g.sh, Which::D, {0, g.N * g.bQ, x * g.bR, g.bR}));
  // mpy: the partial A^x = C_{*x} D_{x*}, P x N bR as N blocks of P x bR (by destination).
  const Buffer C = g.col_block(data, Which::C, x);
  Buffer part = Buffer::make(g.N * g.sh.P * g.bR, data, [](std::int64_t) { return Element{0}; });
  const std::int64_t k = std::clamp(g.sh.Q - x * g.bQ, std::int64_t{0}, g.bQ);
  for (std::int64_t v = 0; v < g.N; ++v)
    matmul::multiply_add(part, v * g.sh.P * g.bR, g.bR, Operand{&C, 0, g.bQ}, Operand{&Dx, v * g.bQ * g.bR, g.bR},
                         g.sh.P, k, g.bR);
  co_await self.compute(g.sh.P * g.N * g.bR * (2 * g.bQ - 1));
  // red A: the all-to-all reduction; then + E.
  const std::int64_t M = g.sh.P * g.bR;
  Buffer A = co_await reduce(self, M, std::move(part));
  routing::add_into(A, g.col_block(data, Which::E, x));
  co_await self.compute(M);
  self.set_result(std::move(A));
}

// ---- predictions: Tables 6 and 7 ----

bool all_port(const Setup& s) { return s.machine.ports.kind == PortKind::all && s.topology.dim() > 1; }

Prediction predict_a1_ring(const Setup& s, const char* row) {
  const Dims g(s.params, s.topology);
  const RowTerms t = ring_terms(g.sh.P * g.bQ, g.n, s.params.B);
  return matmul::from_terms(s, t, g.a1_flops(), std::string("TR-530 Table 6 ") + row + " + Table 7 arithmetic");
}

Prediction predict_a1_gcea(const Setup& s) {
  if (!all_port(s)) return predict_a1_ring(s, "A1ˡ(1), GCEA(1,N)");
  const Dims g(s.params, s.topology);
  // Table 6 A1ˡ(n): (1/n)(N-1)P⌈Q/N⌉, ⌈PQ/(nNB)⌉(N-1), the parts being ⌈P/n⌉ rows of the block.
  const RowTerms t = ring_terms(ceil_div(g.sh.P, g.n) * g.bQ, g.n, s.params.B);
  return matmul::from_terms(s, t, g.a1_flops(), "TR-530 Table 6 A1ˡ(n), GCEA(n,N), parts of ⌈P/n⌉ rows + Table 7");
}

Prediction predict_a1_sbt(const Setup& s) {
  const Dims g(s.params, s.topology);
  const std::int64_t M = g.sh.P * g.bQ;
  if (!all_port(s))
    return matmul::from_terms(s, sbt_doubling_terms(M, g.n, s.params.B), g.a1_flops(),
                              "TR-530 Table 6 A1(1), SBT-b(1,N) + Table 7");
  Prediction pr = matmul::from_terms(s, balanced_levels_terms(M, g.n, s.params.B), g.a1_flops(),
                                     "TR-530 Table 6 A1(n), nRSBT-b(n,N) + Table 7");
  if (M % g.n != 0) pr.relation = Relation::approx, pr.tolerance = M < g.n ? 2.5 : 0.45;  // allgather.nrsbt's
  return pr;
}

Prediction predict_a1_hybrid(const Setup& s) {
  const Dims g(s.params, s.topology);
  const int k = static_cast<int>(s.params.k);
  RowTerms t = sbt_doubling_terms(g.sh.P * g.bQ, k, s.params.B);
  t += ring_terms((std::int64_t{1} << k) * g.sh.P * g.bQ, g.n - k, s.params.B);
  Prediction pr =
      matmul::from_terms(s, t, g.a1_flops(),
                         "TR-530 §5.1 (Fig. 10): SBT-b(1,2^k) + GCEA(1,2^(n-k)) on 2^k blocks, Table 2 rows + Table 7");
  pr.b_opt = static_cast<double>((std::int64_t{1} << k) * g.sh.P * g.bQ);
  return pr;
}

Prediction predict_a3(const Setup& s) {
  const Dims g(s.params, s.topology);
  const std::int64_t B = s.params.B, flops = 2 * g.sh.Q * g.bP * g.N * g.bR;
  const std::int64_t txc = g.bP * g.bQ, brd = g.sh.Q * g.bR, txa = g.bP * g.bR;
  if (!all_port(s)) {
    RowTerms t = standard_exchange_terms(txc, g.n, B);
    t += sbt_doubling_terms(brd, g.n, B);
    t += standard_exchange_terms(txa, g.n, B);
    return matmul::from_terms(s, t, flops, "TR-530 Table 6 A3(1) (start-ups: QR for the printed PR) + Table 7");
  }
  RowTerms t = nrsbt_alltoall_terms(txc, g.n, B);
  t += balanced_levels_terms(brd, g.n, B);
  t += nrsbt_alltoall_terms(txa, g.n, B);
  Prediction pr = matmul::from_terms(s, t, flops, "TR-530 Table 6 A3(n), nRSBT-p + nRSBT-b + nRSBT-p + Table 7");
  if (txc % g.n || brd % g.n || txa % g.n)
    pr.relation = Relation::approx, pr.tolerance = std::min({txc, brd, txa}) < g.n ? 5.0 : 0.5;
  return pr;
}

Prediction predict_a4(const Setup& s) {
  const Dims g(s.params, s.topology);
  const std::int64_t B = s.params.B, M = g.sh.P * g.bR, txd = g.bQ * g.bR;
  const std::int64_t flops = g.sh.P * g.N * g.bR * (2 * g.bQ - 1) + g.N * M;  // Table 7 A4 with padded blocks
  if (!all_port(s)) {
    RowTerms t = standard_exchange_terms(txd, g.n, B);
    t += sbt_doubling_terms(M, g.n, B);
    return matmul::from_terms(s, t, flops, "TR-530 Table 6 A4(1) + Table 7");
  }
  RowTerms t = nrsbt_alltoall_terms(txd, g.n, B);
  t += balanced_levels_terms(M, g.n, B);
  Prediction pr = matmul::from_terms(s, t, flops, "TR-530 Table 6 A4(n), nRSBT-p + nRSBT-b reversed + Table 7");
  if (txd % g.n || M % g.n) pr.relation = Relation::approx, pr.tolerance = std::min(txd, M) < g.n ? 5.0 : 0.5;
  return pr;
}

// ---- checks and verification ----

std::optional<SetupError> check_a1(const Setup& s) {
  const Dims g(s.params, s.topology);
  return matmul::check(s, g.sh.P * g.N * g.bQ + g.sh.Q * g.bR + 2 * g.sh.P * g.bR);
}
std::optional<SetupError> check_hybrid(const Setup& s) {
  if (auto e = check_a1(s)) return e;
  if (s.params.k < 0 || s.params.k > s.topology.dim())
    return SetupError{"/params/k", "k = " + std::to_string(s.params.k) +
                                       " SBT steps: must be between 0 and the cube's " +
                                       std::to_string(s.topology.dim()) + " dimensions"};
  return std::nullopt;
}
std::optional<SetupError> check_a3(const Setup& s) {
  const Dims g(s.params, s.topology);
  return matmul::check(s, 2 * g.N * g.bP * g.bQ + g.sh.Q * g.N * g.bR + 3 * g.N * g.bP * g.bR);
}
std::optional<SetupError> check_a4(const Setup& s) {
  const Dims g(s.params, s.topology);
  return matmul::check(s, 2 * g.N * g.bQ * g.bR + g.sh.P * g.bQ + 2 * g.sh.P * g.N * g.bR);
}

Verdict verify_1d(const Setup& s, const std::vector<Buffer>& results) {
  const Dims g(s.params, s.topology);
  return matmul::verify_product(s, results, [&](NodeId x) { return Rect{0, g.sh.P, x * g.bR, g.bR}; });
}

/// The memory model of algorithm A1 (docs/reliability.md "Budgets"): its all-to-all broadcast
/// leaves the whole of D (Q x R) on every node, N Q R + P Q + P R elements in all, at about 12
/// bytes an element (matmul1d.a1.sbt, 32 nodes, P = Q = R = 512, data mode: 102.5 MiB).
std::int64_t a1_memory(const Setup& s) {
  const Params& p = s.params;
  const double QR = static_cast<double>(p.Q) * static_cast<double>(p.R);
  const double rest =
      static_cast<double>(p.P) * static_cast<double>(p.Q) + static_cast<double>(p.P) * static_cast<double>(p.R);
  return model_bytes(s, {1024, 12}, static_cast<double>(s.topology.size()) * QR + rest);
}

const Registration kRegistrationMatmul1d{[](Registry& r) {
  const std::vector<std::string> params = {"P", "Q", "R", "B"};
  const std::vector<std::string> required = {"P", "Q", "R"};
  r.add({.name = "matmul1d.a1.cra",
         .summary = "A <- CD + E by columns: the CRA ring rotates C's block columns, N multiply steps (A1ˡ)",
         .source = "TR-530 §5.1, Tables 5-7 A1ˡ(1) with CRA(1,N)",
         .params = params,
         .required = required,
         .check = check_a1,
         .process = a1_cra,
         .predict = [](const Setup& s) { return predict_a1_ring(s, "A1ˡ(1), CRA(1,N)"); },
         .verify = verify_1d,
         .memory = a1_memory,
         .one_port = {.row = "T6 A1ˡ(1) + T7", .relation = "exact"},
         .all_port = {.row = "runs the one-port schedule (Table 5: A1ˡ(n) by GCEA only)", .relation = "exact"}});
  r.add({.name = "matmul1d.a1.gcea",
         .summary = "A <- CD + E by columns: the GCEA exchanges C's block columns, N multiply steps (A1ˡ)",
         .source = "TR-530 §5.1, Tables 5-7 A1ˡ(1) GCEA(1,N), A1ˡ(n) GCEA(n,N)",
         .params = params,
         .required = required,
         .check = check_a1,
         .process = a1_gcea,
         .predict = predict_a1_gcea,
         .verify = verify_1d,
         .memory = a1_memory,
         .one_port = {.row = "T6 A1ˡ(1) + T7", .relation = "exact"},
         .all_port = {.row = "T6 A1ˡ(n), parts of ⌈P/n⌉ rows + T7", .relation = "exact"}});
  r.add({.name = "matmul1d.a1.sbt",
         .summary = "A <- CD + E by columns: recursive doubling gathers C, one multiply (A1)",
         .source = "TR-530 §5.1, Tables 5-7 A1(1) SBT-b(1,N), A1(n) nRSBT-b(n,N)",
         .params = params,
         .required = required,
         .check = check_a1,
         .process = a1_sbt,
         .predict = predict_a1_sbt,
         .verify = verify_1d,
         .memory = a1_memory,
         .one_port = {.row = "T6 A1(1) + T7", .relation = "exact"},
         .all_port = {
             .row = "T6 A1(n) nRSBT-b(n,N) + T7",
             .relation = "exact when n divides P⌈Q/N⌉; approx <= 45 %; <= 250 % for P⌈Q/N⌉ < n (allgather.nrsbt's)",
             .deviations = {{Relation::approx, 0.45, 0.242, "n=6 P=7 Q=40 R=20 B=1 N1=8"},
                            {Relation::approx, 2.5, 1.42, "n=6 P=1 Q=1 R=1 B=1 N1=8"}}}});
  r.add({.name = "matmul1d.a1.hybrid",
         .summary = "A <- CD + E by columns: k SBT steps, then the GCEA on 2^k-block super-blocks (Fig. 10)",
         .source = "TR-530 §5.1, Fig. 10",
         .params = {"P", "Q", "R", "B", "k"},
         .required = {"P", "Q", "R", "k"},
         .check = check_hybrid,
         .process = a1_hybrid,
         .predict = predict_a1_hybrid,
         .verify = verify_1d,
         .memory = a1_memory,
         .one_port = {.row = "§5.1: SBT-b(1,2^k) + GCEA(1,2^(n-k)) + T7", .relation = "exact"},
         .all_port = {.row = "runs the one-port schedule", .relation = "exact"}});
  r.add(
      {.name = "matmul1d.a3",
       .summary = "A <- CD + E by columns: transpose C, broadcast D, multiply by rows, transpose A (A3)",
       .source = "TR-530 §5.1, Tables 5-7 A3(1), A3(n)",
       .params = params,
       .required = required,
       .check = check_a3,
       .process = a3,
       .predict = predict_a3,
       .verify = verify_1d,
       .one_port = {.row = "T6 A3(1) (QR for PR) + T7", .relation = "exact"},
       .all_port = {.row = "T6 A3(n) nRSBT-p + nRSBT-b + nRSBT-p + T7",
                    .relation = "exact when n divides the blocks; approx <= 50 %; <= 500 % for blocks below n elements",
                    .deviations = {{Relation::approx, 0.5, 0.372, "n=3 P=13 Q=11 R=9 B=7 N1=2"},
                                   {Relation::approx, 5, 3.88, "n=6 P=1 Q=1 R=1 B=1 N1=8"}}}});
  r.add(
      {.name = "matmul1d.a4",
       .summary = "A <- CD + E by columns: transpose D, multiply into a P x R partial, all-to-all reduction (A4)",
       .source = "TR-530 §5.1, Tables 5-7 A4(1), A4(n)",
       .params = params,
       .required = required,
       .check = check_a4,
       .process = a4,
       .predict = predict_a4,
       .verify = verify_1d,
       .one_port = {.row = "T6 A4(1) + T7", .relation = "exact"},
       .all_port = {.row = "T6 A4(n) nRSBT-p + nRSBT-b reversed + T7",
                    .relation = "exact when n divides the blocks; approx <= 50 %; <= 500 % for blocks below n elements",
                    .deviations = {{Relation::approx, 0.5, 0.295, "n=4 P=7 Q=40 R=20 B=7 N1=4"},
                                   {Relation::approx, 5, 3.55, "n=6 P=1 Q=1 R=1 B=1 N1=8"}}}});
}};

}  // namespace
}  // namespace cubesim
