// Dekel's algorithm — the GCEA-based recursive exchange of TR-530 §5.2.1 (after Dekel, Nassimi and
// Sahni [5]; the code "Matrix multiplication according to Dekel's Algorithm"): A <- C D + E on a
// square L x L grid, L = 2^h, encoded in binary (row r = the high h address bits, column c = the
// low h), so that every exchange is between cube neighbours.
//
// Alignment: for each bit i of r that is 1, C is exchanged across column dimension i; for each bit
// i of c that is 1, D across row dimension h + i. Node (r, c) then holds C_{r, r⊕c} and
// D_{r⊕c, c} (an XOR alignment where Cannon's is a rotation) and multiplies them. Then, for i = 1
// .. L - 1, C and D are exchanged across the dimension t where G(i - 1) and G(i) differ (the GCEA
// step: column dimension t for C, row dimension h + t for D): the node then holds
// C_{r, r⊕c⊕G(i)} and D_{r⊕c⊕G(i), c}, and multiplies again. This is the paper's recursive view:
// exchange C10 <-> C11 and D01 <-> D11, then four independent half-size products, and so on.
// One-port: the C exchange, then the D exchange; all-port: both at once.
//
// Prediction: the worst node's alignment (h exchanges of each block) + L - 1 exchange steps of C
// and D + L multiplies, as if in lockstep. All-port it is exact; one-port an approximation like
// Cannon's (<= 43 % measured): nodes whose row and column have few 1-bits finish aligning early and
// their exchanges then queue behind partners still aligning.
// Square grids only (the paper's code also covers N1 = k N2 by splitting C into k blocks: not
// built).
#include <algorithm>

#include "algorithms/matmul/grid.hpp"
#include "algorithms/registry.hpp"

namespace cubesim {
namespace {

using matmul::Grid;
using matmul::Operand;
using matmul::Rect;
using matmul::Which;

/// Exchanges `b` with the neighbour across `dim`.
Task<> exchange(Node& self, int dim, Buffer& b) {
  auto snd = self.send(dim, std::move(b));
  auto rcv = self.recv(dim);
  co_await all_of(snd, rcv);
  b = rcv.take();
}

/// The C exchange across column dimension dc and the D exchange across row dimension dd (either
/// may be absent: -1), one after the other on one port, at once on all.
Task<> exchange_both(Node& self, int dc, Buffer& C, int dd, Buffer& D) {
  if (self.machine().ports.kind == PortKind::all && dc >= 0 && dd >= 0) {
    std::vector<Task<>> both;
    both.push_back(exchange(self, dc, C));
    both.push_back(exchange(self, dd, D));
    co_await all_of(std::move(both));
    co_return;
  }
  if (dc >= 0) co_await exchange(self, dc, C);
  if (dd >= 0) co_await exchange(self, dd, D);
}

Task<> dekel(Node& self, Params p) {
  const Grid g(p, self.topology());
  const NodeId x = self.id();
  const bool data = self.data_mode();
  const int h = g.n2;
  const std::int64_t L = g.N2, r = x >> h, c = x & (L - 1);
  // Binary encoding: block (r, c) of each matrix at node (r || c).
  const Rect a_rect{r * g.bP1, g.bP1, c * g.bR2, g.bR2};
  Buffer C = matmul::block(data, g.sh, Which::C, {r * g.bP1, g.bP1, c * g.bQ2, g.bQ2});
  Buffer D = matmul::block(data, g.sh, Which::D, {r * g.bQ1, g.bQ1, c * g.bR2, g.bR2});
  Buffer A = matmul::block(data, g.sh, Which::E, a_rect);
  // Alignment: C along the row by r's bits, D along the column by c's bits.
  if (self.machine().ports.kind == PortKind::all) {
    for (int i = 0; i < h; ++i) co_await exchange_both(self, (r >> i & 1) ? i : -1, C, (c >> i & 1) ? h + i : -1, D);
  } else {
    for (int i = 0; i < h; ++i)
      if (r >> i & 1) co_await exchange(self, i, C);
    for (int i = 0; i < h; ++i)
      if (c >> i & 1) co_await exchange(self, h + i, D);
  }
  for (std::int64_t i = 0; i < L; ++i) {
    if (i > 0) {
      const int t = gray::transition(i - 1, h);
      co_await exchange_both(self, t, C, h + t, D);
    }
    const std::int64_t s = r ^ c ^ gray::encode(i);  // C_{r,s} and D_{s,c} are here
    const std::int64_t inner = std::clamp(g.sh.Q - s * g.bQ2, std::int64_t{0}, g.bQ2);
    matmul::multiply_add(A, 0, g.bR2, Operand{&C, 0, g.bQ2}, Operand{&D, 0, g.bR2}, g.bP1, inner, g.bR2);
    co_await self.compute(2 * g.bP1 * g.bQ2 * g.bR2);
  }
  self.set_result(std::move(A));
}

Prediction predict_dekel(const Setup& s) {
  const Grid g(s.params, s.topology);
  const std::int64_t L = g.N2;
  const RowTerms t = matmul::block_steps(s, g.bP1 * g.bQ2, g.bQ1 * g.bR2, g.n2 + L - 1);
  Prediction pr = matmul::from_terms(s, t, L * 2 * g.bP1 * g.bQ2 * g.bR2,
                                     "TR-530 §5.2.1 (Dekel): log L alignment exchanges + (L - 1) GCEA exchanges of C and D + L multiplies");
  // All-port the lockstep count is exact (every node's exchanges wait on the busiest neighbour the
  // same way); one port, the unequal alignments leave nodes out of step.
  if (L > 1 && s.machine.ports.kind != PortKind::all) pr.relation = Relation::approx, pr.tolerance = 0.5;
  return pr;
}

std::optional<SetupError> check_dekel(const Setup& s) {
  if (auto e = matmul::check_grid(s)) return e;
  const Grid g(s.params, s.topology);
  if (g.N1 != g.N2)
    return SetupError{"/params/N1", "Dekel's algorithm runs on a square grid here: N1 = " + std::to_string(g.N1) + ", N2 = " +
                                        std::to_string(g.N2) + " (the paper's N1 = k N2 form is not built)"};
  return matmul::check(s, 2 * g.bP1 * g.bQ2 + 2 * g.bQ1 * g.bR2 + g.bP1 * g.bR2);
}

Verdict verify_dekel(const Setup& s, const std::vector<Buffer>& results) {
  const Grid g(s.params, s.topology);
  return matmul::verify_product(s, results, [&](NodeId x) {
    return Rect{static_cast<std::int64_t>(x >> g.n2) * g.bP1, g.bP1, static_cast<std::int64_t>(x & (g.N2 - 1)) * g.bR2, g.bR2};
  });
}

const Registration kRegistration{[](Registry& r) {
  r.add({.name = "matmul2d.dekel",
         .summary = "A <- CD + E on a square binary-coded grid: XOR alignment, then L - 1 GCEA exchanges of C and D (Dekel)",
         .source = "TR-530 §5.2.1 (Dekel's algorithm), after Dekel, Nassimi and Sahni",
         .params = {"P", "Q", "R", "N1", "N2", "B"}, .required = {"P", "Q", "R"},
         .check = check_dekel, .process = dekel, .predict = predict_dekel, .verify = verify_dekel,
         .one_port = {.row = "§5.2.1: log L + L - 1 exchanges of C then D + L multiplies", .relation = "approx <= 50 %",
                      .deviations = {{Relation::approx, 0.5, 0.423, "n=4 P=64 Q=16 R=48 B=1 N1=4"}}},
         .all_port = {.row = "§5.2.1, C and D exchanged at once", .relation = "exact"}});
}};

}  // namespace
}  // namespace cubesim
