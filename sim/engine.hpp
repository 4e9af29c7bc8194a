#pragma once
/// The discrete-event engine's kernel (DESIGN.md "Engine" and "Cost model").
///
/// One event queue ordered by (time, push time, sequence number, packet) (sim/kernel/event.hpp):
/// the same inputs give the same order of events on every run and every machine. Processes are
/// coroutines, one per node; an operation that completes pushes its waiter on a ready list that is
/// drained, in order, before the next event is taken. The kernel runs computations, copies and
/// delays, matches messages to receives, checks budgets and gathers the run's statistics; the
/// run's network model (sim/net/network.hpp) moves each message from its source to its
/// destination: store-and-forward with packet trains (sim/net/store_and_forward.cpp), the
/// bit-serial router (sim/net/bit_serial_router.cpp), the CM-2's shared routers
/// (sim/net/cm2_router.cpp).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/kernel/event.hpp"
#include "sim/kernel/event_queue.hpp"
#include "sim/kernel/message.hpp"
#include "sim/kernel/pool.hpp"
#include "sim/kernel/prefetch.hpp"
#include "sim/match_table.hpp"
#include "sim/node.hpp"
#include "sim/observer.hpp"

namespace cubesim {

struct RunStats {
  Time time;                 ///< simulated completion time (last event)
  PathCounts critical_path;  ///< the chain of the activity that ended last
  std::int64_t messages = 0;
  std::int64_t packets = 0;      ///< packets injected at sources
  std::int64_t packet_hops = 0;  ///< packet transmissions over links
  std::int64_t element_hops = 0;
  std::int64_t events = 0;         ///< events taken from the queue
  std::int64_t packet_trains = 0;  ///< messages carried as packet trains (engine counter)
  std::int64_t train_breaks = 0;   ///< of those, broken back into packets (engine counter)
  std::int64_t relay_trains = 0;   ///< relays whose stream went on as a relay train (engine counter)
  /// Runs made again without relay trains because something met one (engine counter: 0 or 1).
  std::int64_t relay_train_aborts = 0;
  std::int64_t closed_form_messages = 0;  ///< messages carried in closed form (engine counter)
  /// Of the events, those that only resume processes whose last completion was a message in
  /// closed form (engine counter; at most one a resume).
  std::int64_t resume_events = 0;
  /// Runs made again without messages in closed form because something met one (engine counter).
  std::int64_t closed_form_aborts = 0;
  std::int64_t peak_queue = 0;  ///< most events in the queue at once (engine counter)
  /// 1 where the lockstep simulator (sim/lockstep.hpp) made the run, not the engine (engine counter).
  std::int64_t lockstep_runs = 0;
  /// Of a lockstep run's steps, those not timed but added as a repeat of the step before
  /// (StepProgram::repeats; engine counter).
  std::int64_t lockstep_repeated_steps = 0;
  /// Of a lockstep run's steps, those timed for node 0 alone, every node in its state
  /// (StepProgram::uniform; engine counter).
  std::int64_t lockstep_uniform_steps = 0;
  /// Times the event window began or stopped reading ahead (engine counter; Engine::ReadAhead).
  std::int64_t read_ahead_switches = 0;
  std::int64_t resumes = 0;        ///< process resumptions
  std::int64_t max_link_load = 0;  ///< elements over the busiest directed link
  double mean_link_load = 0;       ///< over links that exist
  NodeId busiest_link_node = -1;
  int busiest_link_port = -1;
  Time max_node_comm_busy;  ///< sum of a node's outgoing transmission times, the largest
  double mean_node_comm_busy_s = 0;
  Time max_node_compute_busy;  ///< compute + copy time of a node, the largest
  double mean_node_compute_busy_s = 0;
  std::int64_t unreceived_messages = 0;
  /// Packets that queued for a receiver's incoming slot (one-port, k-port) behind a packet from
  /// another node that asked for it at the same picosecond. First come, first served has no first
  /// there: the engine serves them in its event order, another engine (SimGrid) may serve them in
  /// another, and the times may then differ (docs/simgrid.md "Ties").
  std::int64_t slot_ties = 0;
  /// Times a packet had to queue for an outgoing slot, a link or an incoming slot. Zero, with no
  /// routed message, makes a run contention-free: every transmission started the moment it could.
  std::int64_t queued_transmissions = 0;
  std::int64_t routed_messages = 0;  ///< messages to a node that is not a neighbour
  /// The most elements one message sent over the network carried: the largest buffer a node
  /// assembled to send (TR-530 Fig. 10's temporary storage for the hybrid).
  std::int64_t largest_message = 0;
  /// Pipelined machines (the bit-serial router, sim/net/bit_serial_router.cpp): dimension cycles run,
  /// packets that lost a dimension to an older one or found the next router full, packets sent
  /// along a wrong dimension by a full router, and the most packets one router held.
  std::int64_t router_cycles = 0;
  std::int64_t router_collisions = 0;
  std::int64_t router_blocked = 0;
  std::int64_t router_detours = 0;
  std::int64_t router_peak_buffer = 0;
  double wall_s = 0;
};

/// The run's link and node statistics (RunStats: the busiest link, the mean load over the links
/// that exist, the nodes' busy times) from each link's elements (by node * ports + port) and each
/// node's communication and computation times (computation: none if empty). The engine's and the
/// lockstep simulator's.
void add_load_and_busy(const Topology& topology, std::size_t ports, const std::vector<std::int64_t>& link_load,
                       const std::vector<Time>& comm_busy, const std::vector<Time>& compute_busy, RunStats& st);

class Network;

/// The kernel: one event queue and one clock, the processes, message matching, budgets and the
/// run's statistics. How messages cross the machine is the run's network model (sim/net/), chosen
/// once from the machine (Machine::network, or its switching's default).
class Engine final : public detail::Backend, private detail::StrandHooks {
 public:
  using ProcessFactory = std::function<Task<>(Node&)>;

  Engine(const Machine& machine, const Topology& topology, EngineOptions options);
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  ~Engine();

  /// Reports what happens to `o` (traces); set before run(). Null: nothing is reported.
  void set_observer(EngineObserver* o) { observer_ = o; }
  [[nodiscard]] EngineObserver* observer() const override { return observer_; }

  /// Runs one process per node to completion. Throws SimulationError (a process threw; the
  /// message names the node and the simulated time), DeadlockError, BudgetError (a budget of
  /// EngineOptions spent) or Interrupted (EngineOptions::stop set).
  RunStats run(const ProcessFactory& make_process);
  /// The data each node ended with (Node::set_result).
  [[nodiscard]] std::vector<Buffer>& results() { return results_; }

  // ---- detail::Backend: used by Node and Op (sim/node.cpp); not for algorithms ----
  [[nodiscard]] const Machine& machine() const override { return machine_; }
  [[nodiscard]] const Topology& topology() const override { return topology_; }
  [[nodiscard]] const EngineOptions& options() const override { return options_; }
  [[nodiscard]] Time now() const override { return now_; }
  [[nodiscard]] int current_strand() const override { return current_strand_; }
  bool begin(detail::OpState& op, detail::Waiter& w) override;
  /// A receive's match slot (its search starts there); a send's receiver's slot, the receive
  /// posted there and its waiter (a message in closed form completes it at once).
  void prefetch_begin(const detail::OpState& op, int stage) const override;
  std::int64_t start_request(detail::OpState& op, detail::Waiter& w) override;
  void note_wait(NodeId node, std::int64_t id) override;
  void prepare_waiter(detail::Waiter& w, std::coroutine_handle<> h, int count) override;
  bool end_start(detail::Waiter& w) override;
  void after_resume(const detail::Waiter& w) override { current_path_ = w.path; }
  void check_node(NodeId node, const char* what) const override;
  void set_result(NodeId node, Buffer b) override { results_[static_cast<std::size_t>(node)] = std::move(b); }
  bool relay_start(detail::RelaySpec& r, const Buffer* source_data) override;

  // ---- for network models (sim/net/): the kernel's services, all direct calls ----
  /// Pushes an event of the model's `kind` at `t`, keyed (t, now, next sequence number, 0);
  /// returns its sequence number.
  std::uint64_t push(Time t, std::uint8_t kind, std::uint64_t payload);
  /// Pushes an event with a key the model made (a packet train's, sim/net/store_and_forward.cpp).
  void push_keyed(const detail::Event& e);
  /// Takes the next sequence number without pushing (a train's first packet would have taken it).
  std::uint64_t take_seq() { return seq_++; }
  /// The chain of the running process (a send starts from it).
  [[nodiscard]] const PathCounts& current_path() const { return current_path_; }
  /// Hints for Network::prefetch: the slot where the search for (dst, src, tag) starts, and the
  /// oldest receive posted for it (null if none: only reads).
  void prefetch_match(NodeId dst, NodeId src, int tag) const { match_.prefetch(dst, src, tag); }
  [[nodiscard]] const detail::OpState* posted_receive(NodeId dst, NodeId src, int tag) const {
    const detail::MatchTable::Slot* s = match_.find(dst, src, tag);
    return s != nullptr ? s->op_head : nullptr;
  }
  /// The event being processed (before every event at the start of the run).
  [[nodiscard]] const detail::Event& current_event() const { return current_; }
  /// A model's event is due and not stale: the clock moves to it, it is counted, budgets checked.
  void take(const detail::Event& ev);
  /// A message in flight. The reference stays valid while the model handles one call: only a
  /// process's send makes messages (and may grow the pool), and no model call resumes a process
  /// (complete() queues the waiter; the kernel resumes it after the model returns).
  [[nodiscard]] detail::Message& message(std::uint32_t mi) { return messages_[mi]; }
  [[nodiscard]] const detail::Message& message(std::uint32_t mi) const { return messages_[mi]; }
  /// The chain `p` ending at `t` completes one of w's operations.
  void complete(detail::Waiter& w, Time t, const PathCounts& p);
  /// Message `mi` has wholly arrived at its destination at `t` with chain `p`: matched to the
  /// oldest posted receive, or kept until one is posted.
  void deliver(std::uint32_t mi, Time t, const PathCounts& p);
  /// Something met a relay train: throws detail::RelayTrainAbort, and run() makes the run again
  /// without relay trains (docs/performance.md "Relay trains").
  [[noreturn]] void abort_relay_trains();
  // ---- Messages in closed form (engine.cpp "Messages in closed form") ----
  /// This run may carry messages in closed form (the model decides which: all-port
  /// store-and-forward to a neighbour over a free link).
  [[nodiscard]] bool closed_forms_on() const { return closed_forms_on_; }
  /// Message `mi` may go in closed form: its send and the receive posted for it (if any) are
  /// awaited by a process, not requests, and no relay or relay train is concerned.
  [[nodiscard]] bool can_deliver_ahead(std::uint32_t mi) const;
  /// Message `mi` leaves now and wholly arrives at key `k` (its end event's key, which is not
  /// pushed) with chain `p`: matched at once to the oldest receive posted for it or listed as
  /// arriving at `k`; its send completes at `k`.
  void deliver_ahead(std::uint32_t mi, const detail::Key& k, const PathCounts& p);
  /// Something met a message in closed form (a transmission wants its link before it ends):
  /// flagged; once back in its loop the run throws, and run() makes it again without them.
  void abort_closed_forms();
  /// The run's statistics, which models add their counts to.
  [[nodiscard]] RunStats& stats() { return stats_; }
  /// Elements carried over node n's port p (link loads in the report).
  void add_link_load(NodeId n, int port, std::int64_t elements) { link_load_[link_index(n, port)] += elements; }
  /// A hint ahead of add_link_load (Network::prefetch_send).
  void prefetch_link_load(NodeId n, int port) const { detail::prefetch(&link_load_[link_index(n, port)], true); }
  /// Time node n spent transmitting (node busy times in the report).
  void add_comm_busy(NodeId n, Time t) { comm_busy_[static_cast<std::size_t>(n)] += t; }
  /// Ports per node in the link tables (at least 1).
  [[nodiscard]] std::size_t ports() const { return ports_; }
  /// Packets of message m's packet `index` (the last holds the remainder).
  [[nodiscard]] std::int64_t packet_size(const detail::Message& m, std::int64_t index) const {
    const std::int64_t b = options_.packet_elements;
    return std::min(b, m.elements - index * b);
  }

 private:
  RunStats run_once(const ProcessFactory& make_process);
  /// The state of a new Engine (the constructor's, and after an aborted attempt).
  void reset();
  // ---- Relay trains (docs/performance.md "Relay trains") ----
  bool start_relay_train(detail::RelaySpec& r, const Buffer& stream);
  void on_relay_train_event(const detail::Event& ev);
  struct RelayTrain {
    detail::RelaySpec* relay = nullptr;
    /// Each out port's child relay (once packet 0 is in) and packet 0's message: one list, made
    /// once, where two grown packet by packet were three allocations a train (a million trains in
    /// nESBT on 2^16 nodes).
    struct Out {
      detail::RelaySpec* child = nullptr;
      std::uint32_t first = 0;
    };
    std::vector<Out> out;
    PathCounts path0;  ///< the relay's chain when packet 0 left
    Buffer stream;     ///< the whole stream (sizes only in timing mode)
  };
  std::vector<RelayTrain> relay_trains_;
  bool relay_trains_allowed_ = true;  ///< false once an attempt was aborted
  bool relay_trains_on_ = false;      ///< this run may form relay trains
  bool relay_abort_ = false;
  bool closed_forms_allowed_ = true;  ///< false once an attempt was aborted
  bool closed_forms_on_ = false;      ///< this run may carry messages in closed form
  bool closed_abort_ = false;
  Time ahead_end_;  ///< the latest end of a message in closed form (the clock at a deadlock)
  /// Takes the resumes (and a request's receive) owed at one message's end, all of them.
  void take_owed(const detail::Event& first);
  /// The next event next_event() would give, left in place; false when there is none.
  bool peek_event(detail::Event& ev) const;
  /// Waiter `w`'s operations have all completed: resumed now, or at the key of its last
  /// completion if that lies ahead (a resume event).
  void wake(detail::Waiter& w);
  /// w's last completion lies ahead of the event at hand.
  [[nodiscard]] bool lies_ahead(const detail::Waiter& w) const;
  /// Waiter w keeps chain p, ending at t with key k, if it ends last (complete, complete_ahead).
  void keep_chain(detail::Waiter& w, Time t, const PathCounts& p, const detail::Key& k);
  /// One of w's operations completes at key `k` (perhaps ahead of the clock) with chain `p`; true
  /// if it was the last (the caller wakes it).
  bool complete_ahead(detail::Waiter& w, const detail::Key& k, const PathCounts& p);
  std::uint32_t new_message();
  /// Message `mi` made anew, every field set (the others as a new Message's): elements from data.
  detail::Message& renew_message(std::uint32_t mi, NodeId src, NodeId dst, int tag, Buffer data, std::int64_t packets);
  /// Matches an arrived message to the oldest posted receive, or keeps it until one is posted.
  void match(std::uint32_t mi, Time t, const PathCounts& p);
  /// The oldest receive posted in `s`, taken off its list (the slot freed once both lists are
  /// empty); null if none.
  detail::OpState* take_posted(detail::MatchTable::Slot& s);
  /// Appends message `mi` to the messages waiting in `s`.
  void list_message(detail::MatchTable::Slot& s, std::uint32_t mi);
  void start_send(detail::OpState& op);
  bool start_recv(detail::OpState& op);
  /// Node software: a receive whose message is in ends o_recv after `from` (p: the chain so far).
  void finish_recv(detail::OpState& op, Time from, PathCounts p);
  /// A timed op's end event (kOpEnd) at `end`: the chain at its end is kept in op_paths_ until the
  /// event is taken (take_op_path), so that an OpState need not carry one.
  void push_op_end(detail::OpState& op, Time end, const PathCounts& p);
  void keep_op_path(detail::OpState& op, const PathCounts& p);
  PathCounts take_op_path(detail::OpState& op);
  [[noreturn]] void deadlock();
  /// "3 of 8 processes <verb>: node 0 waits for recv from node 1 (port 0) tag 0; ..."
  std::string unfinished(const char* verb) const;
  /// Throws BudgetError or Interrupted (EngineOptions' budgets and stop flag).
  void check_budgets();
  // detail::StrandHooks, while an observer records: strand ids per node.
  int fork(int count) override;
  void enter(int strand) override { current_strand_ = strand; }
  void resume(detail::Waiter& w);
  std::string describe_wait(const detail::OpState& op) const;
  std::size_t link_index(NodeId n, int port) const {
    return static_cast<std::size_t>(n) * ports_ + static_cast<std::size_t>(port);
  }

  Machine machine_;
  Topology topology_;
  EngineOptions options_;
  std::size_t ports_;
  Time now_;
  std::uint64_t seq_ = 0;
  detail::Event current_{0, -1, 0, 0, 0, detail::kOpEnd};  ///< the event being processed (before all at start)
  detail::EventQueue queue_;  ///< pending events, smallest first (sim/kernel/event_queue.hpp)
  /// The event window (engine.cpp "The event window"): the next events, taken from the queue in
  /// order ahead of time so that their records can be prefetched; a ring, oldest at win_head_.
  static constexpr std::size_t kWindow = 32;
  std::array<detail::Event, kWindow> win_{};
  std::size_t win_head_ = 0, win_size_ = 0;
  /// Whether the window reads ahead (reads_ahead_, in detail::Backend): while at least
  /// kReadAheadPending events pend, checked with the budgets (every 4,096 steps). Few pending
  /// events mean few nodes at work, whose records the cache holds already: there the stages and
  /// the group hints only cost (broadcast.gc one-port, 63-953 pending: 0.80-0.89 of the time
  /// without them; A3 and Cannon all-port on 2^12-2^14 nodes, 3,300-17,700 pending: 1.17-1.35 of
  /// the time without them; docs/performance.md "Reading ahead only where it pays").
  enum class ReadAhead : std::uint8_t { by_pending, on, off };
  ReadAhead read_ahead_ = ReadAhead::by_pending;
  static constexpr std::int64_t kReadAheadPending = 2048;
  /// The next event in (time, push time, sequence, sub) order, from the window or the heap;
  /// false when there is none.
  bool next_event(detail::Event& ev);
  void prefetch(const detail::Event& ev, int stage) const;
  /// The stages of a relay train's event (prefetch): the train, its relay and lists, the message
  /// or child relay, the child's match slot or waiter, its posted receive.
  void prefetch_relay_train(const detail::Event& ev, int stage) const;
  std::vector<detail::Waiter*> ready_;
  std::size_t ready_head_ = 0;
  PathCounts current_path_;

  detail::Pool<detail::Message> messages_;
  detail::Pool<PathCounts> op_paths_;  ///< timed ops' chains while their end events wait
  // Arrived-but-unreceived messages and pending receives, FIFO per (receiver, source, tag).
  detail::MatchTable match_;
  std::uint64_t posted_ = 0;  ///< receives posted so far (OpState::posted)

  std::vector<Node> nodes_;
  std::vector<Task<>> processes_;
  std::uint64_t processes_ended_ = 0;  ///< counted by the processes as they end (PromiseBase::ended)
  std::vector<Buffer> results_;
  std::vector<std::int64_t> link_load_;
  std::vector<Time> comm_busy_, compute_busy_;
  RunStats stats_;
  std::int64_t next_check_ = 0;  ///< events + resumes + awaits at which check_budgets() runs next
  std::int64_t budget_checks_ = 0;
  std::int64_t published_events_ = 0;  ///< events added to options_.progress so far
  std::int64_t awaits_ = 0;            ///< operations awaited (Engine::prepare_waiter)
  Time last_time_;
  PathCounts last_path_;
  bool running_ = false;
  EngineObserver* observer_ = nullptr;
  NodeId current_node_ = 0;
  int current_strand_ = 0;                  ///< of the running process (traces only)
  std::vector<int> next_strand_;            ///< per node, while recording
  std::vector<std::int64_t> next_request_;  ///< per node
  std::unique_ptr<Network> net_;            ///< the run's network model (sim/net/)
  /// Networks that may reorder messages: per (src, dst, tag), messages sent and received in
  /// order so far, and those that arrived before an earlier one (Message::order).
  bool in_order_ = true;
  struct OrderCounts {
    std::uint64_t sent = 0, delivered = 0;
  };
  /// Keyed (dst, src, tag); a slot is freed once all its messages are delivered.
  detail::KeyTable<OrderCounts> order_{16};
  /// Messages that overtook an earlier one: (dst, src, tag, order) -> message. Rare.
  std::map<std::tuple<NodeId, NodeId, int, std::uint64_t>, std::uint32_t> parked_;
  /// Per node, the relays whose stream a train carries in (RelaySpec::next_claim): a receive
  /// posted for their messages would take one from them (it aborts the trains).
  std::vector<detail::RelaySpec*> claims_;
  std::int64_t live_claims_ = 0;
  /// Lists (claim) or unlists (unclaim, O(1): the list is doubly linked) a relay a train feeds.
  void claim(detail::RelaySpec& r);
  void unclaim(detail::RelaySpec& r);
};

}  // namespace cubesim
