#include "sim/lockstep.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <string_view>

#include "sim/errors.hpp"
#include "sim/kernel/pool.hpp"
#include "sim/kernel/prefetch.hpp"
#include "sim/net/network.hpp"
#include "sim/resources.hpp"

namespace cubesim {

bool lockstep_supports(const Machine& m, const EngineOptions& options) {
  // What the engine's messages in closed form need too (sim/engine.cpp): the sender's link is the
  // only thing a message holds, and no software cost comes between a call and the network.
  return !options.data_mode && options.packet_trains && m.ports.kind == PortKind::all &&
         std::string_view(network_model_of(m).name) == "store_and_forward" && m.o_send == Time{} && m.o_recv == Time{};
}

namespace {

/// The part of a chain (PathCounts) a step program adds to: start-ups, message start-ups and
/// element transfers. Its flops, copies, delays, routing and overheads stay 0 (no computation, no
/// node software, store-and-forward), so 24 bytes stand for the 64 of a PathCounts.
struct Chain {
  std::int64_t startups = 0, msg_startups = 0, element_transfers = 0;
  bool operator==(const Chain&) const = default;
  [[nodiscard]] PathCounts counts() const {
    PathCounts p;
    p.startups = startups;
    p.msg_startups = msg_startups;
    p.element_transfers = element_transfers;
    return p;
  }
};

/// A message on its way or arrived, not yet received: when its last packet ends, when the engine
/// pushes that end's event (its key's second part), its chain.
struct Pending {
  Time end;
  Time pushed;
  Chain chain;
  std::int32_t tag = 0;
  std::uint32_t next = detail::kNone;  ///< the next message on the link, in the pool
  std::uint8_t unsure = 0;             ///< the chain is one of several the engine's order would pick from
  std::uint8_t full = 0;               ///< a link's first: holds a message
};

/// A directed link, by its sender's end: the messages sent on it and not yet received, oldest
/// first (the first in place, the rest in the pool), and when its last message ends. One cache
/// line; the sends' sweep writes a node's links side by side.
struct Link {
  Pending first;
  Time free;
};
static_assert(sizeof(Link) == 64, "a link is one cache line");

/// A node: its time and chain, and its group's last completion so far while a step is timed.
struct NodeState {
  Time t, wt, wp;  ///< the node's time; the group's last completion, and when its event was pushed
  Chain c, wc;
  std::uint8_t unsure = 0, wunsure = 0;
};

class Lockstep {
 public:
  struct Abort {};

  Lockstep(const Machine& m, const Topology& topo, const EngineOptions& o, const StepProgram& program)
      : m_(m),
        topo_(topo),
        o_(o),
        program_(program),
        n_(static_cast<std::size_t>(topo.size())),
        ports_(static_cast<std::size_t>(std::max(1, topo.num_ports()))) {}

  std::optional<RunStats> run(std::vector<Buffer>& results) {
    const auto wall0 = std::chrono::steady_clock::now();
    nodes_.assign(n_, NodeState{});
    comm_.assign(n_, Time{});
    links_.assign(n_ * ports_, Link{});
    load_.assign(n_ * ports_, 0);
    st_.resumes = static_cast<std::int64_t>(n_);  // each process's first run
    st_.lockstep_runs = 1;
    const std::int64_t steps = program_.steps();
    recv_begin_.assign(n_ + 1, 0);
    for (std::int64_t s = 0; s < steps; ++s) {
      recv_ops_.clear();
      for (std::size_t x = 0; x < n_; ++x) sends(static_cast<NodeId>(x), s);
      recv_begin_[n_] = recv_ops_.size();
      for (std::size_t x = 0; x < n_; ++x)
        if (!receives(static_cast<NodeId>(x), s)) return std::nullopt;
    }
    // The run ends when its last process ends; that process's chain is the critical path. The
    // engine keeps the first of those that end at that instant, in its order of events: unknown
    // here, so they must agree.
    Time last{};
    for (const NodeState& v : nodes_) last = std::max(last, v.t);
    const NodeState* first = nullptr;
    for (const NodeState& v : nodes_) {
      if (v.t != last) continue;
      if (v.unsure != 0) return std::nullopt;
      if (first == nullptr)
        first = &v;
      else if (!(v.c == first->c))
        return std::nullopt;
    }
    st_.critical_path = first != nullptr ? first->c.counts() : PathCounts{};
    st_.time = last;
    check_invariant(st_.critical_path.time(m_) == last, "the critical path accounts for the whole simulated time");
    finish(wall0);
    results.assign(n_, Buffer{});
    for (std::size_t x = 0; x < n_; ++x) results[x] = Buffer::sized(program_.result_elements(static_cast<NodeId>(x)));
    return st_;
  }

 private:
  std::size_t link(NodeId x, int port) const {
    return static_cast<std::size_t>(x) * ports_ + static_cast<std::size_t>(port);
  }

  /// A completion of node v's group at t with chain c, at the end of a transmission whose last
  /// packet's event the engine pushed at `pushed` (the engine's keep_chain, completing in the
  /// order of its events' keys (time, push time, sequence)): the last one wins, and of those at
  /// one instant the first pushed; one at the node's own time keeps the node's chain. Two at one
  /// instant, pushed at one instant, with different chains: a tie only the engine's sequence
  /// numbers would settle: the node goes on with one of them, marked unsure (`unsure`: c is
  /// already), and so does every chain that runs through it. The times do not depend on it; the
  /// run gives up only if an unsure chain ends up as the critical path.
  static void fold(NodeState& v, Time t, Time pushed, const Chain& c, std::uint8_t unsure) {
    if (t > v.wt || (t == v.wt && t > v.t && pushed < v.wp)) {
      v.wt = t;
      v.wp = pushed;
      v.wc = c;
      v.wunsure = unsure;
    } else if (t == v.wt && t > v.t && pushed == v.wp && (unsure != 0 || v.wunsure != 0 || !(c == v.wc))) {
      v.wunsure = 1;
    }
  }

  void tick() {
    // Budgets and the stop flag every 4,096 node-steps, as the engine checks them every 4,096
    // of its steps.
    if (++since_check_ < 4096) return;
    since_check_ = 0;
    if (o_.progress != nullptr) {
      o_.progress->fetch_add(st_.events - published_, std::memory_order_relaxed);
      published_ = st_.events;
    }
    if (o_.stop != nullptr)
      if (const int sig = o_.stop->load(std::memory_order_relaxed); sig != 0) throw Interrupted(sig);
    if (o_.max_events > 0 && st_.resumes > o_.max_events)
      throw BudgetError(BudgetError::Budget::events, "the budget of " + std::to_string(o_.max_events) +
                                                         " events is spent (" + std::to_string(st_.resumes) +
                                                         " resumes), a run longer than the budget");
    if (o_.max_resident_bytes > 0)
      if (const std::int64_t rss = resident_bytes(); rss > o_.max_resident_bytes)
        throw BudgetError(BudgetError::Budget::memory, "the memory budget of " + format_bytes(o_.max_resident_bytes) +
                                                           " is spent (" + format_bytes(rss) + " resident after " +
                                                           std::to_string(st_.resumes) + " resumes)");
  }

  [[noreturn]] static void no_link(NodeId x, std::int64_t s, int port) {
    throw SimulationError("node " + std::to_string(x) + " step " + std::to_string(s) + ": port " +
                          std::to_string(port) + " has no link");
  }

  /// Node x posts step s: its sends leave now (the engine's StoreAndForward::advance of a
  /// message to a neighbour: link first come first served, all its packets in one go).
  void sends(NodeId x, std::int64_t s) {
    const auto i = static_cast<std::size_t>(x);
    ops_.clear();
    program_.step(x, s, ops_);
    recv_begin_[i] = recv_ops_.size();
    NodeState& v = nodes_[i];
    v.wt = v.t;
    v.wc = v.c;
    v.wunsure = v.unsure;
    if (ops_.empty()) return;
    tick();
    ++st_.events;
    ++st_.resumes;
    // The run's counts, added up here and into the run's statistics once a node-step.
    std::int64_t messages = 0, packets = 0, elements = 0, largest = st_.largest_message, trains = 0;
    Time busy{};
    for (const StepOp& op : ops_) {
      if (!op.send) {
        recv_ops_.push_back(op);  // for the receives' sweep
        continue;
      }
      if (topo_.neighbor(x, op.port) < 0) no_link(x, s, op.port);
      const std::size_t li = link(x, op.port);
      Link& l = links_[li];
      Time start = v.t;
      Chain ch = v.c;
      std::uint8_t unsure = v.unsure;
      if (l.free > start) {  // behind this node's earlier message of the step on the link: its chain
        check_invariant(l.first.full != 0, "a link busy past its sender's step holds that step's message");
        const Pending& before = newest(l);
        start = l.free;
        ch = before.chain;
        unsure = before.unsure;
        ++st_.queued_transmissions;
      }
      const std::int64_t e = op.elements;
      if (e != size_.elements) size_ = sized(e);  // a step's messages have few sizes
      const std::int64_t k = size_.packets;
      const Time d = size_.duration;
      ch.startups += k;
      ch.msg_startups += 1;
      ch.element_transfers += e;
      const Time end = start + d;
      // The per-packet engine pushes the last packet's end when that packet starts; a train or
      // a message in closed form pushes it with the same key (store_and_forward.cpp).
      const Time pushed = k == 1 ? start : end - size_.last_packet;
      l.free = end;
      ++messages;
      packets += k;
      elements += e;
      largest = std::max(largest, e);
      trains += k > 1 ? 1 : 0;
      load_[li] += e;
      busy += d;
      fold(v, end, pushed, ch, unsure);
      Pending* p = &l.first;
      if (l.first.full != 0) {  // a second message on the link before the first is received: in the pool
        const std::uint32_t pi = pool_.acquire();
        p = &pool_[pi];
        Pending& tail = newest(l);  // (p is not yet linked)
        tail.next = pi;
      }
      p->end = end;
      p->pushed = pushed;
      p->chain = ch;
      p->unsure = unsure;
      p->tag = op.tag;
      p->next = detail::kNone;
      p->full = 1;
    }
    st_.messages += messages;
    st_.packets += packets;
    st_.packet_hops += packets;
    st_.element_hops += elements;
    st_.largest_message = largest;
    st_.packet_trains += trains;
    comm_[i] += busy;
  }

  /// A message's packets, its transmission's time, and its last packet's (the engine's
  /// Engine::start_send and StoreAndForward::train_time).
  struct Size {
    std::int64_t elements = -1, packets = 0;
    Time duration, last_packet;
  };
  Size sized(std::int64_t e) const {
    const std::int64_t B = o_.packet_elements;
    Size z;
    z.elements = e;
    z.packets = e == 0 ? 1 : (e + B - 1) / B;
    z.duration = m_.tau * z.packets + m_.tau_msg + m_.t_c * e;
    z.last_packet = m_.tau + m_.t_c * (e - (z.packets - 1) * B);
    if (z.duration <= Time{}) throw Abort{};  // ends as it starts: the engine's order of events decides
    return z;
  }

  /// The last message sent on a link that holds one.
  Pending& newest(Link& l) {
    Pending* p = &l.first;
    while (p->next != detail::kNone) p = &pool_[p->next];
    return *p;
  }

  static constexpr std::size_t kAhead = 4;
  /// Node x's receives of step s, then its resumption; false where the engine's order decides.
  bool receives(NodeId x, std::int64_t s) {
    const auto i = static_cast<std::size_t>(x);
    // The links of a node kAhead further on, whose messages are read from its neighbours' records:
    // asked for now, they arrive while this node and the next ones are timed.
    if (i + kAhead < n_)
      for (std::size_t r = recv_begin_[i + kAhead]; r < recv_begin_[i + kAhead + 1]; ++r) {
        const auto z = static_cast<NodeId>(i + kAhead);
        const NodeId from = topo_.neighbor(z, recv_ops_[r].port);
        if (from >= 0) detail::prefetch(&links_[link(from, topo_.port_to(from, z))]);
      }
    NodeState& v = nodes_[i];
    for (std::size_t r = recv_begin_[i]; r < recv_begin_[i + 1]; ++r) {
      const StepOp& op = recv_ops_[r];
      const NodeId from = topo_.neighbor(x, op.port);
      if (from < 0) no_link(x, s, op.port);
      // The message is in its sender's record of the link.
      if (!take(links_[link(from, topo_.port_to(from, x))], op.tag, v)) return false;  // sent in a later step
    }
    v.t = v.wt;
    v.c = v.wc;
    v.unsure = v.wunsure;
    return true;
  }

  /// Node v receives the oldest message with `tag` on link l; false if there is none.
  bool take(Link& l, int tag, NodeState& v) {
    if (l.first.full == 0) return false;
    if (l.first.tag == tag) {
      fold(v, l.first.end, l.first.pushed, l.first.chain, l.first.unsure);
      if (l.first.next == detail::kNone) {
        l.first.full = 0;
        return true;
      }
      const std::uint32_t pi = l.first.next;
      l.first = pool_[pi];  // (full, and its next)
      l.first.full = 1;
      pool_.release(pi);
      return true;
    }
    Pending* prev = &l.first;
    while (prev->next != detail::kNone && pool_[prev->next].tag != tag) prev = &pool_[prev->next];
    if (prev->next == detail::kNone) return false;
    const std::uint32_t pi = prev->next;
    const Pending& p = pool_[pi];
    fold(v, p.end, p.pushed, p.chain, p.unsure);
    prev->next = p.next;
    pool_.release(pi);
    return true;
  }

  void finish(std::chrono::steady_clock::time_point wall0) {
    std::int64_t links = 0, load = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      for (std::size_t p = 0; p < ports_ && topo_.num_ports() > 0; ++p) {
        if (topo_.neighbor(static_cast<NodeId>(i), static_cast<int>(p)) < 0) continue;
        ++links;
        const std::int64_t l = load_[i * ports_ + p];
        load += l;
        if (l > st_.max_link_load) {
          st_.max_link_load = l;
          st_.busiest_link_node = static_cast<NodeId>(i);
          st_.busiest_link_port = static_cast<int>(p);
        }
        const Pending& f = links_[i * ports_ + p].first;
        if (f.full != 0) ++st_.unreceived_messages;
        for (std::uint32_t pi = f.full != 0 ? f.next : detail::kNone; pi != detail::kNone; pi = pool_[pi].next)
          ++st_.unreceived_messages;
      }
      st_.max_node_comm_busy = std::max(st_.max_node_comm_busy, comm_[i]);
      st_.mean_node_comm_busy_s += comm_[i].seconds() / static_cast<double>(n_);
    }
    st_.mean_link_load = links > 0 ? static_cast<double>(load) / static_cast<double>(links) : 0.0;
    if (o_.progress != nullptr) o_.progress->fetch_add(st_.events - published_, std::memory_order_relaxed);
    st_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  }

  const Machine& m_;
  const Topology& topo_;
  const EngineOptions& o_;
  const StepProgram& program_;
  std::size_t n_, ports_;
  RunStats st_;
  std::vector<NodeState> nodes_;
  std::vector<Time> comm_;
  std::vector<Link> links_;
  std::vector<std::int64_t> load_;  ///< elements each link carried
  detail::Pool<Pending> pool_;
  std::vector<StepOp> ops_;
  std::vector<StepOp> recv_ops_;         ///< the step's receives, node by node
  std::vector<std::size_t> recv_begin_;  ///< node x's: recv_ops_[recv_begin_[x], recv_begin_[x + 1])
  std::int64_t since_check_ = 0, published_ = 0;
  Size size_;  ///< the last message's
};

}  // namespace

std::optional<RunStats> run_lockstep(const Machine& m, const Topology& topo, const EngineOptions& options,
                                     const StepProgram& program, std::vector<Buffer>& results) {
  if (!lockstep_supports(m, options)) return std::nullopt;
  Lockstep l(m, topo, options, program);
  try {
    return l.run(results);
  } catch (const Lockstep::Abort&) {
    return std::nullopt;
  }
}

}  // namespace cubesim
