// Reductions on the Boolean n-cube: the reverse of broadcasting (Johnsson & Ho, TR-530 §4.1.2:
// the spanning binomial tree serves "broadcasting ... or the reverse operation, reduction"; §5.1:
// the all-to-all reduction "can be carried out by the same algorithms, but in the other
// direction"). Every addition of two elements is one flop, charged as compute (t_a each) after
// the whole message has arrived.
//
// Node x starts with M elements, v_x(i) = x + i + 1 (reduce, allreduce), or with N blocks of M
// elements, v_x(j, i) = x + j M + i + 1 (reduce_scatter); the sums of such integers are exact in
// doubles, so the data check compares exactly.
//
//  reduce.sbt          The SBT broadcast (SBT-b(1,1)) reversed: a node receives from its
//                      children smallest subtree first (dimension 0, 1, ..., l-1 for a node
//                      reached over dimension l), adds each, then sends the sum to its parent.
//                      The root ends with the sum. A child's subtree of d dimensions is ready
//                      after d (c + a), c = ceil(M/B) tau + M t_c (+ tau_msg), a = M t_a, exactly
//                      when the parent has finished the previous child, so
//                      T = n (ceil(M/B) tau + M t_c + M t_a): Table 1 SBT-b(1,1) plus n M
//                      additions. Exact. The schedule is one-port; it runs unchanged (same time)
//                      on k-port and all-port machines. The pipelined all-port reverse of
//                      SBT-b(n,1) is not implemented.
//  allreduce.sbt       Recursive doubling: step d exchanges the whole partial sum with the
//                      neighbour across dimension d and adds. n (ceil(M/B) tau + M t_c + M t_a):
//                      exact, one exchange per step (a send and a receive at once, TR-572 §2).
//  reduce_scatter.sbt  All-to-all reduction (TR-530 §5.1, algorithm A4; Gao's
//                      limited-histogramming): the SBT-b(1,N) exchange of allgather.sbt reversed
//                      (recursive halving). Step d = n-1, ..., 0 sends the 2^d blocks whose
//                      owners lie across dimension d and adds the 2^d blocks received; node j
//                      ends with block j summed over all nodes. Table 2 SBT-b(1,N) plus (N-1) M
//                      additions: element transfers (N-1) M, start-ups sum_d ceil(2^d M / B),
//                      flops (N-1) M. Exact.
#include <bit>

#include "algorithms/collectives/tree_routing.hpp"
#include "algorithms/collectives/verify.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/rows.hpp"

namespace cubesim {
namespace {

Element input(NodeId x, std::int64_t i) { return static_cast<Element>(x + i + 1); }

Buffer own_vector(const Node& self, std::int64_t M) {
  const NodeId x = self.id();
  return Buffer::make(M, self.data_mode(), [&](std::int64_t i) { return input(x, i); });
}

using routing::add_into;

Task<> reduce_sbt(Node& self, Params p) {
  const NodeId r = self.id() ^ p.root;  // address relative to the root
  const int n = self.topology().dim();
  const int top = r == 0 ? n : lowest_one(r);  // children: d < top
  Buffer acc = own_vector(self, p.M);
  for (int d = 0; d < top; ++d) {
    Buffer part = co_await self.recv(d);
    add_into(acc, part);
    co_await self.compute(p.M);
  }
  if (r != 0) {
    co_await self.send(top, std::move(acc));
    self.set_result(Buffer{});
  } else {
    self.set_result(std::move(acc));
  }
}

Task<> allreduce_sbt(Node& self, Params p) {
  const int n = self.topology().dim();
  Buffer acc = own_vector(self, p.M);
  for (int d = 0; d < n; ++d) {
    auto snd = self.send(d, acc);
    auto rcv = self.recv(d);
    co_await all_of(snd, rcv);
    add_into(acc, rcv.take());
    co_await self.compute(p.M);
  }
  self.set_result(std::move(acc));
}

Task<> reduce_scatter_sbt(Node& self, Params p) {
  const NodeId x = self.id(), N = self.size();
  Buffer all = Buffer::make(N * p.M, self.data_mode(), [&](std::int64_t k) { return static_cast<Element>(x + k + 1); });
  self.set_result(
      co_await routing::reduce_halving(self, p.M, std::move(all), routing::SubCube::whole(self.topology().dim())));
}

/// sum over x of v_x = sum_x (x + c) = N(N-1)/2 + N c.
Element sum_over_nodes(NodeId N, std::int64_t c) { return static_cast<Element>(N * (N - 1) / 2 + N * c); }

Prediction predict_whole_vector_steps(const Setup& s, const char* source) {
  const std::int64_t n = s.topology.dim(), M = s.params.M, B = s.params.B;
  Prediction pr;
  pr.source = source;
  pr.startups = n * ceil_div(M, B);
  pr.element_transfers = n * M;
  pr.msg_startups = n;
  pr.flops = n * M;
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

Prediction predict_reduce_scatter_sbt(const Setup& s) {
  Prediction pr = predict_sbt_doubling(
      s, "TR-530 §5.1 A4 all-to-all reduction: Table 2 SBT-b(1,N) reversed, plus (N-1)M additions");
  pr.flops = (s.topology.size() - 1) * s.params.M;
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

/// The memory models of the reductions (docs/reliability.md "Budgets"): every node holds its
/// vector of M, N M elements in all. A reduction to the root frees what it has sent: 8 bytes an
/// element (reduce.sbt, 2^14 nodes, M = 1024, data mode: 136 MiB beyond the engine's state); an
/// all-reduce also holds the vector it receives at each step: 16 (allreduce.sbt: 268 MiB).
std::int64_t reduction_memory(const Setup& s) { return model_bytes(s, {1024, 8}, block_elements(s)); }
std::int64_t allreduction_memory(const Setup& s) { return model_bytes(s, {1024, 16}, block_elements(s)); }

/// All-to-all reduction: every node starts with N blocks of M, N^2 M elements in all, at about 12
/// bytes an element (reduce_scatter.sbt, 2^9 nodes, M = 64, data mode: 193 MiB).
std::int64_t reduce_scatter_memory(const Setup& s) { return model_bytes(s, {1024, 12}, all_blocks_elements(s)); }

const Registration kRegistrationReduction{[](Registry& r) {
  auto rooted = [](const Setup& s) { return check_cube_collective(s, true); };
  auto rootless = [](const Setup& s) { return check_cube_collective(s, false); };
  r.add({.name = "reduce.sbt",
         .summary = "reduction to the root on a spanning binomial tree (the SBT broadcast reversed)",
         .source = "TR-530 §4.1.2, Table 1 SBT-b(1,1) reversed",
         .params = {"root", "M", "B"},
         .required = {"M"},
         .check = rooted,
         .process = reduce_sbt,
         .predict =
             [](const Setup& s) {
               return predict_whole_vector_steps(s, "TR-530 §4.1.2: Table 1 SBT-b(1,1) reversed, plus n M additions");
             },
         .verify =
             [](const Setup& s, const std::vector<Buffer>& res) {
               const NodeId N = s.topology.size();
               return verify_each(
                   s, res, [&](NodeId x) { return x == s.params.root ? s.params.M : 0; },
                   [&](NodeId, std::int64_t i) { return sum_over_nodes(N, i + 1); });
             },
         .memory = reduction_memory,
         .one_port = {.row = "T1 SBT-b(1,1) reversed + n M additions", .relation = "exact"},
         .all_port = {.row = "runs the one-port schedule", .relation = "exact"}});
  r.add({.name = "allreduce.sbt",
         .summary = "all-reduce by recursive doubling: n exchanges of the whole vector",
         .source = "TR-530 §4.1.2 and §4.2.2 (the SBT exchange)",
         .params = {"M", "B"},
         .required = {"M"},
         .check = rootless,
         .process = allreduce_sbt,
         .predict =
             [](const Setup& s) {
               return predict_whole_vector_steps(
                   s, "TR-530 §4.2.2 exchange on N translated SBTs, whole vector each step, plus n M additions");
             },
         .verify =
             [](const Setup& s, const std::vector<Buffer>& res) {
               const NodeId N = s.topology.size();
               return verify_each(
                   s, res, [&](NodeId) { return s.params.M; },
                   [&](NodeId, std::int64_t i) { return sum_over_nodes(N, i + 1); });
             },
         .memory = allreduction_memory,
         .one_port = {.row = "recursive doubling: n (ceil(M/B) tau + M t_c + M t_a)", .relation = "exact"},
         .all_port = {.row = "runs the one-port schedule", .relation = "exact"}});
  r.add({.name = "reduce_scatter.sbt",
         .summary = "all-to-all reduction (limited histogramming) by recursive halving",
         .source = "TR-530 §5.1 A4, Table 2 SBT-b(1,N) reversed",
         .params = {"M", "B"},
         .required = {"M"},
         .check = rootless,
         .process = reduce_scatter_sbt,
         .predict = predict_reduce_scatter_sbt,
         .verify =
             [](const Setup& s, const std::vector<Buffer>& res) {
               const NodeId N = s.topology.size();
               const std::int64_t M = s.params.M;
               return verify_each(
                   s, res, [&](NodeId) { return M; },
                   [&](NodeId j, std::int64_t i) { return sum_over_nodes(N, j * M + i + 1); });
             },
         .memory = reduce_scatter_memory,
         .one_port = {.row = "T2 SBT-b(1,N) reversed + (N-1) M additions", .relation = "exact"},
         .all_port = {.row = "runs the one-port schedule", .relation = "exact"}});
}};

}  // namespace

}  // namespace cubesim
