// All-to-all broadcast on the Boolean n-cube — Johnsson & Ho, TR-530 §4.2, Table 2.
// Every node x starts with a block of M elements (values x*M + i) and ends with all N blocks in
// node order (values 0 .. NM-1).
//
//  allgather.cra   Cyclic Rotation Algorithm (§4.2.1): the Gray-code ring used as a conveyor
//                  belt. one-port: CRA(1,N), N-1 steps of one block: (N-1)M, ceil(M/B)(N-1).
//                  Exact. all-port: CRA(n,N), n rotated rings, part k of every block on ring k.
//                  No Table 2 row; predicted as N-1 steps of the busiest port's parts, an upper
//                  bound (lowest simulated/predicted seen 0.17, n = 7, M = 1: one ring carries
//                  all the data).
//  allgather.gcea  Gray Code Exchange Algorithm (§4.2.1): step s exchanges, along dimension
//                  "the rightmost 0-bit of s-1", the block received in step s-1. one-port:
//                  GCEA(1,N) as CRA(1,N). all-port: GCEA(n,N) ("GCEA_n"), n rotated sequences,
//                  (1/n)(N-1)M, ceil(M/(nB))(N-1). Both exact (ceil(M/n) for M/n).
//  allgather.sbt   Exchange algorithm on N translated SBTs (§4.2.2). one-port: SBT-b(1,N), step
//                  i exchanges the 2^i blocks gathered so far along dimension i: (N-1)M,
//                  sum_{i<n} ceil(2^i M / B). all-port: SBT-b(n,N), all ports at once, the edge
//                  into a node of depth i+1 in step i: NM/2, sum_{i<n} ceil(C(n-1,i) M / B).
//                  Both exact.
//  allgather.sbnt, allgather.nrsbt  (§4.2.3) N translated SBnTs / sets of n rotated SBTs
//                  (tree_routing.hpp). one-port: 2n-1 steps, one dimension per step; all-port:
//                  n steps on all ports. Table 2: SBnT-b / nRSBT-b (1,N) and (n,N). nRSBT-b(n,N)
//                  is exact when n divides M; the rest are approximations whose measured sizes
//                  and causes are written at predict_allgather_trees.
//
// The one-port rows are exact under the cost model (one exchange = one send and one receive at
// once, TR-572 §2), for any M and B, with or without tau_msg (one message per step).
#include <bit>
#include <cmath>

#include "algorithms/collectives/tree_routing.hpp"
#include "algorithms/collectives/verify.hpp"
#include "algorithms/embedding/gray.hpp"
#include "algorithms/embedding/trees.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/rows.hpp"

namespace cubesim {
namespace {

/// The node at position q (mod N) of Gray-code ring k of the n-cube: G(q mod N) rotated left by
/// k (CRA's k-th ring; ring 0, k = 0, the plain Gray-code ring of CRA(1,N)). The process and the
/// step programs all place the rings with it.
NodeId gray_ring_node(std::int64_t q, std::int64_t N, int k = 0, int n = 0) {
  const auto g = static_cast<std::uint64_t>(gray::encode(((q % N) + N) % N));
  return static_cast<NodeId>(k == 0 ? g : trees::rotate_left(g, n, k));
}

Buffer own_block(const Node& self, std::int64_t M) {
  const NodeId x = self.id();
  return Buffer::make(M, self.data_mode(), [&](std::int64_t i) { return static_cast<Element>(x * M + i); });
}

Buffer gathered(const Node& self, std::int64_t M) {
  return Buffer::make(self.size() * M, self.data_mode(), [](std::int64_t) { return Element{-1}; });
}

Task<> allgather_cra_one_port(Node& self, Params p) {
  const NodeId N = self.size(), x = self.id();
  Buffer all = gathered(self, p.M);
  Buffer cur = own_block(self, p.M);
  all.write(x * p.M, cur);
  if (N > 1) {
    const auto pos = gray::decode(x);
    auto at = [&](std::int64_t q) { return gray_ring_node(q, N); };
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

Task<> allgather_gcea_one_port(Node& self, Params p) {
  const NodeId N = self.size(), x = self.id();
  const int n = self.topology().dim();
  Buffer all = gathered(self, p.M);
  Buffer cur = own_block(self, p.M);
  all.write(x * p.M, cur);
  for (std::int64_t s = 1; s < N; ++s) {
    const int d = gray::transition(s - 1, n);
    auto snd = self.send(d, std::move(cur));
    auto rcv = self.recv(d);
    co_await all_of(snd, rcv);
    cur = rcv.take();
    all.write((x ^ gray::encode(s)) * p.M, cur);
  }
  self.set_result(std::move(all));
}

Task<> allgather_sbt_one_port(Node& self, Params p) {
  self.set_result(co_await routing::allgather_doubling(self, p.M, own_block(self, p.M),
                                                       routing::SubCube::whole(self.topology().dim())));
}

/// The n-bit value rotated left by k (dimension d becomes (d + k) mod n).
std::uint64_t rotl(std::uint64_t v, int k, int n) { return trees::rotate_left(v, n, k); }

/// GCEA(n,N) (TR-530 §4.2.1, "GCEA_n"): the block split into n parts; in step s part k is
/// exchanged across dimension (j + k) mod n, j = the rightmost 0-bit of s-1, so node y receives
/// in step s part k of the block of y XOR rot_k(G(s)). n exchanges on n ports at once per step.
Task<> allgather_gcea_all_port(Node& self, Params p) {
  const NodeId N = self.size(), x = self.id();
  const int n = self.topology().dim();
  Buffer all = gathered(self, p.M);
  all.write(x * p.M, own_block(self, p.M));
  for (std::int64_t s = 1; s < N; ++s) {
    const int j = gray::transition(s - 1, n);
    std::vector<Op> ops;
    std::vector<int> parts;
    for (int k = 0; k < n; ++k) {
      if (part_size(p.M, n, k) == 0) continue;
      // The part sent in step s is the one received in step s-1 (own block in step 1).
      const auto from = x ^ static_cast<NodeId>(rotl(gray::encode(s - 1), k, n));
      const int d = (j + k) % n;
      ops.push_back(self.send(d, all.slice(from * p.M + part_offset(p.M, n, k), part_size(p.M, n, k)), k));
      ops.push_back(self.recv(d, k));
      parts.push_back(k);
    }
    co_await all_of(ops);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const int k = parts[i];
      const auto src = x ^ static_cast<NodeId>(rotl(gray::encode(s), k, n));
      all.write(src * p.M + part_offset(p.M, n, k), ops[2 * i + 1].take());
    }
  }
  self.set_result(std::move(all));
}

/// CRA(n,N) (TR-530 §4.2.1): n directed Hamiltonian circuits, the Gray-code ring rotated by
/// k = 0..n-1; part k of every block travels around ring k, one hop per step, N-1 steps. The
/// rings are not edge-disjoint: where two rings leave a node across the same dimension, that port
/// carries both parts one after the other.
Task<> allgather_cra_all_port(Node& self, Params p) {
  const NodeId N = self.size(), x = self.id();
  const int n = self.topology().dim();
  Buffer all = gathered(self, p.M);
  all.write(x * p.M, own_block(self, p.M));
  auto at = [&](int k, std::int64_t q) { return gray_ring_node(q, N, k, n); };
  std::vector<std::int64_t> pos(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) pos[k] = gray::decode(trees::rotate_right(x, n, k));
  for (std::int64_t s = 1; s < N; ++s) {
    std::vector<Op> ops;
    std::vector<int> parts;
    for (int k = 0; k < n; ++k) {
      if (part_size(p.M, n, k) == 0) continue;
      const std::int64_t q = pos[k];
      const int out = self.topology().port_to(x, at(k, q + 1));
      const int in = self.topology().port_to(x, at(k, q - 1));
      ops.push_back(
          self.send(out, all.slice(at(k, q - s + 1) * p.M + part_offset(p.M, n, k), part_size(p.M, n, k)), k));
      ops.push_back(self.recv(in, k));
      parts.push_back(k);
    }
    co_await all_of(ops);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const int k = parts[i];
      all.write(at(k, pos[k] - s) * p.M + part_offset(p.M, n, k), ops[2 * i + 1].take());
    }
  }
  self.set_result(std::move(all));
}

/// GCEA(n,N) and CRA(n,N) as step programs (sim/steps.hpp): the operations of
/// allgather_gcea_all_port and allgather_cra_all_port, step by step, without their data. Their
/// common part: N - 1 steps, a block of M split into n parts.
class PartsSteps : public StepProgram {
 public:
  explicit PartsSteps(const Setup& s) : N_(s.topology.size()), n_(s.topology.dim()), M_(s.params.M) {
    for (int k = 0; k < n_; ++k) sizes_.push_back(part_size(M_, n_, k));
  }
  [[nodiscard]] std::int64_t steps() const override { return N_ - 1; }
  [[nodiscard]] std::int64_t result_elements(NodeId /*x*/) const override { return N_ * M_; }

 protected:
  [[nodiscard]] std::int64_t size(int k) const { return sizes_[static_cast<std::size_t>(k)]; }
  NodeId N_;
  int n_;
  std::int64_t M_;

 private:
  std::vector<std::int64_t> sizes_;  ///< part k's elements
};

class GceaAllPortSteps final : public PartsSteps {
 public:
  using PartsSteps::PartsSteps;
  /// Every node exchanges part k across dimension (j + k) mod n (docs/lockstep.md "Uniform steps").
  [[nodiscard]] bool uniform(std::int64_t /*s*/) const override { return true; }
  void step(NodeId /*x*/, std::int64_t s0, std::vector<StepOp>& ops) const override {
    const std::int64_t s = s0 + 1;
    const int j = gray::transition(s - 1, n_);
    for (int k = 0; k < n_; ++k) {
      if (size(k) == 0) continue;
      const int d = (j + k) % n_;
      ops.push_back({.kind = StepOp::Kind::send, .port = d, .tag = k, .elements = size(k)});
      ops.push_back({.kind = StepOp::Kind::recv, .port = d, .tag = k});
    }
  }
};

class CraAllPortSteps final : public PartsSteps {
 public:
  explicit CraAllPortSteps(const Setup& s) : PartsSteps(s) {
    // The same ports every step: ring k's successor and predecessor of each node.
    auto at = [&](int k, std::int64_t q) { return gray_ring_node(q, N_, k, n_); };
    ports_.resize(static_cast<std::size_t>(N_) * static_cast<std::size_t>(n_) * 2);
    for (NodeId x = 0; x < N_; ++x)
      for (int k = 0; k < n_; ++k) {
        const std::int64_t q = gray::decode(trees::rotate_right(x, n_, k));
        const std::size_t i =
            (static_cast<std::size_t>(x) * static_cast<std::size_t>(n_) + static_cast<std::size_t>(k)) * 2;
        ports_[i] = static_cast<std::uint8_t>(s.topology.port_to(x, at(k, q + 1)));
        ports_[i + 1] = static_cast<std::uint8_t>(s.topology.port_to(x, at(k, q - 1)));
      }
  }
  /// Every step is the first again (docs/lockstep.md "Repeated steps").
  [[nodiscard]] std::int64_t repeats(std::int64_t s) const override { return s >= 1 && s < steps() ? steps() - s : 0; }
  void step(NodeId x, std::int64_t /*s*/, std::vector<StepOp>& ops) const override {
    const std::uint8_t* p = &ports_[static_cast<std::size_t>(x) * static_cast<std::size_t>(n_) * 2];
    for (int k = 0; k < n_; ++k, p += 2) {
      if (size(k) == 0) continue;
      ops.push_back({.kind = StepOp::Kind::send, .port = p[0], .tag = k, .elements = size(k)});
      ops.push_back({.kind = StepOp::Kind::recv, .port = p[1], .tag = k});
    }
  }

 private:
  std::vector<std::uint8_t> ports_;  ///< per node and ring: the ports to its successor and from its predecessor
};

/// GCEA(1,N) and CRA(1,N) one-port (allgather_gcea_one_port, allgather_cra_one_port) as step
/// programs, the one-port lockstep simulator's: N - 1 exchanges of the whole block, across
/// dimension G's transition in step s (GCEA), to the ring's successor from its predecessor (CRA).
class WholeBlockSteps final : public StepProgram {
 public:
  WholeBlockSteps(const Setup& s, bool ring)
      : N_(s.topology.size()), n_(s.topology.dim()), M_(s.params.M), ring_(ring) {
    if (!ring || N_ < 2) return;
    auto at = [&](std::int64_t q) { return gray_ring_node(q, N_); };
    ports_.resize(2 * static_cast<std::size_t>(N_));
    for (NodeId x = 0; x < N_; ++x) {
      const auto pos = static_cast<std::int64_t>(gray::decode(x));
      ports_[2 * static_cast<std::size_t>(x)] = static_cast<std::uint8_t>(s.topology.port_to(x, at(pos + 1)));
      ports_[2 * static_cast<std::size_t>(x) + 1] = static_cast<std::uint8_t>(s.topology.port_to(x, at(pos - 1)));
    }
  }
  [[nodiscard]] std::int64_t steps() const override { return N_ - 1; }
  [[nodiscard]] std::int64_t result_elements(NodeId /*x*/) const override { return N_ * M_; }
  void step(NodeId x, std::int64_t s, std::vector<StepOp>& ops) const override {
    int out = 0, in = 0;
    if (ring_) {  // the ring's successor and predecessor (the same ports every step)
      out = ports_[2 * static_cast<std::size_t>(x)];
      in = ports_[2 * static_cast<std::size_t>(x) + 1];
    } else {
      out = in = gray::transition(s, n_);
    }
    ops.push_back({.kind = StepOp::Kind::send, .port = out, .elements = M_});
    ops.push_back({.kind = StepOp::Kind::recv, .port = in});
  }

 private:
  NodeId N_;
  int n_;
  std::int64_t M_;
  bool ring_;
  std::vector<std::uint8_t> ports_;  ///< CRA: per node, the ports to its successor and from its predecessor
};

/// Where the ring all-gathers have a step program (the factories' and their memory statements'
/// one condition): one-port, and all-port beyond the 1-cube.
bool ring_program_for(const Setup& s) {
  return s.machine.ports.kind == PortKind::one || (s.machine.ports.kind == PortKind::all && s.topology.dim() > 1);
}
/// The step programs: the all-port rows' (n >= 2) and the one-port rows'; the engine runs the
/// all-port 1-cube (the one-port process) and k-port machines.
std::unique_ptr<StepProgram> gcea_steps(const Setup& s) {
  if (!ring_program_for(s)) return nullptr;
  if (s.machine.ports.kind == PortKind::one) return std::make_unique<WholeBlockSteps>(s, false);
  return std::make_unique<GceaAllPortSteps>(s);
}
std::unique_ptr<StepProgram> cra_steps(const Setup& s) {
  if (!ring_program_for(s)) return nullptr;
  if (s.machine.ports.kind == PortKind::one) return std::make_unique<WholeBlockSteps>(s, true);
  return std::make_unique<CraAllPortSteps>(s);
}
/// Their parts in the memory of their runs: GCEA's a few words. CRA's ring ports (two bytes a
/// node and ring), and all-port the second part that a quarter of the ports carry, waiting on its
/// link behind the first (docs/lockstep.md), 64 bytes a message.
std::optional<StepsMemory> gcea_program_memory(const Setup& s) {
  if (!ring_program_for(s)) return std::nullopt;
  return StepsMemory{};
}
std::optional<StepsMemory> cra_program_memory(const Setup& s) {
  if (!ring_program_for(s)) return std::nullopt;
  const std::int64_t rings = s.machine.ports.kind == PortKind::all ? s.topology.dim() : 1;
  return StepsMemory{
      .repeats = s.machine.ports.kind != PortKind::one,
      .program_bytes = 2 * rings * s.topology.size() + (rings > 1 ? 16 * s.topology.size() * s.topology.dim() : 0)};
}

Task<> allgather_cra(Node& self, Params p) {
  if (self.machine().ports.kind == PortKind::all && self.topology().dim() > 1) return allgather_cra_all_port(self, p);
  return allgather_cra_one_port(self, p);
}
Task<> allgather_gcea(Node& self, Params p) {
  if (self.machine().ports.kind == PortKind::all && self.topology().dim() > 1) return allgather_gcea_all_port(self, p);
  return allgather_gcea_one_port(self, p);
}

/// The step-form all-to-all broadcast on a tree family (tree_routing.hpp).
Task<> allgather_trees(Node& self, Params p, routing::Family f, routing::Schedule sch) {
  auto plan = routing::plan(f, sch, self.topology().dim());
  self.set_result(co_await routing::allgather(self, p.M, own_block(self, p.M), plan));
}

/// The step-form all-gathers' schedule: by depth on all ports, cyclic on one (the process's and
/// its step program's, from one place).
routing::Schedule trees_schedule(bool all_port) {
  return all_port ? routing::Schedule::depth : routing::Schedule::cyclic;
}

/// Where the tree all-gathers have a step program (trees_steps' and trees_program_memory's one
/// condition): one- and all-port hypercubes; `all_port_only`: allgather.sbt's one-port process is
/// another (allgather_sbt_one_port).
bool trees_program_for(const Setup& s, bool all_port_only) {
  const bool all_port = s.machine.ports.kind == PortKind::all;
  return s.topology.kind() == Topology::Kind::hypercube && (all_port || s.machine.ports.kind == PortKind::one) &&
         (all_port || !all_port_only);
}
/// allgather_trees as a step program (routing::exchange_program): the plan and schedule the
/// process uses.
std::unique_ptr<StepProgram> trees_steps(const Setup& s, routing::Family f, bool all_port_only) {
  if (!trees_program_for(s, all_port_only)) return nullptr;
  const bool all_port = s.machine.ports.kind == PortKind::all;
  return routing::exchange_program(routing::plan(f, trees_schedule(all_port), s.topology.dim()), s.params.M, false);
}

/// trees_steps' part in the memory of its run: the plan (routing::plan_bytes).
std::optional<StepsMemory> trees_program_memory(const Setup& s, routing::Family f, bool all_port_only) {
  if (!trees_program_for(s, all_port_only)) return std::nullopt;
  return StepsMemory{.program_bytes = routing::plan_bytes(f, s.topology.dim())};
}

Task<> allgather_sbt(Node& self, Params p) {
  if (self.machine().ports.kind == PortKind::all)
    return allgather_trees(self, p, routing::Family::sbt, trees_schedule(true));
  return allgather_sbt_one_port(self, p);
}
Task<> allgather_sbnt(Node& self, Params p) {
  return allgather_trees(self, p, routing::Family::sbnt, trees_schedule(self.machine().ports.kind == PortKind::all));
}
Task<> allgather_nrsbt(Node& self, Params p) {
  return allgather_trees(self, p, routing::Family::nrsbt, trees_schedule(self.machine().ports.kind == PortKind::all));
}

Prediction predict_ring_one_port(const Setup& s, const char* row) {
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

Prediction predict_allgather_sbt_one_port(const Setup& s) {
  return predict_sbt_doubling(s, "TR-530 Table 2, SBT-b(1,N)");
}

/// The hybrid of §5.1 (Fig. 10): k steps of the SBT exchange (dimensions 0..k-1), after which
/// every node holds the 2^k blocks of its k-subcube, then the GCEA on the remaining n-k dimensions
/// with those 2^k blocks as one super-block: 2^(n-k) - 1 exchanges of 2^k M elements. Temporary
/// storage and the optimum buffer (packet) size: 2^k M. k = n is the same schedule as k = n-1.
Task<> allgather_hybrid(Node& self, Params p) {
  const NodeId x = self.id();
  const int n = self.topology().dim();
  const int k = static_cast<int>(p.k);
  Buffer all = gathered(self, p.M);
  const NodeId sub = NodeId{1} << k, low = x & ~(sub - 1);
  // SBT-b(1, 2^k) inside the k-subcube: its blocks, in order, are those of nodes low .. low + 2^k - 1.
  all.write(low * p.M,
            co_await routing::allgather_doubling(self, p.M, own_block(self, p.M), routing::SubCube::range(0, k)));
  // GCEA(1, 2^(n-k)) on the quotient cube: step s exchanges, across dimension k + (the rightmost
  // 0-bit of s-1), the super-block received in step s-1 (the k-subcube of x XOR (G(s-1) << k)).
  for (std::int64_t s = 1; s < (std::int64_t{1} << (n - k)); ++s) {
    const int d = k + gray::transition(s - 1, n - k);
    const NodeId from = low ^ (gray::encode(s - 1) << k);
    auto snd = self.send(d, all.slice(from * p.M, sub * p.M));
    auto rcv = self.recv(d);
    co_await all_of(snd, rcv);
    const NodeId got = low ^ (gray::encode(s) << k);
    all.write(got * p.M, rcv.take());
  }
  self.set_result(std::move(all));
}

/// allgather_hybrid as a step program (sim/steps.hpp), one-port and all-port (the process is the
/// same on both): the k doubling exchanges of allgather_doubling, then the GCEA's.
class HybridSteps final : public StepProgram {
 public:
  explicit HybridSteps(const Setup& s)
      : N_(s.topology.size()), n_(s.topology.dim()), k_(static_cast<int>(s.params.k)), M_(s.params.M) {}
  [[nodiscard]] std::int64_t steps() const override { return k_ + (std::int64_t{1} << (n_ - k_)) - 1; }
  /// Every node exchanges across one dimension a step (docs/lockstep.md "Uniform steps").
  [[nodiscard]] bool uniform(std::int64_t /*s*/) const override { return true; }
  void step(NodeId /*x*/, std::int64_t s, std::vector<StepOp>& ops) const override {
    int d = 0;
    std::int64_t elements = 0;
    if (s < k_) {  // doubling step i = s: the 2^i blocks gathered so far, across dimension i
      d = static_cast<int>(s);
      elements = (std::int64_t{1} << s) * M_;
    } else {  // GCEA step s - k + 1 on the quotient cube: a super-block of 2^k blocks
      d = k_ + gray::transition(s - k_, n_ - k_);
      elements = (std::int64_t{1} << k_) * M_;
    }
    ops.push_back({.kind = StepOp::Kind::send, .port = d, .tag = 0, .elements = elements});
    ops.push_back({.kind = StepOp::Kind::recv, .port = d, .tag = 0});
  }
  [[nodiscard]] std::int64_t result_elements(NodeId /*x*/) const override { return N_ * M_; }

 private:
  NodeId N_;
  int n_, k_;
  std::int64_t M_;
};

std::unique_ptr<StepProgram> hybrid_steps(const Setup& s) { return std::make_unique<HybridSteps>(s); }
/// Its part in the memory of its run: a few words.
std::optional<StepsMemory> hybrid_program_memory(const Setup& /*s*/) { return StepsMemory{}; }

/// TR-530 §5.1: Table 2 SBT-b(1,2^k) followed by GCEA(1,2^(n-k)) on blocks of 2^k M: element
/// transfers (2^k - 1)M + (2^(n-k) - 1) 2^k M = (N-1)M, start-ups
/// sum_{i<k} ceil(2^i M/B) + (2^(n-k) - 1) ceil(2^k M/B); buffer 2^k M. Exact.
Prediction predict_allgather_hybrid(const Setup& s) {
  const std::int64_t N = s.topology.size(), n = s.topology.dim(), M = s.params.M, B = s.params.B, k = s.params.k;
  Prediction pr;
  pr.source = "TR-530 §5.1 (Fig. 10): SBT-b(1,2^k) then GCEA(1,2^(n-k)), Table 2 rows";
  pr.element_transfers = (N - 1) * M;
  for (std::int64_t i = 0; i < k; ++i) pr.startups += ceil_div((std::int64_t{1} << i) * M, B);
  const std::int64_t steps = (std::int64_t{1} << (n - k)) - 1;
  pr.startups += steps * ceil_div((std::int64_t{1} << k) * M, B);
  pr.msg_startups = k + steps;
  pr.b_opt = static_cast<double>((std::int64_t{1} << k) * M);
  pr.min_startups = static_cast<double>(k + steps);
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

/// GCEA(n,N): (N-1) steps of one part on every port; the largest part, ceil(M/n), sets each
/// step (TR-530 Table 2: (1/n)(N-1)M, ceil(M/(nB))(N-1)). Exact.
Prediction predict_allgather_gcea(const Setup& s) {
  if (s.machine.ports.kind != PortKind::all || s.topology.dim() <= 1) return predict_ring_one_port(s, "GCEA(1,N)");
  return predict_rotated_gray(s, "TR-530 Table 2, GCEA(n,N)");
}

/// The largest number of the n rotated Gray-code rings that leave one node across one dimension.
std::int64_t cra_port_load(int n) {
  const std::uint64_t N = std::uint64_t{1} << n;
  std::int64_t worst = 1;
  for (std::uint64_t x = 0; x < N; ++x) {
    std::vector<int> load(static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k) {
      const std::uint64_t q = gray::decode(trees::rotate_right(x, n, k));
      const int d = (gray::transition(q, n) + k) % n;
      worst = std::max<std::int64_t>(worst, ++load[d]);
    }
  }
  return worst;
}

/// CRA(n,N) has no Table 2 row ("the paths of the CRA(n, N) algorithm are not edge-disjoint, and
/// the load non-uniform"). We predict N-1 steps in which the busiest port carries L parts of
/// ceil(M/n) elements one after the other, L = the largest number of rings leaving a node across
/// one dimension: an upper bound; with L = 1 it would be the GCEA(n,N) row.
Prediction predict_allgather_cra(const Setup& s) {
  const std::int64_t N = s.topology.size(), n = s.topology.dim(), M = s.params.M, B = s.params.B;
  if (s.machine.ports.kind != PortKind::all || n <= 1) return predict_ring_one_port(s, "CRA(1,N)");
  Prediction pr;
  const std::int64_t L = cra_port_load(static_cast<int>(n));
  pr.source = "TR-530 §4.2.1 CRA(n,N) (no Table 2 row): N-1 steps, busiest port " + std::to_string(L) + " parts";
  pr.relation = Relation::upper_bound;
  const std::int64_t part = ceil_div(M, n);
  pr.element_transfers = L * part * (N - 1);
  pr.startups = L * ceil_div(part, B) * (N - 1);
  pr.msg_startups = L * (N - 1);
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

Prediction predict_allgather_sbt(const Setup& s) {
  if (s.machine.ports.kind != PortKind::all) return predict_allgather_sbt_one_port(s);
  // SBT-b(n,N): N translated SBTs, all ports at once, the edge into a node of depth i+1 in step
  // i; the busiest port (dimension 0) carries C(n-1, i) blocks in step i. Exact.
  return predict_sbt_levels(s, "TR-530 Table 2, SBT-b(n,N)");
}

/// Table 2, SBnT-b and nRSBT-b. One-port (1,N): (N-1)M, max(2n-1, (N-1)M/B). n-port (n,N):
/// (1/n)(N-1)M, sum_{i=1}^{n} ceil(C(n,i) M / (nB)).
Prediction predict_allgather_trees(const Setup& s, routing::Family f) {
  const std::string name = routing::family_name(f);
  const std::int64_t N = s.topology.size(), n = s.topology.dim(), M = s.params.M, B = s.params.B;
  Prediction pr;
  const double nn = static_cast<double>(std::max<std::int64_t>(n, 1));
  if (s.machine.ports.kind == PortKind::all) {
    pr = predict_balanced_levels(s, "TR-530 Table 2, " + name + "-b(n,N)");
  } else {
    pr.source = "TR-530 Table 2, " + name + "-b(1,N)";
    pr.element_transfers = (N - 1) * M;
    pr.startups = n > 0 ? std::max(2 * n - 1, ceil_div((N - 1) * M, B)) : 0;
    pr.msg_startups = n > 0 ? 2 * n - 1 : 0;
    pr.b_opt = static_cast<double>((N - 1) * M) / nn;
    pr.min_startups = static_cast<double>(n > 0 ? 2 * n - 1 : 0);
  }
  // Measured departures (tests/test_algorithms_exact, n = 1..7, M up to 3001, B = 1..256):
  //  - nRSBT-b(n,N) is exact when n divides M (every port carries C(n,i) M / n elements in step
  //    i-1: the n rotations balance the load). The row assumes n | M; with parts that differ by
  //    one element the worst seen is 0.40 (n = 5, M = 7, B = 16); with M < n only M trees carry
  //    data and the load approaches that of one SBT: up to 2.37 above the row (n = 7, M = 1).
  //  - SBnT-b(n,N): the row assumes the C(n,i) nodes of level i split evenly over the n subtrees;
  //    they cannot (C(4,2) = 6 over 4 ports), and the busiest port sets each step: up to 1/3
  //    above the row (n = 2 and n = 4, where the levels give 4/3 of (N-1)/n).
  //  - One-port (1,N): "max(2n-1, (N-1)M/B_m)" approximates sum_s ceil(V_s/B) over the 2n-1
  //    steps of volumes V_s: within 0.36 (SBnT) and 0.28 (nRSBT, n | M) of the row; 0.46 for
  //    nRSBT when n does not divide M.
  const bool all_port = s.machine.ports.kind == PortKind::all;
  const bool nrsbt = f == routing::Family::nrsbt;
  if (n > 0 && !(all_port && nrsbt && M % n == 0)) {
    pr.relation = Relation::approx;
    if (!nrsbt)
      pr.tolerance = all_port ? 0.35 : 0.40;
    else if (!all_port)
      pr.tolerance = M % n == 0 ? 0.30 : 0.50;
    else
      pr.tolerance = M < n ? 2.5 : 0.45;
  }
  pr.time = prediction_time(s.machine, pr);
  return pr;
}

Verdict verify_allgather(const Setup& s, const std::vector<Buffer>& results) {
  const std::int64_t total = s.topology.size() * s.params.M;
  return verify_each(
      s, results, [&](NodeId) { return total; }, [](NodeId, std::int64_t i) { return static_cast<Element>(i); });
}

/// The memory model of an all-to-all broadcast (docs/reliability.md "Budgets"): every node ends
/// with the N blocks of M, N^2 M elements in all, at about 11 bytes an element (the 8 of the value,
/// the blocks' vectors, the copies in flight); and 800 bytes a node for each dimension (a node's
/// strands, its step's operations and queued receives), in both modes. Measured: allgather.sbt,
/// 2^10 nodes, M = 64, data mode, 721 MiB; on 2^14 nodes in timing mode, all-port, 18 KiB a node
/// with 224-byte operations, 8.1 KiB (580 bytes a dimension) with 128-byte ones (2026-11-27; the
/// model was 1.3 KiB a dimension before, and over twice allgather.nrsbt's peak on 2^12 nodes);
/// allgather.nrsbt, 2^12 nodes, timing, 550 bytes a dimension with 96-byte ones (2026-11-28, when
/// the model went from 1,000 bytes to 800: it was 2.05 times that peak).
std::int64_t allgather_memory(const Setup& s) {
  return model_bytes(s, {800.0 * s.topology.dim(), 11}, all_blocks_elements(s));
}
/// CRA holds more a node: 1.1-1.2 KiB a dimension all-port (2^9 to 2^11 nodes, timing, resident
/// memory over the process's own: 1,237, 1,188, 1,060 bytes; its second message on a port aborts
/// the closed forms and the run is made again), so 1,400 bytes a dimension.
std::int64_t allgather_cra_memory(const Setup& s) {
  return model_bytes(s, {1400.0 * s.topology.dim(), 11}, all_blocks_elements(s));
}

const Registration kRegistrationAllgather{[](Registry& r) {
  auto check = [](const Setup& s) { return check_cube_collective(s, false); };
  r.add({.name = "allgather.cra",
         .summary = "all-to-all broadcast: Cyclic Rotation Algorithm on the Gray-code ring (n rotated rings all-port)",
         .source = "TR-530 §4.2.1, Table 2 CRA(1,N); CRA(n,N)",
         .params = {"M", "B"},
         .required = {"M"},
         .check = check,
         .process = allgather_cra,
         .predict = predict_allgather_cra,
         .verify = verify_allgather,
         .memory = allgather_cra_memory,
         .steps = cra_steps,
         .steps_memory = cra_program_memory,
         .one_port = {.row = "T2 CRA(1,N)", .relation = "exact"},
         .all_port = {
             .row = "none (§4.2.1: \"not edge-disjoint, load non-uniform\"); derived: busiest port's parts per step",
             .relation = "upper bound",
             .deviations = {{Relation::upper_bound, 0, 0.167, "n=7 M=1 B=1"}}}});
  r.add({.name = "allgather.gcea",
         .summary = "all-to-all broadcast: Gray Code Exchange Algorithm (n rotated sequences all-port)",
         .source = "TR-530 §4.2.1, Table 2 GCEA(1,N) and GCEA(n,N)",
         .params = {"M", "B"},
         .required = {"M"},
         .check = check,
         .process = allgather_gcea,
         .predict = predict_allgather_gcea,
         .verify = verify_allgather,
         .memory = allgather_memory,
         .steps = gcea_steps,
         .steps_memory = gcea_program_memory,
         .one_port = {.row = "T2 GCEA(1,N)", .relation = "exact"},
         .all_port = {.row = "T2 GCEA(n,N), n rotated sequences", .relation = "exact (ceil(M/n) for M/n)"}});
  r.add({.name = "allgather.sbt",
         .summary = "all-to-all broadcast: exchange on N translated SBTs (all ports at once all-port)",
         .source = "TR-530 §4.2.2, Table 2 SBT-b(1,N) and SBT-b(n,N)",
         .params = {"M", "B"},
         .required = {"M"},
         .check = check,
         .process = allgather_sbt,
         .predict = predict_allgather_sbt,
         .verify = verify_allgather,
         .memory = allgather_memory,
         .steps = [](const Setup& s) { return trees_steps(s, routing::Family::sbt, true); },
         .steps_memory = [](const Setup& s) { return trees_program_memory(s, routing::Family::sbt, true); },
         .one_port = {.row = "T2 SBT-b(1,N), recursive doubling", .relation = "exact"},
         .all_port = {.row = "T2 SBT-b(n,N), all ports by depth", .relation = "exact"}});
  r.add({.name = "allgather.hybrid",
         .summary = "all-to-all broadcast: k SBT exchange steps, then the GCEA on 2^k-block super-blocks",
         .source = "TR-530 §5.1, Fig. 10 (Table 2 SBT-b(1,N) and GCEA(1,N))",
         .params = {"M", "B", "k"},
         .required = {"M", "k"},
         .check = [](const Setup& s) -> std::optional<SetupError> {
           if (auto e = check_cube_collective(s, false)) return e;
           if (s.params.k > s.topology.dim())
             return SetupError{"/params/k", "k = " + std::to_string(s.params.k) + " SBT steps exceed the cube's " +
                                                std::to_string(s.topology.dim()) + " dimensions"};
           return std::nullopt;
         },
         .process = allgather_hybrid,
         .predict = predict_allgather_hybrid,
         .verify = verify_allgather,
         .memory = allgather_memory,
         .steps = hybrid_steps,
         .steps_memory = hybrid_program_memory,
         .one_port = {.row = "§5.1: SBT-b(1,2^k) + GCEA(1,2^(n-k)) on 2^k M blocks", .relation = "exact"},
         .all_port = {.row = "runs the one-port schedule", .relation = "exact"}});
  r.add({.name = "allgather.sbnt",
         .summary = "all-to-all broadcast on N translated spanning balanced n-trees",
         .source = "TR-530 §4.2.3, Table 2 SBnT-b(1,N) and SBnT-b(n,N)",
         .params = {"M", "B"},
         .required = {"M"},
         .check = check,
         .process = allgather_sbnt,
         .predict = [](const Setup& s) { return predict_allgather_trees(s, routing::Family::sbnt); },
         .verify = verify_allgather,
         .memory = allgather_memory,
         .steps = [](const Setup& s) { return trees_steps(s, routing::Family::sbnt, false); },
         .steps_memory = [](const Setup& s) { return trees_program_memory(s, routing::Family::sbnt, false); },
         .one_port = {.row = "T2 SBnT-b(1,N), 2n-1 cyclic steps",
                      .relation = "approx <= 40 %",
                      .deviations = {{Relation::approx, 0.4, 0.358, "n=7 M=2 B=16"}}},
         .all_port = {.row = "T2 SBnT-b(n,N), n steps by depth",
                      .relation = "approx <= 35 % (the level imbalance 4/3 at n = 2 and 4)",
                      .deviations = {{Relation::approx, 0.35, 0.333, "n=2 M=100 B=1"}}}});
  r.add({.name = "allgather.nrsbt",
         .summary = "all-to-all broadcast on N translated sets of n rotated SBTs, one part of each block per tree",
         .source = "TR-530 §4.2.3, Table 2 nRSBT-b(1,N) and nRSBT-b(n,N)",
         .params = {"M", "B"},
         .required = {"M"},
         .check = check,
         .process = allgather_nrsbt,
         .predict = [](const Setup& s) { return predict_allgather_trees(s, routing::Family::nrsbt); },
         .verify = verify_allgather,
         .memory = allgather_memory,
         .steps = [](const Setup& s) { return trees_steps(s, routing::Family::nrsbt, false); },
         .steps_memory = [](const Setup& s) { return trees_program_memory(s, routing::Family::nrsbt, false); },
         .one_port = {.row = "T2 nRSBT-b(1,N), 2n-1 cyclic steps",
                      .relation = "approx <= 30 % (n | M), <= 50 % otherwise",
                      .deviations = {{Relation::approx, 0.3, 0.273, "n=4 M=100 B=256"},
                                     {Relation::approx, 0.5, 0.453, "n=6 M=1 B=256"}}},
         .all_port = {.row = "T2 nRSBT-b(n,N), n steps by depth",
                      .relation = "exact when n divides M; approx <= 45 %; <= 250 % for M < n",
                      .deviations = {{Relation::approx, 0.45, 0.396, "n=5 M=7 B=16"},
                                     {Relation::approx, 2.5, 2.37, "n=7 M=1 B=1"}}}});
}};

}  // namespace

}  // namespace cubesim
