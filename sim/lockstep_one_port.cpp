// The one-port lockstep simulator (docs/lockstep.md "One-port: the engine's order"): a step
// program on a one-port store-and-forward machine, timed message by message in the engine's
// order of events.
//
// On a one-port machine a message also holds its sender's outgoing slot and, packet by packet,
// its receiver's incoming slot, and two messages that ask for one slot at one instant are served
// in the engine's order of events (StoreAndForward::advance). In a synchronous exchange that is
// every step: a node goes on at the instant its partner's last message ends and asks for the next
// partner's incoming slot, which that partner's own last message frees at the same instant, in an
// event before or after it. The times do not depend on the order (the slot passes on at once), but
// the counts of queued transmissions and slot ties do, and the engine reports them. So this
// simulator keeps the engine's order instead of sweeping: it runs the program's operations as
// the engine's processes would post them and takes their ends in the engine's order, by key
// (time, push time, sequence number). Every end it pushes has the key the engine would give it,
// and the sequence numbers are the order of the pushes: events of one (time, push time) are kept
// in a first-in first-out bucket, which is the engine's order without a heap.
//
// What it does not do, it gives up on (the engine runs the point): a transmission that would
// queue between a packet train's packets (the engine breaks the train and interleaves the two
// messages packet by packet), a message of several packets that cannot go as a train, a message
// that takes no time, more than two tags waiting on one port, a process that never ends.

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/budgets.hpp"
#include "sim/errors.hpp"
#include "sim/kernel/huge_array.hpp"
#include "sim/kernel/prefetch.hpp"
#include "sim/lockstep.hpp"
#include "sim/lockstep_common.hpp"

namespace cubesim {

namespace {

constexpr std::uint32_t kNone = detail::kNone;
/// An event's payload: a transfer's index, or (this bit set) the node whose compute ends.
constexpr std::uint32_t kComputeBit = 0x80000000u;

/// Thrown where the engine would do what this simulator does not: the run gives up.
struct GiveUp {};

/// A node's outgoing or incoming slot (capacity 1): held or not, and who waits for it, oldest
/// first (the transfers' `next`).
struct Slot1 {
  std::int32_t busy = 0;
  std::uint32_t head = kNone, tail = kNone;
  [[nodiscard]] bool free() const { return busy == 0 && head == kNone; }
};

/// Receives posted (count > 0) or messages arrived unreceived (count < 0) for one tag on one port
/// of a receiver: the engine's match slot, without the records (a posted receive completes its
/// node's group; an arrived message is taken at once, with the receiver's own chain). A node has
/// kMatches of them, side by side: the next step's receive finds its entry in the line the last
/// one used.
struct TagCount {
  std::int32_t tag = 0;
  std::int16_t count = 0;
  std::uint8_t port = 0;
};
constexpr std::size_t kMatches = 8;
/// A node's match entries: one cache line, aligned (in a plain vector of entries a node's eight
/// straddled two lines, and the second was a miss in a fifth of the receives on 2^16 nodes).
struct alignas(64) Matches {
  TagCount e[kMatches];
};
static_assert(sizeof(Matches) == 64, "a node's match entries are one cache line");

template <class C>
class OnePort {
 public:
  OnePort(const Machine& m, const Topology& topo, const EngineOptions& o, const StepProgram& program)
      : m_(m),
        topo_(topo),
        o_(o),
        program_(program),
        n_(static_cast<std::size_t>(topo.size())),
        ports_(static_cast<std::size_t>(std::max(1, topo.num_ports()))) {}

  /// What run() holds a node on `ports` ports: its process, incoming slot and match entries, its
  /// links' loads, two transfers with their places in the free list and the end buckets, its result
  /// and, at the end, its busy times.
  static std::int64_t node_bytes(std::int64_t ports) {
    constexpr auto kTransfers = 2;
    return static_cast<std::int64_t>(sizeof(Proc) + sizeof(In) + sizeof(Matches) + sizeof(Buffer) + 2 * sizeof(Time) +
                                     kTransfers * (sizeof(Xfer) + 2 * sizeof(std::uint32_t))) +
           ports * static_cast<std::int64_t>(sizeof(std::int64_t));
  }

  std::optional<RunStats> run(std::vector<Buffer>& results) {
    const auto wall0 = std::chrono::steady_clock::now();
    procs_.assign(n_, Proc{});
    ins_.assign(n_, In{});
    if (program_.steps() > std::int64_t{0xffffffff}) throw GiveUp{};
    if (n_ > std::size_t{std::numeric_limits<std::int32_t>::max()}) throw GiveUp{};
    load_.assign(n_ * ports_, 0);
    match_.assign(n_, Matches{});
    steps_ = program_.steps();
    st_.lockstep_runs = 1;
    // Every process's first run, in node order, at time 0 with an empty chain (Engine::run_once).
    for (std::size_t x = 0; x < n_; ++x) {
      ++st_.resumes;
      process(static_cast<NodeId>(x), C{});
    }
    while (!buckets_.empty()) {
      auto it = buckets_.begin();
      now_ = Time::ps(it->first.first);
      std::vector<std::uint32_t> events = std::move(it->second);
      if (last_ == &it->second) last_ = nullptr;
      buckets_.erase(it);
      const std::vector<std::uint32_t>* next = buckets_.empty() ? nullptr : &buckets_.begin()->second;
      for (std::size_t j = 0; j < events.size(); ++j) {
        read_ahead(events, next, j);
        const std::uint32_t e = events[j];
        ++st_.events;
        --pending_;
        if ((e & kComputeBit) != 0)
          compute_end(static_cast<NodeId>(e & ~kComputeBit));
        else
          transfer_end(e);
        // The processes the event readied, in the order it readied them (Engine::run_once).
        for (std::size_t r = 0; r < ready_.size(); ++r) {
          const NodeId x = ready_[r];
          ++st_.resumes;
          process(x, procs_[static_cast<std::size_t>(x)].wc);
        }
        ready_.clear();
        if (st_.events + st_.resumes >= next_check_) check();
      }
      events.clear();
      spare_.push_back(std::move(events));
    }
    if (finished_ != n_) return std::nullopt;  // a process waits for ever: the engine says which
    st_.time = last_time_;
    st_.critical_path = last_chain_.counts();
    check_invariant(st_.critical_path.time(m_) == last_time_,
                    "the critical path accounts for the whole simulated time");
    for (const Matches& m : match_)
      for (const TagCount& t : m.e)
        if (t.count < 0) st_.unreceived_messages -= t.count;
    std::vector<Time> comm(n_), compute;
    for (std::size_t x = 0; x < n_; ++x) comm[x] = procs_[x].comm;
    if constexpr (kWide) {
      compute.resize(n_);
      for (std::size_t x = 0; x < n_; ++x) compute[x] = procs_[x].w.busy;
    }
    add_load_and_busy(topo_, ports_, load_, comm, compute, st_);
    detail::publish_progress(o_, st_.events, published_);
    st_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    results.assign(n_, Buffer{});
    for (std::size_t x = 0; x < n_; ++x) results[x] = Buffer::sized(program_.result_elements(static_cast<NodeId>(x)));
    return st_;
  }

 private:
  static constexpr bool kWide = std::is_same_v<C, detail::WideChain>;

  /// A message on its way to a neighbour (StoreAndForward's Transfer): when it asked for what it
  /// waits for, or, once it runs, when its last packet ends; its chain.
  /// The nodes and ports first: read_ahead reads them 12 ends ahead, from the line it asked for 32
  /// ends ahead (with 64-bit nodes after the chain, `to` sat in a second line that nobody asked
  /// for: a quarter of the run's time on 2^16 nodes was that miss). One line with narrow chains.
  struct alignas(64) Xfer {
    std::int32_t from = 0, to = 0;  ///< nodes (run() gives up beyond 2^31 - 1)
    std::uint32_t next = kNone;     ///< the next waiter of the slot it waits for
    std::int32_t tag = 0;
    std::uint16_t port = 0, rport = 0;  ///< its port at the sender; the sender's at the receiver
    std::uint8_t stage = 0;             ///< 0: asks for the outgoing slot, 2: the incoming, 3: runs
    std::int64_t elements = 0;
    Time t;
    C c;
  };
  static_assert(kWide || sizeof(Xfer) == 64, "a transfer is one cache line with narrow chains");

  /// A node's process: its place in the program, its waiter (the latest completion of the group it
  /// awaits and that completion's chain, the operations outstanding), its outgoing slot and the
  /// time it sent. Programs that compute (wide chains) also keep the step's one compute after its
  /// group while the group runs (cached 1; 2: started) instead of asking the program for the step
  /// again, its flops, and the node's compute time. A compute's chain at its end is the waiter's
  /// (start_compute): a compute is awaited alone and ends after it starts. One cache line with
  /// narrow chains, two with wide ones (three before the compute's own copy of the chain went).
  struct None1 {};
  struct None2 {};
  struct Totals {
    Time busy;
    std::int64_t flops = 0;
  };
  struct alignas(64) Proc {
    Time wt;
    C wc;
    std::uint32_t step = 0;
    std::int32_t remaining = 0;
    std::uint16_t at = 0;               ///< operations of the step posted (0: none yet)
    std::uint8_t hint[2] = {255, 255};  ///< the last two ports it sent on (read_ahead)
    [[no_unique_address]] std::conditional_t<kWide, std::uint8_t, None1> cached{};
    Slot1 out;
    Time comm;  ///< its transmissions' time
    [[no_unique_address]] std::conditional_t<kWide, Totals, None2> w;
  };
  static_assert(sizeof(Proc) == (kWide ? 128 : 64), "a process is one cache line (two with wide chains)");
  /// A node's incoming slot: who holds and who waits, a packet train that holds it and when the
  /// train's last packet starts, and its last grant and last queue: when and by whom
  /// (StoreAndForward's SlotClaims, for the ties it counts). One cache line.
  struct alignas(64) In {
    Slot1 slot;
    std::uint32_t train = kNone;
    NodeId train_from = -1;
    Time train_last;
    std::int64_t granted_ps = -1, queued_ps = -1;
    NodeId granted_by = -1, queued_by = -1;
  };
  static_assert(sizeof(In) == 64, "an incoming slot is one cache line");

  void check() {
    next_check_ = st_.events + st_.resumes + 4096;
    detail::publish_progress(o_, st_.events, published_);
    detail::check_run_budgets(
        o_, {.events = st_.events, .resumes = st_.resumes}, true, [&] { return " by t=" + format_time(now_); },
        [] { return std::string(); });
  }

  /// Asks the cache for what the ends after the j-th of a bucket will touch: a transfer kFar ends
  /// ahead; its sender, its receiver, its link's load and their match entries kNear ends ahead;
  /// and kHint ends ahead the incoming slots of the neighbours the two sent to last, where their
  /// next sends most likely go (the rings of Cannon and the outer product). The bucket's order is
  /// the engine's, not the nodes': without this every end waited for four or five misses.
  static constexpr std::size_t kFar = 32, kNear = 12, kHint = 5;
  void hint(const Proc& v, NodeId x) const {
    for (const std::uint8_t p : v.hint)
      if (p != 255)
        if (const NodeId y = topo_.neighbor(x, p); y >= 0) detail::prefetch(&ins_[static_cast<std::size_t>(y)], true);
  }
  /// (`next`: the bucket after this one, where the ends after this bucket's last are.)
  void read_ahead(const std::vector<std::uint32_t>& events, const std::vector<std::uint32_t>* next,
                  std::size_t j) const {
    auto ahead = [&](std::size_t k) {  // the end k after the j-th, or none
      const std::size_t i = j + k;
      if (i < events.size()) return events[i];
      if (next != nullptr && i - events.size() < next->size()) return (*next)[i - events.size()];
      return kNone;
    };
    if (const std::uint32_t f = ahead(kFar); f != kNone && (f & kComputeBit) == 0) detail::prefetch_lines(xf_[f]);
    const std::uint32_t e = ahead(kNear);
    if (e == kNone) return;
    if ((e & kComputeBit) != 0) {
      detail::prefetch_lines(procs_[e & ~kComputeBit], true);
      detail::prefetch(&match_[e & ~kComputeBit], true);  // the next step's receives
      program_.prefetch(static_cast<NodeId>(e & ~kComputeBit));
    } else {
      const Xfer& t = xf_[e];
      const auto from = static_cast<std::size_t>(t.from), to = static_cast<std::size_t>(t.to);
      detail::prefetch_lines(procs_[from], true);  // wide chains: two lines
      detail::prefetch_lines(procs_[to], true);
      detail::prefetch(&ins_[to], true);
      detail::prefetch(&load_[from * ports_ + t.port], true);
      detail::prefetch(&match_[to], true);
      detail::prefetch(&match_[from], true);
      program_.prefetch(t.from);
      program_.prefetch(t.to);
    }
    const std::uint32_t h = ahead(kHint);
    if (h == kNone) return;
    if ((h & kComputeBit) != 0) {
      hint(procs_[h & ~kComputeBit], static_cast<NodeId>(h & ~kComputeBit));
      return;
    }
    const Xfer& u = xf_[h];
    hint(procs_[static_cast<std::size_t>(u.from)], u.from);
    hint(procs_[static_cast<std::size_t>(u.to)], u.to);
  }

  /// Pushes an end at `end`, pushed at `pushed`, after every end pushed before it with that key.
  void push(Time end, Time pushed, std::uint32_t payload) {
    const std::pair<std::int64_t, std::int64_t> key{end.count(), pushed.count()};
    if (last_ == nullptr || key != last_key_) {
      auto [it, added] = buckets_.try_emplace(key);
      if (added && !spare_.empty()) {
        it->second = std::move(spare_.back());
        spare_.pop_back();
      }
      last_ = &it->second;
      last_key_ = key;
    }
    last_->push_back(payload);
    if (++pending_ > st_.peak_queue) st_.peak_queue = pending_;  // (the engine's counter: the bench's live size)
  }

  /// The engine's keep_chain and complete: the later completion's chain (of two at one instant,
  /// the first taken), and the process readied when its last operation completes.
  void complete(NodeId x, const C& c) {
    Proc& v = procs_[static_cast<std::size_t>(x)];
    if (now_ > v.wt) {
      v.wt = now_;
      v.wc = c;
    }
    if (--v.remaining == 0) ready_.push_back(x);
  }

  /// Process x runs from now with chain c until it waits or ends: the rest of its step (its
  /// group of sends and receives, then its computes, one await each), then the steps after it.
  void process(NodeId x, C c) {
    Proc& v = procs_[static_cast<std::size_t>(x)];
    for (;;) {
      if (v.step >= steps_) {
        ++finished_;
        if (now_ > last_time_ || finished_ == 1) {  // the first process to end last (Engine::run_once)
          last_time_ = now_;
          last_chain_ = c;
        }
        return;
      }
      if constexpr (kWide) {
        if (v.at > 0 && v.cached != 0) {  // its group, or the compute after it, has completed
          if (v.cached == 1) {
            v.cached = 2;
            if (start_compute(x, v, c, v.w.flops)) return;
          }
          v.cached = 0;
          v.at = 0;
          ++v.step;
          continue;
        }
      } else if (v.at > 0) {  // its group has completed, and such a program has no computes
        v.at = 0;
        ++v.step;
        continue;
      }
      if (v.at == 0) {  // a new step: skip those that post nothing (StepProgram::next_step)
        const std::int64_t s = detail::next_step(program_, x, v.step, steps_);
        if (s != v.step) {  // (step s is not asked again)
          v.step = static_cast<std::uint32_t>(s);
          if (s >= steps_) continue;
        }
      }
      ops_.clear();
      program_.step(x, v.step, ops_);
      if (ops_.size() > 0xffff) throw GiveUp{};  // (Proc::at)
      std::size_t i = v.at;
      if (i == 0) {
        std::size_t g = 0;
        while (g < ops_.size() && (ops_[g].kind == StepOp::Kind::send || ops_[g].kind == StepOp::Kind::recv)) ++g;
        for (std::size_t j = 0; j < ops_.size(); ++j) {
          if (ops_[j].strand != 0 || ops_[j].kind == StepOp::Kind::join)
            throw SimulationError("node " + std::to_string(x) + " step " + std::to_string(v.step) +
                                  ": a strand or a join in a program of one strand");
          if (j >= g && ops_[j].kind != StepOp::Kind::compute)
            throw SimulationError("node " + std::to_string(x) + " step " + std::to_string(v.step) +
                                  ": a send or receive after a compute");
          if (!kWide && ops_[j].kind == StepOp::Kind::compute)
            throw SimulationError("a compute in a program not wide()");
        }
        if (g > 0) {
          // The group (OpGroup::await_suspend): a guard count while its operations begin.
          v.wt = now_;
          v.wc = c;
          v.remaining = static_cast<std::int32_t>(g) + 1;
          v.at = static_cast<std::uint16_t>(g);
          for (std::size_t j = 0; j < g; ++j) {
            const StepOp& op = ops_[j];
            if (op.kind == StepOp::Kind::send)
              send(x, v.step, op, c);
            else if (recv(x, v.step, op))
              --v.remaining;  // arrived earlier: taken at once, the process's own chain
          }
          if (--v.remaining != 0) {
            if constexpr (kWide) {
              if (ops_.size() == g + 1) {  // one compute after the group: kept for the resume
                v.cached = 1;
                v.w.flops = ops_[g].elements;
              } else if (ops_.size() == g) {  // none: the step ends with the group
                v.cached = 2;
              }
            }
            return;
          }
        }
        i = g;
        v.at = static_cast<std::uint16_t>(g);
      }
      if constexpr (kWide) {
        while (i < ops_.size()) {
          const StepOp& op = ops_[i++];
          v.at = static_cast<std::uint16_t>(i);
          if (start_compute(x, v, c, op.elements)) return;
        }
      }
      v.at = 0;
      ++v.step;
    }
  }

  /// Node::compute (Engine::begin): t_a a flop and the call's t_call, one await; false where it
  /// takes no time (no flops, no t_call: it completes at once).
  bool start_compute(NodeId x, Proc& v, const C& c, std::int64_t flops) {
    const Time dur = m_.t_a * flops + m_.t_call;
    if (flops == 0 && dur == Time{}) return false;
    if (dur <= Time{}) throw GiveUp{};
    v.w.busy += dur;
    v.wt = now_;
    v.wc = c;
    v.wc.flops += flops;  // the chain at its end, which complete() takes (it ends after now_)
    v.wc.overheads += m_.t_call;
    v.remaining = 1;
    push(now_ + dur, now_, static_cast<std::uint32_t>(x) | kComputeBit);
    return true;
  }

  void compute_end(NodeId x) {
    if constexpr (kWide) {
      Proc& v = procs_[static_cast<std::size_t>(x)];
      complete(x, C(v.wc));
    }
  }

  /// Engine::start_send and StoreAndForward::send: a message to the neighbour on op's port.
  void send(NodeId x, std::int64_t s, const StepOp& op, const C& c) {
    const NodeId to = topo_.neighbor(x, op.port);
    if (to < 0) detail::no_link(x, s, op.port);
    const std::int64_t e = op.elements;
    std::uint32_t xi = kNone;
    if (free_.empty()) {
      xi = static_cast<std::uint32_t>(xf_.size());
      xf_.emplace_back();
    } else {
      xi = free_.back();
      free_.pop_back();
    }
    Xfer& t = xf_[xi];
    t.t = now_;
    t.c = c;
    t.elements = e;
    t.from = static_cast<std::int32_t>(x);
    t.to = static_cast<std::int32_t>(to);
    t.next = kNone;
    t.tag = op.tag;
    t.port = static_cast<std::uint16_t>(op.port);
    t.rport = static_cast<std::uint16_t>(topo_.port_to(to, x));
    t.stage = 0;
    Proc& v = procs_[static_cast<std::size_t>(x)];
    if (v.hint[0] != op.port && op.port < 255) {
      v.hint[1] = v.hint[0];
      v.hint[0] = static_cast<std::uint8_t>(op.port);
    }
    ++st_.messages;
    st_.packets += packets(e);
    st_.largest_message = std::max(st_.largest_message, e);
    advance(xi);
  }

  /// Engine::start_recv: true if a message from that neighbour with that tag has arrived.
  bool recv(NodeId x, std::int64_t s, const StepOp& op) {
    if (topo_.neighbor(x, op.port) < 0) detail::no_link(x, s, op.port);
    std::int16_t& n = match(x, op.port, op.tag);
    if (n == std::numeric_limits<std::int16_t>::max()) throw GiveUp{};
    if (n < 0) {
      ++n;
      return true;
    }
    ++n;
    return false;
  }

  /// Node x's entry for `tag` on `port`, made if there is none.
  std::int16_t& match(NodeId x, int port, std::int32_t tag) {
    TagCount* e = match_[static_cast<std::size_t>(x)].e;
    for (std::size_t i = 0; i < kMatches; ++i)
      if (e[i].count != 0 && e[i].tag == tag && e[i].port == port) return e[i].count;
    for (std::size_t i = 0; i < kMatches; ++i)
      if (e[i].count == 0) {
        e[i].tag = tag;
        e[i].port = static_cast<std::uint8_t>(port);
        return e[i].count;
      }
    throw GiveUp{};  // a ninth port and tag waiting at one node: beyond this table
  }

  /// A message's transmission (transmission_time, the engine's StoreAndForward::train_time).
  Time duration(std::int64_t e) const { return transmission_time(m_, packets(e), e); }

  std::int64_t packets(std::int64_t e) const {
    const std::int64_t B = o_.packet_elements;
    return e == 0 ? 1 : (e + B - 1) / B;
  }

  void enqueue(Slot1& r, std::uint32_t xi) {
    ++st_.queued_transmissions;
    xf_[xi].next = kNone;
    if (r.tail == kNone)
      r.head = xi;
    else
      xf_[r.tail].next = xi;
    r.tail = xi;
  }

  /// StoreAndForward::advance for a message to a neighbour on a one-port machine: its sender's
  /// outgoing slot, its link (only its sender's messages use it, one at a time: always free), the
  /// receiver's incoming slot; then it runs.
  void advance(std::uint32_t xi) {
    for (;;) {
      Xfer& t = xf_[xi];
      if (t.stage == 0) {
        Slot1& o = procs_[static_cast<std::size_t>(t.from)].out;
        if (!o.free()) {
          enqueue(o, xi);
          return;
        }
        o.busy = 1;
        t.stage = 2;
        continue;
      }
      if (t.stage == 2) {
        In& r = ins_[static_cast<std::size_t>(t.to)];
        // A packet about to queue for a slot a train holds: the engine breaks the train at the
        // packet in flight (StoreAndForward::break_train); only if that is its last packet does
        // nothing change but the slot's last grant.
        if (r.slot.head == kNone && r.slot.busy != 0 && r.train != kNone) {
          if (now_ <= r.train_last) throw GiveUp{};  // packets would interleave: per packet from here
          r.train = kNone;
          r.granted_ps = r.train_last.count();
          r.granted_by = r.train_from;
        }
        if (r.slot.free()) {
          r.slot.busy = 1;
          r.granted_ps = now_.count();
          r.granted_by = t.from;
          t.stage = 3;
          continue;
        }
        if ((r.granted_ps == now_.count() && r.granted_by != t.from) ||
            (r.queued_ps == now_.count() && r.queued_by != t.from))
          ++st_.slot_ties;
        r.queued_ps = now_.count();
        r.queued_by = t.from;
        enqueue(r.slot, xi);
        return;
      }
      start(xi);
      return;
    }
  }

  /// A message that holds all it needs starts: a packet train (StoreAndForward::start_train), or
  /// its one packet; its end is pushed with the engine's key.
  void start(std::uint32_t xi) {
    Xfer& t = xf_[xi];
    const std::int64_t e = t.elements, k = packets(e);
    const Time busy = duration(e);
    if (busy <= Time{}) throw GiveUp{};  // ends as it starts: the engine's order of events decides
    t.c.startups += k;
    t.c.msg_startups += 1;
    t.c.element_transfers += e;
    st_.packet_hops += k;
    st_.element_hops += e;
    const Time end = now_ + busy;
    t.t = end;
    if (k == 1) {
      push(end, now_, xi);
      return;
    }
    // Trains need the receiver's slot with nobody waiting behind (train_eligible) and packets
    // that take time (break_train's arithmetic).
    In& r = ins_[static_cast<std::size_t>(t.to)];
    if (r.slot.head != kNone || m_.tau + m_.t_c * o_.packet_elements <= Time{}) throw GiveUp{};
    r.train = xi;
    r.train_from = t.from;
    r.train_last = end - (m_.tau + m_.t_c * (e - (k - 1) * o_.packet_elements));
    ++st_.packet_trains;
    push(end, r.train_last, xi);
  }

  /// Slot::release for a transmission that ended (`by`): the oldest waiter gets the slot, and its
  /// chain runs through `by`'s if it asked earlier.
  void release(Slot1& r, const Xfer& by) {
    if (r.head == kNone) {
      r.busy = 0;
      return;
    }
    const std::uint32_t wi = r.head;
    r.head = xf_[wi].next;
    if (r.head == kNone) r.tail = kNone;
    Xfer& w = xf_[wi];
    if (by.t > w.t) {
      w.t = by.t;
      w.c = by.c;
    }
    w.stage = w.stage == 0 ? 2 : 3;  // (its link, at stage 1, is free)
    advance(wi);
  }

  /// StoreAndForward::on_transfer_end for a message's last packet at its destination.
  void transfer_end(std::uint32_t xi) {
    const Xfer done = xf_[xi];
    // The link's load and the sender's busy time, counted at the end (their lines were asked for
    // ahead: read_ahead), not at the start.
    load_[static_cast<std::size_t>(done.from) * ports_ + done.port] += done.elements;
    procs_[static_cast<std::size_t>(done.from)].comm += duration(done.elements);
    In& r = ins_[static_cast<std::size_t>(done.to)];
    if (r.train == xi) r.train = kNone;  // a train's last packet (unless a queue found it there)
    if (r.slot.head != kNone) {          // when the next one asked (note_in_grant)
      r.granted_ps = xf_[r.slot.head].t.count();
      r.granted_by = xf_[r.slot.head].from;
    }
    release(r.slot, done);
    release(procs_[static_cast<std::size_t>(done.from)].out, done);
    free_.push_back(xi);
    // Delivered (Engine::match): a posted receive completes; else the message waits for one.
    std::int16_t& n = match(done.to, done.rport, done.tag);
    if (n == std::numeric_limits<std::int16_t>::min()) throw GiveUp{};
    if (n > 0) {
      --n;
      complete(done.to, done.c);
    } else {
      --n;
    }
    complete(done.from, done.c);  // the send completes when its last packet has left
  }

  const Machine& m_;
  const Topology& topo_;
  const EngineOptions& o_;
  const StepProgram& program_;
  std::size_t n_, ports_;
  std::int64_t steps_ = 0;
  RunStats st_;
  Time now_{};
  // The arrays every end reads at random: in huge pages (sim/kernel/huge_array.hpp).
  detail::HugeArray<Proc> procs_;
  detail::HugeArray<In> ins_;
  detail::HugeArray<Xfer> xf_;
  std::vector<std::uint32_t> free_;
  detail::HugeArray<Matches> match_;  ///< a node's
  std::vector<std::int64_t> load_;
  std::vector<StepOp> ops_;
  std::vector<NodeId> ready_;
  /// The pending ends by (time, push time), each bucket in push order: the engine's order.
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::uint32_t>> buckets_;
  std::vector<std::uint32_t>* last_ = nullptr;  ///< the bucket pushed to last
  std::pair<std::int64_t, std::int64_t> last_key_{};
  std::vector<std::vector<std::uint32_t>> spare_;  ///< emptied buckets' storage
  std::size_t finished_ = 0;
  Time last_time_{};
  C last_chain_{};
  std::int64_t next_check_ = 4096, published_ = 0, pending_ = 0;
};

}  // namespace

std::int64_t lockstep_one_port_node_bytes(std::int64_t ports, LockstepShape shape) {
  return shape.wide ? OnePort<detail::WideChain>::node_bytes(ports) : OnePort<detail::Chain>::node_bytes(ports);
}

std::optional<RunStats> run_lockstep_one_port(const Machine& m, const Topology& topo, const EngineOptions& options,
                                              const StepProgram& program, std::vector<Buffer>& results) {
  if (program.strands() != 1) return std::nullopt;  // strands: the engine's
  try {
    if (program.wide()) {
      OnePort<detail::WideChain> l(m, topo, options, program);
      return l.run(results);
    }
    OnePort<detail::Chain> l(m, topo, options, program);
    return l.run(results);
  } catch (const GiveUp&) {
    return std::nullopt;
  }
}

}  // namespace cubesim
