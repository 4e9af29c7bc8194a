// Dekel's algorithm — the GCEA-based recursive exchange of TR-530 §5.2.1 (after Dekel, Nassimi and
// Sahni [5]; the code "Matrix multiplication according to Dekel's Algorithm"): A <- C D + E on an
// N1 x N2 grid encoded in binary (row r = the high n1 address bits, column c = the low n2), so
// that every exchange is between cube neighbours.
//
// The inner index is cut into L = max(N1, N2) blocks; inner block s has l = log L bits. On a
// square grid a node holds one inner block of C and one of D; with N1 = k N2 its C block holds k
// of them (the paper's "C[j], j = 1..k"), and with N2 = k N1 its D block does.
// Alignment: C is exchanged along the row for each 1-bit of c_shift(r) and D along the column for
// each 1-bit of d_shift(c) (on a square grid: r and c, "IF ith bit of rid .EQ. 1 ... SEND C"), so
// that node (r, c) holds inner block s = (r << lD) XOR (c << lC) of both (an XOR alignment where
// Cannon's is a rotation). Then, for i = 1 .. L - 1, inner bit t = the transition of G(i - 1) to
// G(i) flips: C and D are exchanged across the cube dimension that bit is in the node part of,
// and an item bit is flipped locally ("IF (i mod k .EQ. 0) THEN GCEA ... SWAP C[j] locally").
// The paper's recursive view: exchange C10 <-> C11 and D01 <-> D11, then four independent
// half-size products, and so on. One-port: the C exchange, then the D exchange; all-port: at once.
//
// Prediction: the busiest node's alignment + L - 1 exchange steps + L multiplies, as if in
// lockstep. All-port it is exact; one-port an approximation like Cannon's (<= 60 %): nodes whose
// row and column have few 1-bits finish aligning early and their exchanges then queue behind
// partners still aligning.
#include <algorithm>
#include <memory>

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
/// may be absent: -1), one after the other on one port, at once on all. Both in this one frame:
/// matmul::both over two exchange coroutines made four frames and a list of two tasks a step (255
/// steps on 2^16 nodes); the operations and their order are the same, all four begun at once
/// all-port, C's pair then D's one-port.
Task<> exchange_both(Node& self, int dc, Buffer& C, int dd, Buffer& D) {
  if (dc < 0 || dd < 0) {
    if (dc >= 0) co_await exchange(self, dc, C);
    if (dd >= 0) co_await exchange(self, dd, D);
    co_return;
  }
  auto sc = self.send(dc, std::move(C));
  auto rc = self.recv(dc);
  auto sd = self.send(dd, std::move(D));
  auto rd = self.recv(dd);
  if (self.machine().ports.kind == PortKind::all) {
    co_await all_of(sc, rc, sd, rd);
  } else {
    co_await all_of(sc, rc);
    co_await all_of(sd, rd);
  }
  C = rc.take();
  D = rd.take();
}

/// The grid of Dekel's algorithm: binary-coded, nested blocks, the inner index cut into L =
/// max(N1, N2) blocks of bq = Q̃/L; a C block holds kC = L/N2 of them (columns), a D block
/// kD = L/N1 (rows). Inner block s has l = log L bits: its high n2 bits say which node of a row
/// holds it in C, its low lC = log kC bits which of that node's items; likewise for D.
struct DekelGrid {
  Grid g;
  std::int64_t L, kC, kD, bq;
  int l, lC, lD;
  DekelGrid(const Params& p, const Topology& t)
      : g(p, t, true),
        L(std::max(g.N1, g.N2)),
        kC(L / g.N2),
        kD(L / g.N1),
        bq(g.Qt / L),
        l(std::max(g.n1, g.n2)),
        lC(l - g.n2),
        lD(l - g.n1) {}
  [[nodiscard]] std::int64_t row(NodeId x) const { return x >> g.n2; }
  [[nodiscard]] std::int64_t col(NodeId x) const { return x & (g.N2 - 1); }
  /// The row shifts of C's alignment (bits of the row dimensions) and the column shifts of D's.
  [[nodiscard]] std::int64_t c_shift(std::int64_t r) const { return (r << lD) >> lC; }
  [[nodiscard]] std::int64_t d_shift(std::int64_t c) const { return (c << lC) >> lD; }
  /// The exchanges of one step: C's across a row dimension and D's across a column dimension
  /// (-1: that matrix stays).
  struct Dims {
    int c = -1, d = -1;
  };
  /// All-port alignment step j at node x: the bits j of its C and D shifts.
  [[nodiscard]] Dims align_dims(NodeId x, int j) const {
    const std::int64_t mC = c_shift(row(x)), mD = d_shift(col(x));
    return {j < g.n2 && (mC >> j & 1) ? j : -1, j < g.n1 && (mD >> j & 1) ? g.n2 + j : -1};
  }
  /// GCEA step i >= 1: inner bit t = the transition of G(i - 1) to G(i) flips, across the cube
  /// where it is a node bit of C's or D's block (else locally).
  [[nodiscard]] Dims step_dims(std::int64_t i) const {
    const int t = gray::transition(i - 1, l);
    return {t >= lC ? t - lC : -1, t >= lD ? g.n2 + t - lD : -1};
  }
};

Task<> dekel(Node& self, Params p) {
  const DekelGrid dg(p, self.topology());
  const Grid& g = dg.g;
  const NodeId x = self.id();
  const bool data = self.data_mode();
  const std::int64_t r = dg.row(x), c = dg.col(x);
  // Binary encoding: block (r, c) of each matrix at node (r || c).
  Buffer C = matmul::block(data, g.sh, Which::C, {r * g.bP1, g.bP1, c * g.bQ2, g.bQ2});
  Buffer D = matmul::block(data, g.sh, Which::D, {r * g.bQ1, g.bQ1, c * g.bR2, g.bR2});
  Buffer A = matmul::block(data, g.sh, Which::E, {r * g.bP1, g.bP1, c * g.bR2, g.bR2});
  // Alignment: C along the row by the bits of c_shift(r), D along the column by d_shift(c); the
  // node then holds inner block s = (r << lD) ^ (c << lC) in both (as items s mod kC, s mod kD).
  const std::int64_t mC = dg.c_shift(r), mD = dg.d_shift(c);
  if (self.machine().ports.kind == PortKind::all) {
    for (int j = 0; j < std::max(g.n1, g.n2); ++j) {
      const DekelGrid::Dims e = dg.align_dims(x, j);
      co_await exchange_both(self, e.c, C, e.d, D);
    }
  } else {
    for (int j = 0; j < g.n2; ++j)
      if (mC >> j & 1) co_await exchange(self, j, C);
    for (int j = 0; j < g.n1; ++j)
      if (mD >> j & 1) co_await exchange(self, g.n2 + j, D);
  }
  std::int64_t s = (r << dg.lD) ^ (c << dg.lC);
  for (std::int64_t i = 0; i < dg.L; ++i) {
    if (i > 0) {  // the GCEA step: inner bit t flips; across the cube where it is a node bit, else locally
      s ^= std::int64_t{1} << gray::transition(i - 1, dg.l);
      const DekelGrid::Dims e = dg.step_dims(i);
      co_await exchange_both(self, e.c, C, e.d, D);
    }
    const std::int64_t inner = std::clamp(g.sh.Q - s * dg.bq, std::int64_t{0}, dg.bq);
    if (data)  // (timing mode: no values, and reading A's buffer was a miss a step)
      matmul::multiply_add(A, 0, g.bR2, Operand{&C, (s & (dg.kC - 1)) * dg.bq, g.bQ2},
                           Operand{&D, (s & (dg.kD - 1)) * dg.bq * g.bR2, g.bR2}, g.bP1, inner, g.bR2);
    co_await self.compute(2 * g.bP1 * dg.bq * g.bR2);
  }
  self.set_result(std::move(A));
}

/// Dekel as a step program (sim/steps.hpp), the lockstep simulators': dekel()'s operations.
/// All-port: one group a step (exchange_both: C's send and receive, then D's, as many as move), the
/// alignment's max(n1, n2) steps, then L steps of an exchange (none in the first) and a multiply.
/// One-port: a step an awaited group -- the alignment's n2 C exchanges and n1 D exchanges (a step
/// each, empty where the shift's bit is 0), then L pairs of steps: C's exchange where both move,
/// then the other (or the one) exchange and the multiply.
class DekelSteps final : public StepProgram {
 public:
  explicit DekelSteps(const Setup& s)
      : dg_(s.params, s.topology),
        one_port_(s.machine.ports.kind == PortKind::one),
        align_(one_port_ ? dg_.g.n1 + dg_.g.n2 : std::max(dg_.g.n1, dg_.g.n2)),
        X_(dg_.g.bP1 * dg_.g.bQ2),
        Y_(dg_.g.bQ1 * dg_.g.bR2),
        flops_(2 * dg_.g.bP1 * dg_.bq * dg_.g.bR2) {}
  [[nodiscard]] bool wide() const override { return true; }
  [[nodiscard]] std::int64_t steps() const override { return align_ + (one_port_ ? 2 : 1) * dg_.L; }
  [[nodiscard]] std::int64_t result_elements(NodeId /*x*/) const override { return dg_.g.bP1 * dg_.g.bR2; }
  [[gnu::flatten]] void step(NodeId x, std::int64_t s, std::vector<StepOp>& ops) const override {
    using enum StepOp::Kind;
    auto exchange = [&](int port, std::int64_t elements) {
      if (port < 0) return;
      ops.push_back({.kind = send, .port = port, .elements = elements});
      ops.push_back({.kind = recv, .port = port});
    };
    const Grid& g = dg_.g;
    if (one_port_) {
      if (s < g.n2) {
        if (dg_.c_shift(dg_.row(x)) >> s & 1) exchange(static_cast<int>(s), X_);
        return;
      }
      if (s < align_) {
        const auto j = static_cast<int>(s - g.n2);
        if (dg_.d_shift(dg_.col(x)) >> j & 1) exchange(g.n2 + j, Y_);
        return;
      }
      const std::int64_t i = (s - align_) / 2;
      const DekelGrid::Dims e = i > 0 ? dg_.step_dims(i) : DekelGrid::Dims{};
      if ((s - align_) % 2 == 0) {  // C's exchange, where D's follows it
        if (e.d >= 0) exchange(e.c, X_);
        return;
      }
      if (e.d >= 0)
        exchange(e.d, Y_);
      else
        exchange(e.c, X_);
      ops.push_back({.kind = compute, .elements = flops_});
      return;
    }
    if (s < align_) {
      const DekelGrid::Dims e = dg_.align_dims(x, static_cast<int>(s));
      exchange(e.c, X_);
      exchange(e.d, Y_);
      return;
    }
    if (const std::int64_t i = s - align_; i > 0) {
      const DekelGrid::Dims e = dg_.step_dims(i);
      exchange(e.c, X_);
      exchange(e.d, Y_);
    }
    ops.push_back({.kind = compute, .elements = flops_});
  }

 private:
  DekelGrid dg_;
  bool one_port_;
  std::int64_t align_, X_, Y_, flops_;
};

bool dekel_program_for(const Setup& s) {
  return s.machine.ports.kind == PortKind::all || s.machine.ports.kind == PortKind::one;
}
/// Its part in the memory of its run: wide chains, a few words.
std::optional<StepsMemory> dekel_program_memory(const Setup& s) {
  if (!dekel_program_for(s)) return std::nullopt;
  return StepsMemory{.wide = true};
}
std::unique_ptr<StepProgram> dekel_steps(const Setup& s) {
  if (!dekel_program_for(s)) return nullptr;
  return std::make_unique<DekelSteps>(s);
}

Prediction predict_dekel(const Setup& s) {
  const DekelGrid dg(s.params, s.topology);
  const Grid& g = dg.g;
  const std::int64_t X = g.bP1 * g.bQ2, Y = g.bQ1 * g.bR2;
  const bool ap = s.machine.ports.kind == PortKind::all;
  auto step = [&](bool c_moves, bool d_moves) { return matmul::block_step(s, X, Y, c_moves, d_moves); };
  // The alignment of the busiest node (r, c) = (N1 - 1, N2 - 1), then the L - 1 GCEA steps.
  const std::int64_t mC = dg.c_shift(g.N1 - 1), mD = dg.d_shift(g.N2 - 1);
  RowTerms t;
  if (ap) {
    for (int j = 0; j < std::max(g.n1, g.n2); ++j) t += step(j < g.n2 && (mC >> j & 1), j < g.n1 && (mD >> j & 1));
  } else {
    for (int j = 0; j < g.n2; ++j) t += step(mC >> j & 1, false);
    for (int j = 0; j < g.n1; ++j) t += step(false, mD >> j & 1);
  }
  for (std::int64_t i = 1; i < dg.L; ++i) {
    const int b = gray::transition(i - 1, dg.l);
    t += step(b >= dg.lC, b >= dg.lD);
  }
  Prediction pr = matmul::from_terms(s, t, dg.L * 2 * g.bP1 * dg.bq * g.bR2,
                                     "TR-530 §5.2.1 (Dekel): the XOR alignment + (L - 1) GCEA exchanges of C and D "
                                     "(the node bits; the item bits locally) + L multiplies");
  // All-port the lockstep count is exact (every node's exchanges wait on the busiest neighbour the
  // same way); one port, the unequal alignments leave nodes out of step.
  if (dg.L > 1 && !ap) pr.relation = Relation::approx, pr.tolerance = 0.6;
  return pr;
}

std::optional<SetupError> check_dekel(const Setup& s) {
  if (auto e = matmul::check_grid(s)) return e;
  const Grid g(s.params, s.topology, true);
  return matmul::check(s, 2 * g.bP1 * g.bQ2 + 2 * g.bQ1 * g.bR2 + g.bP1 * g.bR2);
}

Verdict verify_dekel(const Setup& s, const std::vector<Buffer>& results) {
  const Grid g(s.params, s.topology, true);
  return matmul::verify_product(s, results, [&](NodeId x) {
    return Rect{static_cast<std::int64_t>(x >> g.n2) * g.bP1, g.bP1, static_cast<std::int64_t>(x & (g.N2 - 1)) * g.bR2,
                g.bR2};
  });
}

const Registration kRegistrationMatmul2dDekel{[](Registry& r) {
  r.add(
      {.name = "matmul2d.dekel",
       .summary = "A <- CD + E on a binary-coded N1 x N2 grid: XOR alignment, then max(N1, N2) - 1 GCEA exchanges of C "
                  "and D (Dekel)",
       .source = "TR-530 §5.2.1 (Dekel's algorithm), after Dekel, Nassimi and Sahni",
       .params = {"P", "Q", "R", "N1", "N2", "B"},
       .required = {"P", "Q", "R"},
       .check = check_dekel,
       .process = dekel,
       .predict = predict_dekel,
       .verify = verify_dekel,
       .steps = dekel_steps,
       .steps_memory = dekel_program_memory,
       .one_port = {.row =
                        "§5.2.1: the XOR alignment + L - 1 GCEA exchanges of C then D + L multiplies, L = max(N1, N2)",
                    .relation = "approx <= 60 %",
                    .deviations = {{Relation::approx, 0.6, 0.5, "n=3 P=13 Q=11 R=9 B=1 N1=2"}}},
       .all_port = {.row = "§5.2.1, C and D exchanged at once", .relation = "exact"}});
}};

}  // namespace
}  // namespace cubesim
