#include "sim/lockstep.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <string_view>

#include "sim/errors.hpp"
#include "sim/kernel/pool.hpp"
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

/// A message on its way or arrived, not yet received: when its last packet ends and its chain.
struct Pending {
  Time end;
  Time pushed;  ///< when the engine pushes the event of its last packet's end (its key's second part)
  PathCounts chain;
  int tag = 0;
  std::uint8_t unsure = 0;
  std::uint32_t next = detail::kNone;
};

class Lockstep {
 public:
  Lockstep(const Machine& m, const Topology& topo, const EngineOptions& o, const StepProgram& program)
      : m_(m),
        topo_(topo),
        o_(o),
        program_(program),
        n_(static_cast<std::size_t>(topo.size())),
        ports_(static_cast<std::size_t>(std::max(1, topo.num_ports()))) {}

  std::optional<RunStats> run(std::vector<Buffer>& results) {
    const auto wall0 = std::chrono::steady_clock::now();
    T_.assign(n_, Time{});
    C_.assign(n_, PathCounts{});
    wt_.assign(n_, Time{});
    wp_.assign(n_, Time{});
    wc_.assign(n_, PathCounts{});
    wu_.assign(n_, 0);
    Cu_.assign(n_, 0);
    link_u_.assign(n_ * ports_, 0);
    comm_.assign(n_, Time{});
    link_free_.assign(n_ * ports_, Time{});
    link_chain_.assign(n_ * ports_, PathCounts{});
    load_.assign(n_ * ports_, 0);
    inbox_.assign(n_ * ports_, Inbox{});
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
    for (std::size_t x = 0; x < n_; ++x) last = std::max(last, T_[x]);
    bool first = true;
    for (std::size_t x = 0; x < n_; ++x) {
      if (T_[x] != last) continue;
      if (first) {
        st_.critical_path = C_[x];
        if (Cu_[x] != 0) return std::nullopt;
        first = false;
      } else if (Cu_[x] != 0 || !(C_[x] == st_.critical_path)) {
        return std::nullopt;
      }
    }
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

  /// A completion of node x's group at t with chain c, at the end of a transmission whose last
  /// packet's event the engine pushed at `pushed` (the engine's keep_chain, completing in the
  /// order of its events' keys (time, push time, sequence)): the last one wins, and of those at
  /// one instant the first pushed; one at the node's own time keeps the node's chain. Two at one
  /// instant, pushed at one instant, with different chains: a tie only the engine's sequence
  /// numbers would settle: the node goes on with one of them, marked unsure (`unsure`: c is
  /// already), and so does every chain that runs through it. The times do not depend on it; the
  /// run gives up only if an unsure chain ends up as the critical path.
  void fold(NodeId x, Time t, Time pushed, const PathCounts& c, std::uint8_t unsure) {
    const auto i = static_cast<std::size_t>(x);
    if (t > wt_[i] || (t == wt_[i] && t > T_[i] && pushed < wp_[i])) {
      wt_[i] = t;
      wp_[i] = pushed;
      wc_[i] = c;
      wu_[i] = unsure;
    } else if (t == wt_[i] && t > T_[i] && pushed == wp_[i] && (unsure != 0 || wu_[i] != 0 || !(c == wc_[i]))) {
      wu_[i] = 1;
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

  /// Node x posts step s: its sends leave now (the engine's StoreAndForward::advance of a
  /// message to a neighbour: link first come first served, all its packets in one go).
  void sends(NodeId x, std::int64_t s) {
    const auto i = static_cast<std::size_t>(x);
    ops_.clear();
    program_.step(x, s, ops_);
    recv_begin_[i] = recv_ops_.size();
    wt_[i] = T_[i];
    wc_[i] = C_[i];
    wu_[i] = Cu_[i];
    if (ops_.empty()) return;
    tick();
    ++st_.events;
    ++st_.resumes;
    const std::int64_t B = o_.packet_elements;
    for (const StepOp& op : ops_) {
      if (!op.send) {
        recv_ops_.push_back(op);  // for the receives' sweep
        continue;
      }
      const NodeId y = topo_.neighbor(x, op.port);
      if (y < 0)
        throw SimulationError("node " + std::to_string(x) + " step " + std::to_string(s) + ": port " +
                              std::to_string(op.port) + " has no link");
      const std::size_t li = link(x, op.port);
      Time start = T_[i];
      PathCounts ch = C_[i];
      std::uint8_t unsure = Cu_[i];
      if (link_free_[li] > start) {  // behind this node's earlier message on the link: its chain
        start = link_free_[li];
        ch = link_chain_[li];
        unsure = link_u_[li];
        ++st_.queued_transmissions;
      }
      const std::int64_t e = op.elements, k = e == 0 ? 1 : (e + B - 1) / B;
      const Time d = m_.tau * k + m_.tau_msg + m_.t_c * e;
      if (d <= Time{}) throw Abort{};  // ends as it starts: the engine's order of events decides
      ch.startups += k;
      ch.msg_startups += 1;
      ch.element_transfers += e;
      const Time end = start + d;
      // The per-packet engine pushes the last packet's end when that packet starts; a train or
      // a message in closed form pushes it with the same key (store_and_forward.cpp).
      const Time pushed = k == 1 ? start : end - (m_.tau + m_.t_c * (e - (k - 1) * B));
      link_free_[li] = end;
      link_chain_[li] = ch;
      link_u_[li] = unsure;
      ++st_.messages;
      st_.packets += k;
      st_.packet_hops += k;
      st_.element_hops += e;
      st_.largest_message = std::max(st_.largest_message, e);
      if (k > 1) ++st_.packet_trains;
      load_[li] += e;
      comm_[i] += d;
      fold(x, end, pushed, ch, unsure);
      const std::size_t ri = link(y, topo_.port_to(y, x));
      Inbox& b = inbox_[ri];
      Pending* p = &b.first;
      if (b.full) {  // a second message on the link before the first is received: in the pool
        const std::uint32_t pi = pool_.acquire();
        p = &pool_[pi];
        if (b.more_tail == detail::kNone)
          b.more_head = pi;
        else
          pool_[b.more_tail].next = pi;
        b.more_tail = pi;
      }
      b.full = true;
      p->end = end;
      p->pushed = pushed;
      p->chain = ch;
      p->unsure = unsure;
      p->tag = op.tag;
      p->next = detail::kNone;
    }
  }

  /// Node x's receives of step s, then its resumption; false where the engine's order decides.
  bool receives(NodeId x, std::int64_t s) {
    const auto i = static_cast<std::size_t>(x);
    for (std::size_t r = recv_begin_[i]; r < recv_begin_[i + 1]; ++r) {
      const StepOp& op = recv_ops_[r];
      if (topo_.neighbor(x, op.port) < 0)
        throw SimulationError("node " + std::to_string(x) + " step " + std::to_string(s) + ": port " +
                              std::to_string(op.port) + " has no link");
      const std::size_t ri = link(x, op.port);
      if (!take(inbox_[ri], op.tag, x)) return false;  // sent in a later step: not a step program's
    }
    T_[i] = wt_[i];
    C_[i] = wc_[i];
    Cu_[i] = wu_[i];
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
        const Inbox& b = inbox_[i * ports_ + p];
        if (b.full) ++st_.unreceived_messages;
        for (std::uint32_t pi = b.more_head; pi != detail::kNone; pi = pool_[pi].next) ++st_.unreceived_messages;
      }
      st_.max_node_comm_busy = std::max(st_.max_node_comm_busy, comm_[i]);
      st_.mean_node_comm_busy_s += comm_[i].seconds() / static_cast<double>(n_);
    }
    st_.mean_link_load = links > 0 ? static_cast<double>(load) / static_cast<double>(links) : 0.0;
    if (o_.progress != nullptr) o_.progress->fetch_add(st_.events - published_, std::memory_order_relaxed);
    st_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  }

 public:
  struct Abort {};

 private:
  const Machine& m_;
  const Topology& topo_;
  const EngineOptions& o_;
  const StepProgram& program_;
  std::size_t n_, ports_;
  RunStats st_;
  std::vector<Time> T_, wt_, wp_, comm_, link_free_;
  std::vector<PathCounts> C_, wc_, link_chain_;
  std::vector<std::uint8_t> wu_, Cu_, link_u_;  ///< chains marked unsure (fold)
  std::vector<std::int64_t> load_;
  /// Per receiving end of a link, the messages not yet received, oldest first: the first in
  /// place (a receiver's inboxes are side by side: the receives' sweep reads them in order), any
  /// more in the pool.
  struct Inbox {
    Pending first;
    std::uint32_t more_head = detail::kNone, more_tail = detail::kNone;
    bool full = false;
  };
  std::vector<Inbox> inbox_;
  detail::Pool<Pending> pool_;

  /// Node x receives the oldest message with `tag` in `b`; false if there is none.
  bool take(Inbox& b, int tag, NodeId x) {
    if (!b.full) return false;
    if (b.first.tag == tag) {
      fold(x, b.first.end, b.first.pushed, b.first.chain, b.first.unsure);
      if (b.more_head == detail::kNone) {
        b.full = false;
        return true;
      }
      const std::uint32_t pi = b.more_head;
      b.first = pool_[pi];
      b.more_head = pool_[pi].next;
      if (b.more_head == detail::kNone) b.more_tail = detail::kNone;
      pool_.release(pi);
      return true;
    }
    std::uint32_t prev = detail::kNone, pi = b.more_head;
    while (pi != detail::kNone && pool_[pi].tag != tag) {
      prev = pi;
      pi = pool_[pi].next;
    }
    if (pi == detail::kNone) return false;
    const Pending& p = pool_[pi];
    fold(x, p.end, p.pushed, p.chain, p.unsure);
    if (prev == detail::kNone)
      b.more_head = p.next;
    else
      pool_[prev].next = p.next;
    if (b.more_tail == pi) b.more_tail = prev;
    pool_.release(pi);
    return true;
  }
  std::vector<StepOp> ops_;
  std::vector<StepOp> recv_ops_;         ///< the step's receives, node by node
  std::vector<std::size_t> recv_begin_;  ///< node x's: recv_ops_[recv_begin_[x], recv_begin_[x + 1])
  std::int64_t since_check_ = 0, published_ = 0;
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
