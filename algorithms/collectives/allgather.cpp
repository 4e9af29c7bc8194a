// All-to-all broadcast on the Boolean n-cube — Johnsson & Ho, TR-530 §4.2, Table 2 (one-port).
// Every node x starts with a block of M elements (values x*M + i) and ends with all N blocks in
// node order (values 0 .. NM-1).
//
//  allgather.cra   Cyclic Rotation Algorithm (§4.2.1): the Gray-code ring used as a conveyor
//                  belt; each node always sends to its successor on the ring and receives from
//                  its predecessor. N-1 steps of one block. Table 2, CRA(1,N):
//                  element transfers (N-1)M, start-ups ceil(M/B)(N-1).
//  allgather.gcea  Gray Code Exchange Algorithm (§4.2.1): step s exchanges, along dimension
//                  "the rightmost 0-bit of s-1", the block received in step s-1; node y receives
//                  in step s the block of node y XOR G(s). Table 2, GCEA(1,N): as CRA.
//  allgather.sbt   Exchange algorithm on N translated SBTs (§4.2.2): step i exchanges the 2^i
//                  blocks gathered so far along dimension i. Table 2, SBT-b(1,N):
//                  element transfers (N-1)M, start-ups sum_{i<n} ceil(2^i M / B).
//
// All three are exact under the cost model (one exchange = one send and one receive at once,
// TR-572 §2), for any M and B, with or without tau_msg (one message per step).
#include <bit>

#include "algorithms/collectives/verify.hpp"
#include "algorithms/embedding/gray.hpp"
#include "algorithms/registry.hpp"

namespace cubesim {
namespace {

Buffer own_block(const Node& self, std::int64_t M) {
  const NodeId x = self.id();
  return Buffer::make(M, self.data_mode(), [&](std::int64_t i) { return static_cast<Element>(x * M + i); });
}

Buffer gathered(const Node& self, std::int64_t M) {
  return Buffer::make(self.size() * M, self.data_mode(), [](std::int64_t) { return Element{-1}; });
}

Task<> allgather_cra(Node& self, Params p) {
  const NodeId N = self.size(), x = self.id();
  Buffer all = gathered(self, p.M);
  Buffer cur = own_block(self, p.M);
  all.write(x * p.M, cur);
  if (N > 1) {
    const auto pos = static_cast<std::int64_t>(gray::decode(static_cast<std::uint64_t>(x)));
    auto at = [&](std::int64_t q) { return static_cast<NodeId>(gray::encode(static_cast<std::uint64_t>(((q % N) + N) % N))); };
    const int out = self.topology().port_to(x, at(pos + 1));
    const int in = self.topology().port_to(x, at(pos - 1));
    for (std::int64_t s = 1; s < N; ++s) {
      auto snd = self.send(out, std::move(cur));
      auto rcv = self.recv(in);
      co_await all_of(snd, rcv);
      cur = rcv.take();
      all.write(at(pos - s) * p.M, cur);  // the block of the node s places back on the ring
    }
  }
  self.set_result(std::move(all));
}

Task<> allgather_gcea(Node& self, Params p) {
  const NodeId N = self.size(), x = self.id();
  const int n = self.topology().dim();
  Buffer all = gathered(self, p.M);
  Buffer cur = own_block(self, p.M);
  all.write(x * p.M, cur);
  for (std::int64_t s = 1; s < N; ++s) {
    const int d = gray::transition(static_cast<std::uint64_t>(s - 1), n);
    auto snd = self.send(d, std::move(cur));
    auto rcv = self.recv(d);
    co_await all_of(snd, rcv);
    cur = rcv.take();
    all.write((x ^ static_cast<NodeId>(gray::encode(static_cast<std::uint64_t>(s)))) * p.M, cur);
  }
  self.set_result(std::move(all));
}

Task<> allgather_sbt(Node& self, Params p) {
  const NodeId x = self.id();
  const int n = self.topology().dim();
  Buffer all = gathered(self, p.M);
  all.write(x * p.M, own_block(self, p.M));
  for (int i = 0; i < n; ++i) {
    const NodeId span = NodeId{1} << i;
    const NodeId base = x & ~(span - 1);  // my group: nodes [base, base + 2^i)
    auto snd = self.send(i, all.slice(base * p.M, span * p.M));
    auto rcv = self.recv(i);
    co_await all_of(snd, rcv);
    all.write((base ^ span) * p.M, rcv.take());
  }
  self.set_result(std::move(all));
}

Prediction predict_ring(const Setup& s, const char* row) {
  const std::int64_t N = s.topology.size(), M = s.params.M, B = s.params.B;
  Prediction pr;
  pr.source = std::string("TR-530 Table 2, ") + row;
  pr.element_transfers = (N - 1) * M;
  pr.startups = ceil_div(M, B) * (N - 1);
  pr.msg_startups = N - 1;
  pr.b_opt = static_cast<double>(M);
  pr.min_startups = static_cast<double>(N - 1);
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

Prediction predict_sbt(const Setup& s) { return predict_sbt_doubling(s, "TR-530 Table 2, SBT-b(1,N)"); }

Verdict verify_allgather(const Setup& s, const std::vector<Buffer>& results) {
  const std::int64_t total = s.topology.size() * s.params.M;
  return verify_each(
      s, results, [&](NodeId) { return total; }, [](NodeId, std::int64_t i) { return static_cast<Element>(i); });
}

}  // namespace

void register_allgather(Registry& r) {
  auto check = [](const Setup& s) { return check_cube_collective(s, false); };
  r.add({"allgather.cra", "all-to-all broadcast: Cyclic Rotation Algorithm on the Gray-code ring",
         "TR-530 §4.2.1, Table 2 CRA(1,N)", {"M", "B"}, {"M"}, check, allgather_cra,
         [](const Setup& s) { return predict_ring(s, "CRA(1,N)"); }, verify_allgather});
  r.add({"allgather.gcea", "all-to-all broadcast: Gray Code Exchange Algorithm",
         "TR-530 §4.2.1, Table 2 GCEA(1,N)", {"M", "B"}, {"M"}, check, allgather_gcea,
         [](const Setup& s) { return predict_ring(s, "GCEA(1,N)"); }, verify_allgather});
  r.add({"allgather.sbt", "all-to-all broadcast: recursive-doubling exchange on N translated SBTs",
         "TR-530 §4.2.2, Table 2 SBT-b(1,N)", {"M", "B"}, {"M"}, check, allgather_sbt, predict_sbt,
         verify_allgather});
}

}  // namespace cubesim
