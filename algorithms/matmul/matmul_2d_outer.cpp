// The pipelined outer product — Johnsson & Ho, TR-530 §5.2.1 (Fig. 16): A <- C D + E on a square
// L x L Gray-coded grid (L = √N; grid.hpp), with implicit alignment, for MIMD machines.
//
// A_ij = sum_s C_is D_sj. Outer product s starts at the diagonal node (s, s), the only one holding
// blocks with matching index sets. Node (i, j) takes part in outer product s with a = (i - s) mod L
// and b = (j - s) mod L: it uses C_is, its own when b = 0 and otherwise received from the left
// neighbour, and D_sj, its own when a = 0 and otherwise received from above; it forwards C to the
// right while b < L - 1 and D down while a < L - 1, then multiplies and adds. The data of outer
// product s thus reach (i, j) after a + b hops: "triangle shaped wave fronts emanating from the
// main diagonal towards the bottom and right" — on the torus, wrapping round. All L outer products
// start at once, and product κ of K successive ones (the same C, D, E here, to be checked K times)
// is "initiated every √N cycles from the main diagonal": each node takes its items in the order of
// the step t = κ L + a + b they would occupy in lockstep, ties (which occur for even L: a and
// a + L/2 give the same t) by a, and each link carries its messages in that order. Nodes buffer
// what arrives early (the engine's mailboxes): for even L the paper instead adds "one more buffer
// at the boundary processors" and delays a send.
//
// The paper counts steps, each "communications of two block matrices, one block matrix
// multiplication and one block matrix addition": 2√N - 1 for odd √N, 2√N + 1 for even (√N is even
// on every cube but the 1-node one), and (K + 1)√N + 1 for K products against about 3K√N/2 for
// Cannon's algorithm. The prediction is that step count times one step: the C and D blocks sent one
// after the other (one-port) or at once (all-port), then the multiply; an approximation (the
// simulated wave is not lockstep: a node computes its items back to back when they queue), with
// the tolerance the grid test measures. On a 1-node cube there is nothing to send: one multiply
// per product, exact.
#include <algorithm>
#include <cstdint>
#include <memory>

#include "algorithms/matmul/grid.hpp"
#include "algorithms/registry.hpp"

namespace cubesim {
namespace {

using matmul::Grid;
using matmul::Operand;
using matmul::Which;

std::int64_t products(const Params& p) { return std::max<std::int64_t>(p.K, 1); }

Task<> outer(Node& self, Params p) {
  const Grid g(p, self.topology());
  const NodeId x = self.id();
  const bool data = self.data_mode();
  const std::int64_t L = g.N1, i = g.row_of(x), j = g.col_of(x), K = products(p);
  auto at_col = [&](std::int64_t c) { return self.topology().port_to(x, g.node(i, ((c % L) + L) % L)); };
  auto at_row = [&](std::int64_t r) { return self.topology().port_to(x, g.node(((r % L) + L) % L, j)); };
  const int left = L > 1 ? at_col(j - 1) : -1, right = L > 1 ? at_col(j + 1) : -1;
  const int up = L > 1 ? at_row(i - 1) : -1, down = L > 1 ? at_row(i + 1) : -1;
  const Buffer C = matmul::block(data, g.sh, Which::C, {i * g.bP1, g.bP1, j * g.bQ2, g.bQ2});
  const Buffer D = matmul::block(data, g.sh, Which::D, {i * g.bQ1, g.bQ1, j * g.bR2, g.bR2});
  const Buffer E = matmul::block(data, g.sh, Which::E, g.a_block(x));
  // The items (κ, s) in the order of their lockstep step t = κ L + a + b, ties by a. (t, a) names
  // an item (t - a = κ L + b with 0 <= b < L; s = i - a mod L), so each is one key, t L + a: 8
  // bytes an item, where a tuple (t, a, κ, s) of 32 held 537 MB of 880 MiB on 2^16 nodes.
  std::vector<std::uint64_t> items;
  items.reserve(static_cast<std::size_t>(K * L));
  for (std::int64_t k = 0; k < K; ++k)
    for (std::int64_t s = 0; s < L; ++s) {
      const std::int64_t a = ((i - s) % L + L) % L, b = ((j - s) % L + L) % L;
      items.push_back(static_cast<std::uint64_t>((k * L + a + b) * L + a));
    }
  std::sort(items.begin(), items.end());
  std::vector<Buffer> A(static_cast<std::size_t>(K), E);
  const bool all_port = self.machine().ports.kind == PortKind::all;
  for (const std::uint64_t key : items) {
    const auto t = static_cast<std::int64_t>(key / static_cast<std::uint64_t>(L)),
               a = static_cast<std::int64_t>(key % static_cast<std::uint64_t>(L));
    const std::int64_t k = (t - a) / L, b = (t - a) % L, s = ((i - a) % L + L) % L;
    Buffer c = b == 0 ? C : Buffer{}, d = a == 0 ? D : Buffer{};
    if (b != 0 && a != 0) {
      auto rc = self.recv(left);
      auto rd = self.recv(up);
      co_await all_of(rc, rd);
      c = rc.take(), d = rd.take();
    } else if (b != 0) {
      c = co_await self.recv(left);
    } else if (a != 0) {
      d = co_await self.recv(up);
    }
    // Forward first, then multiply: the wave goes on while this node computes.
    const bool fc = b < L - 1, fd = a < L - 1;
    if (fc && fd && all_port) {
      auto sc = self.send(right, c);
      auto sd = self.send(down, d);
      co_await all_of(sc, sd);
    } else {
      if (fc) co_await self.send(right, c);
      if (fd) co_await self.send(down, d);
    }
    // A_ij += C_is D_sj: the inner index block s (of ⌈Q/L⌉; the padding rows of D are zero).
    const std::int64_t inner = std::clamp(g.sh.Q - s * g.bQ2, std::int64_t{0}, g.bQ2);
    if (data)  // (timing mode: no values, and reading A's buffer was a miss a step)
      matmul::multiply_add(A[static_cast<std::size_t>(k)], 0, g.bR2, Operand{&c, 0, g.bQ2}, Operand{&d, 0, g.bR2},
                           g.bP1, inner, g.bR2);
    co_await self.compute(2 * g.bP1 * g.bQ2 * g.bR2);
  }
  Buffer out;
  for (const Buffer& b : A) out.append(b);
  self.set_result(std::move(out));
}

/// The outer product as a step program (sim/steps.hpp), the lockstep simulators': outer()'s
/// operations, item by item in its order. All-port, each item in two steps: its receives (C from
/// the left, D from above, as many as it takes), then its forwards and its multiply. Item (κ, s)
/// at wave step t = κL + a + b, the r-th (0 or 1: ties in t, by a) of this node's at t, takes steps
/// 4t + 2r and 4t + 2r + 1; what it receives was forwarded at t - 1, in an earlier step. One-port,
/// in three (a step an await): its receives, C's forward, D's forward and the multiply: steps
/// 6t + 3r, + 1 and + 2.
class OuterSteps final : public StepProgram {
 public:
  explicit OuterSteps(const Setup& s)
      : g_(s.params, s.topology),
        L_(g_.N1),
        lg_(g_.n1),
        per_(s.machine.ports.kind == PortKind::one ? 3 : 2),
        K_(products(s.params)),
        X_(g_.bP1 * g_.bQ2),
        Y_(g_.bQ1 * g_.bR2),
        flops_(2 * g_.bP1 * g_.bQ2 * g_.bR2) {
    nodes_.resize(static_cast<std::size_t>(g_.N));
    for (NodeId x = 0; x < g_.N; ++x) {
      Plan& p = nodes_[static_cast<std::size_t>(x)];
      const std::int64_t i = g_.row_of(x), j = g_.col_of(x);
      p.i = static_cast<std::int32_t>(i);
      p.d = static_cast<std::int32_t>(((i - j) % L_ + L_) % L_);
      if (L_ == 1) continue;
      auto at = [&](std::int64_t r, std::int64_t c) {
        return static_cast<std::int8_t>(s.topology.port_to(x, g_.node(((r % L_) + L_) % L_, ((c % L_) + L_) % L_)));
      };
      p.left = at(i, j - 1), p.right = at(i, j + 1), p.up = at(i - 1, j), p.down = at(i + 1, j);
    }
  }
  [[nodiscard]] bool wide() const override { return true; }
  /// The program's state a node (its place and ports).
  static constexpr std::int64_t plan_bytes() { return sizeof(Plan); }
  void prefetch(NodeId x) const override { ask(&nodes_[static_cast<std::size_t>(x)]); }
  [[nodiscard]] std::int64_t steps() const override { return 2 * per_ * (K_ + 1) * L_; }
  [[nodiscard]] std::int64_t result_elements(NodeId /*x*/) const override { return K_ * g_.bP1 * g_.bR2; }
  [[gnu::flatten]] void step(NodeId x, std::int64_t sigma, std::vector<StepOp>& ops) const override {
    const Plan& p = nodes_[static_cast<std::size_t>(x)];
    const auto [t, rem] = wave_of(sigma);
    const std::int64_t r = rem >= per_ ? 1 : 0, phase = rem - r * per_;
    std::int64_t found[2];
    const int n = items(p, t, found);
    if (r >= n) return;
    const std::int64_t a = found[r], b = (a - p.d + L_) & (L_ - 1);  // mod L, a power of two
    using enum StepOp::Kind;
    if (phase == 0) {  // the receives
      if (b != 0) ops.push_back({.kind = recv, .port = p.left});
      if (a != 0) ops.push_back({.kind = recv, .port = p.up});
      return;
    }
    if (b < L_ - 1 && (phase == 1 || per_ == 2)) ops.push_back({.kind = send, .port = p.right, .elements = X_});
    if (phase == 1 && per_ == 3) return;  // one-port: C's forward awaited alone
    if (a < L_ - 1) ops.push_back({.kind = send, .port = p.down, .elements = Y_});
    ops.push_back({.kind = compute, .elements = flops_});
  }
  /// The node's next step that holds one of its items' phases: per_ steps an item, two items at
  /// most a wave, and about half the waves hold none (parity), so three steps in four are empty
  /// (2·per_·(K + 1)·L steps, per_·K·L of them a node's); both lockstep simulators skip them.
  ///
  /// With L > 1 the waves that hold items of node d are one range, every other wave (t + d even):
  /// item (κ, a) is at t = κL - d + 2a for a >= d and κL + L - d + 2a for a < d, and over κ these
  /// meet, from d to (K + 1)L - d - 2 where d <= L/2, from L - d to KL + d - 2 where d > L/2. So
  /// the next step is this wave's if an item of it is still to come, else the next wave of the
  /// range's parity, without a loop (a fifth of the one-port run's instructions were the loop).
  [[nodiscard]] std::int64_t next_step(NodeId x, std::int64_t sigma) const override {
    const Plan& p = nodes_[static_cast<std::size_t>(x)];
    const std::int64_t wave = 2 * per_, end = steps();
    std::int64_t found[2];
    const auto [t0, rem] = wave_of(sigma);
    if (L_ == 1) {
      for (std::int64_t t = t0; t * wave < end; ++t)
        if (sigma < t * wave + items(p, t, found) * per_) return std::max(sigma, t * wave);
      return end;
    }
    const std::int64_t d = p.d;
    const std::int64_t lo = 2 * d <= L_ ? d : L_ - d, hi = 2 * d <= L_ ? (K_ + 1) * L_ - d - 2 : K_ * L_ + d - 2;
    std::int64_t t = t0;
    if (t < lo) {
      t = lo;
    } else if (((t + d) & 1) != 0) {
      ++t;
    } else if (rem < items(p, t, found) * per_) {
      return sigma;
    } else {
      t += 2;
    }
    return t <= hi ? std::max(sigma, t * wave) : end;
  }

 private:
  struct Plan {
    std::int32_t i = 0, d = 0;
    std::int8_t left = -1, right = -1, up = -1, down = -1;
  };
  /// sigma's wave step t and its place in it (sigma = t·2·per_ + rem), by constant divisors: 64-bit
  /// divisions by a variable were a fifth of the one-port run's time on 2^16 nodes.
  [[nodiscard]] std::pair<std::int64_t, std::int64_t> wave_of(std::int64_t sigma) const {
    return per_ == 3 ? std::pair{sigma / 6, sigma % 6} : std::pair{sigma / 4, sigma % 4};
  }
  /// The node's items (values of a) at wave step t, sorted: a + b = t - κL, b = (a - d) mod L
  /// (d = i - j mod L), so a = (t' + d) / 2 >= d or a = (t' + d - L) / 2 < d; at most two. L even
  /// (a power of two above 1): t' + d, and so t + d, is even (most of the steps a node has none).
  ///
  /// With t' = t - κL in [0, 2L) (κ = ⌊t/L⌋ or one less) and h = (t' + d) / 2 (t' + d even once t + d
  /// is): a = h where t' >= d and h < L (a >= d), and a = h - L/2 where t' + d >= L and h - L/2 < d
  /// (a < d). Shifts and compares only: the signed divisions and remainders by 2 this did before
  /// were a third of the one-port run's instructions in next_step() and step().
  int items(const Plan& p, std::int64_t t, std::int64_t (&found)[2]) const {
    if (L_ == 1) return t < K_ ? (found[0] = 0, 1) : 0;
    if (((t + p.d) & 1) != 0) return 0;
    int n = 0;
    const std::int64_t half = L_ >> 1;
    for (std::int64_t k = (t >> lg_) - 1; k <= t >> lg_; ++k) {
      if (k < 0 || k >= K_) continue;
      const std::int64_t tp = t - (k << lg_);
      if (tp > 2 * L_ - 2) continue;
      const std::int64_t h = (tp + p.d) >> 1;
      if (tp >= p.d && h < L_) found[n++] = h;
      if (h >= half && h - half < p.d) found[n++] = h - half;
    }
    if (n == 2 && found[1] < found[0]) std::swap(found[0], found[1]);
    return n;
  }
  Grid g_;
  std::int64_t L_;
  int lg_;   ///< log2 L
  int per_;  ///< steps an item: 2 all-port, 3 one-port
  std::int64_t K_, X_, Y_, flops_;
  std::vector<Plan> nodes_;
};

bool outer_program_for(const Setup& s) {
  return s.machine.ports.kind == PortKind::all || s.machine.ports.kind == PortKind::one;
}
/// Its part in the memory of its run: wide chains, a node's place and ports (`Plan`) for every node.
std::optional<StepsMemory> outer_program_memory(const Setup& s) {
  if (!outer_program_for(s)) return std::nullopt;
  return StepsMemory{.wide = true, .program_bytes = s.topology.size() * OuterSteps::plan_bytes()};
}
std::unique_ptr<StepProgram> outer_steps(const Setup& s) {
  if (!outer_program_for(s)) return nullptr;
  return std::make_unique<OuterSteps>(s);
}

/// The paper's step count times one step (module comment).
Prediction predict_outer(const Setup& s) {
  const Grid g(s.params, s.topology);
  const std::int64_t L = g.N1, K = products(s.params), flops = 2 * g.bP1 * g.bQ2 * g.bR2;
  Prediction pr;
  if (L == 1) {
    pr = matmul::from_terms(s, RowTerms{}, K * flops, "TR-530 §5.2.1: one node, K multiplies");
    return pr;
  }
  const std::int64_t steps = K == 1 ? (L % 2 == 1 ? 2 * L - 1 : 2 * L + 1) : (K + 1) * L + 1;
  const RowTerms t = matmul::block_step(s, g.bP1 * g.bQ2, g.bQ1 * g.bR2).times(steps);
  pr = matmul::from_terms(
      s, t, steps * flops,
      K == 1 ? "TR-530 §5.2.1 (Fig. 16): 2√N + 1 steps (even √N; 2√N - 1 odd) of two blocks and one multiply"
             : "TR-530 §5.2.1 (Fig. 16): (K + 1)√N + 1 steps of two blocks and one multiply for K products");
  pr.relation = Relation::approx;
  pr.tolerance = 0.75;
  return pr;
}

std::optional<SetupError> check_outer(const Setup& s) {
  if (auto e = matmul::check_grid(s)) return e;
  const Grid g(s.params, s.topology);
  if (g.N1 != g.N2)
    return SetupError{"/params/N1", "the pipelined outer product runs on a square grid (N1 = N2 = √N): N1 = " +
                                        std::to_string(g.N1) + ", N2 = " + std::to_string(g.N2)};
  if (s.params.K > 1024)
    return SetupError{"/params/K", "K = " + std::to_string(s.params.K) + " successive products: at most 1024"};
  const std::int64_t K = products(s.params);
  return matmul::check(s, (K + 1) * g.bP1 * g.bR2 + 2 * g.N1 * (g.bP1 * g.bQ2 + g.bQ1 * g.bR2));
}

Verdict verify_outer(const Setup& s, const std::vector<Buffer>& results) {
  const Grid g(s.params, s.topology);
  return matmul::verify_products(s, results, products(s.params), [&](NodeId x) { return g.a_block(x); });
}

const Registration kRegistrationMatmul2dOuter{[](Registry& r) {
  r.add({.name = "matmul2d.outer",
         .summary =
             "A <- CD + E on a square grid: the pipelined outer product, waves from the diagonal (K products, param K)",
         .source = "TR-530 §5.2.1, Fig. 16",
         .params = {"P", "Q", "R", "N1", "N2", "B", "K"},
         .required = {"P", "Q", "R"},
         .check = check_outer,
         .process = outer,
         .predict = predict_outer,
         .verify = verify_outer,
         .steps = outer_steps,
         .steps_memory = outer_program_memory,
         .one_port = {.row = "§5.2.1: 2√N + 1 steps ((K + 1)√N + 1 for K products) of two blocks + one multiply",
                      .relation =
                          "approx <= 75 % (the step count is loose on small grids: 26 % of it simulated at L = 2)",
                      .deviations = {{Relation::approx, 0.75, 0.74, "n=2 P=7 Q=40 R=20 B=1 N1=2"}}},
         .all_port = {.row = "§5.2.1, the two blocks at once",
                      .relation = "approx <= 75 %",
                      .deviations = {{Relation::approx, 0.75, 0.639, "n=2 P=7 Q=40 R=20 B=1 N1=2"}}}});
}};

}  // namespace
}  // namespace cubesim
