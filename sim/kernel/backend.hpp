#pragma once
/// Kernel: what a simulated process's operations need from the engine that runs them (sim/node.hpp).
///
/// Two engines implement it: the cycle-accurate discrete-event Engine (sim/engine.hpp) and the
/// SimGrid S4U backend (sim/simgrid/backend.hpp). Node, Op, OpGroup and Request talk only to this
/// interface, so the same algorithm coroutines run unchanged under either (DESIGN.md "SimGrid
/// backend"). One virtual call per operation, never per packet or per event.
#include <atomic>
#include <coroutine>
#include <cstdint>
#include <vector>

#include "sim/buffer.hpp"
#include "sim/errors.hpp"
#include "sim/machine.hpp"
#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace cubesim {

class EngineObserver;

struct EngineOptions {
  std::int64_t packet_elements = 1;  ///< B in force (<= B_m)
  bool data_mode = true;
  /// Budgets (docs/reliability.md "Budgets"); 0: none. The run throws BudgetError when it has
  /// taken more than max_events events from its queue, resumed its processes more than max_events
  /// times, or seen them await more than max_events operations (a livelock of zero-time
  /// operations takes no events and no resumes)...
  std::int64_t max_events = 0;
  /// ... or when this process's resident memory passes max_resident_bytes (read every 4,096
  /// steps: events, resumes and awaits).
  std::int64_t max_resident_bytes = 0;
  /// Non-null: the run throws Interrupted as soon as it reads a non-zero value here (within
  /// 4,096 steps); a signal handler sets it.
  const std::atomic<int>* stop = nullptr;
  /// Packet trains (docs/performance.md "Packet trains"): a message whose packets nothing can
  /// interleave with is carried by one event instead of one per packet. Every result is
  /// identical to the picosecond with it off (the per-packet engine); only the engine's own
  /// counters (events) differ.
  bool packet_trains = true;
  /// Non-null: the run adds the events it has taken here as it goes (within 4,096 steps) and at
  /// its end, for a progress line; read from another thread.
  std::atomic<std::int64_t>* progress = nullptr;
  /// Threads the lockstep simulator (sim/lockstep.hpp) may split a run's sweeps among; the same
  /// report for any number. The engine runs on one.
  int threads = 1;
  /// The all-port lockstep simulator adds what a repeated step adds instead of timing it, where
  /// the program promises repeated steps (StepProgram::repeats; docs/lockstep.md "Repeated
  /// steps"). The same report, events and resumes included, with it off.
  bool lockstep_repeats = true;
  /// The all-port lockstep simulator times node 0 alone for all of a step every node posts alike
  /// while all nodes are in one state (StepProgram::uniform; docs/lockstep.md "Uniform steps"),
  /// on a hypercube. The same report, events and resumes included, with it off.
  bool lockstep_uniform = true;
  /// Non-null: the all-port lockstep simulator writes here each node's time at the end (its
  /// process's end), the whole of what a repeat extrapolates that the report only samples (tests).
  std::vector<Time>* node_times = nullptr;
};

namespace detail {
struct OpState;
struct Waiter;
struct RelaySpec;

class Backend {
 public:
  [[nodiscard]] virtual const Machine& machine() const = 0;
  [[nodiscard]] virtual const Topology& topology() const = 0;
  [[nodiscard]] virtual const EngineOptions& options() const = 0;
  [[nodiscard]] virtual Time now() const = 0;
  /// The strand of the running process (traces only; 0 when not recording).
  [[nodiscard]] virtual int current_strand() const = 0;
  /// A recording observer (traces), or null.
  [[nodiscard]] virtual EngineObserver* observer() const = 0;
  /// Starts an operation on behalf of the running coroutine; true if it completed at once.
  virtual bool begin(OpState& op, Waiter& w) = 0;
  /// A hint before a group of operations begins (OpGroup): asks the cache for what begin(op)
  /// will read, so that the group's misses overlap: stage 0 what it reads first, each later stage
  /// what the one before brought in points to (all ops at one stage, then the next). Changes nothing.
  static constexpr int kPrefetchStages = 3;
  virtual void prefetch_begin(const OpState& /*op*/, int /*stage*/) const {}
  /// Whether the engine asks the cache ahead now (the event window's stages, prefetch_begin):
  /// only while many events pend (sim/engine.cpp "The event window").
  [[nodiscard]] bool reads_ahead() const { return reads_ahead_; }
  /// Starts a non-blocking request (Node::start); returns its id within the node.
  virtual std::int64_t start_request(OpState& op, Waiter& w) = 0;
  virtual void note_wait(NodeId node, std::int64_t id) = 0;
  virtual void prepare_waiter(Waiter& w, std::coroutine_handle<> h, int count) = 0;
  /// A group's operations have all begun (OpGroup): drops the guard count it held while they
  /// began; true if the coroutine must suspend (one has not completed, or completes ahead of the
  /// clock: sim/engine.cpp "Messages in closed form").
  virtual bool end_start(Waiter& w) = 0;
  virtual void after_resume(const Waiter& w) = 0;
  virtual void check_node(NodeId node, const char* what) const = 0;
  virtual void set_result(NodeId node, Buffer b) = 0;
  /// A relay's first packet is in (or, at the source, about to leave): takes the key of its
  /// packets (RelaySpec::seq) and returns true if the engine carries the rest of its stream as a
  /// relay train, which resumes it (RelaySpec::waiter) when the stream has passed.
  virtual bool relay_start(RelaySpec& /*r*/, const Buffer* /*source_data*/) { return false; }

 protected:
  ~Backend() = default;
  bool reads_ahead_ = false;
};
}  // namespace detail

}  // namespace cubesim
