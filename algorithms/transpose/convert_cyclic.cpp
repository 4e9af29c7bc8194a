// convert.cyclic: transposition with change of assignment scheme (TR-572 §6.2, Fig. 5). A P x Q
// matrix on a 2^(n/2) x 2^(n/2) processor grid (n_r = n_c = n/2 = h), stored consecutively in
// both directions before, its transpose stored cyclically in both after (`layout_before:
// "cyclic"` runs the reverse, cyclic -> consecutive). Element (u, v): before on processor
// (u_hi || v_hi) (the high h bits of u and of v), after on (v_lo || u_lo) (their low h bits).
// §6.2 assumes p, q >= 2 n_r, i.e. P, Q >= N: then the conversion is all-to-all personalized
// (its last paragraph, and Corollary 7 for one direction), which tests/test_transpose.cpp checks.
//
// The three algorithms differ in how the exchange dimensions are paired and ordered; every
// routing step is a bidirectional exchange across one dimension of the elements whose target
// bit differs from the node's (the standard exchange, §5):
//  variant 1  Algorithm 1: exchange-row (rows consecutive -> cyclic within each column subcube,
//             h steps), exchange-column (columns, h steps), then the global transpose step by
//             step as transpose.spt_steps (n steps of the whole block) and the local transpose:
//             2n steps.
//  variant 2  Algorithm 2: the local transpose first, then the exchanges take the row processor
//             field from u_hi straight to v_lo (h steps) and the column field from v_hi to u_lo
//             (h steps), then local transposes of the N small matrices: n steps.
//  variant 3  Algorithm 3 (also variant 0, the default): the same n exchange steps with no
//             transpose before; a local (p - 2n_r)-shuffle after when p > 2n_r. The OCR lost
//             Algorithm 3's address-field diagram; the text says its last form (v3 v1 v2 | u3 u1
//             u2) is the same assignment as (v1 v2 v3 | u1 u2 u3): at the processor level the
//             same movement as Algorithm 2, without the local transposes.
// A local transpose or shuffle is charged as a copy of the block (D t_copy, D = PQ/N); the
// final arrangement into the target's local order is not charged, as for every transpose here.
//
// Prediction: every exchange step of Algorithms 2-3 moves exactly half of each node's elements
// (the target bit and the source bit come from different coordinates, or from independent bits
// of one when p, q >= n), so n ((D/2) t_c + ⌈D/(2B)⌉ tau); Algorithm 1 adds the n transpose steps
// of the whole block, n (D t_c + ⌈D/B⌉ tau). Copies: Algorithm 1 D, 2 2D, 3 D when p > n.
#include <algorithm>

#include "algorithms/collectives/verify.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/transpose/matrix.hpp"

namespace cubesim {
namespace {

struct Convert {
  std::int64_t P = 0, Q = 0;
  int n = 0, h = 0, p = 0, q = 0;
  bool to_cyclic = true;  ///< consecutive -> cyclic (§6.2's example); false: the reverse
  int variant = 3;
  [[nodiscard]] NodeId side() const { return NodeId{1} << h; }
  [[nodiscard]] std::int64_t D() const { return P * Q >> n; }
  [[nodiscard]] NodeId hi(std::int64_t x, int bits) const { return static_cast<NodeId>(x >> (bits - h)); }
  [[nodiscard]] NodeId lo(std::int64_t x) const { return static_cast<NodeId>(x & (side() - 1)); }
  /// The processor field of one coordinate in the layout before (consecutive: high bits) or after.
  [[nodiscard]] NodeId field(std::int64_t x, int bits, bool cyclic) const { return cyclic ? lo(x) : hi(x, bits); }
  [[nodiscard]] NodeId before(std::int64_t u, std::int64_t v) const {
    return (field(u, p, !to_cyclic) << h) | field(v, q, !to_cyclic);
  }
  [[nodiscard]] NodeId after(std::int64_t u, std::int64_t v) const {
    return (field(v, q, to_cyclic) << h) | field(u, p, to_cyclic);
  }
  /// Algorithm 1's layout after its two conversions, before the transpose: A itself, converted.
  [[nodiscard]] NodeId converted(std::int64_t u, std::int64_t v) const {
    return (field(u, p, to_cyclic) << h) | field(v, q, to_cyclic);
  }
  /// The i-th element of node x's block in a layout (cyclic or not) of a R x C matrix by rows.
  [[nodiscard]] std::pair<std::int64_t, std::int64_t> at(NodeId x, std::int64_t i, bool cyclic, std::int64_t R,
                                                         std::int64_t C) const {
    const std::int64_t Rb = R >> h, Cb = C >> h, r = i / Cb, c = i % Cb;
    const std::int64_t I = x >> h, J = x & (side() - 1);
    return cyclic ? std::pair{r * side() + I, c * side() + J} : std::pair{I * Rb + r, J * Cb + c};
  }
};

Convert convert_of(const Params& prm, const Topology& t) {
  Convert c;
  c.P = prm.P;
  c.Q = prm.Q;
  c.n = t.dim();
  c.h = c.n / 2;
  c.p = log2_exact(prm.P);
  c.q = log2_exact(prm.Q);
  c.to_cyclic = prm.layout_before == 0;
  c.variant = prm.variant == 0 ? 3 : static_cast<int>(prm.variant);
  return c;
}

/// One phase of exchange steps: across each dimension in `dims`, the elements whose target bit
/// differs from this node's go to the neighbour and as many come back (half the block).
Task<> exchange_phase(Node& self, const Convert& c, const std::vector<int>& dims,
                      const std::function<NodeId(std::int64_t, std::int64_t)>& target, Buffer& held) {
  const NodeId x = self.id();
  for (int d : dims) {
    const NodeId bit = NodeId{1} << d;
    Buffer out = Buffer::sized(c.D() / 2), keep = Buffer::sized(c.D() - c.D() / 2);
    if (held.has_data()) {
      std::vector<Element> go, stay;
      for (Element e : held.values()) {
        const auto k = static_cast<std::int64_t>(e);  // u Q + v, exact below 2^53
        (((target(k / c.Q, k % c.Q) ^ x) & bit) ? go : stay).push_back(e);
      }
      if (std::cmp_not_equal(go.size(), c.D() / 2))
        throw std::logic_error("an exchange step that does not move half the block");
      out = Buffer::of(std::move(go));
      keep = Buffer::of(std::move(stay));
    }
    auto s = self.send(d, std::move(out));
    auto r = self.recv(d);
    co_await all_of(s, r);
    keep.append(r.take());
    held = std::move(keep);
  }
}

Task<> convert_cyclic(Node& self, Params prm) {
  const Convert c = convert_of(prm, self.topology());
  const NodeId x = self.id();
  const bool data = self.data_mode();
  Buffer held = Buffer::make(c.D(), data, [&](std::int64_t i) {
    auto [u, v] = c.at(x, i, !c.to_cyclic, c.P, c.Q);
    return tr572::element(u, v, c.Q);
  });
  std::vector<int> rows, cols;
  for (int i = c.h - 1; i >= 0; --i) rows.push_back(c.h + i), cols.push_back(i);
  const auto with_row = [&](auto row_field) {
    return [&c, row_field](std::int64_t u, std::int64_t v) {
      return (row_field(u, v) << c.h) | (c.before(u, v) & (c.side() - 1));
    };
  };
  if (c.variant == 1) {
    co_await exchange_phase(self, c, rows,
                            with_row([&c](std::int64_t u, std::int64_t v) { return c.converted(u, v) >> c.h; }), held);
    co_await exchange_phase(
        self, c, cols, [&c](std::int64_t u, std::int64_t v) { return c.converted(u, v); }, held);
    // The global transpose of the converted matrix, step by step: node y's block goes to tr(y).
    const auto tr = [&c](NodeId y) { return ((y & (c.side() - 1)) << c.h) | (y >> c.h); };
    std::vector<int> dims;
    for (int i = c.h - 1; i >= 0; --i) dims.insert(dims.end(), {c.h + i, i});
    std::vector<std::pair<NodeId, Buffer>> mine;
    mine.emplace_back(x, std::move(held));
    held = co_await tr572::step_by_step(
        self, dims, [](NodeId s) { return s; }, [&](NodeId s) { return s ^ tr(s); }, std::move(mine));
    co_await self.copy(c.D());  // the local transpose
  } else {
    if (c.variant == 2) co_await self.copy(c.D());  // the local transpose before
    co_await exchange_phase(self, c, rows,
                            with_row([&c](std::int64_t u, std::int64_t v) { return c.after(u, v) >> c.h; }), held);
    co_await exchange_phase(
        self, c, cols, [&c](std::int64_t u, std::int64_t v) { return c.after(u, v); }, held);
    if (c.variant == 2 || c.p > c.n) co_await self.copy(c.D());  // local transposes, or the local shuffle
  }
  if (!data) {
    self.set_result(Buffer::sized(c.D()));
    co_return;
  }
  // Into the local order of A^T's block (not charged): by the position each element has there.
  std::vector<Element> out(static_cast<std::size_t>(c.D()));
  const std::int64_t Cb = c.P >> c.h;  // A^T is Q x P
  for (Element e : held.values()) {
    const auto k = static_cast<std::int64_t>(e);
    const std::int64_t u = k / c.Q, v = k % c.Q;
    const std::int64_t r = c.to_cyclic ? v >> c.h : v % (c.Q >> c.h), col = c.to_cyclic ? u >> c.h : u % Cb;
    out[static_cast<std::size_t>(r * Cb + col)] = e;
  }
  self.set_result(Buffer::of(std::move(out)));
}

std::optional<SetupError> check_convert(const Setup& s) {
  if (auto e = tr572::check_two_d(s)) return e;
  const std::int64_t N = s.topology.size();
  if (s.params.P < N)
    return SetupError{"/params/P", "§6.2 assumes p >= 2 n_r: P must be at least N = " + std::to_string(N)};
  if (s.params.Q < N)
    return SetupError{"/params/Q", "§6.2 assumes q >= 2 n_c: Q must be at least N = " + std::to_string(N)};
  if (s.params.layout_before > 1)
    return SetupError{"/params/layout_before",
                      "convert.cyclic converts between consecutive and cyclic (binary) layouts"};
  if (s.params.variant < 0 || s.params.variant > 3)
    return SetupError{"/params/variant",
                      "convert.cyclic runs Algorithm 1, 2 or 3 of TR-572 §6.2 (0: Algorithm 3), got " +
                          std::to_string(s.params.variant)};
  return std::nullopt;
}

Prediction predict_convert(const Setup& s) {
  const Convert c = convert_of(s.params, s.topology);
  const std::int64_t D = c.D(), B = s.params.B;
  Prediction pr;
  pr.source = "TR-572 §6.2, Algorithm " + std::to_string(c.variant) + ": n exchange steps of half the block" +
              (c.variant == 1 ? ", then n transpose steps of the whole block" : "");
  if (c.n == 0) return pr;
  pr.startups = c.n * ceil_div(D / 2, B);
  pr.msg_startups = c.n;
  pr.element_transfers = c.n * (D / 2);
  if (c.variant == 1) {
    pr.startups += c.n * ceil_div(D, B);
    pr.msg_startups += c.n;
    pr.element_transfers += c.n * D;
  }
  pr.copies = c.variant == 2 ? 2 * D : (c.variant == 1 || c.p > c.n ? D : 0);
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

Verdict verify_convert(const Setup& s, const std::vector<Buffer>& results) {
  const Convert c = convert_of(s.params, s.topology);
  return verify_each(
      s, results, [&](NodeId) { return c.D(); },
      [&](NodeId y, std::int64_t i) {
        auto [v, u] = c.at(y, i, c.to_cyclic, c.Q, c.P);  // A^T (Q x P): row v, column u
        return tr572::element(u, v, c.Q);
      });
}

const Registration kRegistrationConvertCyclic{[](Registry& r) {
  r.add(
      {.name = "convert.cyclic",
       .summary = "2-D transpose with change of assignment scheme, consecutive <-> cyclic (Algorithms 1-3 by variant)",
       .source = "TR-572 §6.2, Fig. 5",
       .params = {"P", "Q", "B", "layout_before", "variant"},
       .required = {"P", "Q"},
       .check = check_convert,
       .process = convert_cyclic,
       .predict = predict_convert,
       .verify = verify_convert,
       .one_port = {.row = "n((PQ/2N) t_c + ⌈PQ/(2NB)⌉ tau) (+ n((PQ/N) t_c + ⌈PQ/(NB)⌉ tau) for Algorithm 1) + copies",
                    .relation = "exact"},
       .all_port = {.row = "the same", .relation = "exact"}});
}};

}  // namespace

std::vector<std::int64_t> tr572::conversion_counts(const Params& p, const Topology& t) {
  const Convert c = convert_of(p, t);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(t.size() * t.size()));
  for (std::int64_t u = 0; u < c.P; ++u)
    for (std::int64_t v = 0; v < c.Q; ++v)
      ++counts[static_cast<std::size_t>(c.before(u, v) * t.size() + c.after(u, v))];
  return counts;
}

}  // namespace cubesim
