// Gao's matrix multiplications (Gao, UBC TR 89-27, §3-§6; docs/meshes.md) on the lines of a
// processor grid (algorithms/mesh/lattice.hpp): a ring, a 2-D torus, a 3-D torus, a cube's
// Gray-coded grids (Gao §6, Prop. 4: the 3-D mesh of hypercubes is the hypercube), or a mesh
// whose lines are folded into rings.
//
// Notation: Gao computes C = A B (n x n); here A <- C D + E (docs/matmul.md), P x Q times Q x R,
// so Gao's A is our C and his B our D; his p processors are our N.
//
//  matmul.gao1d  §3 the 1-d algorithm: node l holds row block l of C and column block l of D;
//                Complete-Broadcast of C round the ring (allgather.ring), then A's column block l
//                (Corollaries 1-2: start-up p, bandwidth n^2).
//  matmul.gao2d  §3 the 2-d algorithm on an N1 x N2 grid: node (l1, l2) holds C(l1, l2) and
//                D(l1, l2); Limited-Complete-Broadcast of C along its row and of D along its
//                column (all ports: at once), then A(l1, l2) (start-up sqrt(p), bandwidth
//                n^2/sqrt(p)). Gao lays B out transposed, B(l2, l1) at (l1, l2); the product is
//                the same with the row-and-column layout of TR-530 §5.2, which this keeps.
//  matmul.gao3d  §3 the 3-d algorithm on a qi x qj x qk grid (axes 0, 1, 2): node (i, j, k)
//                holds piece j of C(i, k) and piece i of D(k, j) (each n^2/p); Limited-Complete-
//                Broadcast of C along axis 1 and of D along axis 0 (at once on all ports), the
//                local product C(i, k) D(k, j), then Limited-Histogramming (reduce_scatter.ring)
//                along axis 2: node (i, j, k) ends with piece k of A(i, j) (Prop. 1: start-up
//                O(p^(1/3)), bandwidth O(n^2/p^(2/3))). E is added by the k = 0 nodes.
//                On Gao §4's 3-D mesh of trees or of cliques (topology kinds mesh_of_trees and
//                mesh_of_cliques) both primitives run on the line's tree or clique instead of its
//                ring (algorithms/mesh/lines.hpp: Theorem 2's simple implementation; Prop. 2,
//                start-up time 2).
//                Pieces are runs of whole rows; P, Q and R are padded with zeros so that they cut
//                evenly (P to a multiple of qi lcm(qj, qk), Q of qk qi, R of qj).
//
// Gao's three measures (§2), never summed, are the critical path's flops (parallel time), its
// start-ups (communication start-up time) and its element transfers (bandwidth time): every
// report carries them in "critical_path". Relations as for the collectives they compose: exact on
// tori and cubes, on all-port meshes; a lower bound on one-port meshes (the folded ring's relays).
#include <numeric>

#include "algorithms/matmul/matmul.hpp"
#include "algorithms/mesh/lines.hpp"
#include "algorithms/mesh/ring.hpp"
#include "algorithms/registry.hpp"

namespace cubesim {
namespace {

using matmul::Rect;
using matmul::Which;
using mesh::Lattice;

constexpr int kTagC = 1, kTagD = 2, kTagA = 3;

/// The grid of a run and the padded blocks: `dims` axes; bP, bQ, bR the block sizes along them.
struct Gao {
  int dims = 1;
  std::vector<std::int64_t> e;  // extents
  std::int64_t Pt = 0, Qt = 0, Rt = 0;
  Gao(const Setup& s, int d) : Gao(s.topology, s.params, d) {}
  Gao(const Topology& t, const Params& p, int d) : dims(d), e(mesh::grid_extents(t, p, d)) {
    const auto pad = [](std::int64_t x, std::int64_t m) { return ceil_div(x, m) * m; };
    if (e.size() != static_cast<std::size_t>(d)) return;  // refused by the check
    if (d == 1) Pt = pad(p.P, e[0]), Qt = p.Q, Rt = pad(p.R, e[0]);
    if (d == 2) Pt = pad(p.P, e[1]), Qt = pad(p.Q, std::lcm(e[0], e[1])), Rt = pad(p.R, e[0]);
    if (d == 3) Pt = pad(p.P, e[0] * std::lcm(e[1], e[2])), Qt = pad(p.Q, e[2] * e[0]), Rt = pad(p.R, e[1]);
  }
  [[nodiscard]] std::int64_t ext(int a) const { return e[static_cast<std::size_t>(a)]; }
  /// The A rows a node ends with.
  [[nodiscard]] Rect result(const Lattice& lat, NodeId x) const {
    if (dims == 1) return {0, Pt, lat.coord(x, 0) * (Rt / ext(0)), Rt / ext(0)};
    if (dims == 2) return {lat.coord(x, 1) * (Pt / ext(1)), Pt / ext(1), lat.coord(x, 0) * (Rt / ext(0)), Rt / ext(0)};
    const std::int64_t bi = Pt / ext(0), rows = bi / ext(2);
    return {lat.coord(x, 0) * bi + lat.coord(x, 2) * rows, rows, lat.coord(x, 1) * (Rt / ext(1)), Rt / ext(1)};
  }
};

/// True on Gao §4's mesh of trees or of cliques (only the 3-d algorithm runs there).
bool on_lines(const Topology& t) {
  return t.kind() == Topology::Kind::mesh_of_trees || t.kind() == Topology::Kind::mesh_of_cliques;
}

std::optional<SetupError> check_gao(const Setup& s, int dims) {
  if (s.params.variant > 1 || (s.params.variant == 1 && s.topology.kind() != Topology::Kind::hypercube))
    return SetupError{"/params/variant", "variant " + std::to_string(s.params.variant) +
                                             ": 0 (ring collectives) or, on a hypercube, 1 (the subcube collectives)"};
  const auto e = mesh::grid_extents(s.topology, s.params, dims);
  if (dims == 3 && on_lines(s.topology)) {
    const std::vector<std::int64_t> shape(s.topology.shape().begin(), s.topology.shape().begin() + s.topology.dim());
    if (s.topology.dim() != 3)
      return SetupError{"/topology/shape",
                        "matmul.gao3d on a " + s.topology.kind_name() +
                            " needs its 3-D shape (Gao §4: a 3-D mesh whose lines are " +
                            (s.topology.kind() == Topology::Kind::mesh_of_trees ? "trees" : "cliques") + "), not " +
                            std::to_string(s.topology.dim()) + " extents"};
    if (!s.params.grid.empty() && s.params.grid != shape)
      return SetupError{"/params/grid", "a " + s.topology.kind_name() + " is not emulated: leave grid out (its shape)"};
  } else if (auto err = mesh::lattice_error(s, e, dims, false)) {
    return err;
  }
  const Gao g(s, dims);
  std::int64_t peak = 0;
  if (dims == 1) peak = g.Pt * s.params.Q + 2 * g.Qt * (g.Rt / g.ext(0)) + g.Pt * (g.Rt / g.ext(0));
  if (dims == 2) peak = (g.Pt / g.ext(1)) * g.Qt + g.Qt * (g.Rt / g.ext(0)) + 2 * (g.Pt / g.ext(1)) * (g.Rt / g.ext(0));
  if (dims == 3)
    peak = (g.Pt / g.ext(0)) * (g.Qt / g.ext(2)) + (g.Qt / g.ext(2)) * (g.Rt / g.ext(1)) +
           2 * (g.Pt / g.ext(0)) * (g.Rt / g.ext(1));
  return matmul::check(s, peak, true);
}

/// The subcube of a cube grid's axis a (its segment of address bits) and the order of its blocks:
/// the primitive library's collectives keep blocks in local-address order, the grid in coordinate
/// order; a Gray-coded segment's local address is gray::encode(coordinate).
routing::SubCube axis_cube(const Gao& g, int a) {
  int lo = 0;
  for (int b = 0; b < a; ++b) lo += log2_exact(g.ext(b));
  return routing::SubCube::range(lo, log2_exact(g.ext(a)));
}
/// Reorders L blocks of M from one order to the other: out block i = in block map(i).
Buffer reorder(const Buffer& in, std::int64_t L, std::int64_t M, std::int64_t (*map)(std::int64_t)) {
  Buffer out;
  for (std::int64_t i = 0; i < L; ++i) out.append(in.slice(map(i) * M, M));
  return out;
}
std::int64_t gray_of(std::int64_t i) { return gray::encode(i); }
std::int64_t coord_of(std::int64_t a) { return gray::decode(a); }

/// Gathers `mine` along axis a: ring collectives (variant 0), or on a cube the primitive
/// library's subcube all-gather (variant 1: SBT-b recursive doubling one-port, nRSBT-b all-port).
Task<> gather_axis(Node& self, const Gao& g, Lattice lat, int a, Buffer mine, int tag, bool cube, Buffer* out) {
  if (on_lines(lat.topology())) {
    *out = co_await mesh::line_allgather(self, lat, a, std::move(mine), tag);
    co_return;
  }
  if (!cube) {
    *out = co_await mesh::ring_allgather(self, lat, a, std::move(mine), tag);
    co_return;
  }
  const std::int64_t M = mine.size();
  const Buffer got = co_await matmul::gather(self, M, std::move(mine), axis_cube(g, a));
  *out = reorder(got, g.ext(a), M, gray_of);  // coordinate j's block sits at local address encode(j)
}

Task<> gao1d(Node& self, Params p) {
  const Gao g(self.topology(), p, 1);
  const Lattice lat(self.topology(), g.e);
  const matmul::Shape sh{p.P, p.Q, p.R};
  const bool data = self.data_mode();
  const std::int64_t L = g.ext(0), l = lat.coord(self.id(), 0), bp = g.Pt / L, br = g.Rt / L;
  Buffer c =
      co_await mesh::ring_allgather(self, lat, 0, matmul::block(data, sh, Which::C, {l * bp, bp, 0, p.Q}), kTagC);
  const Buffer d = matmul::block(data, sh, Which::D, {0, p.Q, l * br, br});
  Buffer a = matmul::block(data, sh, Which::E, g.result(lat, self.id()));
  matmul::multiply_add(a, 0, br, {&c, 0, p.Q}, {&d, 0, br}, g.Pt, p.Q, br);
  co_await matmul::local_product(self, g.Pt, p.Q, br);
  self.set_result(std::move(a));
}

Task<> gao2d(Node& self, Params p) {
  const Gao g(self.topology(), p, 2);
  const Lattice lat(self.topology(), g.e);
  const matmul::Shape sh{p.P, p.Q, p.R};
  const bool data = self.data_mode();
  const std::int64_t N2 = g.ext(0), N1 = g.ext(1), l1 = lat.coord(self.id(), 1), l2 = lat.coord(self.id(), 0);
  const std::int64_t bp = g.Pt / N1, br = g.Rt / N2, bq1 = g.Qt / N1, bq2 = g.Qt / N2;
  Buffer crow, dcol;  // C(l1, *) as N2 blocks of bp x bq2; D(*, l2), Qt x br row-major
  co_await matmul::both(self,
                        gather_axis(self, g, lat, 0, matmul::block(data, sh, Which::C, {l1 * bp, bp, l2 * bq2, bq2}),
                                    kTagC, false, &crow),
                        gather_axis(self, g, lat, 1, matmul::block(data, sh, Which::D, {l1 * bq1, bq1, l2 * br, br}),
                                    kTagD, false, &dcol));
  Buffer a = matmul::block(data, sh, Which::E, g.result(lat, self.id()));
  for (std::int64_t t = 0; t < N2; ++t)
    matmul::multiply_add(a, 0, br, {&crow, t * bp * bq2, bq2}, {&dcol, t * bq2 * br, br}, bp, bq2, br);
  co_await matmul::local_product(self, bp, g.Qt, br);
  self.set_result(std::move(a));
}

Task<> gao3d(Node& self, Params p) {
  const Gao g(self.topology(), p, 3);
  const bool cube = p.variant == 1, lines = on_lines(self.topology());
  const Lattice lat(self.topology(), g.e);
  const matmul::Shape sh{p.P, p.Q, p.R};
  const bool data = self.data_mode();
  const NodeId x = self.id();
  const std::int64_t qi = g.ext(0), qj = g.ext(1), qk = g.ext(2);
  const std::int64_t i = lat.coord(x, 0), j = lat.coord(x, 1), k = lat.coord(x, 2);
  const std::int64_t bi = g.Pt / qi, bk = g.Qt / qk, bj = g.Rt / qj;
  // Stage 1: C(i, k) (bi x bk) from its qj row pieces along axis 1; D(k, j) (bk x bj) from its qi
  // row pieces along axis 0.
  Buffer c, d;
  co_await matmul::both(
      self,
      gather_axis(self, g, lat, 1, matmul::block(data, sh, Which::C, {i * bi + j * (bi / qj), bi / qj, k * bk, bk}),
                  kTagC, cube, &c),
      gather_axis(self, g, lat, 0, matmul::block(data, sh, Which::D, {k * bk + i * (bk / qi), bk / qi, j * bj, bj}),
                  kTagD, cube, &d));
  // Stage 2: the partial A(i, j) for this k (E added once, by k = 0).
  Buffer part = k == 0 ? matmul::block(data, sh, Which::E, {i * bi, bi, j * bj, bj})
                       : Buffer::make(bi * bj, data, [](std::int64_t) { return Element{0}; });
  matmul::multiply_add(part, 0, bj, {&c, 0, bk}, {&d, 0, bj}, bi, bk, bj);
  co_await matmul::local_product(self, bi, bk, bj);
  // Stage 3: Limited-Histogramming along axis 2: piece k of the sum over k.
  if (lines) {
    self.set_result(co_await mesh::line_reduce_scatter(self, lat, 2, bi * bj / qk, std::move(part), kTagA));
    co_return;
  }
  if (cube) {  // the block for local address a is piece decode(a)
    self.set_result(
        co_await matmul::reduce(self, bi * bj / qk, reorder(part, qk, bi * bj / qk, coord_of), axis_cube(g, 2)));
    co_return;
  }
  self.set_result(co_await mesh::ring_reduce_scatter(self, lat, 2, bi * bj / qk, std::move(part), kTagA));
}

/// The prediction: the stages' terms (two gathers: the slower on all ports, both on one).
Prediction predict_gao(const Setup& s, int dims) {
  const Gao g(s, dims);
  const Lattice lat(s.topology, g.e);
  const std::int64_t B = s.params.B;
  const bool all = s.machine.ports.kind == PortKind::all;
  const auto two = [&](const RowTerms& a, const RowTerms& b) {
    if (!all) {
      RowTerms t = a;
      t += b;
      return t;
    }
    return mesh::terms_time(s.machine, a) >= mesh::terms_time(s.machine, b) ? a : b;
  };
  RowTerms t;
  std::int64_t flops = 0;
  std::string source;
  bool folded = false;
  if (dims == 1) {
    t = mesh::ring_steps_terms(lat, 0, (g.Pt / g.ext(0)) * s.params.Q, B);
    flops = 2 * g.Pt * s.params.Q * (g.Rt / g.ext(0));
    source = "Gao §3 the 1-d algorithm (Complete-Broadcast, Corollaries 1-2)";
    folded = lat.ring_hops(0) == 2;
  } else if (dims == 2) {
    const std::int64_t N2 = g.ext(0), N1 = g.ext(1);
    t = two(mesh::ring_steps_terms(lat, 0, (g.Pt / N1) * (g.Qt / N2), B),
            mesh::ring_steps_terms(lat, 1, (g.Qt / N1) * (g.Rt / N2), B));
    flops = 2 * (g.Pt / N1) * g.Qt * (g.Rt / N2);
    source = "Gao §3 the 2-d algorithm (Limited-Complete-Broadcast in rows and columns)";
    folded = lat.ring_hops(0) == 2 || lat.ring_hops(1) == 2;
  } else {
    const std::int64_t qi = g.ext(0), qj = g.ext(1), qk = g.ext(2);
    const std::int64_t bi = g.Pt / qi, bk = g.Qt / qk, bj = g.Rt / qj;
    if (on_lines(s.topology)) {
      // Gao §4 Theorem 2's simple implementation on trees, Proposition 2's on cliques
      // (algorithms/mesh/lines.hpp): the schedules' own costs, flops of the additions included.
      const auto gc = mesh::line_allgather_cost(s.machine, lat, 1, (bi / qj) * bk, B);
      const auto gd = mesh::line_allgather_cost(s.machine, lat, 0, (bk / qi) * bj, B);
      const auto rs = mesh::line_reduce_scatter_cost(s.machine, lat, 2, bi * bj / qk, B);
      if (all) {
        t = mesh::line_time(s.machine, gc) >= mesh::line_time(s.machine, gd) ? gc.terms : gd.terms;
      } else {
        t = gc.terms;
        t += gd.terms;
      }
      t += rs.terms;
      flops = 2 * bi * bk * bj + rs.flops;
      source =
          std::string("Gao §4 the 3-d algorithm on the 3-D mesh of ") +
          (s.topology.kind() == Topology::Kind::mesh_of_trees ? "trees (Theorem 2's simple implementation, Corollary 3)"
                                                              : "cliques (Proposition 2: start-up time 2)");
    } else if (s.params.variant == 1) {
      // Theorem 3's hypercube form: TR-530 Table 2 SBT-b(1,.) one-port, SBnT/nRSBT-b(n,.) all-port
      // on each axis's subcube, forwards for the gathers, backwards for the reduction.
      const auto row = [&](std::int64_t M, std::int64_t L) {
        const int n = log2_exact(L);
        return all && n > 1 ? balanced_levels_terms(M, n, B) : sbt_doubling_terms(M, n, B);
      };
      t = two(row((bi / qj) * bk, qj), row((bk / qi) * bj, qi));
      t += row(bi * bj / qk, qk);
    } else {
      t = two(mesh::ring_steps_terms(lat, 1, (bi / qj) * bk, B), mesh::ring_steps_terms(lat, 0, (bk / qi) * bj, B));
      t += mesh::ring_steps_terms(lat, 2, bi * bj / qk, B);
    }
    if (!on_lines(s.topology)) {
      flops = 2 * bi * bk * bj + (qk - 1) * (bi * bj / qk);
      source = "Gao §3 the 3-d algorithm, §4 Prop. 1 (Limited-Complete-Broadcast, Limited-Histogramming)";
    }
    folded = lat.ring_hops(0) == 2 || lat.ring_hops(1) == 2 || lat.ring_hops(2) == 2;
  }
  Prediction pr = matmul::from_terms(s, t, flops, source);
  if (dims == 3 && s.params.variant == 1 && all) {
    // nRSBT-b on an axis of n > 2 dimensions: exact when n divides the block, as allgather.nrsbt
    // (docs/primitives.md); otherwise its tolerance.
    const std::int64_t qi = g.ext(0), qj = g.ext(1), qk = g.ext(2), bi = g.Pt / qi, bk = g.Qt / qk, bj = g.Rt / qj;
    bool even = true, tiny = false;
    for (const auto& [M, L] :
         {std::pair{(bi / qj) * bk, qj}, std::pair{(bk / qi) * bj, qi}, std::pair{bi * bj / qk, qk}}) {
      const int n = log2_exact(L);
      if (n > 2 && M % n != 0) even = false, tiny = tiny || M < n;
    }
    if (!even) pr.relation = Relation::approx, pr.tolerance = tiny ? 2.5 : 0.45;
  }
  // The loop overhead of the one local product (eq. (16)'s M^2 term; 0 but on the Mark II).
  const std::int64_t elems = dims == 1   ? g.Pt * (g.Rt / g.ext(0))
                             : dims == 2 ? (g.Pt / g.ext(1)) * (g.Rt / g.ext(0))
                                         : (g.Pt / g.ext(0)) * (g.Rt / g.ext(1));
  pr.delays = s.machine.t_elem * elems;
  pr.time = prediction_time(s.machine, pr);
  if ((folded && !all) || lat.emulated()) pr.relation = Relation::lower_bound;  // emulated: shared links
  return pr;
}

Verdict verify_gao(const Setup& s, const std::vector<Buffer>& results, int dims) {
  const Gao g(s, dims);
  const Lattice lat(s.topology, g.e);
  return matmul::verify_product(s, results, [&](NodeId x) { return g.result(lat, x); });
}

AlgorithmInfo gao_info(int dims, std::string summary, std::string source, std::string row) {
  return {.name = "matmul.gao" + std::to_string(dims) + "d",
          .summary = std::move(summary),
          .source = std::move(source),
          .params = dims == 3 ? std::vector<std::string>{"P", "Q", "R", "B", "grid", "variant"}
                              : std::vector<std::string>{"P", "Q", "R", "B", "grid"},
          .required = {"P", "Q", "R"},
          .check = [dims](const Setup& s) { return check_gao(s, dims); },
          .process = dims == 1   ? gao1d
                     : dims == 2 ? gao2d
                                 : gao3d,
          .predict = [dims](const Setup& s) { return predict_gao(s, dims); },
          .verify = [dims](const Setup& s, const std::vector<Buffer>& b) { return verify_gao(s, b, dims); },
          .one_port = {.row = row + " (one after the other)",
                       .relation = dims == 3 ? "exact on tori, cubes, meshes of trees and of cliques; lower bound on "
                                               "a mesh (folded rings)"
                                             : "exact on tori and cubes; lower bound on a mesh (folded rings)"},
          .all_port = {.row = row + " (the gathers at once)", .relation = "exact"}};
}

const Registration kRegistrationGao{[](Registry& r) {
  r.add(gao_info(1, "A <- CD + E on a ring: Complete-Broadcast of C's row blocks, then a column block of A each",
                 "Gao §3 (the 1-d algorithm), Corollaries 1-2", "allgather.ring of C + 2 P Q R/N flops"));
  r.add(gao_info(
      2, "A <- CD + E on a 2-D torus: Limited-Complete-Broadcast of C in rows and D in columns, one multiply",
      "Gao §3 (the 2-d algorithm), Corollaries 1-2", "allgather.ring of C along rows and of D along columns + flops"));
  r.add(
      gao_info(3,
               "A <- CD + E on a 3-D torus, mesh of trees or mesh of cliques: gather C and D along two axes, multiply, "
               "Limited-Histogramming along the third",
               "Gao §3 (the 3-d algorithm), §4 Prop. 1, Theorem 2, Prop. 2, §6 Theorem 3",
               "allgather.ring of C and D, flops, reduce_scatter.ring of A"));
}};

}  // namespace
}  // namespace cubesim
