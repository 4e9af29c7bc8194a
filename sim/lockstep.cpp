#include "sim/lockstep.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <exception>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>

#include "sim/budgets.hpp"
#include "sim/errors.hpp"
#include "sim/kernel/huge_array.hpp"
#include "sim/kernel/pool.hpp"
#include "sim/kernel/prefetch.hpp"
#include "sim/lockstep_common.hpp"
#include "sim/net/network.hpp"
#include "sim/resources.hpp"

namespace cubesim {

bool lockstep_supports(const Machine& m, const EngineOptions& options) {
  // What the engine's messages in closed form need too (sim/engine.cpp): the sender's link is the
  // only thing a message holds, and no software cost comes between a call and the network.
  // One-port machines: the one-port simulator (sim/lockstep_one_port.cpp), in the engine's order.
  return !options.data_mode && options.packet_trains &&
         (m.ports.kind == PortKind::all || m.ports.kind == PortKind::one) &&
         std::string_view(network_model_of(m).name) == "store_and_forward" && m.o_send == Time{} && m.o_recv == Time{};
}

namespace {

using detail::Chain;
using detail::WideChain;

/// A message on its way or arrived, not yet received: when its last packet ends, when the engine
/// pushes that end's event (its key's second part), its chain.
template <class C>
struct Pending {
  Time end;
  Time pushed;
  C chain;
  std::int32_t tag = 0;
  std::uint32_t next = detail::kNone;  ///< the next message on the link, in the pool
  std::uint8_t unsure = 0;             ///< the chain is one of several the engine's order would pick from
  std::uint8_t full = 0;               ///< a link's first: holds a message
  std::uint8_t strand = 0, epoch = 0;  ///< a link's first: the strand that sent last, and in which of its node's epochs
};

/// A directed link, by its sender's end: the messages sent on it and not yet received, oldest
/// first (the first in place, the rest in the pool), and when its last message ends. One cache
/// line (narrow records); the sends' sweep writes a node's links side by side.
template <class C>
struct Link {
  Pending<C> first;
  Time free;
};
static_assert(sizeof(Link<Chain>) == 64, "a link is one cache line");

/// A strand of a node: its time and chain, and its group's last completion so far while a step is
/// timed.
template <class C>
struct Strand {
  Time t, wt, wp;  ///< the strand's time; the group's last completion, and when its event was pushed
  C c, wc;
  std::uint8_t unsure = 0, wunsure = 0;
};

/// A node: its strands (the process is strand 0), and its epoch (joins so far, mod 256), which
/// tells the links' records which strands sent on them since the last join.
template <class C, int K>
struct NodeState {
  std::uint8_t epoch = 0;
  std::uint8_t running = 0;  ///< the strands k > 0 (bit k) forked and not yet joined
  std::array<Strand<C>, K> s;
};

/// Thrown where the engine's order of events would decide: the run gives up.
struct Abort {};
/// Thrown by a step timed from extrapolated records where the true records could not be
/// (Lockstep::repeat): the extrapolation is refused, nothing else.
struct VerifyFailed {};

/// kWide: chains with flops and overheads (a program that computes); K: strands a node (1, or
/// StepProgram::kMaxStrands for a program that forks).
template <bool kWide, int K>
class Lockstep {
 public:
  using C = std::conditional_t<kWide, WideChain, Chain>;
  using Pend = Pending<C>;
  using Lnk = Link<C>;
  using Node = NodeState<C, K>;
  using St = Strand<C>;
  /// How many nodes ahead of the one being timed its links are asked of the cache: its own in
  /// the sends' sweep, its neighbours' in the receives' (8 against 4: 0.94 on CRA 2^12; 16: 1.06).
  static constexpr std::size_t kAhead = 4, kRecvAhead = 8;

  Lockstep(const Machine& m, const Topology& topo, const EngineOptions& o, const StepProgram& program)
      : m_(m),
        topo_(topo),
        o_(o),
        program_(program),
        n_(static_cast<std::size_t>(topo.size())),
        ports_(static_cast<std::size_t>(std::max(1, topo.num_ports()))) {
    // Contiguous ranges of nodes, one a worker, none empty.
    const std::size_t t =
        std::clamp<std::size_t>(static_cast<std::size_t>(std::max(1, o.threads)), 1, std::max<std::size_t>(1, n_ / 16));
    chunk_ = (n_ + t - 1) / t;
    workers_.resize((n_ + chunk_ - 1) / chunk_);
    for (std::size_t w = 0; w < workers_.size(); ++w) {
      workers_[w].lo = w * chunk_;
      workers_[w].hi = std::min(n_, (w + 1) * chunk_);
    }
  }

  std::optional<RunStats> run(std::vector<Buffer>& results) {
    const auto wall0 = std::chrono::steady_clock::now();
    nodes_.assign(n_, Node{});
    comm_.assign(n_, Time{});
    links_.assign(n_ * ports_, Lnk{});
    load_.assign(n_ * ports_, 0);
    if (kWide) compute_.assign(n_, Time{});
    recv_range_.assign(n_, {0, 0});
    touched_.assign(n_, 0);
    next_.assign(n_, 0);
    st_.resumes = static_cast<std::int64_t>(n_);  // each process's first run
    st_.lockstep_runs = 1;
    steps_ = program_.steps();
    if constexpr (K == 1) decide_uniform();  // (every node starts in one state)
    if (workers_.size() == 1) {
      body(0, nullptr);
    } else {
      // Every worker times its nodes' sends, waits for all, times their receives, waits for all;
      // between two steps one of them (the barrier's completion) frees what was received and
      // checks the budgets. A node's timing reads only its own state and the records of the links
      // into it, which no other worker writes in that sweep: the report is the same for any
      // number of workers.
      Sync sync(static_cast<std::ptrdiff_t>(workers_.size()), Between{this});
      std::vector<std::jthread> threads;
      for (std::size_t w = 1; w < workers_.size(); ++w) threads.emplace_back([this, w, &sync] { body(w, &sync); });
      body(0, &sync);
    }
    // (A run that stopped in a uniform step did so with an error or gave up: node 0's records
    // are not spread, its links may hold the messages of a step that stopped part of the way.)
    if (error_) std::rethrow_exception(error_);
    if (gave_up_) return std::nullopt;
    check_invariant(!uniform_, "a run ends out of uniform steps (decide_uniform left them)");
    for (const Worker& w : workers_) {
      st_.messages += w.messages;
      st_.packets += w.packets;
      st_.packet_hops += w.packets;
      st_.element_hops += w.elements;
      st_.largest_message = std::max(st_.largest_message, w.largest);
      st_.packet_trains += w.trains;
      st_.queued_transmissions += w.queued;
    }
    // The run ends when its last process ends; that process's chain is the critical path. The
    // engine keeps the first of those that end at that instant, in its order of events: unknown
    // here, so they must agree.
    Time last{};
    for (const Node& v : nodes_) last = std::max(last, v.s[0].t);
    const St* first = nullptr;
    for (const Node& u : nodes_) {
      if (u.running != 0)
        throw SimulationError("a step program ends with strand " + std::to_string(std::countr_zero(u.running)) +
                              " not joined");
      const St& v = u.s[0];
      if (v.t != last) continue;
      if (v.unsure != 0) return std::nullopt;
      if (first == nullptr)
        first = &v;
      else if (!(v.c == first->c))
        return std::nullopt;
    }
    st_.lockstep_repeated_steps = repeated_;
    st_.lockstep_uniform_steps = uniform_steps_;
    if (o_.node_times != nullptr) {
      o_.node_times->resize(n_);
      for (std::size_t i = 0; i < n_; ++i) (*o_.node_times)[i] = nodes_[i].s[0].t;
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
  /// A worker: a range of nodes, its scratch, its counts, and the pool of the messages its nodes
  /// send beyond a link's first.
  struct alignas(128) Worker {  // (its counts change every message: no line shared with another's)
    std::size_t lo = 0, hi = 0;
    std::vector<StepOp> ops, recv_ops;
    std::int64_t messages = 0, packets = 0, elements = 0, largest = 0, trains = 0, queued = 0, node_steps = 0;
    detail::Pool<Pend> pool;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> received;  ///< (worker, index) of pooled messages taken
    struct Size {
      std::int64_t elements = -1, packets = 0;
      Time duration, last_packet;
    };
    /// The last messages' sizes, by their elements mod 4 (a step's messages have few sizes, and
    /// CRA's parts two neighbouring ones, which one entry kept dividing for in turn).
    std::array<Size, 4> sizes;
    /// While a step is recorded (repeat()): the outcome of every comparison of times its nodes'
    /// timing made, in order, and the chains' differences where chains were compared at a tie.
    std::vector<std::uint16_t> trace;
    std::vector<C> chain_differences;
  };

  /// The barrier's completion: between_steps, on the last thread to arrive.
  struct Between {
    Lockstep* l;
    void operator()() noexcept { l->end_step(); }
  };
  /// The workers' barrier, twice a step: the last to arrive runs the completion (only at the end
  /// of a step: `complete`) and opens the next phase; the others spin on the phase for 4,096 pauses
  /// (up to about 0.2 ms; a sweep's imbalance is tens of microseconds) and only then sleep
  /// (std::atomic::wait). std::barrier spins only a few times before it sleeps: a futex wait and
  /// wake at most crossings. (It also ran its completion at both crossings of a step, so that two
  /// threads counted each step twice in a budget's message.)
  class Sync {
   public:
    Sync(std::ptrdiff_t n, Between done) : n_(n), left_(n), done_(done) {}
    void arrive_and_wait(bool complete) noexcept {
      const std::uint32_t phase = phase_.load(std::memory_order_acquire);
      if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        if (complete) done_();
        left_.store(n_, std::memory_order_relaxed);
        phase_.store(phase + 1, std::memory_order_release);
        phase_.notify_all();
        return;
      }
      for (int i = 0; i < kSpins; ++i) {
        if (phase_.load(std::memory_order_acquire) != phase) return;
        relax();
      }
      while (phase_.load(std::memory_order_acquire) == phase) phase_.wait(phase, std::memory_order_acquire);
    }

   private:
    static constexpr int kSpins = 1 << 12;
    static void relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    const std::ptrdiff_t n_;
    alignas(64) std::atomic<std::ptrdiff_t> left_;
    alignas(64) std::atomic<std::uint32_t> phase_{0};
    Between done_;
  };

  /// Worker wi's part of every step (sync: the other workers', or null when it is alone).
  void body(std::size_t wi, Sync* sync) {
    Worker& w = workers_[wi];
    for (std::int64_t s = 0; s < steps_; ++s) {
      w.recv_ops.clear();
      if (recording_) {
        w.trace.clear();
        w.chain_differences.clear();
      }
      // A recorded step (repeat()) runs the sweeps' recording forms: the others pay nothing for it
      // (a run-time test in the timing of every message cost GCEA 1.17 paired). A uniform step
      // (decide_uniform) is node 0's alone, on the first worker, its receives from its own links.
      const bool record = recording_, uni = uniform_;
      const std::size_t lo = uni ? 0 : w.lo, hi = uni ? (wi == 0 ? 1 : 0) : w.hi;
      guarded([&] {
        if (record)
          for (std::size_t x = lo; x < hi; ++x) sends<true>(w, static_cast<NodeId>(x), s);
        else
          for (std::size_t x = lo; x < hi; ++x) sends<false>(w, static_cast<NodeId>(x), s);
      });
      if (sync != nullptr) sync->arrive_and_wait(false);
      guarded([&] {
        bool ok = true;
        if (record)
          for (std::size_t x = lo; x < hi && ok; ++x) ok = receives<true, false>(w, static_cast<NodeId>(x), s);
        else if (uni)
          for (std::size_t x = lo; x < hi && ok; ++x) ok = receives<false, true>(w, static_cast<NodeId>(x), s);
        else
          for (std::size_t x = lo; x < hi && ok; ++x) ok = receives<false, false>(w, static_cast<NodeId>(x), s);
        // (a step timed from extrapolated records only fails its check: repeat())
        if (!ok) (verifying_ ? verify_failed_ : gave_up_).store(true);
      });
      if (sync != nullptr)
        sync->arrive_and_wait(true);
      else
        end_step();
      // Every worker reads the one decision end_step took on its own line: had each read the
      // flags, a worker that set one in the next step's sends could stop another, which had not
      // read them yet, before the barrier the first then waits at for ever.
      if (stop_) return;
      s += skip_;  // steps end_step added as repeats of this one, or took back (repeat())
    }
  }

  /// The exception being handled stops the run; the first is rethrown from run().
  void keep_error() noexcept {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (!error_) error_ = std::current_exception();
    failed_.store(true);
  }

  /// Runs f; an exception (a program's error, a budget) stops the run and is rethrown from run().
  template <class F>
  void guarded(F&& f) {
    if (failed_.load() || gave_up_.load() || verify_failed_.load()) return;
    try {
      f();
    } catch (const VerifyFailed&) {
      verify_failed_.store(true);
    } catch (const Abort&) {
      gave_up_.store(true);
    } catch (...) {
      keep_error();
    }
  }

  /// The end of a step, on one thread (the barrier's completion): between_steps, then whether the
  /// workers stop, decided once for all of them.
  void end_step() noexcept {
    // (a step that failed or gave up counts no further: the run stops with its first outcome)
    if (uniform_ && !failed_.load() && !gave_up_.load()) count_uniform_step();
    between_steps();
    stop_ = gave_up_.load() || failed_.load();
    skip_ = 0;
    if constexpr (K == 1) {
      if (!stop_) {
        try {
          if (!uniform_ && o_.lockstep_repeats) repeat();
          decide_uniform();
        } catch (...) {
          keep_error();
          stop_ = true;
        }
      }
    }
  }

  /// Uniform steps (StepProgram::uniform; docs/lockstep.md "Uniform steps"), decided before each
  /// step on one thread. On a hypercube each translation x -> x XOR a keeps ports: node x's port p
  /// leads to x XOR 2^p, whose port p leads back. Let every node's record be node 0's, every
  /// link's record its port's link of node 0, no message on any link; let every node post in the
  /// step what node 0 posts. A node's timing reads its record, its links' and the links into it
  /// (translates of its own, in the same state), and writes its record, its links' and the
  /// messages it takes: every node's timing is node 0's, translated, and after the step the
  /// machine is again all in node 0's state. So node 0 is timed alone, its receives taken from
  /// its own links (the link from its neighbour across p is in the state of its own across p), and
  /// its counts are counted for every node. The step must leave no message on a link: node 0
  /// receives what it sends, port and tag for port and tag (balanced()), so its neighbours' sends
  /// are all taken. Leaving uniform steps, every node gets node 0's records (spread()); entering
  /// them, all nodes and links must be alike (alike(), a pass over the machine: if they are not,
  /// the next look waits 16 steps, then 32, ...). Not with strands (K > 1), nor while repeat()
  /// records.
  void decide_uniform() {
    const std::int64_t s = done_steps_;  // the next step (skip_ is 0: no repeat under way)
    const bool want = o_.lockstep_uniform && skip_ == 0 && phase_ == Phase::none && s < steps_ &&
                      topo_.kind() == Topology::Kind::hypercube && program_.uniform(s) && balanced(s);
    if (uniform_ && !want) {
      spread();
      uniform_ = false;
    } else if (!uniform_ && want && s >= next_uniform_try_) {
      if (alike()) {
        uniform_ = true;
      } else {
        uniform_wait_ = std::max<std::int64_t>(16, 2 * uniform_wait_);
        next_uniform_try_ = s + uniform_wait_;
      }
    }
    if (uniform_) uniform_base_ = counts(workers_[0]);
  }
  /// Node 0's operations of step s receive on each port and tag as often as they send there.
  bool balanced(std::int64_t s) {
    uniform_ops_.clear();
    program_.step(0, s, uniform_ops_);
    std::vector<std::pair<int, int>>& sent = uniform_sent_;
    std::vector<std::pair<int, int>>& got = uniform_got_;
    sent.clear();
    got.clear();
    for (const StepOp& op : uniform_ops_) {
      if (op.kind == StepOp::Kind::send) sent.emplace_back(op.port, op.tag);
      if (op.kind == StepOp::Kind::recv) got.emplace_back(op.port, op.tag);
      if (op.kind == StepOp::Kind::join || op.strand != 0) return false;  // (no strands here)
    }
    std::sort(sent.begin(), sent.end());
    std::sort(got.begin(), got.end());
    return sent == got;
  }
  /// Every node's record and busy times are node 0's; every link is empty and its time and load
  /// are those of node 0's link on its port. (Not the nodes' next steps, next_: a step one skips
  /// is empty, and in a uniform step every node posts what node 0 posts.)
  bool alike() const {
    const St& v0 = nodes_[0].s[0];
    for (std::size_t i = 1; i < n_; ++i) {
      if (!same(nodes_[i].s[0], v0) || comm_[i] != comm_[0]) return false;
      if (kWide && compute_[i] != compute_[0]) return false;
    }
    for (std::size_t li = 0; li < links_.size(); ++li) {
      const std::size_t p = li % ports_;
      if (links_[li].first.full != 0 || links_[li].free != links_[p].free || load_[li] != load_[p]) return false;
    }
    return true;
  }
  /// Every node takes node 0's records, its links those of node 0's links, before step s. Node 0's
  /// next step that may post (next_) is its own (StepProgram::next_step speaks of one node): the
  /// others go on at step s, or at node 0's where that is s or before.
  void spread() {
    for (std::size_t p = 0; p < ports_; ++p)
      check_invariant(links_[p].first.full == 0, "a uniform step leaves no message on a link");
    const std::int64_t s = std::min(next_[0], done_steps_);
    for (std::size_t i = 1; i < n_; ++i) {
      nodes_[i] = nodes_[0];
      comm_[i] = comm_[0];
      if (kWide) compute_[i] = compute_[0];
      next_[i] = s;
      touched_[i] = touched_[0];
      for (std::size_t p = 0; p < ports_; ++p) {
        links_[i * ports_ + p] = links_[p];
        load_[i * ports_ + p] = load_[p];
      }
    }
  }
  /// Node 0's counts of the uniform step just timed, for every node.
  void count_uniform_step() {
    std::array<std::int64_t, 6> c = counts(workers_[0]);
    for (std::size_t k = 0; k < c.size(); ++k) c[k] += (c[k] - uniform_base_[k]) * static_cast<std::int64_t>(n_ - 1);
    set_counts(workers_[0], c);
    ++uniform_steps_;
  }

  /// Repeated steps (StepProgram::repeats; docs/lockstep.md "Repeated steps"), between two steps
  /// on one thread. A step is a function of the records it reads and writes (the times and chains
  /// of the nodes that post, the links they send on, the messages it leaves there and takes back)
  /// made of comparisons of times (and of chains at ties) and of additions of durations and counts
  /// that do not depend on the time. Record its comparisons' outcomes, the trace, in a step b
  /// timed from records A, ending in records B. With the outcomes fixed a step takes each record
  /// from one it reads plus a constant; where, besides, the increments have settled (settled()),
  /// each later step that compares alike adds B - A again, and both sides of every comparison move
  /// on by a fixed amount a step: a comparison's outcome is the sign of a function linear in k, the
  /// same at k = 0 and k = m only if the same for every k in between. So repeat() sets the records
  /// to A + m (B - A) and times step b + m from them, recording it: if its trace is step b's and it
  /// ends at A + (m + 1)(B - A), the steps between were all A + k (B - A) and step b + m is the true
  /// one. If the trace differs, the records go back to B and a repeat half as long is tried; if
  /// only the increments had not settled, the next try waits. The only comparison that is not of a
  /// sign, two chains' equality at a tie, is checked for every k in between from the two
  /// differences. CRA on 2^12 nodes with parts of two sizes: its nodes advance at two rates, and the
  /// comparisons' outcomes stay the same from step 18 to 3,609 and from 3,633 to the end.
  void repeat() {
    const std::int64_t e = done_steps_ - 1;  // the step just timed
    skip_ = 0;
    if (phase_ == Phase::verify) {
      const bool compared = !verify_failed_.load() && links_empty() && same_trace();
      const bool same = compared && settled();
      verify_failed_.store(false);
      verifying_ = false;
      recording_ = false;
      phase_ = Phase::none;
      if (same) {
        repeated_ += span_ - 1;
        wait_ = 0;
        next_try_ = e;  // measured again from here at once
      } else {
        restore(b_);  // back to after step b
        done_steps_ = b_step_ + 1;
        const std::int64_t half = span_ / 2;
        // (compared alike but not settled: the increments still travel; no shorter repeat holds)
        if (half >= 2 && !compared) {
          try_repeat(half);
          skip_ = (b_step_ + half) - (e + 1);
          return;
        }
        skip_ = (b_step_ + 1) - (e + 1);
        back_off(b_step_);
        return;
      }
    }
    if (phase_ == Phase::measure) {
      // Step e was recorded. Two steps in a row that compared alike (steps the program repeats:
      // the first recorded may differ from its successor while the times settle): try a repeat.
      const bool ok = links_empty() && flags_kept();
      if (ok && have_t1_ && same_trace_as_last()) {
        b_step_ = e;
        save(b_);
        std::int64_t m = std::min(last_, steps_ - 1) - e;  // steps b + 1 .. b + m - 1 added, b + m timed
        const std::int64_t dn = step_node_steps();
        if (dn > 0) m = checks(m, dn, ns()).first;  // every check up to step b + m passes, as it would
        if (dn > 0 && m >= 2) {
          try_repeat(m);
          skip_ = m - 1;
          return;
        }
        recording_ = false;
        phase_ = Phase::none;
        back_off(e);
        return;
      }
      if (++measured_ >= kMeasured || e + 1 >= last_ || e + 2 >= steps_) {
        recording_ = false;
        phase_ = Phase::none;
        back_off(e);
        return;
      }
      save(a_);  // the next step is measured against this one
      t1_.resize(workers_.size());
      d1_.resize(workers_.size());
      for (std::size_t w = 0; w < workers_.size(); ++w) {
        t1_[w] = workers_[w].trace;
        d1_[w] = workers_[w].chain_differences;
      }
      have_t1_ = ok;
      return;
    }
    if (e >= next_try_ && e + 3 < steps_) {
      const std::int64_t r = program_.repeats(e + 2);  // steps e + 2 .. e + 1 + r repeat step e + 1
      if (r >= 2 && links_empty()) {                   // (a program that promises none pays no pass over the links)
        save(a_);
        last_ = e + 1 + r;
        phase_ = Phase::measure;
        recording_ = true;
        have_t1_ = false;
        measured_ = 0;
      }
    }
  }
  /// No repeat found from step e: the next try waits 16 steps, then 32, 64, ... (after a repeat, none).
  void back_off(std::int64_t e) {
    wait_ = std::max<std::int64_t>(16, 2 * wait_);
    next_try_ = e + wait_;
  }
  /// Steps recorded in a row at most, looking for two that compare alike.
  static constexpr int kMeasured = 8;

  /// The step just recorded compared as the one before it (t1_, d1_), and its chains' differences
  /// at ties are those of the step before (a chain difference that changes from step to step may
  /// reach 0: it is no repeat).
  bool same_trace_as_last() const {
    for (std::size_t w = 0; w < workers_.size(); ++w)
      if (workers_[w].trace != t1_[w] || !(workers_[w].chain_differences == d1_[w])) return false;
    return true;
  }

  /// The records a repeat reads and sets: each node's strand, each link's time, the busy times,
  /// loads and counts, and the budget checks' place.
  struct Records {
    std::vector<St> nodes;
    std::vector<Time> free, comm, compute;
    std::vector<std::int64_t> load;
    std::vector<std::array<std::int64_t, 6>> counts;  ///< each worker's (counts())
    std::int64_t checked = 0;
  };
  static std::array<std::int64_t, 6> counts(const Worker& w) {
    return {w.messages, w.packets, w.elements, w.trains, w.queued, w.node_steps};
  }
  static constexpr std::size_t kNodeSteps = 5;  ///< counts()' index of node_steps
  std::int64_t ns() const {
    std::int64_t n = 0;
    for (const Worker& w : workers_) n += w.node_steps;
    return n;
  }
  static std::int64_t node_steps_of(const Records& r) {
    std::int64_t n = 0;
    for (const auto& c : r.counts) n += c[kNodeSteps];
    return n;
  }
  /// Node-steps in the step from A to B (the same in every step that repeats it).
  std::int64_t step_node_steps() const { return node_steps_of(b_) - node_steps_of(a_); }
  /// The report's events (node-steps timed or added) and resumes, from the workers' counts.
  std::int64_t count_events() {
    const std::int64_t node_steps = ns();
    st_.events = node_steps;
    st_.resumes = static_cast<std::int64_t>(n_) + node_steps;
    return node_steps;
  }
  bool links_empty() const {
    for (std::size_t li = 0; li < links_.size(); ++li)
      if (links_[li].first.full != 0) return false;
    return true;
  }
  /// The nodes' unsure marks (not a time: they must stay) are B's as they were A's, and a node
  /// that posted nothing kept its record.
  bool flags_kept() const {
    for (std::size_t i = 0; i < n_; ++i) {
      const St& a = a_.nodes[i];
      const St& b = nodes_[i].s[0];
      if (b.unsure != a.unsure || b.wunsure != a.wunsure) return false;
      if (touched_[i] == 0 && !same(b, a)) return false;
    }
    return true;
  }
  void save(Records& r) const {
    r.nodes.resize(n_);
    r.free.resize(links_.size());
    for (std::size_t i = 0; i < n_; ++i) r.nodes[i] = nodes_[i].s[0];
    for (std::size_t li = 0; li < links_.size(); ++li) r.free[li] = links_[li].free;
    r.comm = comm_;
    r.compute = compute_;
    r.load = load_;
    r.counts.clear();
    for (const Worker& w : workers_) r.counts.push_back(counts(w));
    r.checked = checked_;
  }
  /// The records back to r, and no message anywhere (a step checked and refused may have left some).
  void restore(const Records& r) {
    for (std::size_t i = 0; i < n_; ++i) nodes_[i].s[0] = r.nodes[i];
    for (std::size_t li = 0; li < links_.size(); ++li) {
      links_[li].free = r.free[li];
      links_[li].first.full = 0;
      links_[li].first.next = detail::kNone;
    }
    for (Worker& w : workers_) {
      w.received.clear();
      w.pool.reset();
    }
    comm_ = r.comm;
    compute_ = r.compute;
    load_ = r.load;
    for (std::size_t w = 0; w < workers_.size(); ++w) set_counts(workers_[w], r.counts[w]);
    checked_ = r.checked;
    count_events();
  }
  static void set_counts(Worker& w, const std::array<std::int64_t, 6>& c) {
    w.messages = c[0];
    w.packets = c[1];
    w.elements = c[2];
    w.trains = c[3];
    w.queued = c[4];
    w.node_steps = c[5];
  }
  static Time at(Time a, Time b, std::int64_t m) { return a + (b - a) * m; }
  static C at(const C& a, const C& b, std::int64_t m) {
    C c = a;
    detail::add_times(c, detail::difference(b, a), m);
    return c;
  }
  static std::int64_t at(std::int64_t a, std::int64_t b, std::int64_t m) { return a + (b - a) * m; }
  /// A strand's record at A + m (B - A), its unsure marks B's (they stay).
  static St at(const St& a, const St& b, std::int64_t m) {
    St v = b;
    v.t = at(a.t, b.t, m);
    v.wt = at(a.wt, b.wt, m);
    v.wp = at(a.wp, b.wp, m);
    v.c = at(a.c, b.c, m);
    v.wc = at(a.wc, b.wc, m);
    return v;
  }
  static bool same(const St& a, const St& b) {
    return a.t == b.t && a.wt == b.wt && a.wp == b.wp && a.c == b.c && a.wc == b.wc && a.unsure == b.unsure &&
           a.wunsure == b.wunsure;
  }

  /// The records to A + m (B - A), as they are before step b + m if steps b .. b + m - 1 all
  /// compare as step b did; step b + m is then timed and recorded to check it (phase verify).
  void try_repeat(std::int64_t m) {
    for (std::size_t i = 0; i < n_; ++i) {
      nodes_[i].s[0] = at(a_.nodes[i], b_.nodes[i], m);
      comm_[i] = at(a_.comm[i], b_.comm[i], m);
      if constexpr (kWide) compute_[i] = at(a_.compute[i], b_.compute[i], m);
    }
    for (std::size_t li = 0; li < links_.size(); ++li) {
      links_[li].free = at(a_.free[li], b_.free[li], m);
      load_[li] = at(a_.load[li], b_.load[li], m);
    }
    std::array<std::int64_t, 6> c{};
    for (std::size_t w = 0; w < workers_.size(); ++w) {
      for (std::size_t k = 0; k < c.size(); ++k) c[k] = at(a_.counts[w][k], b_.counts[w][k], m);
      set_counts(workers_[w], c);
    }
    checked_ = checks(m - 1, step_node_steps(), node_steps_of(b_)).second;  // steps b + 1 .. b + m - 1's
    done_steps_ = b_step_ + m;
    count_events();
    span_ = m;
    phase_ = Phase::verify;
    verifying_ = true;
    recording_ = true;
  }

  /// The increments have settled: step b + m, timed from A + m (B - A), ended at A + (m + 1)(B - A).
  /// With its comparisons' outcomes fixed a step takes each record from one record it reads plus
  /// a constant, R -> P R + c, so step b + k starts from A + (I + P + ... + P^(k-1))(B - A): that is
  /// A + k (B - A) only if P (B - A) = B - A, which the outcomes alone do not say (an increment may
  /// still travel down a line of nodes a hop a step while every comparison comes out the same).
  /// Step b + m's output is B + m P (B - A): it is A + (m + 1)(B - A) exactly when P (B - A) = B - A.
  bool settled() const {
    const std::int64_t k = span_ + 1;
    for (std::size_t i = 0; i < n_; ++i)
      if (!same(nodes_[i].s[0], at(a_.nodes[i], b_.nodes[i], k))) return false;
    for (std::size_t li = 0; li < links_.size(); ++li)
      if (links_[li].free != at(a_.free[li], b_.free[li], k)) return false;
    return true;
  }

  /// Step b + m compared as step b did: the same outcomes in the same order, and no two chains
  /// compared at a tie equal at some step between (their difference, linear in the step, is
  /// nowhere 0 from b to b + m: it is at neither end).
  bool same_trace() const {
    for (std::size_t w = 0; w < workers_.size(); ++w) {
      if (workers_[w].trace != t1_[w]) return false;
      const std::vector<C>& d1 = d1_[w];
      const std::vector<C>& dm = workers_[w].chain_differences;
      if (dm.size() != d1.size()) return false;
      for (std::size_t k = 0; k < d1.size(); ++k)
        if (zero_between(d1[k], dm[k], span_)) return false;
    }
    return true;
  }
  /// Whether d0 + k (dm - d0) / m is 0 for some k in 0 < k < m (d0 and dm are not 0).
  static bool zero_between(const C& d0, const C& dm, std::int64_t m) {
    __extension__ using Wide = __int128;  // (a GCC and Clang extension: -Wpedantic says so without this)
    const auto terms = [](const C& c) {
      std::array<std::int64_t, 5> t{c.startups, c.msg_startups, c.element_transfers, 0, 0};
      if constexpr (kWide) {
        t[3] = c.flops;
        t[4] = c.overheads.count();
      }
      return t;
    };
    const std::array<std::int64_t, 5> a = terms(d0), b = terms(dm);
    // Each term: a m + k (b - a) = 0. A term with b == a is a for every k: it must be 0.
    std::int64_t k = -1;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::int64_t slope = b[i] - a[i];
      if (slope == 0) {
        if (a[i] != 0) return false;
        continue;
      }
      const Wide num = -static_cast<Wide>(a[i]) * m;
      if (num % slope != 0) return false;
      const Wide ki = num / slope;  // (compared before any narrowing)
      if (ki <= 0 || ki >= m || (k >= 0 && ki != k)) return false;
      k = static_cast<std::int64_t>(ki);
    }
    return k > 0;
  }

  /// The budget checks between_steps would make in the next j steps, `dn` node-steps each, at its
  /// cadence (every 4,096 node-steps), from `ns` node-steps and checked_: how many of the steps
  /// come before the first whose check would fail (j: none fails), and checked_ as it would be
  /// after those.
  std::pair<std::int64_t, std::int64_t> checks(std::int64_t j, std::int64_t dn, std::int64_t ns) const {
    std::int64_t done = 0, chk = checked_;
    while (true) {
      const std::int64_t q = (4096 - (ns - chk) + dn - 1) / dn;  // steps to the next check (ns - chk < 4096)
      if (done + q > j) return {j, chk};
      const std::int64_t at = ns + q * dn;
      if (o_.max_events > 0 && static_cast<std::int64_t>(n_) + at > o_.max_events)  // (resumes > events)
        return {done + q - 1, chk};
      done += q;
      ns = chk = at;
    }
  }

  /// Outcomes of a step's comparisons, recorded while recording_ (repeat()).
  static int sign(Time a, Time b) { return a > b ? 2 : (a == b ? 1 : 0); }
  void note_fold(Worker& w, const St& v, Time t, Time pushed, const C& c, std::uint8_t unsure) const {
    auto code = static_cast<std::uint16_t>(sign(t, v.wt));
    if (t == v.wt) {
      code |= static_cast<std::uint16_t>((sign(t, v.t) << 2) | (sign(pushed, v.wp) << 4) | (unsure << 6) |
                                         (v.wunsure << 7));
      if (t > v.t && pushed == v.wp) {
        const bool equal = c == v.wc;
        code |= static_cast<std::uint16_t>(equal ? 1U << 8 : 0U);
        if (!equal) w.chain_differences.push_back(detail::difference(c, v.wc));
      }
    }
    w.trace.push_back(code);
  }

  /// Between two steps, on one thread: the pooled messages received go back to their pools; the
  /// budgets and the stop flag are checked every 4,096 node-steps, as the engine checks them every
  /// 4,096 of its steps.
  void between_steps() noexcept {
    ++done_steps_;
    for (Worker& w : workers_) {
      for (const auto& [owner, index] : w.received) workers_[owner].pool.release(index);
      w.received.clear();
    }
    for (Worker& w : workers_) w.pool.rewind();
    const std::int64_t node_steps = count_events();
    if (node_steps - checked_ < 4096) return;
    checked_ = node_steps;
    try {
      // Not from a step timed from extrapolated records: repeat() may yet refuse it and take the
      // counts back, and the shared counter would run ahead and then back (it only goes forward).
      if (!verifying_) detail::publish_progress(o_, st_.events, published_);
      detail::check_run_budgets(
          o_, {.events = st_.events, .resumes = st_.resumes}, true,
          [&] { return " by step " + std::to_string(done_steps_) + " of " + std::to_string(steps_); },
          [] { return std::string(); });
    } catch (...) {
      keep_error();
    }
  }

  std::size_t link(NodeId x, int port) const {
    return static_cast<std::size_t>(x) * ports_ + static_cast<std::size_t>(port);
  }
  std::size_t owner(NodeId x) const { return static_cast<std::size_t>(x) / chunk_; }

  /// A completion of node v's group at t with chain c, at the end of a transmission whose last
  /// packet's event the engine pushed at `pushed` (the engine's keep_chain, completing in the
  /// order of its events' keys (time, push time, sequence)): the last one wins, and of those at
  /// one instant the first pushed; one at the node's own time keeps the node's chain. Two at one
  /// instant, pushed at one instant, with different chains: a tie only the engine's sequence
  /// numbers would settle: the node goes on with one of them, marked unsure (`unsure`: c is
  /// already), and so does every chain that runs through it. The times do not depend on it; the
  /// run gives up only if an unsure chain ends up as the critical path.
  template <bool kRecord>
  [[gnu::always_inline]] void fold(Worker& w, St& v, Time t, Time pushed, const C& c, std::uint8_t unsure) const {
    if constexpr (kRecord) note_fold(w, v, t, pushed, c, unsure);
    if (t > v.wt || (t == v.wt && t > v.t && pushed < v.wp)) {
      v.wt = t;
      v.wp = pushed;
      v.wc = c;
      v.wunsure = unsure;
    } else if (t == v.wt && t > v.t && pushed == v.wp && (unsure != 0 || v.wunsure != 0 || !(c == v.wc))) {
      v.wunsure = 1;
    }
  }

  /// A message's packets, its transmission's time, and its last packet's (the engine's
  /// Engine::start_send and transmission_time).
  typename Worker::Size sized(std::int64_t e) const {
    const std::int64_t B = o_.packet_elements;
    typename Worker::Size z;
    z.elements = e;
    z.packets = e == 0 ? 1 : (e + B - 1) / B;
    z.duration = transmission_time(m_, z.packets, e);
    z.last_packet = m_.tau + m_.t_c * (e - (z.packets - 1) * B);
    if (z.duration <= Time{}) throw Abort{};  // ends as it starts: the engine's order of events decides
    return z;
  }

  /// Strand k of node v, forked from strand 0 if it is not running.
  [[gnu::always_inline]] static St& strand(Node& v, const StepOp& op, NodeId x, std::int64_t s) {
    if (op.strand >= K)
      throw SimulationError("node " + std::to_string(x) + " step " + std::to_string(s) + ": strand " +
                            std::to_string(op.strand) + " is beyond the program's strands()");
    if constexpr (K > 1) {
      St& u = v.s[op.strand];
      if (op.strand == 0) {
        if (v.running != 0)
          throw SimulationError("node " + std::to_string(x) + " step " + std::to_string(s) +
                                ": strand 0 posts while strand " + std::to_string(std::countr_zero(v.running)) +
                                " runs (join first)");
        return u;
      }
      if (((v.running >> op.strand) & 1U) == 0) {  // forked: strand 0's time and chain, its group empty
        const St& p = v.s[0];
        u.t = u.wt = p.t;
        u.c = u.wc = p.c;
        u.unsure = u.wunsure = p.unsure;
        u.wp = Time{};
        v.running = static_cast<std::uint8_t>(v.running | (1U << op.strand));
      }
      return u;
    } else {
      return v.s[0];
    }
  }

  /// The join: strand 0 goes on when the last of the running strands ends (matmul::both's all_of
  /// of two Tasks: the last child to finish resumes the parent, in its event), with that strand's
  /// chain; strands that end at one instant with different chains: the engine's order would pick,
  /// so the chain is unsure. A strand that posted nothing ended at once, at the fork.
  static void join(Node& v) {
    St& p = v.s[0];
    Time t = p.t;
    C c = p.c;
    std::uint8_t unsure = p.unsure;
    bool any = false;
    for (std::size_t k = 1; k < K; ++k) {
      const St& u = v.s[k];
      if (((v.running >> k) & 1U) == 0) continue;
      if (!any || u.t > t) {
        t = u.t;
        c = u.c;
        unsure = u.unsure;
      } else if (u.t == t && (u.unsure != 0 || unsure != 0 || !(u.c == c))) {
        unsure = 1;
      }
      any = true;
    }
    // (no strand ran: the all_of's Tasks all ended at once, at strand 0's time, with its chain)
    p.t = p.wt = t;
    p.c = p.wc = c;
    p.unsure = p.wunsure = unsure;
    v.running = 0;
    v.epoch = static_cast<std::uint8_t>(v.epoch + 1);
  }

  /// Node x posts step s: its sends leave now (the engine's StoreAndForward::advance of a
  /// message to a neighbour: link first come first served, all its packets in one go).
  template <bool kRecord>
  [[gnu::noinline]] void sends(Worker& w, NodeId x, std::int64_t s) {
    const auto i = static_cast<std::size_t>(x);
    recv_range_[i].first = w.recv_ops.size();
    recv_range_[i].second = w.recv_ops.size();
    std::uint8_t& touched = touched_[i];
    touched = 0;
    if (s < next_[i]) return;  // a step the program said posts nothing (StepProgram::next_step)
    w.ops.clear();
    program_.step(x, s, w.ops);
    Node& v = nodes_[i];
    if (w.ops.empty()) {  // the program's next step that may post: the default is the next one
      if (s + 1 < steps_) {
        next_[i] = detail::next_step(program_, x, s + 1, steps_);
      }
      return;
    }
    ++w.node_steps;
    Time busy{};
    std::size_t sent = 0;
    std::uint32_t computed = 0;  // strands that computed in this step (bit k): they post no more
    for (const StepOp& op : w.ops) {
      if (op.kind == StepOp::Kind::join) {
        if (&op != w.ops.data())
          throw SimulationError("node " + std::to_string(x) + " step " + std::to_string(s) +
                                ": a join after another operation of the step");
        if constexpr (K > 1) join(v);
        touched = 1;
        continue;
      }
      if (op.kind == StepOp::Kind::compute && !kWide) throw SimulationError("a compute in a program not wide()");
      St& u = strand(v, op, x, s);
      if (((touched >> op.strand) & 1U) == 0) {  // its group begins: none of it completed yet
        touched = static_cast<std::uint8_t>(touched | (1U << op.strand));
        u.wt = u.t;
        u.wc = u.c;
        u.wunsure = u.unsure;
      }
      if (op.kind != StepOp::Kind::send) {
        if (op.kind == StepOp::Kind::compute)
          computed |= 1U << op.strand;
        else if ((computed >> op.strand) & 1U)
          throw SimulationError("node " + std::to_string(x) + " step " + std::to_string(s) +
                                ": a receive after a compute of its strand");
        w.recv_ops.push_back(op);  // for the receives' sweep
        continue;
      }
      if ((computed >> op.strand) & 1U)
        throw SimulationError("node " + std::to_string(x) + " step " + std::to_string(s) +
                              ": a send after a compute of its strand");
      if (topo_.neighbor(x, op.port) < 0) detail::no_link(x, s, op.port);
      const std::size_t li = link(x, op.port);
      Lnk& l = links_[li];
      ++sent;
      if constexpr (K > 1) {
        // Two strands on one link between two joins: which sends first is the engine's order of
        // events, not the program's.
        if (l.first.epoch == v.epoch && l.first.strand != op.strand && l.first.strand != 0 && op.strand != 0)
          throw Abort{};
        l.first.strand = op.strand;
        l.first.epoch = v.epoch;
      }
      Time start = u.t;
      C ch = u.c;
      std::uint8_t unsure = u.unsure;
      if constexpr (kRecord) w.trace.push_back(static_cast<std::uint16_t>(1024 + sign(l.free, start)));
      if (l.free > start) {  // behind this node's earlier message on the link: its chain
        if constexpr (kRecord)
          if (l.first.full == 0 && verifying_) throw VerifyFailed{};
        check_invariant(l.first.full != 0, "a link busy past its sender's step holds that step's message");
        const Pend& before = newest(w, l);
        start = l.free;
        ch = before.chain;
        unsure = before.unsure;
        ++w.queued;
      }
      const std::int64_t e = op.elements;
      typename Worker::Size& z = w.sizes[static_cast<std::size_t>(e) & 3];
      if (e != z.elements) z = sized(e);
      const std::int64_t k = z.packets;
      const Time d = z.duration;
      ch.startups += k;
      ch.msg_startups += 1;
      ch.element_transfers += e;
      const Time end = start + d;
      // The per-packet engine pushes the last packet's end when that packet starts; a train or
      // a message in closed form pushes it with the same key (store_and_forward.cpp).
      const Time pushed = k == 1 ? start : end - z.last_packet;
      l.free = end;
      ++w.messages;
      w.packets += k;
      w.elements += e;
      w.largest = std::max(w.largest, e);
      w.trains += k > 1 ? 1 : 0;
      load_[li] += e;
      busy += d;
      fold<kRecord>(w, u, end, pushed, ch, unsure);
      Pend* p = &l.first;
      if (l.first.full != 0) {  // a second message on the link before the first is received: in the pool
        const std::uint32_t pi = w.pool.acquire();
        p = &w.pool[pi];
        Pend& tail = newest(w, l);  // (p is not yet linked)
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
    recv_range_[i].second = w.recv_ops.size();
    comm_[i] += busy;
    // The links of a node kAhead further on, side by side, which its sends will write (last
    // touched by their receivers in the step before): where this node sent on half its ports or
    // more (the all-gathers: all), not where it sent on a few (the multiplications: 2 of 16).
    if (2 * sent >= ports_ && i + kAhead < w.hi)
      for (std::size_t p = 0; p < ports_; ++p) detail::prefetch(&links_[(i + kAhead) * ports_ + p], true);
  }

  /// The last message sent on a link that holds one (a link of one of w's nodes: in w's pool).
  static Pend& newest(Worker& w, Lnk& l) {
    Pend* p = &l.first;
    while (p->next != detail::kNone) p = &w.pool[p->next];
    return *p;
  }

  /// Node x's receives of step s, then its resumption; false where the engine's order decides.
  /// kSelf: a uniform step's (decide_uniform), from node x's own links, in the state of those
  /// into it.
  template <bool kRecord, bool kSelf>
  bool receives(Worker& w, NodeId x, std::int64_t s) {
    const auto i = static_cast<std::size_t>(x);
    // The links of a node kRecvAhead further on, whose messages are read from its neighbours' records:
    // asked for now, they arrive while this node and the next ones are timed.
    if (!kSelf && i + kRecvAhead < w.hi)
      for (std::size_t r = recv_range_[i + kRecvAhead].first; r < recv_range_[i + kRecvAhead].second; ++r) {
        const auto z = static_cast<NodeId>(i + kRecvAhead);
        if (w.recv_ops[r].kind != StepOp::Kind::recv) continue;
        const NodeId from = topo_.neighbor(z, w.recv_ops[r].port);
        if (from >= 0) detail::prefetch(&links_[link(from, topo_.port_to(from, z))]);
      }
    const std::uint8_t touched = touched_[i];
    if (touched == 0) return true;
    Node& v = nodes_[i];
    for (std::size_t r = recv_range_[i].first; r < recv_range_[i].second; ++r) {
      const StepOp& op = w.recv_ops[r];
      St& u = v.s[K > 1 ? op.strand : 0];
      if (kWide && op.kind == StepOp::Kind::compute) {
        // Once the strand's group has completed (the rest of its receives came before): the
        // engine's compute operation, t_a a flop and the call's overhead t_call.
        complete(u);
        const Time dur = m_.t_a * op.elements + m_.t_call;
        if (op.elements == 0 && dur == Time{}) continue;  // (the engine's too: done at once)
        if (dur <= Time{}) throw Abort{};                 // ends as it starts: the engine's order of events decides
        if constexpr (kWide) {
          u.c.flops += op.elements;
          u.c.overheads += m_.t_call;
        }
        u.t += dur;
        u.wt = u.t;
        u.wc = u.c;
        compute_[i] += dur;
        continue;
      }
      const NodeId from = topo_.neighbor(x, op.port);
      if (from < 0) detail::no_link(x, s, op.port);
      // The message is in its sender's record of the link (a uniform step: in x's own).
      if constexpr (kSelf) {
        if (!take<kRecord>(w, links_[link(x, op.port)], x, op.tag, u)) return false;
      } else {
        if (!take<kRecord>(w, links_[link(from, topo_.port_to(from, x))], from, op.tag, u)) return false;
      }
    }
    for (std::size_t k = 0; k < K; ++k)
      if ((touched >> k) & 1U) complete(v.s[k]);
    return true;
  }

  /// A strand's group has completed: it goes on at the last completion with its chain.
  static void complete(St& u) {
    u.t = u.wt;
    u.c = u.wc;
    u.unsure = u.wunsure;
  }

  /// Node v (of worker w) receives the oldest message with `tag` on link l from node `from`; false
  /// if there is none. Pooled messages taken go back to their sender's worker's pool between steps.
  template <bool kRecord>
  bool take(Worker& w, Lnk& l, NodeId from, int tag, St& v) {
    if (l.first.full == 0) return false;
    if (l.first.tag == tag) {
      fold<kRecord>(w, v, l.first.end, l.first.pushed, l.first.chain, l.first.unsure);
      if (l.first.next == detail::kNone) {
        l.first.full = 0;
        return true;
      }
    }
    const std::size_t o = owner(from);
    detail::Pool<Pend>& pool = workers_[o].pool;
    if (l.first.tag == tag) {  // (folded above)
      const std::uint32_t pi = l.first.next;
      const std::uint8_t strand = l.first.strand, epoch = l.first.epoch;
      l.first = pool[pi];  // (full, and its next)
      l.first.full = 1;
      l.first.strand = strand;
      l.first.epoch = epoch;
      w.received.emplace_back(static_cast<std::uint32_t>(o), pi);
      return true;
    }
    Pend* prev = &l.first;
    while (prev->next != detail::kNone && pool[prev->next].tag != tag) prev = &pool[prev->next];
    if (prev->next == detail::kNone) return false;
    const std::uint32_t pi = prev->next;
    const Pend& p = pool[pi];
    fold<kRecord>(w, v, p.end, p.pushed, p.chain, p.unsure);
    prev->next = p.next;
    w.received.emplace_back(static_cast<std::uint32_t>(o), pi);
    return true;
  }

  void finish(std::chrono::steady_clock::time_point wall0) {
    add_load_and_busy(topo_, ports_, load_, comm_, compute_, st_);
    for (std::size_t i = 0; i < n_; ++i) {
      const detail::Pool<Pend>& pool = workers_[owner(static_cast<NodeId>(i))].pool;
      for (std::size_t p = 0; p < ports_; ++p) {
        const Pend& f = links_[i * ports_ + p].first;
        if (f.full == 0) continue;
        ++st_.unreceived_messages;
        for (std::uint32_t pi = f.next; pi != detail::kNone; pi = pool[pi].next) ++st_.unreceived_messages;
      }
    }
    detail::publish_progress(o_, st_.events, published_);
    st_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  }

  const Machine& m_;
  const Topology& topo_;
  const EngineOptions& o_;
  const StepProgram& program_;
  std::size_t n_, ports_, chunk_ = 1;
  std::int64_t steps_ = 0, done_steps_ = 0;  ///< the program's steps; those timed (between_steps)
  RunStats st_;
  // The arrays the sweeps read at random: in huge pages (sim/kernel/huge_array.hpp).
  detail::HugeArray<Node> nodes_;
  std::vector<Time> comm_, compute_;  ///< each node's time sending; computing (wide programs)
  detail::HugeArray<Lnk> links_;
  std::vector<std::int64_t> load_;  ///< elements each link carried
  /// Node x's receives of the step: its worker's recv_ops[first, second).
  std::vector<std::pair<std::size_t, std::size_t>> recv_range_;
  std::vector<std::int64_t> next_;  ///< a node's next step that may post (StepProgram::next_step)
  /// The strands (bit k) of each node with an operation in the step being timed (none: the
  /// receives' sweep passes the node by).
  std::vector<std::uint8_t> touched_;
  std::vector<Worker> workers_;
  std::atomic<bool> gave_up_{false}, failed_{false};
  bool stop_ = false;          ///< end_step's decision, read by every worker after the step's last barrier
  std::int64_t skip_ = 0;      ///< steps end_step added after the one timed (repeat()), read as stop_ is
  std::int64_t repeated_ = 0;  ///< steps added as repeats in the run
  // decide_uniform()'s state: the step being timed is node 0's alone, every node in its state.
  bool uniform_ = false;
  std::int64_t uniform_steps_ = 0, next_uniform_try_ = 0, uniform_wait_ = 0;
  std::array<std::int64_t, 6> uniform_base_{};  ///< the first worker's counts before the step
  std::vector<StepOp> uniform_ops_;
  std::vector<std::pair<int, int>> uniform_sent_, uniform_got_;
  // repeat()'s state: none; measure (step b is recorded, from records A); verify (step b + m is
  // recorded, from A + m (B - A)).
  enum class Phase : std::uint8_t { none, measure, verify };
  Phase phase_ = Phase::none;
  Records a_, b_;
  std::int64_t b_step_ = -1, last_ = -1, span_ = 0;  ///< step b; the last that repeats it; m
  std::int64_t next_try_ = 0, wait_ = 0;             ///< no repeat tried before step next_try_
  int measured_ = 0;                                 ///< steps recorded in this try
  bool have_t1_ = false;                             ///< t1_ holds the step before's trace
  std::vector<std::vector<std::uint16_t>> t1_;       ///< step b's trace, each worker's
  std::vector<std::vector<C>> d1_;                   ///< and its chains' differences
  bool recording_ = false;                           ///< the step being timed is recorded
  bool verifying_ = false;                           ///< ... and timed from extrapolated records
  std::atomic<bool> verify_failed_{false};           ///< ... whose check failed inside the step
  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::int64_t checked_ = 0, published_ = 0;
};

/// The bytes a node of Lockstep<kWide, K> holds on `ports` ports: run()'s arrays and its worker's
/// receive operations, at most one a port (twice that: the vector grows by doubling). A link's
/// second message (the workers' pools) is the program's to count: only CRA sends one.
template <bool kWide, int K>
std::int64_t all_port_node_bytes(std::int64_t ports) {
  using L = Lockstep<kWide, K>;
  const auto per_link = static_cast<std::int64_t>(sizeof(typename L::Lnk) + sizeof(std::int64_t) + 2 * sizeof(StepOp));
  const auto per_node = static_cast<std::int64_t>(sizeof(typename L::Node) + sizeof(Time) * (kWide ? 2 : 1) +
                                                  sizeof(std::pair<std::size_t, std::size_t>) + sizeof(std::int64_t) +
                                                  sizeof(std::uint8_t) + sizeof(Buffer));
  return per_node + ports * per_link;
}

/// The bytes a node of Lockstep<kWide, 1> adds for a program that repeats steps: the records A
/// and B (Lockstep::Records: a strand's state and its busy times, each link's time and load), and
/// two traces of a step, about three comparisons a link of two bytes each.
template <bool kWide>
std::int64_t all_port_repeat_bytes(std::int64_t ports) {
  using L = Lockstep<kWide, 1>;
  return 2 * static_cast<std::int64_t>(sizeof(typename L::St) + sizeof(Time) * (kWide ? 2 : 1)) +
         ports * (2 * static_cast<std::int64_t>(sizeof(Time) + sizeof(std::int64_t)) + 2 * 3 * 2);
}

}  // namespace

std::int64_t lockstep_memory(const Machine& m, const Topology& topo, LockstepShape shape) {
  const std::int64_t ports = std::max(1, topo.num_ports());
  std::int64_t node = 0;
  if (m.ports.kind == PortKind::one)
    node = lockstep_one_port_node_bytes(ports, shape);
  else if (shape.strands > 1)
    node = all_port_node_bytes<true, StepProgram::kMaxStrands>(ports);
  else
    node = shape.wide ? all_port_node_bytes<true, 1>(ports) : all_port_node_bytes<false, 1>(ports);
  if (m.ports.kind != PortKind::one && shape.strands == 1 && shape.repeats)
    node += shape.wide ? all_port_repeat_bytes<true>(ports) : all_port_repeat_bytes<false>(ports);
  const double bytes = static_cast<double>(node) * static_cast<double>(topo.size());
  return bytes >= 9.2e18 ? INT64_MAX : static_cast<std::int64_t>(bytes);
}

std::optional<RunStats> run_lockstep(const Machine& m, const Topology& topo, const EngineOptions& options,
                                     const StepProgram& program, std::vector<Buffer>& results) {
  if (!lockstep_supports(m, options)) return std::nullopt;
  if (m.ports.kind == PortKind::one) return run_lockstep_one_port(m, topo, options, program, results);
  try {
    const int strands = program.strands();
    if (strands < 1 || strands > StepProgram::kMaxStrands)
      throw SimulationError("a step program of " + std::to_string(strands) + " strands (1 to " +
                            std::to_string(StepProgram::kMaxStrands) + ")");
    if (strands > 1) {
      Lockstep<true, StepProgram::kMaxStrands> l(m, topo, options, program);
      return l.run(results);
    }
    if (program.wide()) {
      Lockstep<true, 1> l(m, topo, options, program);
      return l.run(results);
    }
    Lockstep<false, 1> l(m, topo, options, program);
    return l.run(results);
  } catch (const Abort&) {
    return std::nullopt;
  }
}

}  // namespace cubesim
