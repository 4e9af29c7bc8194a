// Cyclic shift by one along the Gray-code ring of the Boolean n-cube — one step of the Cyclic
// Rotation Algorithm, "the Gray-code ring used as a conveyor belt" (TR-530 §4.2.1, Table 2
// CRA(1,N): N-1 such steps), and the "roll" of Fox–Otto–Hey's broadcast-multiply-roll (FOH §3).
//
//  shift.gc  Node G(q) of the binary-reflected Gray code sends its block of M elements to G(q+1)
//            and receives the block of G(q-1), both at once (one send and one receive: one-port
//            suffices; all-port is the same schedule). One CRA(1,N) step: element transfers M,
//            start-ups ceil(M/B), one message. Exact for any M, B, tau, t_c and tau_msg: a message
//            of ceil(M/B) packets over one otherwise idle link, each packet tau + b t_c.
//
// This file is also the example of what a new algorithm costs: this one file (process,
// prediction, data check, registration, docs) and configs/regress/shift-gc.json.
#include "algorithms/collectives/verify.hpp"
#include "algorithms/embedding/gray.hpp"
#include "algorithms/registry.hpp"

namespace cubesim {
namespace {

Element block_value(NodeId x, std::int64_t M, std::int64_t i) { return static_cast<Element>(x * M + i); }

/// The node at position q (mod N) of the Gray-code ring.
NodeId ring_node(std::int64_t q, NodeId N) { return gray::encode(((q % N) + N) % N); }

Task<> shift_gc(Node& self, Params p) {
  const NodeId N = self.size(), x = self.id();
  Buffer mine = Buffer::make(p.M, self.data_mode(), [&](std::int64_t i) { return block_value(x, p.M, i); });
  if (N == 1) {
    self.set_result(std::move(mine));
    co_return;
  }
  const auto q = gray::decode(x);
  auto snd = self.send(self.topology().port_to(x, ring_node(q + 1, N)), std::move(mine));
  auto rcv = self.recv(self.topology().port_to(x, ring_node(q - 1, N)));
  co_await all_of(snd, rcv);
  self.set_result(rcv.take());
}

Prediction predict_shift_gc(const Setup& s) {
  Prediction pr;
  pr.source = "TR-530 §4.2.1, one step of Table 2 CRA(1,N)";
  if (s.topology.size() > 1) {
    pr.element_transfers = s.params.M;
    pr.startups = ceil_div(s.params.M, s.params.B);
    pr.msg_startups = 1;
  }
  pr.b_opt = static_cast<double>(s.params.M);
  pr.min_startups = s.topology.size() > 1 ? 1.0 : 0.0;
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

Verdict verify_shift_gc(const Setup& s, const std::vector<Buffer>& results) {
  const NodeId N = s.topology.size();
  const std::int64_t M = s.params.M;
  return verify_each(
      s, results, [&](NodeId) { return M; },
      [&](NodeId x, std::int64_t i) {
        const auto q = gray::decode(x);
        return block_value(ring_node(q - 1, N), M, i);
      });
}

/// The memory model (docs/reliability.md "Budgets"): every node holds its block of M and the one
/// it receives, freed as it goes: about 8 bytes an element of N M (2^12 nodes, M = 1024, data
/// mode: 39.6 MiB with the engine's state).
std::int64_t shift_gc_memory(const Setup& s) { return model_bytes(s, {1024, 8}, block_elements(s)); }

const Registration kRegistrationShiftGc{[](Registry& r) {
  r.add({.name = "shift.gc",
         .summary = "cyclic shift by one along the Gray-code ring: every node sends its block to its successor",
         .source = "TR-530 §4.2.1 (one step of Table 2 CRA(1,N)); FOH §3 roll",
         .params = {"M", "B"},
         .required = {"M"},
         .check = [](const Setup& s) { return check_cube_collective(s, false); },
         .process = shift_gc,
         .predict = predict_shift_gc,
         .verify = verify_shift_gc,
         .memory = shift_gc_memory,
         .one_port = {.row = "one CRA(1,N) step: M, ceil(M/B)", .relation = "exact"},
         .all_port = {.row = "the same single step", .relation = "exact"}});
}};

}  // namespace
}  // namespace cubesim
