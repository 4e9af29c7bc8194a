// One-dimensional transposition on the Boolean n-cube (TR-572 §3.2, §5, §8.1): A by rows on
// N = 2^n nodes, A^T by rows after, in any of the layouts of §2 Table 1 (consecutive or cyclic,
// binary or Gray) before and after (Lemma 7: the exchange combines the transpose with a change
// of assignment scheme; Corollary 7). All-to-all personalized communication: node x sends
// D/N = PQ/N^2 elements to every node. Node x's blocks are kept in N slots, slot k first holding
// the block for node k.
//
//  transpose.exchange  The standard exchange (§3.2, Def. 10; §5 pseudo-code without the local
//            shuffle, as run on the iPSC, §8.1): for j = n-1 down to 0 exchange with the
//            neighbour across dimension j the slots k whose bit j differs from the node's; they
//            form 2^(n-1-j) runs of 2^j blocks (one run first, twice as many each step). A run
//            shorter than B_copy elements is copied into one buffer (t_copy per element), sent
//            as one message, and copied out of the receive buffer (t_copy per element) at the
//            other end; otherwise every run is sent as its own message (§8.1). One-port,
//            bidirectional: a send and a receive at once.
//            Prediction: the per-step sum of §8.1: step j moves D/2 elements, in ceil(D/2B)
//            packets when buffered (plus D copies), in 2^(n-1-j) ceil(2^j D/(N B)) packets
//            otherwise. Exact for any B, B_copy, tau, t_c, t_copy. It equals §3.2's
//            n((PQ/2N) t_c + ceil(PQ/(2NB)) tau) when every step is buffered and t_copy = 0,
//            and §8.1's closed forms when B, B_copy and D are powers of two (docs/transpose.md).
//            §8.1 charges (PQ/N) t_copy per buffered step, §9 (PQ/(2N)): this schedule copies
//            into the send buffer and out of the receive buffer, D elements a step, and the
//            simulation agrees with §8.1 to the picosecond; §9's coefficient would need the
//            received buffer used in place.
//  transpose.sbnt      The SBnT routing of §5 (pseudo-code): the block for node x xor r leaves on
//            port base(r) (the number of right rotations that make r smallest) and crosses r's
//            1-bits cyclically leftwards from there, one hop a round; in each of n rounds every
//            port sends one message, all blocks that cross it that round. All-port.
//            Prediction: §3.2 / §5's (PQ/2N) t_c + n tau, a lower bound (n rounds of at least
//            one start-up; D/2 elements leave over each port in all).
//  transpose.router    The baseline of §8.1: every node sends each of its N-1 blocks with a routed
//            send (dimension-order, store-and-forward: every hop pays tau per packet), to
//            x xor 1, x xor 2, ..., in that order. Prediction: the one-port node lower bound,
//            the packets every node must send and forward (N n/2 blocks of ceil(b/B) packets
//            each leave every node; e-cube routing loads all nodes alike).
#include <algorithm>

#include "algorithms/registry.hpp"
#include "algorithms/transpose/matrix.hpp"

namespace cubesim {
namespace {

using tr572::OneD;

/// The data node x ends with: slot k holds the block from node k.
void finish(Node& self, const OneD& o, std::vector<Buffer>& from) {
  self.set_result(o.assemble(self.id(), from, self.data_mode()));
}

std::vector<Buffer> initial_slots(Node& self, const OneD& o) {
  const Buffer mine = o.initial(self.id(), self.data_mode());
  std::vector<Buffer> slot(static_cast<std::size_t>(o.N));
  for (NodeId k = 0; k < o.N; ++k) slot[static_cast<std::size_t>(k)] = o.block_for(mine, k);
  return slot;
}

// ---- transpose.exchange ----

Task<> transpose_exchange(Node& self, Params p) {
  const OneD o = tr572::one_d(p, self.topology());
  const NodeId x = self.id(), N = o.N;
  const std::int64_t b = o.block(), D = o.D(), bcopy = tr572::b_copy(p, self.machine());
  std::vector<Buffer> slot = initial_slots(self, o);
  for (int j = o.n - 1; j >= 0; --j) {
    const NodeId bit = NodeId{1} << j;
    // The slots to send (bit j differs from x's) and where the partner's arrive (k xor bit).
    std::vector<NodeId> mine, theirs;
    for (NodeId k = 0; k < N; ++k) ((k & bit) != (x & bit) ? mine : theirs).push_back(k);
    const std::int64_t run = bit * b;  // elements in a run of consecutive slots
    if (run < bcopy) {                 // buffered: one message of D/2 elements
      Buffer out;
      for (NodeId k : mine) out.append(slot[static_cast<std::size_t>(k)]);
      co_await self.copy(D / 2);
      auto s = self.send(j, std::move(out));
      auto r = self.recv(j);
      co_await all_of(s, r);
      co_await self.copy(D / 2);
      const Buffer in = r.take();
      for (std::size_t i = 0; i < theirs.size(); ++i)
        slot[static_cast<std::size_t>(theirs[i] ^ bit)] = in.slice(static_cast<std::int64_t>(i) * b, b);
    } else {  // unbuffered: one message per run
      std::vector<Op> ops;
      for (std::size_t i = 0; i < mine.size(); i += static_cast<std::size_t>(bit)) {
        Buffer out;
        for (std::size_t k = i; k < i + static_cast<std::size_t>(bit); ++k)
          out.append(slot[static_cast<std::size_t>(mine[k])]);
        ops.push_back(self.send(j, std::move(out)));
      }
      const std::size_t runs = ops.size();
      for (std::size_t i = 0; i < runs; ++i) ops.push_back(self.recv(j));
      co_await all_of(ops);
      for (std::size_t i = 0; i < runs; ++i) {
        const Buffer in = ops[runs + i].take();
        for (NodeId k = 0; k < bit; ++k)
          slot[static_cast<std::size_t>(theirs[i * static_cast<std::size_t>(bit) + static_cast<std::size_t>(k)] ^
                                        bit)] = in.slice(k * b, b);
      }
    }
  }
  finish(self, o, slot);
}

Prediction predict_transpose_exchange(const Setup& s) {
  const OneD o = tr572::one_d(s.params, s.topology);
  const std::int64_t D = o.D(), B = s.params.B, bcopy = tr572::b_copy(s.params, s.machine);
  Prediction pr;
  pr.source = "TR-572 §8.1 (1-D exchange, unbuffered and buffered; §3.2 when all buffered)";
  for (int j = o.n - 1; j >= 0; --j) {
    const std::int64_t runs = std::int64_t{1} << (o.n - 1 - j), run = (std::int64_t{1} << j) * o.block();
    pr.element_transfers += D / 2;
    if (run < bcopy) {
      pr.startups += ceil_div(D / 2, B);
      pr.msg_startups += 1;
      pr.copies += D;
    } else {
      pr.startups += runs * ceil_div(run, B);
      pr.msg_startups += runs;
    }
  }
  pr.b_opt = static_cast<double>(D / 2);
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

// ---- transpose.sbnt ----

/// TR-572 §5: "base(j) = the minimum number of right rotations of j which yields the minimum
/// value among all rotations of j".
int base(NodeId r, int n) {
  const NodeId mask = (NodeId{1} << n) - 1;
  int best = 0;
  NodeId low = r;
  for (int k = 1; k < n; ++k) {
    const NodeId rot = ((r >> k) | (r << (n - k))) & mask;
    if (rot < low) low = rot, best = k;
  }
  return best;
}

/// The dimensions relative address r crosses, in order: from base(r) cyclically leftwards.
std::vector<int> sbnt_path(NodeId r, int n) {
  std::vector<int> dims;
  const int b = base(r, n);
  for (int i = 0; i < n; ++i) {
    const int d = (b + i) % n;
    if ((r >> d) & 1) dims.push_back(d);
  }
  return dims;
}

/// rounds[t][d]: the relative addresses whose block crosses dimension d in round t.
std::vector<std::vector<std::vector<NodeId>>> sbnt_rounds(int n) {
  std::vector<std::vector<std::vector<NodeId>>> rounds(static_cast<std::size_t>(n),
                                                       std::vector<std::vector<NodeId>>(static_cast<std::size_t>(n)));
  for (NodeId r = 1; r < (NodeId{1} << n); ++r) {
    const std::vector<int> path = sbnt_path(r, n);
    for (std::size_t t = 0; t < path.size(); ++t) rounds[t][static_cast<std::size_t>(path[t])].push_back(r);
  }
  return rounds;
}

Task<> transpose_sbnt(Node& self, Params p) {
  const OneD o = tr572::one_d(p, self.topology());
  const NodeId x = self.id();
  const std::int64_t b = o.block();
  // transit[r]: the block with relative address r (source xor destination) now at this node.
  std::vector<Buffer> transit = initial_slots(self, o);
  for (NodeId k = 0; k < o.N; ++k)
    if (k < (x ^ k)) std::swap(transit[static_cast<std::size_t>(k)], transit[static_cast<std::size_t>(x ^ k)]);
  const auto rounds = sbnt_rounds(o.n);
  for (const auto& round : rounds) {
    std::vector<Op> ops;
    std::vector<int> dims;
    for (int d = 0; d < o.n; ++d) {
      if (round[static_cast<std::size_t>(d)].empty()) continue;
      Buffer out;
      for (NodeId r : round[static_cast<std::size_t>(d)]) out.append(transit[static_cast<std::size_t>(r)]);
      ops.push_back(self.send(d, std::move(out)));
      dims.push_back(d);
    }
    for (int d : dims) ops.push_back(self.recv(d));
    co_await all_of(ops);
    for (std::size_t i = 0; i < dims.size(); ++i) {
      const Buffer in = ops[dims.size() + i].take();
      const auto& list = round[static_cast<std::size_t>(dims[i])];
      for (std::size_t k = 0; k < list.size(); ++k)
        transit[static_cast<std::size_t>(list[k])] = in.slice(static_cast<std::int64_t>(k) * b, b);
    }
  }
  std::vector<Buffer> from(static_cast<std::size_t>(o.N));
  for (NodeId r = 0; r < o.N; ++r)
    from[static_cast<std::size_t>(x ^ r)] = std::move(transit[static_cast<std::size_t>(r)]);
  finish(self, o, from);
}

Prediction predict_transpose_sbnt(const Setup& s) {
  const OneD o = tr572::one_d(s.params, s.topology);
  Prediction pr;
  pr.source = "TR-572 §3.2 and §5: SBnT all-to-all, (PQ/2N) t_c + n tau (a lower bound of this schedule)";
  pr.element_transfers = o.D() / 2;
  pr.startups = o.n;
  pr.msg_startups = o.n;
  pr.relation = Relation::lower_bound;
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

// ---- transpose.router ----

Task<> transpose_router(Node& self, Params p) {
  const OneD o = tr572::one_d(p, self.topology());
  const NodeId x = self.id();
  std::vector<Buffer> slot = initial_slots(self, o);
  std::vector<Op> ops;
  for (NodeId j = 1; j < o.N; ++j) ops.push_back(self.send_to(x ^ j, std::move(slot[static_cast<std::size_t>(x ^ j)])));
  for (NodeId j = 1; j < o.N; ++j) ops.push_back(self.recv_from(x ^ j));
  co_await all_of(ops);
  for (NodeId j = 1; j < o.N; ++j)
    slot[static_cast<std::size_t>(x ^ j)] = ops[static_cast<std::size_t>(o.N - 2 + j)].take();
  finish(self, o, slot);
}

Prediction predict_transpose_router(const Setup& s) {
  const OneD o = tr572::one_d(s.params, s.topology);
  Prediction pr;
  pr.source = "TR-572 §8.1 ('calling the iPSC router'): the packets each node sends and forwards, one port";
  // Blocks leaving every node, own and forwarded: sum over j of |j| = N n/2 (e-cube routing
  // loads every node alike); on all ports, N/2 over each port.
  const std::int64_t hops = s.machine.ports.kind == PortKind::all ? o.N / 2 : o.N * o.n / 2;
  pr.startups = hops * ceil_div(o.block(), s.params.B);
  pr.msg_startups = hops;
  pr.element_transfers = hops * o.block();
  pr.relation = Relation::lower_bound;
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

Verdict verify_1d(const Setup& s, const std::vector<Buffer>& results) {
  return tr572::one_d(s.params, s.topology).verify(s, results);
}

const std::vector<std::string> kParams1d = {"P", "Q", "B", "layout_before", "layout_after"};

const Registration kRegistrationTranspose1d{[](Registry& r) {
  r.add(
      {.name = "transpose.exchange",
       .summary = "1-D transpose by the standard exchange, with TR-572 §8.1 buffering below B_copy elements",
       .source = "TR-572 §3.2, §5, Def. 10; §8.1",
       .params = {"P", "Q", "B", "B_copy", "layout_before", "layout_after"},
       .required = {"P", "Q"},
       .check = tr572::check_one_d,
       .process = transpose_exchange,
       .predict = predict_transpose_exchange,
       .verify = verify_1d,
       .one_port = {.row =
                        "§8.1 per step: buffered D/2 t_c + ceil(D/2B) tau + D t_copy, else 2^i ceil(D/(2^(i+1) B)) tau",
                    .relation = "exact"},
       .all_port = {.row = "the same one-port schedule", .relation = "exact"}});
  r.add({.name = "transpose.sbnt",
         .summary = "1-D transpose on all ports by SBnT routing, n rounds of one message per port",
         .source = "TR-572 §3.2, §5 (SBnT pseudo-code)",
         .params = kParams1d,
         .required = {"P", "Q"},
         .check = tr572::check_one_d,
         .process = transpose_sbnt,
         .predict = predict_transpose_sbnt,
         .verify = verify_1d,
         .one_port = {.row = "(PQ/2N) t_c + n tau (the n-port minimum)",
                      .relation = "lower bound (ports serialize)",
                      .deviations = {{Relation::lower_bound, 0, 5.35e+03, "n=4 P=2^10 Q=2^11 B=1"}}},
         .all_port = {.row = "(PQ/2N) t_c + n tau",
                      .relation = "lower bound, met when one message a port a round fits a packet",
                      .deviations = {{Relation::lower_bound, 0, 1.86e+03, "n=2 P=2^10 Q=2^11 B=1"}}}});
  r.add({.name = "transpose.router",
         .summary = "1-D transpose by N-1 routed sends per node (the iPSC router baseline of TR-572 §8.1)",
         .source = "TR-572 §8.1",
         .params = kParams1d,
         .required = {"P", "Q"},
         .check = tr572::check_one_d,
         .process = transpose_router,
         .predict = predict_transpose_router,
         .verify = verify_1d,
         .one_port = {.row = "packets every node sends and forwards: (N n/2) ceil(PQ/(N^2 B)) (tau + b t_c)",
                      .relation = "lower bound, met with equality over the whole grid"},
         .all_port = {.row = "the packets over each port: (N/2) ceil(PQ/(N^2 B)) (tau + b t_c)",
                      .relation = "lower bound",
                      .deviations = {{Relation::lower_bound, 0, 1.5, "n=2 P=2^2 Q=2^3 B=3"}}}});
}};

}  // namespace
}  // namespace cubesim
