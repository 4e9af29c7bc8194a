// The collectives of a processor grid's lines, on meshes, tori and the cube's Gray-coded grids
// (issue 14; algorithms/mesh/ring.hpp has the schedules, docs/meshes.md the derivations). Each
// runs on every line along `axis` at once, on the grid of algorithms/mesh/lattice.hpp (a cube's
// grid is `grid`, by default one ring of all N nodes).
//
//  broadcast.pipe        FOH §3 eq. (2): a linear pipeline from coordinate `root` of each line, one
//                        way round a ring (L - 1 hops), both ways along a mesh line.
//  broadcast.split       FOH App. A eq. (A.3): the split ring, both ways round.
//  shift.ring            FOH §3 eq. (3): the roll, every node's block to its ring successor.
//  allgather.ring        Gao §3 Complete-Broadcast on a ring (Corollaries 1-2: start-ups L - 1,
//                        bandwidth (L - 1) M).
//  reduce_scatter.ring   Gao §4 Prop. 1, Limited-Histogramming: L - 1 forward-and-add steps.
//
// Relations: exact on tori and cubes, for any M, B, tau, t_c, tau_msg; the broadcasts exact on
// meshes too. On a mesh the ring operations run on the folded ring: exact on all ports, a lower
// bound on one port (a node that relays a neighbour's two-hop edge sends its own at the same time).
#include "algorithms/collectives/verify.hpp"
#include "algorithms/mesh/ring.hpp"
#include "algorithms/registry.hpp"

namespace cubesim {
namespace {

using mesh::Lattice;

Element value(NodeId x, std::int64_t M, std::int64_t i) { return static_cast<Element>(x * M + i); }

Lattice lattice_of(const Topology& t, const Params& p) { return Lattice(t, mesh::grid_extents(t, p, 1)); }
int axis_of(const Params& p) { return static_cast<int>(p.axis); }

std::optional<SetupError> check_line(const Setup& s, bool uses_root) {
  const auto extents = mesh::grid_extents(s.topology, s.params, 1);
  if (auto e = mesh::lattice_error(s, extents, 0, true)) return e;
  const std::int64_t L = extents[static_cast<std::size_t>(s.params.axis)];
  if (uses_root && (s.params.root < 0 || s.params.root >= L))
    return SetupError{"/params/root", "root " + std::to_string(s.params.root) + " is not a coordinate of a line of " +
                                          std::to_string(L) + " nodes along axis " + std::to_string(s.params.axis)};
  return check_block(s);
}

/// exchange.grid and exchange.grid_phased: a block, on a 3-D grid (emulated where N = q^3).
std::optional<SetupError> check_exchange_grid(const Setup& s) {
  if (auto e = check_block(s)) return e;
  return mesh::lattice_error(s, mesh::grid_extents(s.topology, s.params, 3), 0, false);
}

/// A prediction of the given terms (and flops), with the folded ring's relation on one port.
Prediction ring_prediction(const Setup& s, const RowTerms& t, std::int64_t flops, bool folded, std::string source) {
  Prediction pr;
  take_terms(pr, t);
  pr.flops = flops;
  pr.source = std::move(source);
  const Lattice lat = lattice_of(s.topology, s.params);
  if (folded && lat.ring_hops(axis_of(s.params)) == 2 && s.machine.ports.kind != PortKind::all)
    pr.relation = Relation::lower_bound;
  // An emulated grid (Gao Lemma 4): the virtual lines share the target's links, which the terms
  // leave out.
  if (lat.emulated()) pr.relation = Relation::lower_bound;
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

// --- broadcast.pipe, broadcast.split ---------------------------------------------------------

/// The three broadcasts of a line: FOH's linear pipeline, split ring and tree.
enum class Shape { pipe, split, tree };

Task<> broadcast_line(Node& self, Params p, Shape shape) {
  const Lattice lat = lattice_of(self.topology(), p);
  const int a = axis_of(p);
  const NodeId root = lat.line_node(self.id(), a, p.root);
  Buffer msg;
  if (self.id() == root) msg = Buffer::make(p.M, self.data_mode(), [&](std::int64_t i) { return value(root, p.M, i); });
  if (shape == Shape::tree) {
    self.set_result(co_await mesh::line_tree_broadcast(self, lat, a, p.root, p.M, std::move(msg)));
  } else {
    self.set_result(co_await mesh::line_broadcast(self, lat, a, p.root, p.M, std::move(msg), shape == Shape::split));
  }
}

Prediction predict_broadcast_line(const Setup& s, bool split) {
  const Lattice lat = lattice_of(s.topology, s.params);
  const mesh::Arms arms = mesh::broadcast_hops(lat, axis_of(s.params), s.params.root, split);
  Prediction pr = ring_prediction(s, mesh::broadcast_terms(s.machine, s.params.M, s.params.B, arms), 0, false,
                                  split ? "FOH App. A eq. (A.3), the split ring" : "FOH §3 eq. (2), a linear pipeline");
  return pr;
}

Prediction predict_broadcast_tree(const Setup& s) {
  const Lattice lat = lattice_of(s.topology, s.params);
  const int a = axis_of(s.params);
  Prediction pr =
      ring_prediction(s, mesh::tree_broadcast_terms(s.machine, lat, a, s.params.root, s.params.M, s.params.B), 0, false,
                      "FOH App. A eq. (A.1)-(A.2), the tree: a binomial tree of whole messages");
  // Off the cube the tree's edges are routes whose relays share ports with the relay's own sends.
  if (lat.embed() != mesh::Embed::cube && lat.ring_hops(a) > 1 && lat.extent(a) > 2)
    pr.relation = Relation::lower_bound;
  return pr;
}

Verdict verify_broadcast_line(const Setup& s, const std::vector<Buffer>& results) {
  const Lattice lat = lattice_of(s.topology, s.params);
  return verify_each(
      s, results, [&](NodeId) { return s.params.M; },
      [&](NodeId x, std::int64_t i) {
        return value(lat.line_node(x, axis_of(s.params), s.params.root), s.params.M, i);
      });
}

// --- shift.ring ---------------------------------------------------------------------------

Task<> shift_ring(Node& self, Params p) {
  const Lattice lat = lattice_of(self.topology(), p);
  Buffer mine = Buffer::make(p.M, self.data_mode(), [&](std::int64_t i) { return value(self.id(), p.M, i); });
  self.set_result(co_await mesh::ring_shift(self, lat, axis_of(p), std::move(mine)));
}

Prediction predict_shift_ring(const Setup& s) {
  const Lattice lat = lattice_of(s.topology, s.params);
  return ring_prediction(s, mesh::shift_terms(lat, axis_of(s.params), s.params.M, s.params.B), 0, true,
                         "FOH §3 eq. (3), the roll: one message over the ring edge");
}

Verdict verify_shift_ring(const Setup& s, const std::vector<Buffer>& results) {
  const Lattice lat = lattice_of(s.topology, s.params);
  const int a = axis_of(s.params);
  return verify_each(
      s, results, [&](NodeId) { return s.params.M; },
      [&](NodeId x, std::int64_t i) { return value(lat.ring_node(x, a, lat.ring_pos(x, a) - 1), s.params.M, i); });
}

// --- allgather.ring -------------------------------------------------------------------------

Task<> allgather_ring(Node& self, Params p) {
  const Lattice lat = lattice_of(self.topology(), p);
  Buffer mine = Buffer::make(p.M, self.data_mode(), [&](std::int64_t i) { return value(self.id(), p.M, i); });
  self.set_result(co_await mesh::ring_allgather(self, lat, axis_of(p), std::move(mine)));
}

Prediction predict_allgather_ring(const Setup& s) {
  const Lattice lat = lattice_of(s.topology, s.params);
  return ring_prediction(s, mesh::ring_steps_terms(lat, axis_of(s.params), s.params.M, s.params.B), 0, true,
                         "Gao §3 Complete-Broadcast on a ring: L - 1 steps");
}

Verdict verify_allgather_ring(const Setup& s, const std::vector<Buffer>& results) {
  const Lattice lat = lattice_of(s.topology, s.params);
  const int a = axis_of(s.params);
  const std::int64_t M = s.params.M;
  return verify_each(
      s, results, [&](NodeId) { return lat.extent(a) * M; },
      [&](NodeId x, std::int64_t i) { return value(lat.line_node(x, a, i / M), M, i % M); });
}

// --- reduce_scatter.ring --------------------------------------------------------------------

/// Node x's block for the node at coordinate c of its line: small integers, so sums are exact.
Element partial(NodeId x, std::int64_t c, std::int64_t i) { return static_cast<Element>((x * 7 + c * 3 + i) % 11); }

Task<> reduce_scatter_ring(Node& self, Params p) {
  const Lattice lat = lattice_of(self.topology(), p);
  const int a = axis_of(p);
  const std::int64_t L = lat.extent(a), x = self.id();
  Buffer blocks = Buffer::make(L * p.M, self.data_mode(), [&](std::int64_t i) { return partial(x, i / p.M, i % p.M); });
  self.set_result(co_await mesh::ring_reduce_scatter(self, lat, a, p.M, std::move(blocks)));
}

Prediction predict_reduce_scatter_ring(const Setup& s) {
  const Lattice lat = lattice_of(s.topology, s.params);
  const int a = axis_of(s.params);
  return ring_prediction(s, mesh::ring_steps_terms(lat, a, s.params.M, s.params.B), (lat.extent(a) - 1) * s.params.M,
                         true, "Gao §4 Prop. 1, Limited-Histogramming on a ring: L - 1 steps of M and M additions");
}

Verdict verify_reduce_scatter_ring(const Setup& s, const std::vector<Buffer>& results) {
  const Lattice lat = lattice_of(s.topology, s.params);
  const int a = axis_of(s.params);
  return verify_each(
      s, results, [&](NodeId) { return s.params.M; },
      [&](NodeId x, std::int64_t i) {
        Element sum = 0;
        for (std::int64_t c = 0; c < lat.extent(a); ++c) sum += partial(lat.line_node(x, a, c), lat.coord(x, a), i);
        return sum;
      });
}

// --- exchange.grid ----------------------------------------------------------------------------

/// One step of token movement on the grid (Gao Lemma 4's unit): every node sends a block of M to
/// each of its 2 d ring neighbours (both ways along each axis) and receives theirs, all at once.
Lattice grid3_of(const Topology& t, const Params& p) { return Lattice(t, mesh::grid_extents(t, p, 3)); }

Task<> exchange_grid(Node& self, Params p) {
  const Lattice lat = grid3_of(self.topology(), p);
  const NodeId x = self.id();
  Buffer mine = Buffer::make(p.M, self.data_mode(), [&](std::int64_t i) { return value(x, p.M, i); });
  std::vector<Request> sends, recvs;
  for (int a = 0; a < lat.dims(); ++a) {
    if (lat.extent(a) == 1) continue;
    const std::int64_t q = lat.ring_pos(x, a);
    for (int dir : {1, -1}) {
      const int tag = 2 * a + (dir > 0 ? 0 : 1);
      sends.push_back(self.start(self.send_to(lat.ring_node(x, a, q + dir), mine, tag)));
      recvs.push_back(self.start(self.recv_from(lat.ring_node(x, a, q - dir), tag)));
    }
  }
  for (Request& r : sends) co_await r;
  Buffer got;
  for (Request& r : recvs) got.append(co_await r);
  self.set_result(std::move(got));
}

Prediction predict_exchange_grid(const Setup& s) {
  const Lattice lat = grid3_of(s.topology, s.params);
  RowTerms worst;
  for (int a = 0; a < lat.dims(); ++a) {
    int h = 0;
    for (std::int64_t q = 0; q < lat.extent(a); ++q) h = std::max(h, lat.edge_hops(a, q));
    const RowTerms t = mesh::route_terms(s.params.M, s.params.B, h);
    if (mesh::terms_time(s.machine, t) > mesh::terms_time(s.machine, worst)) worst = t;
  }
  Prediction pr;
  take_terms(pr, worst);
  pr.source = "Gao Lemma 4: one step of token movement (the longest route, no contention)";
  pr.relation = Relation::lower_bound;
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

Verdict verify_exchange_grid(const Setup& s, const std::vector<Buffer>& results) {
  const Lattice lat = grid3_of(s.topology, s.params);
  const std::int64_t M = s.params.M;
  std::int64_t blocks = 0;
  for (int a = 0; a < lat.dims(); ++a) blocks += lat.extent(a) > 1 ? 2 : 0;
  return verify_each(
      s, results, [&](NodeId) { return blocks * M; },
      [&](NodeId x, std::int64_t i) {
        std::int64_t k = i / M;
        for (int a = 0; a < lat.dims(); ++a) {
          if (lat.extent(a) == 1) continue;
          if (k < 2) return value(lat.ring_node(x, a, lat.ring_pos(x, a) - (k == 0 ? 1 : -1)), M, i % M);
          k -= 2;
        }
        return Element{-1};
      });
}

// --- exchange.grid_phased ----------------------------------------------------------------------

/// Gao's own schedule of one step of token movement (Lemma 4's proof): the 2d moves of every node
/// (a move: along axis a, direction dir) in groups run one after another, each group's moves all at
/// once. A node starts a group when its sends of the group before have left and its receives have
/// arrived.
///  - A ring (Construction A, the identity map z || y || x): six groups, (z,+), (z,-), (y,+), (y,-),
///    (x,+), (x,-). Group (a, dir) holds axis a's moves in direction dir that do not wrap (the top
///    axis: all of them; they run dir's way round the ring, p^(a/3) hops) and axis a - 1's moves in
///    direction dir that wrap (they run the other way round, (p^(1/3) - 1) p^((a-1)/3) hops, on the
///    links the first kind leaves free). Gao's count, 2p^(2/3) + 2p^(1/3) + 2, is the sum of the
///    groups' longest series: p^(2/3) twice, p^(1/3) twice, 1 twice ("when one keeps track of the
///    details"; his "six directions of the 3-D mesh one by one" with each direction's wraps in its
///    own group would take 4p^(2/3) - 2).
///  - A 2-D target with a 3-D grid (Construction B): two groups, x and y at once (p^(1/6)), then
///    z (2p^(1/6)): 3p^(1/6).
///  - A grid that is not emulated: the 2d directions one by one, one hop each.
int exchange_groups(const Lattice& lat) {
  if (!lat.emulated()) return 2 * lat.dims();
  return lat.topology().dim() == 2 && lat.dims() == 3 ? 2 : 2 * lat.dims();
}

/// The group (0-based, in running order) of node x's move along axis a in direction dir.
int exchange_group(const Lattice& lat, NodeId x, int a, int dir) {
  const int d = dir > 0 ? 0 : 1;
  if (!lat.emulated()) return 2 * a + d;
  if (lat.topology().dim() == 2 && lat.dims() == 3) return a == 2 ? 1 : 0;
  int top = lat.dims() - 1;
  while (top > 0 && lat.extent(top) == 1) --top;
  const std::int64_t q = lat.ring_pos(x, a);
  const bool wraps = dir > 0 ? q == lat.extent(a) - 1 : q == 0;
  const int owner = wraps && a < top ? a + 1 : a;
  return 2 * (top - owner) + d;
}

/// Each group's longest route (hops), found on the lines through node 0: a move's group and route
/// depend only on its axis, direction and coordinate (every line has the same, by translation).
std::vector<std::int64_t> exchange_group_hops(const Lattice& lat) {
  std::vector<std::int64_t> longest(static_cast<std::size_t>(exchange_groups(lat)), 0);
  for (int a = 0; a < lat.dims(); ++a) {
    if (lat.extent(a) == 1) continue;
    for (std::int64_t q = 0; q < lat.extent(a); ++q)
      for (int dir : {1, -1}) {
        auto& h = longest[static_cast<std::size_t>(exchange_group(lat, lat.ring_node(0, a, q), a, dir))];
        h = std::max<std::int64_t>(h, lat.edge_hops(a, dir > 0 ? q : q - 1));
      }
  }
  return longest;
}

/// The groups run on a common clock: Gao's steps of token movement are synchronous, and group g
/// starts when the groups before it have had their longest series' time. A node that has done its
/// own moves early waits for it (as transpose.mpt waits for its cycle boundaries): otherwise it
/// starts the next group while the engine still relays the group before over its links, which
/// costs a step more at p = 512 and 4096 on the ring.
Task<> exchange_grid_phased(Node& self, Params p) {
  const Lattice lat = grid3_of(self.topology(), p);
  const NodeId x = self.id();
  const std::vector<std::int64_t> hops = exchange_group_hops(lat);
  Buffer mine = Buffer::make(p.M, self.data_mode(), [&](std::int64_t i) { return value(x, p.M, i); });
  std::vector<Buffer> got(static_cast<std::size_t>(2 * lat.dims()));
  Time start{};
  for (int g = 0; g < exchange_groups(lat); ++g) {
    if (self.now() < start) co_await self.delay(start - self.now());
    start = start + mesh::terms_time(self.machine(),
                                     mesh::route_terms(p.M, self.packet_elements(), hops[static_cast<std::size_t>(g)]));
    std::vector<Request> sends, recvs;
    std::vector<std::size_t> slots;
    for (int a = 0; a < lat.dims(); ++a) {
      if (lat.extent(a) == 1) continue;
      const std::int64_t q = lat.ring_pos(x, a);
      for (int dir : {1, -1}) {
        const int tag = 2 * a + (dir > 0 ? 0 : 1);
        if (exchange_group(lat, x, a, dir) == g)
          sends.push_back(self.start(self.send_to(lat.ring_node(x, a, q + dir), mine, tag)));
        const NodeId from = lat.ring_node(x, a, q - dir);
        if (exchange_group(lat, from, a, dir) == g) {
          recvs.push_back(self.start(self.recv_from(from, tag)));
          slots.push_back(static_cast<std::size_t>(tag));
        }
      }
    }
    for (Request& r : sends) co_await r;
    for (std::size_t i = 0; i < recvs.size(); ++i) {
      Request& r = recvs[i];
      got[slots[i]] = co_await r;
    }
  }
  Buffer all;
  for (int a = 0; a < lat.dims(); ++a) {
    if (lat.extent(a) == 1) continue;
    all.append(std::move(got[static_cast<std::size_t>(2 * a)]));
    all.append(std::move(got[static_cast<std::size_t>(2 * a + 1)]));
  }
  self.set_result(std::move(all));
}

Prediction predict_exchange_grid_phased(const Setup& s) {
  const Lattice lat = grid3_of(s.topology, s.params);
  RowTerms sum;
  for (std::int64_t h : exchange_group_hops(lat)) sum += mesh::route_terms(s.params.M, s.params.B, h);
  Prediction pr;
  take_terms(pr, sum);
  pr.source =
      "Gao Lemma 4's proof: the groups of moves one after another, each its longest series (Construction A: "
      "2p^(2/3) + 2p^(1/3) + 2; B: 3p^(1/6))";
  pr.relation = Relation::lower_bound;
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

const char* const kRingRelation = "exact on tori and cubes; on a mesh (folded ring) exact, lower bound on one port";

/// The memory models (docs/reliability.md "Budgets"), measured on a 64 x 64 torus, M = 1024, data
/// mode: the pipelined broadcast leaves the message on every node, about 8 bytes an element of
/// N M (36.3 MiB with the engine's state); the grid exchange holds a block from each neighbour
/// beside its own, about 68 bytes an element of N M (288 MiB).
std::int64_t pipe_memory(const Setup& s) { return model_bytes(s, {1024, 8}, block_elements(s)); }
std::int64_t grid_exchange_memory(const Setup& s) { return model_bytes(s, {1024, 68}, block_elements(s)); }

const Registration kRegistrationCollectives{[](Registry& r) {
  const std::vector<std::string> line = {"M", "B", "axis", "grid"}, rooted = {"root", "M", "B", "axis", "grid"};
  r.add({.name = "broadcast.pipe",
         .summary =
             "one-to-all broadcast along every line of an axis: a linear pipeline of packets (one way round a ring)",
         .source = "FOH §3 eq. (2)",
         .params = rooted,
         .required = {"M"},
         .check = [](const Setup& s) { return check_line(s, true); },
         .process = [](Node& self, Params p) { return broadcast_line(self, std::move(p), Shape::pipe); },
         .predict = [](const Setup& s) { return predict_broadcast_line(s, false); },
         .verify = verify_broadcast_line,
         .memory = pipe_memory,
         .one_port = {.row = "flow shop of ceil(M/B) packets over L - 1 hops (mesh: two arms, root alternating)",
                      .relation = "exact"},
         .all_port = {.row = "the same, the mesh's two arms at once", .relation = "exact"}});
  r.add({.name = "broadcast.tree",
         .summary = "one-to-all broadcast along every line of an axis: a binomial tree of whole messages (the "
                    "subcube's SBT on a cube)",
         .source = "FOH App. A eq. (A.1)-(A.2)",
         .params = rooted,
         .required = {"M"},
         .check = [](const Setup& s) { return check_line(s, true); },
         .process = [](Node& self, Params p) { return broadcast_line(self, std::move(p), Shape::tree); },
         .predict = predict_broadcast_tree,
         .verify = verify_broadcast_line,
         .one_port = {.row = "the latest arrival over the tree, each node's sends one after the other",
                      .relation = "exact on cubes and tori; lower bound on meshes and emulated grids"},
         .all_port = {.row = "the same; on a cube a node's sends at once",
                      .relation = "exact on cubes and tori; lower bound on meshes and emulated grids"}});
  r.add({.name = "broadcast.split",
         .summary = "one-to-all broadcast along every line of an axis: the split ring, packets both ways round",
         .source = "FOH App. A eq. (A.3)",
         .params = rooted,
         .required = {"M"},
         .check = [](const Setup& s) { return check_line(s, true); },
         .process = [](Node& self, Params p) { return broadcast_line(self, std::move(p), Shape::split); },
         .predict = [](const Setup& s) { return predict_broadcast_line(s, true); },
         .verify = verify_broadcast_line,
         .one_port = {.row = "two arms of ceil((L-1)/2) and floor((L-1)/2) hops, the root alternating",
                      .relation = "exact"},
         .all_port = {.row = "two arms at once: flow shop over ceil((L-1)/2) hops", .relation = "exact"}});
  r.add({.name = "shift.ring",
         .summary = "roll by one along every line of an axis: each block to the ring successor",
         .source = "FOH §3 eq. (3)",
         .params = line,
         .required = {"M"},
         .check = [](const Setup& s) { return check_line(s, false); },
         .process = shift_ring,
         .predict = predict_shift_ring,
         .verify = verify_shift_ring,
         .one_port = {.row = "one message of M over the ring edge (two hops on a folded mesh line)",
                      .relation = kRingRelation},
         .all_port = {.row = "the same", .relation = kRingRelation}});
  r.add({.name = "allgather.ring",
         .summary = "all-to-all broadcast along every line of an axis: Complete-Broadcast round the ring",
         .source = "Gao §3 (Complete-Broadcast; Corollaries 1-2)",
         .params = line,
         .required = {"M"},
         .check = [](const Setup& s) { return check_line(s, false); },
         .process = allgather_ring,
         .predict = predict_allgather_ring,
         .verify = verify_allgather_ring,
         .one_port = {.row = "L - 1 steps of one message of M", .relation = kRingRelation},
         .all_port = {.row = "the same", .relation = kRingRelation}});
  r.add({.name = "exchange.grid",
         .summary = "one step of token movement: each node's block to all 2d grid neighbours at once (a 3-D grid "
                    "emulated where N = q^3)",
         .source = "Gao Lemma 4 (the unit step of the emulation)",
         .params = {"M", "B", "grid"},
         .required = {"M"},
         .check = check_exchange_grid,
         .process = exchange_grid,
         .predict = predict_exchange_grid,
         .verify = verify_exchange_grid,
         .memory = grid_exchange_memory,
         .one_port = {.row = "the longest ring edge's route, no contention", .relation = "lower bound"},
         .all_port = {.row = "the same", .relation = "lower bound"}});
  r.add({.name = "exchange.grid_phased",
         .summary = "one step of token movement as Gao emulates it: each node's block to all 2d grid neighbours, the "
                    "moves in groups one after another (Construction A: six, B: two)",
         .source = "Gao Lemma 4, proof (Constructions A and B)",
         .params = {"M", "B", "grid"},
         .required = {"M"},
         .check = check_exchange_grid,
         .process = exchange_grid_phased,
         .predict = predict_exchange_grid_phased,
         .verify = verify_exchange_grid,
         .one_port = {.row = "the sum over the groups of each group's longest route", .relation = "lower bound"},
         .all_port = {.row = "the same", .relation = "lower bound"}});
  r.add({.name = "reduce_scatter.ring",
         .summary = "all-to-all reduction along every line of an axis: Limited-Histogramming round the ring",
         .source = "Gao §4 Prop. 1 (Limited-Histogramming)",
         .params = line,
         .required = {"M"},
         .check = [](const Setup& s) { return check_line(s, false); },
         .process = reduce_scatter_ring,
         .predict = predict_reduce_scatter_ring,
         .verify = verify_reduce_scatter_ring,
         .one_port = {.row = "L - 1 steps of one message of M, then M additions", .relation = kRingRelation},
         .all_port = {.row = "the same", .relation = kRingRelation}});
}};

}  // namespace
}  // namespace cubesim
