#pragma once
/// The N1 x N2 processor grid of TR-530 §5.2, shared by the two-dimensional algorithms. Gray-coded
/// (§5.2): the grid row index k is IG of the high n1 address bits, the column index l IG of the
/// low n2 bits, so a processor row is the subcube of the least n2 dimensions and a processor
/// column the subcube of the other n1 (the Cannon code: "rid = IG(⌊pid/N2⌋), cid = IG(pid mod
/// N2)"). N1 defaults to 2^⌈n/2⌉.
///
/// Blocks. With `nested` false (A1, Cannon) a matrix of X rows on N1 processors is cut into
/// blocks of ⌈X/N1⌉ rows, as Tables 9-11 write them. With `nested` true (A2-A5, which transpose
/// a matrix from the N1-partition of one index to the N2-partition) P, Q and R are first padded
/// with zeros to multiples of max(N1, N2), so that the blocks of one partition nest in those of
/// the other; b?1 = X̃/N1 and b?2 = X̃/N2 then divide exactly (equal to the tables' ⌈X/N1⌉ and
/// ⌈X/N2⌉ when max(N1, N2) divides P, Q and R; docs/matmul.md).
#include <algorithm>
#include <optional>
#include <string>

#include "algorithms/collectives/tree_routing.hpp"
#include "algorithms/embedding/gray.hpp"
#include "algorithms/matmul/matmul.hpp"

namespace cubesim::matmul {

struct Grid {
  Shape sh;
  std::int64_t N = 1, N1 = 1, N2 = 1;
  int n = 0, n1 = 0, n2 = 0;
  /// Block sizes: bP1 = ⌈P/N1⌉ (or P̃/N1 nested), bP2 = ⌈P/N2⌉, and likewise for Q and R.
  std::int64_t bP1 = 0, bP2 = 0, bQ1 = 0, bQ2 = 0, bR1 = 0, bR2 = 0;
  /// The padded sizes (nested) or the sizes themselves.
  std::int64_t Pt = 0, Qt = 0, Rt = 0;

  Grid(const Params& p, const Topology& t, bool nested = false) : sh{p.P, p.Q, p.R}, N(t.size()), n(t.dim()) {
    n1 = p.N1 > 0 ? std::max(log2_exact(p.N1), 0) : (n + 1) / 2;
    n1 = std::min(n1, n);
    n2 = n - n1;
    N1 = std::int64_t{1} << n1, N2 = std::int64_t{1} << n2;
    const std::int64_t unit = nested ? std::max(N1, N2) : 1;
    Pt = ceil_div(sh.P, unit) * unit, Qt = ceil_div(sh.Q, unit) * unit, Rt = ceil_div(sh.R, unit) * unit;
    bP1 = ceil_div(Pt, N1), bP2 = ceil_div(Pt, N2);
    bQ1 = ceil_div(Qt, N1), bQ2 = ceil_div(Qt, N2);
    bR1 = ceil_div(Rt, N1), bR2 = ceil_div(Rt, N2);
  }
  [[nodiscard]] std::int64_t row_of(NodeId x) const { return gray::decode(x >> n2); }
  [[nodiscard]] std::int64_t col_of(NodeId x) const { return gray::decode(x & (N2 - 1)); }
  [[nodiscard]] NodeId node(std::int64_t k, std::int64_t l) const { return (gray::encode(k) << n2) | gray::encode(l); }
  [[nodiscard]] routing::SubCube row_cube() const { return routing::SubCube::range(0, n2); }
  [[nodiscard]] routing::SubCube col_cube() const { return routing::SubCube::range(n2, n1); }
  /// Node x's block of A (and E) in the standard layout: rows by N1, columns by N2.
  [[nodiscard]] Rect a_block(NodeId x) const { return {row_of(x) * bP1, bP1, col_of(x) * bR2, bR2}; }
};

/// The communication time of row terms: which of two phases that run at once is the slower.
inline Time terms_time(const Setup& s, const RowTerms& t) {
  return t.startups * s.machine.tau + t.elements * s.machine.t_c + t.messages * s.machine.tau_msg;
}

/// One step that moves a C block of X elements and/or a D block of Y one hop (Cannon's shifts,
/// Dekel's exchanges, the outer product's forwards): one-port the two one after the other,
/// all-port at once, so the slower sets the step.
inline RowTerms block_step(const Setup& s, std::int64_t X, std::int64_t Y, bool c_moves = true, bool d_moves = true) {
  const std::int64_t B = s.params.B;
  const RowTerms cx{ceil_div(X, B), X, 1}, dy{ceil_div(Y, B), Y, 1};
  RowTerms t;
  if (s.machine.ports.kind == PortKind::all && c_moves && d_moves)
    return terms_time(s, dy) > terms_time(s, cx) ? dy : cx;
  if (c_moves) t += cx;
  if (d_moves) t += dy;
  return t;
}

/// N1 a power of two dividing N; N2, if given, N/N1.
inline std::optional<SetupError> check_grid(const Setup& s) {
  const std::int64_t N = s.topology.size();
  if (s.params.N1 != 0 && (log2_exact(s.params.N1) < 0 || s.params.N1 > N))
    return SetupError{"/params/N1", "N1 = " + std::to_string(s.params.N1) +
                                        " processor rows: must be a power of two dividing N = " + std::to_string(N)};
  const Grid g(s.params, s.topology);
  if (s.params.N2 != 0 && s.params.N2 != g.N2)
    return SetupError{"/params/N2", "N2 = " + std::to_string(s.params.N2) + " must be N/N1 = " + std::to_string(g.N2)};
  return std::nullopt;
}

}  // namespace cubesim::matmul
