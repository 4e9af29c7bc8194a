// Personalized communication on the Boolean n-cube — Johnsson & Ho, TR-530 §4.3–4.5,
// Tables 3 and 4 (one-port); TR-572 §3.
//
//  scatter.sbt    One-to-all personalized on the SBT, "scheduling all data for a subtree at once"
//                 (TR-572 §3): the root sends the 2^d blocks of its subtree over dimension d, for
//                 d = n-1 down to 0; a node reached over dimension l forwards the blocks of its
//                 subtrees over l-1, ..., 0. Every destination gets M elements. Table 3, SBT-p(1,1):
//                 element transfers (N-1)M, start-ups sum_{i<n} ceil(2^i M / B). Exact: every
//                 subtree finishes exactly when the root finishes its last send.
//  alltoall.sbt   All-to-all personalized by the standard exchange (§4.4): for each dimension d
//                 (n-1 down to 0) every node exchanges, with its neighbour across d, the N/2
//                 blocks whose destination lies on the other side, as one message. Table 4,
//                 SBT-p(1,N): element transfers (1/2) n N M, start-ups ceil(NM / 2B) n. Exact.
//                 No local copy time is charged (the paper leaves it out "for reasons of clarity";
//                 buffering with t_copy is the TR-572 §8.1 1-D transpose, a separate algorithm).
#include <bit>

#include "algorithms/collectives/verify.hpp"
#include "algorithms/registry.hpp"

namespace cubesim {
namespace {

Element scatter_value(NodeId dest, std::int64_t M, std::int64_t i) { return static_cast<Element>(dest * M + i); }

Task<> scatter_sbt(Node& self, Params p) {
  const NodeId r = self.id() ^ p.root;
  const std::int64_t M = p.M;
  Buffer data;  // blocks for relative addresses [r, r + 2^top), in that order
  int top = self.topology().dim();
  if (r == 0) {
    data = Buffer::make(self.size() * M, self.data_mode(),
                        [&](std::int64_t k) { return scatter_value((k / M) ^ p.root, M, k % M); });
  } else {
    top = std::countr_zero(static_cast<std::uint64_t>(r));
    data = co_await self.recv(top);
  }
  for (int d = top - 1; d >= 0; --d) {
    const std::int64_t span = (std::int64_t{1} << d) * M;
    co_await self.send(d, data.slice(span, span));  // the subtree of r + 2^d
  }
  self.set_result(data.slice(0, M));
}

Prediction predict_scatter(const Setup& s) { return predict_sbt_doubling(s, "TR-530 Table 3, SBT-p(1,1)"); }

Verdict verify_scatter(const Setup& s, const std::vector<Buffer>& results) {
  const std::int64_t M = s.params.M;
  return verify_each(
      s, results, [&](NodeId) { return M; }, [&](NodeId x, std::int64_t i) { return scatter_value(x, M, i); });
}

Element alltoall_value(NodeId src, NodeId dst, NodeId N, std::int64_t M, std::int64_t i) {
  return static_cast<Element>((src * N + dst) * M + i);
}

Task<> alltoall_sbt(Node& self, Params p) {
  const NodeId N = self.size(), x = self.id();
  const std::int64_t M = p.M;
  const int n = self.topology().dim();
  // Slot k holds, before the exchanges, x's block for node k; after them, node k's block for x.
  Buffer slots = Buffer::make(N * M, self.data_mode(),
                              [&](std::int64_t j) { return alltoall_value(x, j / M, N, M, j % M); });
  for (int d = n - 1; d >= 0; --d) {
    const NodeId bit = NodeId{1} << d;
    Buffer out = Buffer::sized(N / 2 * M);  // timing-only: the size is all there is
    if (self.data_mode()) {
      out = Buffer::of({});
      for (NodeId k = 0; k < N; ++k)
        if ((k & bit) != (x & bit)) out.append(slots.slice(k * M, M));
    }
    auto snd = self.send(d, std::move(out));
    auto rcv = self.recv(d);
    co_await all_of(snd, rcv);
    const Buffer in = rcv.take();
    if (!self.data_mode()) continue;
    std::int64_t off = 0;
    for (NodeId k = 0; k < N; ++k)
      if ((k & bit) != (x & bit)) {
        slots.write(k * M, in.slice(off, M));
        off += M;
      }
  }
  self.set_result(std::move(slots));
}

Prediction predict_alltoall(const Setup& s) {
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

}  // namespace

void register_personalized(Registry& r) {
  r.add({"scatter.sbt", "one-to-all personalized communication on the SBT, all data for a subtree at once",
         "TR-530 §4.3, Table 3 SBT-p(1,1); TR-572 §3", {"root", "M", "B"}, {"M"},
         [](const Setup& s) { return check_cube_collective(s, true); }, scatter_sbt, predict_scatter,
         verify_scatter});
  r.add({"alltoall.sbt", "all-to-all personalized communication by the standard exchange",
         "TR-530 §4.4, Table 4 SBT-p(1,N)", {"M", "B"}, {"M"},
         [](const Setup& s) { return check_cube_collective(s, false); }, alltoall_sbt, predict_alltoall,
         verify_alltoall});
}

}  // namespace cubesim
