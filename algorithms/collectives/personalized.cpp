// Personalized communication on the Boolean n-cube — Johnsson & Ho, TR-530 §4.3–4.5,
// Tables 3 and 4; TR-572 §3.1–3.2.
//
//  scatter.sbt    One-to-all personalized on the SBT.
//                 one-port: "scheduling all data for a subtree at once" (TR-572 §3): the root
//                 sends the 2^d blocks of its subtree over dimension d, for d = n-1 down to 0; a
//                 node reached over dimension l forwards the blocks of its subtrees over l-1,
//                 ..., 0. Table 3, SBT-p(1,1): (N-1)M, sum_{i<n} ceil(2^i M / B). Exact: every
//                 subtree finishes exactly when the root finishes its last send.
//                 all-port: SBT-p(n,1), reverse breadth-first (TR-572 §3.1): over each port the
//                 root sends one message per level of the subtree below, deepest first, and
//                 every node forwards each as it arrives. Table 3: NM/2,
//                 sum_{i<n} ceil(C(n-1,i) M / B). Exact.
//  scatter.sbnt, scatter.nrsbt  The same reverse breadth-first schedule on the SBnT and on n
//                 rotated SBTs (part j of every block on tree j). all-port: Table 3 SBnT-p(n,1),
//                 nRSBT-p(n,1): (1/n)(N-1)M, sum_{i=1}^{n} ceil(C(n,i) M / (nB)). nRSBT is exact
//                 when n divides M; SBnT's levels cannot split evenly over n ports, up to 1/3 above
//                 the row (n = 2); nRSBT with parts differing by one element within 0.40
//                 (n = 5, M = 7, B = 16), and with M < n (only M trees carry data) up to 2.37
//                 above (n = 7, M = 1). one-port: no table row; predicted as the root's messages
//                 back to back (every block leaves the root once), exact.
//  alltoall.sbt   All-to-all personalized by the standard exchange (§4.4): for each dimension d
//                 (n-1 down to 0) every node exchanges, with its neighbour across d, the N/2
//                 blocks whose destination lies on the other side, as one message. Table 4,
//                 SBT-p(1,N): element transfers (1/2) n N M, start-ups ceil(NM / 2B) n. Exact.
//                 No local copy time is charged (the paper leaves it out "for reasons of clarity";
//                 buffering with t_copy is the TR-572 §8.1 1-D transpose, a separate algorithm).
//  alltoall.sbnt, alltoall.nrsbt  N translated SBnTs / sets of n rotated SBTs, the edge into a
//                 node carrying the parts for its whole subtree (TR-572 §3.2). all-port: SBnT by
//                 depth, nRSBT with tree j on dimension (n-1-s+j) mod n in step s. Table 4:
//                 SBnT-p(n,N): NM/2, sum_{i=1}^{n} ceil(sum_{j>=i} C(n,j) M/(nB)): the lockstep
//                 of TR-572 §3.2's code ("loop n times") with the blocks for depths >= i split
//                 evenly, A_i = sum_{j>=i} C(n,j)/n a port in step i. The SBnT splits the node set
//                 only "approximately" evenly (n = 2: subtrees of 2 and 1 nodes), so its busiest
//                 port carries V_i > A_i blocks (n = 2: 2, 1 for 1.5, 0.5; n = 3: 3, 2, 1 for
//                 7/3, 4/3, 1/3), a real limit of the row: simulated/predicted <= max(sum V_i /
//                 (N/2), sum ceil(V_i M/B) / sum ceil(A_i M/B)) = max(3/2, 5/3) at n = 2, 3 (5
//                 start-ups for 3 at n = 2, M/B just above 1), at most 3/2 for n = 4..12
//                 (computed from the trees). nRSBT-p(n,N): NM/2, ceil(NM/(2nB)) n, exact when
//                 n divides M, within 0.69 when the parts differ by one element (n = 6, M = 7,
//                 B = 3), and up to 5.4 above with M < n (n = 7, M = 1: one tree carries
//                 everything). one-port: no table row; predicted as the cyclic schedule's steps
//                 in lockstep, exact.
//  sometoall.sbnt, alltosome.sbnt  TR-572 §3.3, Table 3's n-port row: the k splitting
//                 (accumulation) steps in each k-subcube with every step's data split evenly over
//                 k ports, and the all-to-all inside each l-subcube on l ports. TR-572 §3.2 names
//                 the trees for both: "spanning balanced n-trees, or rotated spanning binomial
//                 trees"; we use the rotated SBTs, phased (tree j on dimension (k-1-s+j) mod k in
//                 step s), whose every step carries exactly 1/k of the one-port step: splitting
//                 step s moves 2^(k-1-s) groups of 2^l M elements, part j of each on tree j; the
//                 all-to-all is alltoall.nrsbt's phased schedule in the l-subcube. Table 3 n-port:
//                 (PQ/2^(k+l+1) + (1/k) sum_{i<k} PQ/2^(k+l-i)) t_c
//                 + (l ceil(PQ/(l B 2^(k+l+1))) + sum_{i<k} ceil(PQ/(k B 2^(k+l-i)))) tau,
//                 PQ = 2^l 2^(k+l) M. Exact over the test grid when the row's even parts are read as the
//                 largest part: ceil(M/l) of each block in the all-to-all, ceil(2^l M/k) of
//                 each group in the splitting (the printed row when l | M and k | 2^l M).
//                 One-port machines run sometoall.sbt's (alltosome.sbt's) one-port schedule.
#include <algorithm>
#include <bit>
#include <cmath>

#include "algorithms/collectives/tree_routing.hpp"
#include "algorithms/collectives/verify.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/rows.hpp"

namespace cubesim {
namespace {

Element scatter_value(NodeId dest, std::int64_t M, std::int64_t i) { return static_cast<Element>(dest * M + i); }

Task<> scatter_sbt_one_port(Node& self, Params p) {
  const NodeId r = self.id() ^ p.root;
  const std::int64_t M = p.M;
  Buffer data;  // blocks for relative addresses [r, r + 2^top), in that order
  int top = self.topology().dim();
  if (r == 0) {
    data = Buffer::make(self.size() * M, self.data_mode(),
                        [&](std::int64_t k) { return scatter_value((k / M) ^ p.root, M, k % M); });
  } else {
    top = lowest_one(r);
    data = co_await self.recv(top);
  }
  for (int d = top - 1; d >= 0; --d) {
    const std::int64_t span = (std::int64_t{1} << d) * M;
    co_await self.send(d, data.slice(span, span));  // the subtree of r + 2^d
  }
  self.set_result(data.slice(0, M));
}

Prediction predict_scatter_sbt_one_port(const Setup& s) {
  return predict_sbt_doubling(s, "TR-530 Table 3, SBT-p(1,1)");
}

/// The root's N blocks of M elements, by destination node.
Buffer scatter_input(const Node& self, std::int64_t M) {
  return Buffer::make(self.size() * M, self.data_mode(),
                      [&](std::int64_t k) { return scatter_value(k / M, M, k % M); });
}

/// Reverse-breadth-first scatter on a tree family (TR-572 §3.1, tree_routing.hpp).
Task<> scatter_trees(Node& self, Params p, routing::Family f) {
  auto plan = routing::plan(f, routing::Schedule::depth, self.topology().dim(), true);
  Buffer all = (self.id() ^ p.root) == 0 ? scatter_input(self, p.M) : Buffer{};
  self.set_result(co_await routing::scatter_rbfs(self, p.root, p.M, std::move(all), plan));
}

Task<> scatter_sbt(Node& self, Params p) {
  if (self.machine().ports.kind == PortKind::all) return scatter_trees(self, p, routing::Family::sbt);
  return scatter_sbt_one_port(self, p);
}
Task<> scatter_sbnt(Node& self, Params p) { return scatter_trees(self, p, routing::Family::sbnt); }
Task<> scatter_nrsbt(Node& self, Params p) { return scatter_trees(self, p, routing::Family::nrsbt); }

Prediction predict_scatter_sbt(const Setup& s) {
  if (s.machine.ports.kind != PortKind::all) return predict_scatter_sbt_one_port(s);
  // SBT-p(n,1): the root's port n-1 carries the N/2 blocks of its largest subtree, level by
  // level, deepest first: C(n-1, i) blocks for level i+1. Exact.
  return predict_sbt_levels(s, "TR-530 Table 3, SBT-p(n,1)");
}

/// Table 3, SBnT-p(n,1) and nRSBT-p(n,1): (1/n)(N-1)M, sum_{i=1}^{n} ceil(C(n,i) M / (nB)). On
/// one port TR-530 gives no row for these trees: every block leaves the root once, one message
/// per level and subtree, so we predict the root's messages back to back.
Prediction predict_scatter_trees(const Setup& s, routing::Family f) {
  const std::string name = routing::family_name(f);
  const std::int64_t n = s.topology.dim(), M = s.params.M, B = s.params.B;
  Prediction pr;
  if (s.machine.ports.kind != PortKind::all) {
    const routing::Terms t = routing::root_messages_rbfs(f, static_cast<int>(n), M, B);
    pr.source = "TR-572 §3.1 " + name + " reverse breadth-first on one port (no table row): the root's messages";
    pr.element_transfers = t.elements;
    pr.startups = t.startups;
    pr.msg_startups = t.messages;
  } else {
    pr = predict_balanced_levels(s, "TR-530 Table 3, " + name + "-p(n,1)");
    if (n > 0 && !(f == routing::Family::nrsbt && M % n == 0)) {
      pr.relation = Relation::approx;
      pr.tolerance = f == routing::Family::sbnt ? 0.35 : (M < n ? 2.5 : 0.45);
    }
  }
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

Verdict verify_scatter(const Setup& s, const std::vector<Buffer>& results) {
  const std::int64_t M = s.params.M;
  return verify_each(
      s, results, [&](NodeId) { return M; }, [&](NodeId x, std::int64_t i) { return scatter_value(x, M, i); });
}

Element alltoall_value(NodeId src, NodeId dst, NodeId N, std::int64_t M, std::int64_t i) {
  return static_cast<Element>((src * N + dst) * M + i);
}

/// The standard exchange (TR-572 §3.2, "Transposition by the Standard Exchange Algorithm")
/// inside this node's subcube of dimensions dims-1 .. 0 (routing::standard_exchange).
Task<Buffer> standard_exchange(Node& self, Buffer slots, int dims, std::int64_t M) {
  return routing::standard_exchange(self, M, std::move(slots), routing::SubCube::whole(dims));
}

Task<> alltoall_sbt(Node& self, Params p) {
  const NodeId N = self.size(), x = self.id();
  const std::int64_t M = p.M;
  Buffer slots =
      Buffer::make(N * M, self.data_mode(), [&](std::int64_t j) { return alltoall_value(x, j / M, N, M, j % M); });
  self.set_result(co_await standard_exchange(self, std::move(slots), self.topology().dim(), M));
}

/// The schedule of the step-form all-to-alls (alltoall_trees and its step program, from one place).
routing::Schedule alltoall_trees_schedule(routing::Family f, bool all_port) {
  if (!all_port) return routing::Schedule::cyclic;
  return f == routing::Family::sbnt ? routing::Schedule::depth : routing::Schedule::phased;
}

/// Step-form all-to-all personalized on a tree family: the edge into q carries the parts for
/// q's whole subtree (TR-572 §3.2). all-port: SBnT by depth, nRSBT phased (tree j one dimension
/// per step, the n trees on n ports); one-port: the cyclic schedule.
Task<> alltoall_trees(Node& self, Params p, routing::Family f) {
  const routing::Schedule sch = alltoall_trees_schedule(f, self.machine().ports.kind == PortKind::all);
  // Timing mode needs only the subtrees' sizes (routing::plan_sizes); data mode their lists.
  auto plan = self.data_mode() ? routing::plan(f, sch, self.topology().dim(), true)
                               : routing::plan_sizes(f, sch, self.topology().dim());
  const NodeId N = self.size(), x = self.id();
  Buffer own = Buffer::make(N * p.M, self.data_mode(),
                            [&](std::int64_t j) { return alltoall_value(x, j / p.M, N, p.M, j % p.M); });
  self.set_result(co_await routing::alltoall(self, p.M, std::move(own), plan));
}
/// alltoall_trees in timing mode as a step program (routing::exchange_program): the schedule the
/// process picks, on the plan of sizes it uses there.
bool alltoall_program_for(const Setup& s) {
  return s.topology.kind() == Topology::Kind::hypercube &&
         (s.machine.ports.kind == PortKind::all || s.machine.ports.kind == PortKind::one);
}
std::unique_ptr<StepProgram> alltoall_trees_steps(const Setup& s, routing::Family f) {
  if (!alltoall_program_for(s)) return nullptr;
  const bool all_port = s.machine.ports.kind == PortKind::all;
  return routing::exchange_program(routing::plan_sizes(f, alltoall_trees_schedule(f, all_port), s.topology.dim()),
                                   s.params.M, true);
}
/// alltoall_trees_steps' part in the memory of its run: the plan of sizes (routing::plan_bytes).
std::optional<StepsMemory> alltoall_program_memory(const Setup& s, routing::Family f) {
  if (!alltoall_program_for(s)) return std::nullopt;
  return StepsMemory{.program_bytes = routing::plan_bytes(f, s.topology.dim())};
}
Task<> alltoall_sbnt(Node& self, Params p) { return alltoall_trees(self, p, routing::Family::sbnt); }
Task<> alltoall_nrsbt(Node& self, Params p) { return alltoall_trees(self, p, routing::Family::nrsbt); }

/// Table 4: SBnT-p(n,N): NM/2, sum_{i=1}^{n} ceil(sum_{j>=i} C(n,j) M/(nB)); nRSBT-p(n,N): NM/2,
/// ceil(NM/(2nB)) n. One port: no row; the cyclic schedule's steps in lockstep.
Prediction predict_alltoall_trees(const Setup& s, routing::Family f) {
  const std::string name = routing::family_name(f);
  const std::int64_t N = s.topology.size(), n = s.topology.dim(), M = s.params.M, B = s.params.B;
  Prediction pr;
  if (s.machine.ports.kind != PortKind::all) {
    const routing::Terms t = routing::lockstep_alltoall(f, routing::Schedule::cyclic, static_cast<int>(n), M, B);
    pr.source = "TR-572 §3.2 " + name + " on one port (no table row): the cyclic schedule's steps in lockstep";
    pr.element_transfers = t.elements;
    pr.startups = t.startups;
    pr.msg_startups = t.messages;
  } else if (f == routing::Family::sbnt) {
    pr.source = "TR-530 Table 4, SBnT-p(n,N)";
    pr.element_transfers = N * M / 2;
    for (int i = 1; i <= n; ++i) {
      std::int64_t c = 0;
      for (int j = i; j <= n; ++j) c += binomial(static_cast<int>(n), j);
      pr.startups += ceil_div(c * M, n * B);
    }
    pr.msg_startups = n;
    pr.b_opt = static_cast<double>((N - 1) * M) / static_cast<double>(std::max<std::int64_t>(n, 1));
    pr.min_startups = static_cast<double>(n);
    // The row splits every step's blocks evenly over the n ports; the SBnT's busiest port
    // carries more (see the file's head): at most 5/3 of the row (n = 2, 3), a bound derived
    // from the tree, not fitted to runs.
    pr.relation = Relation::approx;
    pr.tolerance = 2.0 / 3.0;
  } else {
    pr.source = "TR-530 Table 4, nRSBT-p(n,N)";
    pr.element_transfers = N * M / 2;
    pr.startups = n > 0 ? ceil_div(N * M, 2 * n * B) * n : 0;
    pr.msg_startups = n;
    pr.b_opt = static_cast<double>(N * M) / static_cast<double>(2 * std::max<std::int64_t>(n, 1));
    pr.min_startups = static_cast<double>(n);
    if (n > 0 && M % n != 0) {
      pr.relation = Relation::approx;
      pr.tolerance = M < n ? 6.0 : 0.75;
    }
  }
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

/// Some-to-all personalized (TR-572 §3.3): the 2^l nodes x < 2^l (l = n - k) each send M
/// elements to every node. By Theorem 1 the splitting goes first: k steps of one-to-all
/// personalized communication across dimensions n-1 down to l, in which every holder sends the
/// half of its data whose destinations lie across the dimension; then the standard exchange
/// (all-to-all personalized) inside each l-subcube across dimensions l-1 down to 0. Node y ends
/// with the 2^l blocks from the sources in order.
Element some_value(NodeId src, NodeId dst, NodeId N, std::int64_t M, std::int64_t i) {
  return static_cast<Element>((src * N + dst) * M + i);
}

Task<> sometoall_sbt(Node& self, Params p) {
  const NodeId N = self.size(), x = self.id();
  const int n = self.topology().dim(), l = n - static_cast<int>(p.k);
  const NodeId S = NodeId{1} << l;  // sources 0 .. S-1
  const std::int64_t M = p.M;
  // A source's blocks by destination. Splitting across d = n-1 .. l: before the step across d a
  // holder (bits l..d zero) holds the blocks for the 2^(d+1) destinations that share its bits
  // above d and sends on the half whose bit d is set. Then node (t, u) holds from source u the
  // 2^l blocks for destinations (t, 0 .. 2^l - 1); the standard exchange inside the l-subcube
  // leaves slot v with the block from source v (routing::sometoall).
  Buffer mine;
  if (x < S)
    mine = Buffer::make(N * M, self.data_mode(), [&](std::int64_t j) { return some_value(x, j / M, N, M, j % M); });
  self.set_result(co_await routing::sometoall(self, M, std::move(mine), routing::SubCube::whole(n), l, 0, false));
}

/// TR-572 Table 3, one-port: T = (l PQ/2^(k+l+1) + sum_{i<k} PQ/2^(k+l-i)) t_c
/// + (l ceil(PQ/(B 2^(k+l+1))) + sum_{i<k} ceil(PQ/(B 2^(k+l-i)))) tau, with PQ = 2^l 2^(k+l) M
/// (every source sends M elements to each of the 2^(k+l) nodes). Exact.
Prediction predict_some_personalized(const Setup& s, const char* what) {
  const std::int64_t n = s.topology.dim(), k = s.params.k;
  Prediction pr;
  pr.source = std::string("TR-572 §3.3, Table 3 (one-port), ") + what;
  take_terms(pr, sometoall_terms(s.params.M, static_cast<int>(k), static_cast<int>(n - k), s.params.B, false));
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

Verdict verify_sometoall(const Setup& s, const std::vector<Buffer>& results) {
  const NodeId N = s.topology.size(), S = NodeId{1} << (s.topology.dim() - s.params.k);
  const std::int64_t M = s.params.M;
  return verify_each(
      s, results, [&](NodeId) { return S * M; },
      [&](NodeId x, std::int64_t j) { return some_value(j / M, x, N, M, j % M); });
}

/// All-to-some personalized (TR-572 §3.3), the reverse: every node sends M elements to each of
/// the 2^l nodes x < 2^l. By Theorem 1 the all-to-all exchange goes first (inside each
/// l-subcube, dimensions l-1 .. 0), the accumulation last (across dimensions l .. n-1, each
/// node with the dimension's bit set sending everything it holds to its neighbour).
Task<> alltosome_sbt(Node& self, Params p) {
  const NodeId N = self.size(), x = self.id();
  const int n = self.topology().dim(), l = n - static_cast<int>(p.k);
  const NodeId S = NodeId{1} << l;
  const std::int64_t M = p.M;
  // Slot v: first this node's block for destination v; after the exchange, the block from source
  // (x's high bits, v) for destination (x's low bits).
  Buffer slots =
      Buffer::make(S * M, self.data_mode(), [&](std::int64_t j) { return some_value(x, j / M, N, M, j % M); });
  slots = co_await standard_exchange(self, std::move(slots), l, M);
  // Accumulation: the node holds the blocks from sources whose high bits run over the
  // dimensions already accumulated, ordered by source; across d = l .. n-1 the upper half sends.
  Buffer acc = std::move(slots);  // sources (high bits = x's, low = v), v ascending
  for (int d = l; d < n; ++d) {
    const NodeId bit = NodeId{1} << d;
    if ((x & ((bit << 1) - 1) & ~(S - 1)) == bit) {  // bit d set, bits l..d-1 clear
      co_await self.send(d, std::move(acc));
      acc = Buffer{};
      break;
    }
    if ((x & ((bit << 1) - 1) & ~(S - 1)) == 0) {  // receives the upper half's sources
      Buffer upper = co_await self.recv(d);
      acc.append(upper);
    }
  }
  if ((x & ~(S - 1)) != 0) acc = Buffer{};
  self.set_result(std::move(acc));
}

/// The all-to-all of the l-subcube (cube dimensions 0 .. l-1) on l ports: alltoall.nrsbt's
/// phased schedule. `slots`: 2^l blocks of M by destination; returns them by source.
Task<Buffer> subcube_alltoall_nport(Node& self, int l, std::int64_t M, Buffer slots) {
  if (l == 0) co_return slots;
  auto plan = routing::plan(routing::Family::nrsbt, routing::Schedule::phased, l, true);
  co_return co_await routing::alltoall(self, M, std::move(slots), plan, routing::SubCube::range(0, l));
}

Task<> sometoall_sbnt(Node& self, Params p) {
  if (self.machine().ports.kind != PortKind::all) return sometoall_sbt(self, std::move(p));
  return [](Node& self, Params p) -> Task<> {
    const NodeId N = self.size(), x = self.id();
    const int n = self.topology().dim(), k = static_cast<int>(p.k), l = n - k;
    const NodeId S = NodeId{1} << l;
    const std::int64_t M = p.M;
    Buffer mine;
    if (x < S)
      mine = Buffer::make(N * M, self.data_mode(), [&](std::int64_t j) { return some_value(x, j / M, N, M, j % M); });
    self.set_result(co_await routing::sometoall(self, M, std::move(mine), routing::SubCube::whole(n), l, 0, true));
  }(self, std::move(p));
}

Task<> alltosome_sbnt(Node& self, Params p) {
  if (self.machine().ports.kind != PortKind::all) return alltosome_sbt(self, std::move(p));
  return [](Node& self, Params p) -> Task<> {
    const NodeId N = self.size(), x = self.id();
    const int n = self.topology().dim(), k = static_cast<int>(p.k), l = n - k;
    const NodeId S = NodeId{1} << l;
    const std::int64_t M = p.M;
    Buffer slots =
        Buffer::make(S * M, self.data_mode(), [&](std::int64_t j) { return some_value(x, j / M, N, M, j % M); });
    // Slot v: the block from source (x's high bits, v) for destination (x's low bits).
    slots = co_await subcube_alltoall_nport(self, l, M, std::move(slots));
    if (k > 0)
      slots = co_await routing::accumulate_groups(self, S * M, std::move(slots), routing::SubCube::range(l, k), 0);
    if ((x & ~(S - 1)) != 0) slots = Buffer{};
    self.set_result(std::move(slots));
  }(self, std::move(p));
}

/// TR-572 Table 3, n-port row (the sources' ceilings as printed; with parts, the largest part).
Prediction predict_some_personalized_nport(const Setup& s, const char* what) {
  if (s.machine.ports.kind != PortKind::all) return predict_some_personalized(s, what);
  const std::int64_t n = s.topology.dim(), k = s.params.k;
  Prediction pr;
  pr.source = std::string("TR-572 §3.3, Table 3 (n-port), ") + what;
  take_terms(pr, sometoall_terms(s.params.M, static_cast<int>(k), static_cast<int>(n - k), s.params.B, true));
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

Verdict verify_alltosome(const Setup& s, const std::vector<Buffer>& results) {
  const NodeId N = s.topology.size(), S = NodeId{1} << (s.topology.dim() - s.params.k);
  const std::int64_t M = s.params.M;
  return verify_each(
      s, results, [&](NodeId x) { return x < S ? N * M : 0; },
      [&](NodeId x, std::int64_t j) { return some_value(j / M, x, N, M, j % M); });
}

Prediction predict_alltoall_sbt(const Setup& s) {
  const std::int64_t N = s.topology.size(), n = s.topology.dim(), M = s.params.M, B = s.params.B;
  Prediction pr;
  pr.source = "TR-530 Table 4, SBT-p(1,N)";
  pr.element_transfers = n * N * M / 2;
  pr.startups = n > 0 ? ceil_div(N * M, 2 * B) * n : 0;
  pr.msg_startups = n;
  pr.b_opt = static_cast<double>(N * M) / 2;
  pr.min_startups = static_cast<double>(n);
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

Verdict verify_alltoall(const Setup& s, const std::vector<Buffer>& results) {
  const NodeId N = s.topology.size();
  const std::int64_t M = s.params.M;
  return verify_each(
      s, results, [&](NodeId) { return N * M; },
      [&](NodeId x, std::int64_t j) { return alltoall_value(j / M, x, N, M, j % M); });
}

/// The memory models of personalized communication (docs/reliability.md "Budgets").
/// All-to-all: every node sends N blocks of M and receives N, N^2 M elements in all. The standard
/// exchange holds each block about once and a half (12 bytes an element) and little a node
/// (alltoall.sbt, 2^9 nodes, M = 64, data mode: 196 MiB; 2^14 nodes, timing: 2.4 KiB a node).
std::int64_t alltoall_exchange_memory(const Setup& s) {
  return model_bytes(s, {100.0 * s.topology.dim(), 12}, all_blocks_elements(s));
}
/// The n-tree routings hold every block as a message of its own on each of its hops at once,
/// about 60 bytes an element, and 900 bytes a node for each dimension (their strands and step
/// operations) (alltoall.nrsbt, 2^9 nodes, M = 64, data mode: 925 MiB; 2^12 nodes, timing: 19.5
/// KiB a node; 2^11 nodes, timing, 726 bytes a dimension with 96-byte operations and 605 with a
/// timing-mode plan of subtree sizes only, 2026-11-28, when the model went from 1.45 KiB to 900
/// bytes: it was 2.19 and then 2.05 times that peak; 2.05 then 2.14 times the 5.3 KiB a node there
/// once the step form reserved its operations, 2026-11-29, when it went to 800 bytes).
std::int64_t alltoall_trees_memory(const Setup& s) {
  return model_bytes(s, {800.0 * s.topology.dim(), 60}, all_blocks_elements(s));
}
/// One-to-all: the root's N blocks of M, split down the trees; a node holds what passes through
/// its subtree (scatter.sbt, 2^12 nodes, M = 64, data mode: 26 MiB with the engine's state).
std::int64_t scatter_memory(const Setup& s) { return model_bytes(s, {1024, 40}, block_elements(s)); }

/// Some-to-all and all-to-some: the 2^(n-k) senders (receivers) each exchange a block of M with
/// every node, N 2^(n-k) M elements in all, at about 12 bytes an element (alltosome.sbt and
/// sometoall.sbt, 2^9 nodes, k = 2, M = 64, data mode: 49.5 MiB).
std::int64_t some_memory(const Setup& s) {
  const int some = std::max(s.topology.dim() - static_cast<int>(s.params.k), 0);
  return model_bytes(s, {1024, 12}, block_elements(s) * std::ldexp(1.0, some));
}

const Registration kRegistrationPersonalized{[](Registry& r) {
  auto rooted = [](const Setup& s) { return check_cube_collective(s, true); };
  auto all = [](const Setup& s) { return check_cube_collective(s, false); };
  r.add({.name = "scatter.sbt",
         .summary = "one-to-all personalized on the SBT: all data for a subtree at once (one-port), deepest level "
                    "first (all-port)",
         .source = "TR-530 §4.3, Table 3 SBT-p(1,1) and SBT-p(n,1); TR-572 §3.1",
         .params = {"root", "M", "B"},
         .required = {"M"},
         .check = rooted,
         .process = scatter_sbt,
         .predict = predict_scatter_sbt,
         .verify = verify_scatter,
         .memory = scatter_memory,
         .one_port = {.row = "T3 SBT-p(1,1), a subtree's data at once", .relation = "exact"},
         .all_port = {.row = "T3 SBT-p(n,1), reverse breadth-first", .relation = "exact"}});
  r.add({.name = "scatter.sbnt",
         .summary = "one-to-all personalized on the spanning balanced n-tree, reverse breadth-first",
         .source = "TR-530 §4.3, Table 3 SBnT-p(n,1); TR-572 §3.1",
         .params = {"root", "M", "B"},
         .required = {"M"},
         .check = rooted,
         .process = scatter_sbnt,
         .predict = [](const Setup& s) { return predict_scatter_trees(s, routing::Family::sbnt); },
         .verify = verify_scatter,
         .memory = scatter_memory,
         .one_port = {.row = "none; derived: the root's messages back to back", .relation = "exact"},
         .all_port = {.row = "T3 SBnT-p(n,1), reverse breadth-first",
                      .relation = "approx <= 35 %",
                      .deviations = {{Relation::approx, 0.35, 0.333, "n=2 M=100 B=1"}}}});
  r.add({.name = "scatter.nrsbt",
         .summary = "one-to-all personalized on n rotated SBTs, reverse breadth-first",
         .source = "TR-530 §4.3, Table 3 nRSBT-p(n,1); TR-572 §3.1",
         .params = {"root", "M", "B"},
         .required = {"M"},
         .check = rooted,
         .process = scatter_nrsbt,
         .predict = [](const Setup& s) { return predict_scatter_trees(s, routing::Family::nrsbt); },
         .verify = verify_scatter,
         .memory = scatter_memory,
         .one_port = {.row = "none; derived as for scatter.sbnt", .relation = "exact"},
         .all_port = {.row = "T3 nRSBT-p(n,1)",
                      .relation = "exact when n divides M; approx <= 45 %; <= 250 % for M < n",
                      .deviations = {{Relation::approx, 0.45, 0.396, "n=5 M=7 B=16"},
                                     {Relation::approx, 2.5, 2.37, "n=7 M=1 B=1"}}}});
  auto some = [](const Setup& s) -> std::optional<SetupError> {
    if (auto e = check_cube_collective(s, false)) return e;
    if (s.params.k > s.topology.dim())
      return SetupError{"/params/k", "k = " + std::to_string(s.params.k) + " splitting steps exceed the cube's " +
                                         std::to_string(s.topology.dim()) + " dimensions"};
    return std::nullopt;
  };
  r.add({.name = "sometoall.sbt",
         .summary = "some-to-all personalized: the 2^(n-k) nodes below 2^(n-k) send to all, splitting first",
         .source = "TR-572 §3.3, Theorem 1, Table 3",
         .params = {"M", "B", "k"},
         .required = {"M", "k"},
         .check = some,
         .process = sometoall_sbt,
         .predict = [](const Setup& s) { return predict_some_personalized(s, "some-to-all, splitting first"); },
         .verify = verify_sometoall,
         .memory = some_memory,
         .one_port = {.row = "TR-572 T3 one-port, splitting first (Theorem 1)", .relation = "exact"},
         .all_port = {.row = "runs the one-port schedule", .relation = "exact"}});
  r.add({.name = "alltosome.sbt",
         .summary = "all-to-some personalized: all send to the 2^(n-k) nodes below 2^(n-k), accumulation last",
         .source = "TR-572 §3.3, Theorem 1, Table 3",
         .params = {"M", "B", "k"},
         .required = {"M", "k"},
         .check = some,
         .process = alltosome_sbt,
         .predict = [](const Setup& s) { return predict_some_personalized(s, "all-to-some, accumulation last"); },
         .verify = verify_alltosome,
         .memory = some_memory,
         .one_port = {.row = "TR-572 T3 one-port, accumulation last (Theorem 1)", .relation = "exact"},
         .all_port = {.row = "runs the one-port schedule", .relation = "exact"}});
  r.add({.name = "sometoall.sbnt",
         .summary = "some-to-all personalized on n ports: splitting over k ports, then the all-to-all on l ports",
         .source = "TR-572 §3.3, Theorem 1, Table 3 n-port row (rotated SBTs, TR-572 §3.2)",
         .params = {"M", "B", "k"},
         .required = {"M", "k"},
         .check = some,
         .process = sometoall_sbnt,
         .predict = [](const Setup& s) { return predict_some_personalized_nport(s, "some-to-all, splitting first"); },
         .verify = verify_sometoall,
         .memory = some_memory,
         .one_port = {.row = "runs sometoall.sbt (TR-572 T3 one-port)", .relation = "exact"},
         .all_port = {.row = "TR-572 T3 n-port, splitting first",
                      .relation = "exact (ceil(M/l) and ceil(2^l M/k) for the row's even parts)"}});
  r.add({.name = "alltosome.sbnt",
         .summary = "all-to-some personalized on n ports: the all-to-all on l ports, then accumulation over k ports",
         .source = "TR-572 §3.3, Theorem 1, Table 3 n-port row (rotated SBTs, TR-572 §3.2)",
         .params = {"M", "B", "k"},
         .required = {"M", "k"},
         .check = some,
         .process = alltosome_sbnt,
         .predict = [](const Setup& s) { return predict_some_personalized_nport(s, "all-to-some, accumulation last"); },
         .verify = verify_alltosome,
         .memory = some_memory,
         .one_port = {.row = "runs alltosome.sbt (TR-572 T3 one-port)", .relation = "exact"},
         .all_port = {.row = "TR-572 T3 n-port, accumulation last",
                      .relation = "exact (ceil(M/l) and ceil(2^l M/k) for the row's even parts)"}});
  r.add({.name = "alltoall.sbnt",
         .summary = "all-to-all personalized on N translated spanning balanced n-trees",
         .source = "TR-530 §4.4, Table 4 SBnT-p(n,N); TR-572 §3.2",
         .params = {"M", "B"},
         .required = {"M"},
         .check = all,
         .process = alltoall_sbnt,
         .predict = [](const Setup& s) { return predict_alltoall_trees(s, routing::Family::sbnt); },
         .verify = verify_alltoall,
         .memory = alltoall_trees_memory,
         .steps = [](const Setup& s) { return alltoall_trees_steps(s, routing::Family::sbnt); },
         .steps_memory = [](const Setup& s) { return alltoall_program_memory(s, routing::Family::sbnt); },
         .one_port = {.row = "none; derived: the cyclic schedule in lockstep", .relation = "exact"},
         .all_port = {.row = "T4 SBnT-p(n,N)",
                      .relation = "approx <= 2/3 (the SBnT's uneven ports: <= 5/3 of the row, n = 2, 3)",
                      .deviations = {{Relation::approx, 2.0 / 3.0, 0.542, "n=2 M=257 B=256"}}}});
  r.add({.name = "alltoall.nrsbt",
         .summary = "all-to-all personalized on N translated sets of n rotated SBTs",
         .source = "TR-530 §4.4, Table 4 nRSBT-p(n,N); TR-572 §3.2",
         .params = {"M", "B"},
         .required = {"M"},
         .check = all,
         .process = alltoall_nrsbt,
         .predict = [](const Setup& s) { return predict_alltoall_trees(s, routing::Family::nrsbt); },
         .verify = verify_alltoall,
         .memory = alltoall_trees_memory,
         .steps = [](const Setup& s) { return alltoall_trees_steps(s, routing::Family::nrsbt); },
         .steps_memory = [](const Setup& s) { return alltoall_program_memory(s, routing::Family::nrsbt); },
         .one_port = {.row = "none; derived as for alltoall.sbnt", .relation = "exact"},
         .all_port = {.row = "T4 nRSBT-p(n,N), n phased trees",
                      .relation = "exact when n divides M; approx <= 75 %; <= 600 % for M < n",
                      .deviations = {{Relation::approx, 0.75, 0.692, "n=6 M=7 B=3"},
                                     {Relation::approx, 6, 5.4, "n=7 M=1 B=1"}}}});
  r.add({.name = "alltoall.sbt",
         .summary = "all-to-all personalized communication by the standard exchange",
         .source = "TR-530 §4.4, Table 4 SBT-p(1,N)",
         .params = {"M", "B"},
         .required = {"M"},
         .check = all,
         .process = alltoall_sbt,
         .predict = predict_alltoall_sbt,
         .verify = verify_alltoall,
         .memory = alltoall_exchange_memory,
         .one_port = {.row = "T4 SBT-p(1,N), standard exchange", .relation = "exact"},
         .all_port = {.row = "runs the one-port schedule", .relation = "exact"}});
}};

}  // namespace

}  // namespace cubesim
