// Fox, Otto & Hey's broadcast-multiply-roll (FOH §3-4; docs/meshes.md) on a torus: native, a
// Gray-coded grid of the cube (FOH §2 "the usual binary Grey code scheme"), or a mesh whose rings
// are folded (algorithms/mesh/lattice.hpp).
//
// Notation. FOH computes C = A B with M x M matrices; here, as in TR-530, A <- C D + E (docs/
// matmul.md's crosswalk: FOH's A is our C, B is D, C is A with E its initial value), P = Q = R = M.
//
// Grid. FOH §4 (rectangular subblocks): N1 processor rows and N0 <= N1 columns, r = N1/N0 an
// integer; each node holds an m1 x m0 block (m1 = M/N1 rows, m0 = M/N0 columns), r square m1 x m1
// subblocks side by side. This reading makes (6)-(9) consistent as printed: the broadcast runs along
// a row of N0 processors ((N0 - 1) t_start) and moves one square subblock (m1^2), the multiply is
// r 2 m1^3 = 2 m1^2 m0, the roll moves the node's m1 m0 block, N1 cycles. Square subblocks (§3) are
// N0 = N1 = sqrt(N); FOH's row/column ring (eq. (12)) is N0 = 1, N1 = N: matmul.foh_ring. Here N1
// is the `N1` param (processor rows, grid axis 1; on a cube 2^ceil(n/2) by default, the high
// address bits) and N0 = N/N1 the columns (grid axis 0, our N2).
//
// Cycle t = 0 .. N1 - 1 (FOH §3.1 steps 1-5): the node at ring position q of its column holds the
// D block of the row at ring position q - t, row block k; in each processor row i, the node whose
// columns hold the square subblock C(i, k) (column k / r) broadcasts it along the row
// (broadcast.pipe: a linear pipeline of packets, FOH eq. (2)); every node multiplies it into its D
// block (2 m1^2 m0 flops, eq. (7)); then D rolls one step along the column ring (shift.ring, eq.
// (8)). FOH charges N1 rolls (eq. (5): D returns home); so does this.
//
// Rectangular matrices. FOH multiplies M x M matrices (P = Q = R = M here); the same cycles
// multiply any P x Q by Q x R: the inner dimension is cut into N1 blocks of bq = ceil(Q/N1), the
// rows of C and A into N1 blocks, the columns of D and A into N0 (struct Fox below).
//
// Padding (FOH §5.2): each size is padded with zeros to the next multiple of its cut, the "first
// size which matches the machine dimensions" (FOH puts 1 on the padded diagonal; A's top-left
// P x R block is the same either way, and the padding is never read back).
#include <algorithm>

#include "algorithms/matmul/matmul.hpp"
#include "algorithms/mesh/ring.hpp"
#include "algorithms/registry.hpp"

namespace cubesim {
namespace {

using matmul::Rect;
using matmul::Which;
using mesh::Lattice;

constexpr int kBroadcastTag = 1, kRollTag = 2;

/// The grid's extents: [N0 columns, N1 rows], or the ring's [N].
std::vector<std::int64_t> foh_extents(const Topology& t, const Params& p, bool ring) {
  if (t.kind() == Topology::Kind::hypercube && p.grid.empty()) {
    if (ring) return {t.size()};
    if (p.N1 > 0) return {t.size() / p.N1, p.N1};
  }
  return mesh::grid_extents(t, p, ring ? 1 : 2);
}

/// The grid of a run: the row axis (the broadcasts; -1 on the ring) and the column axis (the rolls).
/// Blocks, for P x Q times Q x R (FOH's square case: bp = bq = m1, br = m0): node (i, J) holds
/// C(rows i, columns J) of bp x bq0 (r inner subblocks of bq columns side by side), D(rows i,
/// columns J) of bq x br, and A(rows i, columns J) of bp x br. P and Q are padded with zeros to
/// multiples of N1, R to a multiple of N0.
struct Fox {
  int row_axis = 0, col_axis = 1;
  std::int64_t N0 = 1, N1 = 1, r = 1, bp = 0, bq = 0, br = 0;
  Fox(const Params& p, const std::vector<std::int64_t>& e) {
    if (e.size() == 1)
      row_axis = -1, col_axis = 0, N1 = e[0];
    else
      N0 = e[0], N1 = e[1];
    r = N1 / N0;
    bp = ceil_div(p.P, N1), bq = ceil_div(p.Q, N1), br = ceil_div(p.R, N0);
  }
  [[nodiscard]] Rect a_block(const Lattice& lat, NodeId x) const {
    return {row(lat, x) * bp, bp, col(lat, x) * br, br};
  }
  [[nodiscard]] Rect d_block(const Lattice& lat, NodeId x) const {
    return {row(lat, x) * bq, bq, col(lat, x) * br, br};
  }
  [[nodiscard]] std::int64_t row(const Lattice& lat, NodeId x) const { return lat.coord(x, col_axis); }
  [[nodiscard]] std::int64_t col(const Lattice& lat, NodeId x) const {
    return row_axis < 0 ? 0 : lat.coord(x, row_axis);
  }
};

/// FOH's M x M matrices: `M` stands for P = Q = R = M.
Params square(Params p) {
  if (p.M > 0) p.P = p.Q = p.R = p.M;
  return p;
}
Setup square(const Setup& s) {
  Setup t = s;
  t.params = square(s.params);
  return t;
}

std::optional<SetupError> check_foh(const Setup& given, bool ring) {
  if (given.params.M > 0 && (given.params.P > 0 || given.params.Q > 0 || given.params.R > 0))
    return SetupError{"/params/M", "give M (FOH's M x M matrices) or P, Q and R, not both"};
  const Setup s = square(given);
  const Params& p = s.params;
  if (s.topology.kind() == Topology::Kind::hypercube && p.N1 != 0 && !ring &&
      (log2_exact(p.N1) < 0 || p.N1 > s.topology.size()))
    return SetupError{"/params/N1",
                      "N1 = " + std::to_string(p.N1) +
                          " processor rows: must be a power of two dividing N = " + std::to_string(s.topology.size())};
  const auto e = foh_extents(s.topology, p, ring);
  if (s.topology.kind() != Topology::Kind::hypercube && static_cast<int>(e.size()) != s.topology.dim())
    return SetupError{"/topology/shape", std::string("FOH runs on a ") + (ring ? "1-D" : "2-D") +
                                             " torus or mesh itself, not a grid emulated on the " +
                                             s.topology.describe()};
  if (auto err = mesh::lattice_error(s, e, ring ? 1 : 2, false)) return err;
  if (s.topology.kind() != Topology::Kind::hypercube && !s.params.grid.empty())
    return SetupError{"/params/grid", "FOH runs on the torus itself: leave grid out on a mesh or torus"};
  if (!ring && p.N1 != 0 && p.N1 != e[1])
    return SetupError{"/params/N1",
                      "N1 = " + std::to_string(p.N1) + " must be the grid's " + std::to_string(e[1]) + " rows"};
  if (!ring && (e[0] > e[1] || e[1] % e[0] != 0))
    return SetupError{s.topology.kind() == Topology::Kind::hypercube ? "/params/N1" : "/topology/shape",
                      "FOH §4 needs N0 <= N1 columns dividing the rows, r = N1/N0 an integer: here " +
                          std::to_string(e[1]) + " rows and " + std::to_string(e[0]) + " columns"};
  const Fox f(p, e);
  return matmul::check(s, 2 * f.bp * f.br + f.bq * f.br + f.bp * f.bq, true);
}

Task<> foh(Node& self, Params given, bool ring) {
  const Params p = square(std::move(given));
  const auto e = foh_extents(self.topology(), p, ring);
  const Lattice lat(self.topology(), e);
  const Fox f(p, e);
  const matmul::Shape sh{p.P, p.Q, p.R};
  const bool data = self.data_mode();
  const NodeId x = self.id();
  const std::int64_t i = f.row(lat, x), J = f.col(lat, x), q = lat.ring_pos(x, f.col_axis);
  Buffer acc = matmul::block(data, sh, Which::E, f.a_block(lat, x));
  Buffer d = matmul::block(data, sh, Which::D, f.d_block(lat, x));
  co_await matmul::initialise(self, f.bp * f.br);  // FOH §5.1: C set to zero, once
  for (std::int64_t t = 0; t < f.N1; ++t) {
    const std::int64_t k =
        lat.coord(lat.ring_node(x, f.col_axis, q - t), f.col_axis);  // the row block of the D held now
    const std::int64_t owner = k / f.r;
    Buffer c;
    if (J == owner) c = matmul::block(data, sh, Which::C, {i * f.bp, f.bp, k * f.bq, f.bq});  // C(i, k), resident
    if (f.row_axis >= 0)
      c = co_await mesh::line_broadcast(self, lat, f.row_axis, owner, f.bp * f.bq, std::move(c), false, kBroadcastTag);
    matmul::multiply_add(acc, 0, f.br, {&c, 0, f.bq}, {&d, 0, f.br}, f.bp, f.bq, f.br);
    co_await matmul::local_product(self, f.bp, f.bq, f.br);
    d = co_await mesh::ring_shift(self, lat, f.col_axis, std::move(d), kRollTag);
  }
  self.set_result(std::move(acc));
}

Prediction predict_foh(const Setup& given, bool ring) {
  const Setup s = square(given);
  const auto e = foh_extents(s.topology, s.params, ring);
  const Lattice lat(s.topology, e);
  const Fox f(s.params, e);
  const std::int64_t B = s.params.B;
  // One cycle (FOH eq. (9)): the slowest row's broadcast of m1^2 (the roots differ by row; on a
  // ring the pipeline is L - 1 hops from any root), 2 m1^2 m0 flops, a roll of m1 m0.
  RowTerms bcast;
  for (std::int64_t root = 0; root < f.N0 && f.row_axis >= 0; ++root) {
    const RowTerms b =
        mesh::broadcast_terms(s.machine, f.bp * f.bq, B, mesh::broadcast_hops(lat, f.row_axis, root, false));
    if (f.N0 > 1 && mesh::terms_time(s.machine, b) > mesh::terms_time(s.machine, bcast)) bcast = b;
    if (lat.wraps()) break;
  }
  RowTerms cycle = bcast;
  if (f.N1 > 1) cycle += mesh::shift_terms(lat, f.col_axis, f.bq * f.br, B);
  Prediction pr =
      matmul::from_terms(s, cycle.times(f.N1), f.N1 * 2 * f.bp * f.bq * f.br,
                         ring ? "FOH §4.2 eq. (12), the row/column ring" : "FOH §3.2 eq. (5), §4.2 eq. (9)");
  // The loop overhead of N1 products and the one-off initialisation of the result (eq. (16)'s M^2
  // term, split as FOH §5.1 explains it: t_init once, t_elem every cycle).
  pr.delays = s.machine.t_elem * (f.N1 * f.bp * f.br) + s.machine.t_init * (f.bp * f.br);
  pr.time = prediction_time(s.machine, pr);
  // The cycles are summed as if in lockstep (as FOH's eq. (5) and (9) sum them). Measured over the
  // grid of tests/test_meshes.cpp (docs/meshes.md): the ring on a torus or cube is exactly that
  // (one message per cycle, nothing to overlap); all ports let a row start its next broadcast
  // while others still roll, so the sum bounds the run from above (0.59 - 1 on tori and cubes,
  // 0.65 - 1 on meshes); on one port a roll arriving while the next broadcast's packets do
  // queues for the receiver's one input (up to 1.33 on tori; as low as 0.62 on a 32 x 16 cube
  // grid with 1 x 1 matrices, where most blocks are padding and the cycles overlap), and on a
  // one-port mesh the folded ring's relays also queue (up to 2.54).
  const bool one_port = s.machine.ports.kind != PortKind::all, mesh_line = !lat.wraps();
  if (ring && !mesh_line) {
    pr.relation = Relation::exact;
  } else if (!one_port) {
    pr.relation = Relation::upper_bound;
  } else {
    pr.relation = Relation::approx;
    pr.tolerance = mesh_line ? 1.6 : 0.4;
  }
  return pr;
}

Verdict verify_foh(const Setup& given, const std::vector<Buffer>& results, bool ring) {
  const Setup s = square(given);
  const auto e = foh_extents(s.topology, s.params, ring);
  const Lattice lat(s.topology, e);
  const Fox f(s.params, e);
  return matmul::verify_product(s, results, [&](NodeId x) { return f.a_block(lat, x); });
}

/// The memory model (docs/reliability.md "Budgets"): each node holds its subblocks of the three
/// matrices and the row it is sent, about 8 bytes an element of P Q + Q R + P R (P = Q = R = 512
/// on an 8 x 8 torus, data mode: 6.5 MiB).
std::int64_t foh_memory(const Setup& s) { return model_bytes(s, {1024, 8}, static_cast<double>(default_elements(s))); }

const Registration kRegistrationFoh{[](Registry& r) {
  r.add({.name = "matmul.foh",
         .summary = "A <- CD + E on an N1 x N0 torus: broadcast C's subblock along rows, multiply, roll D up the "
                    "columns (N1 cycles)",
         .source = "FOH §3-4, eq. (2)-(9)",
         .params = {"M", "P", "Q", "R", "B", "N1", "grid"},
         .required = {},
         .check = [](const Setup& s) { return check_foh(s, false); },
         .process = [](Node& self, Params p) { return foh(self, std::move(p), false); },
         .predict = [](const Setup& s) { return predict_foh(s, false); },
         .verify = [](const Setup& s, const std::vector<Buffer>& b) { return verify_foh(s, b, false); },
         .memory = foh_memory,
         .one_port = {.row = "N1 cycles of broadcast.pipe (m1^2), 2 m1^2 m0 flops, shift.ring (m1 m0)",
                      .relation = "approx <= 40 % on tori and cubes (measured 38 %), <= 160 % on meshes (154 %)"},
         .all_port = {.row = "the same cycles summed", .relation = "upper bound (cycles overlap)"}});
  r.add({.name = "matmul.foh_ring",
         .summary =
             "A <- CD + E on a ring of N nodes by rows: multiply, roll D (N cycles; FOH's row/column decomposition)",
         .source = "FOH §4.2 eq. (12), §5 Fig. 8",
         .params = {"M", "P", "Q", "R", "B", "grid"},
         .required = {},
         .check = [](const Setup& s) { return check_foh(s, true); },
         .process = [](Node& self, Params p) { return foh(self, std::move(p), true); },
         .predict = [](const Setup& s) { return predict_foh(s, true); },
         .verify = [](const Setup& s, const std::vector<Buffer>& b) { return verify_foh(s, b, true); },
         .one_port = {.row = "N cycles of 2 M^3/N^2 flops and shift.ring (M^2/N)",
                      .relation = "exact on tori and cubes; on a mesh approx <= 160 % (measured 154 %)"},
         .all_port = {.row = "the same", .relation = "exact on tori and cubes; upper bound on a mesh"}});
}};

}  // namespace
}  // namespace cubesim
