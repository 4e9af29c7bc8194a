#pragma once
/// The discrete-event engine (DESIGN.md "Engine" and "Cost model").
///
/// One event queue ordered by (time, sequence number): the same inputs give the same order of
/// events on every run and every machine. Processes are coroutines, one per node; an operation
/// that completes pushes its waiter on a ready list that is drained, in order, before the next
/// event is taken.
///
/// A packet crossing a link acquires, in this order and first-come first-served at each:
///   1. an outgoing slot of the sending node (one-port: 1, k-port: k, all-port: none needed),
///   2. the directed link,
///   3. an incoming slot of the receiving node (one-port: 1, k-port: k, all-port: none needed),
/// holding what it has while it waits for the next, and all three for its whole transmission of
/// tau (+ tau_msg for the first packet of a message at each hop) + b * t_c. A message holds its
/// outgoing slot at the source from its first packet to its last, so the messages a node sends
/// leave in the order they were sent. Forwarded packets (routed sends) queue at each
/// intermediate node like any other packet and move on only once fully arrived
/// (store-and-forward). Holders of an incoming slot are always transmitting, so the order of
/// acquisition cannot deadlock.
///
/// Events at one instant are taken in the order of (time, push time, sequence, packet): a
/// message's later packets inherit the sequence number of its first, so the order of a packet's
/// end among simultaneous events does not depend on how many events came before it. That makes
/// packet trains exact (docs/performance.md "Packet trains"): a message of k packets to a
/// neighbour that nothing can interleave with (all-port, or one-port with nobody waiting for the
/// receiver's slot) is carried by one event at its last packet's end, with the key the
/// per-packet engine would give that event; the moment another packet queues for the
/// receiver's slot the train is broken back into packets at the packet in flight.
#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

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
  std::int64_t peak_queue = 0;     ///< most events in the queue at once (engine counter)
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
  /// Pipelined machines (the bit-serial router, sim/engine.cpp "Router"): dimension cycles run,
  /// packets that lost a dimension to an older one or found the next router full, packets sent
  /// along a wrong dimension by a full router, and the most packets one router held.
  std::int64_t router_cycles = 0;
  std::int64_t router_collisions = 0;
  std::int64_t router_blocked = 0;
  std::int64_t router_detours = 0;
  std::int64_t router_peak_buffer = 0;
  double wall_s = 0;
};

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
  std::int64_t start_request(detail::OpState& op, detail::Waiter& w) override;
  void note_wait(NodeId node, std::int64_t id) override;
  void prepare_waiter(detail::Waiter& w, std::coroutine_handle<> h, int count) override;
  void after_resume(const detail::Waiter& w) override { current_path_ = w.path; }
  void check_node(NodeId node, const char* what) const override;
  void set_result(NodeId node, Buffer b) override { results_[static_cast<std::size_t>(node)] = std::move(b); }

 private:
  struct Resource {
    std::int32_t busy = 0;
    std::int32_t cap = 1;
    std::uint32_t head = kNone;
    std::uint32_t tail = kNone;
  };
  struct Message {
    std::uint64_t id = 0;  ///< 1, 2, ... in injection order (traces)
    NodeId src = 0, dst = 0;
    int tag = 0;
    std::int64_t elements = 0;
    std::int64_t packets = 0;
    std::int64_t delivered = 0;
    std::int64_t injected = 0;  ///< pipelined: packets that have entered the source's router
    Buffer data;
    detail::OpState* send_op = nullptr;
    std::uint32_t next = kNone;  ///< arrived-list link
    Time arrived;
    PathCounts path;
  };
  /// One packet crossing one link, or (at the source) a message sending its packets in turn.
  struct Transfer {
    std::uint32_t msg = 0;
    std::uint32_t next = kNone;  ///< resource queue link
    NodeId from = 0, to = 0;
    int port = 0;
    std::uint8_t stage = 0;
    bool at_source = false;
    bool first = false;         ///< first packet of its message (pays tau_msg)
    std::int64_t elements = 0;  ///< this packet's elements
    std::int64_t sent = 0;      ///< at source: packets already started
    std::int64_t packet = 0;    ///< forwarded: index of this packet in its message
    Time time;                  ///< end of `path`
    PathCounts path;
    std::uint64_t seq0 = 0;  ///< at source: sequence number of the first packet's end event
    std::uint32_t gen = 0;   ///< bumped when a train breaks: its pushed end event is stale
    bool train = false;      ///< at source: a packet train in flight (time and path: its last packet's)
  };
  /// A packet in the bit-serial router (pipelined machines).
  struct RouterPacket {
    std::uint32_t msg = 0;
    std::uint64_t age = 0;  ///< queue order: the oldest wins a dimension
    NodeId at = 0;
    std::int64_t elements = 0;
    Time ready;       ///< when its message's start-up ended
    PathCounts path;  ///< the chain up to `ready`
  };
  enum class EventKind : std::uint8_t { transfer_end, op_end, router_cycle };
  struct Event {
    std::int64_t time;
    std::int64_t pushed;  ///< when it was pushed (for a later packet: when the packet started)
    std::uint64_t seq;    ///< push order; a message's later packets inherit the first's
    std::uint64_t payload;
    std::uint32_t sub;  ///< packet index within its message (0 for every other event)
    EventKind kind;
  };
  static bool before(const Event& a, const Event& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.pushed != b.pushed) return a.pushed < b.pushed;
    if (a.seq != b.seq) return a.seq < b.seq;
    return a.sub < b.sub;
  }
  struct EventLater {
    bool operator()(const Event& a, const Event& b) const { return before(b, a); }
  };
  static constexpr std::uint32_t kNone = 0xffffffffu;

  std::uint64_t push(Time t, EventKind k, std::uint64_t payload);
  void push_keyed(Event e);
  static std::uint64_t transfer_payload(std::uint32_t ti, std::uint32_t gen) {
    return static_cast<std::uint64_t>(ti) | static_cast<std::uint64_t>(gen) << 32;
  }
  bool train_eligible(const Transfer& t) const;
  /// A whole train's transmission: k start-ups, one message start-up, every element.
  Time train_time(const Message& m) const;
  void start_train(std::uint32_t ti);
  void break_train(std::uint32_t ti);
  void reset_transfer(Transfer& t);
  void complete(detail::Waiter& w, Time t, const PathCounts& p);
  void start_send(detail::OpState& op);
  bool start_recv(detail::OpState& op);
  void advance(std::uint32_t ti);
  void enqueue(Resource& r, std::uint32_t ti);
  void release(Resource& r, const Transfer& by);
  void on_transfer_end(std::uint32_t ti);
  void deliver(std::uint32_t mi, Time t, const PathCounts& p);
  std::int64_t packet_size(const Message& m, std::int64_t index) const;
  // The router (pipelined machines).
  void router_inject(std::uint32_t mi, const Transfer& startup);
  void router_schedule(Time earliest);
  void router_cycle();
  bool router_idle() const;
  std::uint32_t new_transfer();
  std::uint32_t new_message();
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

  Resource* out_slot(NodeId n) { return out_slots_.empty() ? nullptr : &out_slots_[static_cast<std::size_t>(n)]; }
  Resource* in_slot(NodeId n) { return in_slots_.empty() ? nullptr : &in_slots_[static_cast<std::size_t>(n)]; }
  std::size_t link_index(NodeId n, int port) const {
    return static_cast<std::size_t>(n) * ports_ + static_cast<std::size_t>(port);
  }

  Machine machine_;
  Topology topology_;
  EngineOptions options_;
  std::size_t ports_;
  Time now_;
  std::uint64_t seq_ = 0;
  Event current_{0, -1, 0, 0, 0, EventKind::op_end};  ///< the event being processed (before all at start)
  std::vector<std::uint32_t> train_in_;               ///< per node: the train holding its incoming slot (one-port)
  /// Per node's incoming slot: the last claim granted and the last queued (when it was asked for,
  /// and by which node), to count same-instant ties (RunStats::slot_ties).
  struct SlotClaims {
    std::int64_t granted_ps = -1, queued_ps = -1;
    NodeId granted_by = -1, queued_by = -1;
  };
  std::vector<SlotClaims> in_claims_;
  void note_in_grant(NodeId to, Time asked, NodeId by) {
    if (in_claims_.empty()) return;
    SlotClaims& c = in_claims_[static_cast<std::size_t>(to)];
    c.granted_ps = asked.count();
    c.granted_by = by;
  }
  std::vector<Event> heap_;
  std::vector<detail::Waiter*> ready_;
  std::size_t ready_head_ = 0;
  PathCounts current_path_;

  std::vector<Resource> out_slots_, in_slots_, links_;
  std::vector<Transfer> transfers_;
  std::vector<std::uint32_t> free_transfers_;
  std::vector<Message> messages_;
  std::vector<std::uint32_t> free_messages_;
  // Arrived-but-unreceived messages and pending receives, FIFO per (receiver, source, tag).
  detail::MatchTable match_;
  std::uint64_t posted_ = 0;  ///< receives posted so far (OpState::posted)

  std::vector<Node> nodes_;
  std::vector<Task<>> processes_;
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
  // Router state (pipelined machines only).
  bool pipelined_ = false;
  Time dim_cycle_;  ///< t_hop + B t_c
  std::vector<RouterPacket> rpackets_;
  std::vector<std::uint32_t> free_rpackets_;
  std::vector<std::vector<std::uint32_t>> rbuf_;     ///< per node: packets in its router
  std::vector<std::vector<std::uint32_t>> rinject_;  ///< per node: packets waiting to enter it (FIFO)
  std::vector<std::size_t> rinject_head_;
  std::vector<NodeId> ractive_;  ///< nodes with packets buffered or waiting
  std::vector<char> ractive_flag_;
  std::vector<std::uint32_t> rdeliver_;  ///< arrived in the last cycle, delivered at its end
  std::uint64_t rage_ = 0;
  std::int64_t rnext_cycle_ = -1;  ///< index of the scheduled cycle, -1 when none
  std::int64_t rlast_cycle_ = -1;
  std::int64_t ridle_cycles_ = 0;     ///< cycles in a row with no delivery or injection
  std::vector<std::uint32_t> rcand_;  ///< per node: the packet it sends this cycle
  std::vector<char> rdetour_;
};

}  // namespace cubesim
