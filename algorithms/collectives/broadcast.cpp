// One-to-all broadcast on the Boolean n-cube — Johnsson & Ho, TR-530 §4.1, Table 1.
//
//  broadcast.sbt  Spanning binomial tree (§4.1.2).
//                 one-port (and k-port): SBT-b(1,1). The root sends the whole message to its
//                 largest subtree first (dimension n-1), then n-2, ..., 0; a node that received
//                 it over dimension l forwards it over l-1, ..., 0. Table 1:
//                 element transfers M n, start-ups ceil(M/B) n.
//                 all-port: SBT-b(n,1). The message is cut into packets of B elements; every
//                 node forwards each packet to all its children at once, as soon as it has it.
//                 Table 1: element transfers M + (n-1)B, start-ups ceil(M/B) + n - 1.
//  broadcast.gc   Hamiltonian path of the binary-reflected Gray code (§4.1.1), GC(1,1): the
//                 message travels down the path in packets of B elements, pipelined.
//                 Table 1: element transfers M + (N-2)B, start-ups ceil(M/B) + N - 2.
//
// Reading of the tables (docs/formulas.md): "B" in the pipelined rows is the size of a packet
// actually sent, min(B, M) — a message shorter than B travels as one packet of M elements, and
// the rows are exact with that reading for every M. Both rows are exact under the cost model:
// the pipelines are flow shops whose every stage takes tau + b t_c for a packet of b elements,
// so the last packet leaves the last stage after sum_p (tau + b_p t_c) + (stages-1)(tau + B t_c).
// With tau_msg > 0 every packet sent as its own message also pays tau_msg (not in the tables).
#include <bit>
#include <cmath>

#include "algorithms/collectives/verify.hpp"
#include "algorithms/embedding/gray.hpp"
#include "algorithms/registry.hpp"

namespace cubesim {
namespace {

Element message_value(std::int64_t i) { return static_cast<Element>(i + 1); }

Buffer root_message(const Node& self, std::int64_t M) {
  return Buffer::make(M, self.data_mode(), [](std::int64_t i) { return message_value(i); });
}

int cube_dim(const Node& self) { return self.topology().dim(); }

/// SBT-b(1,1): whole message, one subtree after the other, largest first.
Task<> sbt_one_port(Node& self, Params p) {
  const NodeId r = self.id() ^ p.root;  // address relative to the root
  Buffer data;
  int top = cube_dim(self);
  if (r == 0) {
    data = root_message(self, p.M);
  } else {
    top = std::countr_zero(static_cast<std::uint64_t>(r));  // the dimension it arrives on
    data = co_await self.recv(top);
  }
  for (int d = top - 1; d >= 0; --d) co_await self.send(d, data);
  self.set_result(std::move(data));
}

/// SBT-b(n,1): packets of B elements, each forwarded to every child at once.
Task<> sbt_all_port(Node& self, Params p) {
  const NodeId r = self.id() ^ p.root;
  const std::int64_t B = self.packet_elements();
  const std::int64_t packets = ceil_div(p.M, B);
  const bool root = r == 0;
  const int parent = root ? -1 : std::countr_zero(static_cast<std::uint64_t>(r));
  const int children = root ? cube_dim(self) : parent;  // dimensions children-1 .. 0
  Buffer all = root ? root_message(self, p.M) : Buffer{};
  for (std::int64_t k = 0; k < packets; ++k) {
    // (No co_await inside ?: — GCC 12 miscompiles it, destroying the temporary twice.)
    Buffer chunk;
    if (root) chunk = all.slice(k * B, std::min(B, p.M - k * B));
    else chunk = co_await self.recv(parent);
    if (children > 0) {
      std::vector<Op> sends;
      sends.reserve(static_cast<std::size_t>(children));
      for (int d = children - 1; d >= 0; --d) sends.push_back(self.send(d, chunk));
      co_await all_of(sends);
    }
    if (!root) all.append(chunk);
  }
  self.set_result(std::move(all));
}

Task<> broadcast_sbt(Node& self, Params p) {
  if (self.machine().ports.kind == PortKind::all) return sbt_all_port(self, p);
  return sbt_one_port(self, p);
}

Prediction predict_sbt(const Setup& s) {
  const std::int64_t n = s.topology.dim(), M = s.params.M, B = s.params.B;
  Prediction pr;
  if (s.machine.ports.kind == PortKind::all) {
    pr.source = "TR-530 Table 1, SBT-b(n,1)";
    if (n > 0) {
      pr.startups = ceil_div(M, B) + n - 1;
      pr.msg_startups = pr.startups;  // every packet is its own message
      pr.element_transfers = M + (n - 1) * std::min(B, M);
    }
    pr.b_opt = n > 1 ? std::sqrt(static_cast<double>(M) * static_cast<double>(s.machine.tau.count()) /
                                 (static_cast<double>(n - 1) * static_cast<double>(s.machine.t_c.count())))
                     : static_cast<double>(M);
  } else {
    pr.source = "TR-530 Table 1, SBT-b(1,1)";
    pr.startups = ceil_div(M, B) * n;
    pr.msg_startups = n;
    pr.element_transfers = M * n;
    pr.b_opt = static_cast<double>(M);
    pr.min_startups = static_cast<double>(n);
  }
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

/// GC(1,1): a pipeline down the Gray-code path that starts at the root.
Task<> broadcast_gc(Node& self, Params p) {
  const NodeId N = self.size();
  const auto pos = static_cast<std::int64_t>(gray::decode(static_cast<std::uint64_t>(self.id() ^ p.root)));
  const std::int64_t B = self.packet_elements();
  const std::int64_t packets = ceil_div(p.M, B);
  auto node_at = [&](std::int64_t q) { return static_cast<NodeId>(gray::encode(static_cast<std::uint64_t>(q))) ^ p.root; };
  const int in_port = pos > 0 ? self.topology().port_to(self.id(), node_at(pos - 1)) : -1;
  const int out_port = pos + 1 < N ? self.topology().port_to(self.id(), node_at(pos + 1)) : -1;
  Buffer all = pos == 0 ? root_message(self, p.M) : Buffer{};
  for (std::int64_t k = 0; k < packets; ++k) {
    Buffer chunk;
    if (pos == 0) chunk = all.slice(k * B, std::min(B, p.M - k * B));
    else chunk = co_await self.recv(in_port);
    if (out_port >= 0) co_await self.send(out_port, chunk);
    if (pos != 0) all.append(chunk);
  }
  self.set_result(std::move(all));
}

Prediction predict_gc(const Setup& s) {
  const std::int64_t N = s.topology.size(), M = s.params.M, B = s.params.B;
  Prediction pr;
  pr.source = "TR-530 Table 1, GC(1,1)";
  if (N > 1) {
    pr.startups = ceil_div(M, B) + N - 2;
    pr.msg_startups = pr.startups;
    pr.element_transfers = M + (N - 2) * std::min(B, M);
  }
  if (N > 2) {
    const double tc = static_cast<double>(s.machine.t_c.count()), tau = static_cast<double>(s.machine.tau.count());
    pr.b_opt = std::sqrt(static_cast<double>(M) * tau / (static_cast<double>(N - 2) * tc));
    pr.min_startups = static_cast<double>(N - 2) + 2 * std::sqrt(static_cast<double>((N - 2) * M) * tc / tau);
  }
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

Verdict verify_broadcast(const Setup& s, const std::vector<Buffer>& results) {
  return verify_each(
      s, results, [&](NodeId) { return s.params.M; }, [](NodeId, std::int64_t i) { return message_value(i); });
}

}  // namespace

void register_broadcast(Registry& r) {
  auto check = [](const Setup& s) { return check_cube_collective(s, true); };
  r.add({"broadcast.sbt",
         "one-to-all broadcast on a spanning binomial tree (one-port: subtree by subtree; all-port: pipelined packets)",
         "TR-530 §4.1.2, Table 1 SBT-b(1,1) and SBT-b(n,1)", {"root", "M", "B"}, {"M"}, check, broadcast_sbt,
         predict_sbt, verify_broadcast});
  r.add({"broadcast.gc", "one-to-all broadcast pipelined along the binary-reflected Gray-code Hamiltonian path",
         "TR-530 §4.1.1, Table 1 GC(1,1)", {"root", "M", "B"}, {"M"}, check, broadcast_gc, predict_gc,
         verify_broadcast});
}

}  // namespace cubesim
