#pragma once
/// The SimGrid backend (DESIGN.md "SimGrid backend", docs/simgrid.md): the same node processes
/// as the cycle engine, run as SimGrid 3.32 S4U actors on the platform of sim/simgrid/platform.
///
/// Each node is one actor (its "reactor") that resumes the node's coroutine whenever a group of
/// operations it awaits has completed. Operations map to S4U as follows:
///  - a message is cut into packets exactly as in the cycle engine, and each packet is its own
///    SimGrid communication through the mailbox of its first link, so every packet pays the link
///    latency (tau). The first packet of a message first sleeps tau_msg while holding the slots.
///  - port models: one-port (k-port) nodes have 1 (k) outgoing and 1 (k) incoming slots; a
///    message holds its source's outgoing slot and its first link from its first packet to its
///    last, and each packet holds an incoming slot of the destination while it crosses. Slots and
///    links are first-come first-served queues of our own, claimed when the process begins the
///    send (in the order it began its sends), as in the cycle engine. All-port nodes have no slots.
///  - compute(f) is an execution of f flops on a host of 1/t_a flop/s; copy and delay sleep.
///  - receives match messages by (source, tag) in arrival order, as in the cycle engine.
/// An operation that must run beside others (an all_of, a Request, concurrent strands) runs in a
/// worker actor of its own on the node's host; one that runs alone runs in the reactor itself.
///
/// Where SimGrid's flow model departs from the cycle engine (by design, docs/simgrid.md): a
/// routed send is one flow over its whole route (pipelined: h tau + S t_c rather than
/// store-and-forward h (tau + S t_c)), it holds no slot at intermediate nodes, and it completes
/// when it arrives rather than when it has left the source; flows that share a link beyond their
/// first hop share its bandwidth instead of queueing for it.
///
/// SimGrid can run once per process: run() only in a fresh process (sim/simgrid/isolate.hpp).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/kernel/backend.hpp"
#include "sim/node.hpp"

namespace cubesim {

struct SimGridOptions {
  int stack_kib = 64;  ///< context stack of each actor (guard pages off: see docs/simgrid.md)
};

struct SimGridStats {
  double time_s = 0;  ///< when the last process ended (SimGrid's clock)
  std::int64_t messages = 0;
  std::int64_t packets = 0;     ///< packet communications (Comm::sendto)
  std::int64_t activities = 0;  ///< communications, executions and sleeps
  std::int64_t resumes = 0;     ///< process resumptions
  std::int64_t workers = 0;     ///< worker actors created
  std::int64_t inline_ops = 0;  ///< operations run by the reactor itself
  std::int64_t unreceived_messages = 0;
  double platform_s = 0;  ///< wall time to build the platform
  double wall_s = 0;      ///< wall time of the simulation (platform, actors, run)
};

class SimGridEngine final : public detail::Backend {
 public:
  using ProcessFactory = std::function<Task<>(Node&)>;

  /// Throws std::invalid_argument when SimGrid cannot model this machine or topology.
  SimGridEngine(const Machine& machine, const Topology& topology, EngineOptions options, SimGridOptions sg = {});
  SimGridEngine(const SimGridEngine&) = delete;
  SimGridEngine& operator=(const SimGridEngine&) = delete;
  ~SimGridEngine();

  /// Runs one process per node to completion under SimGrid. Throws SimulationError (a process
  /// threw) or DeadlockError. Once per process (see above).
  SimGridStats run(const ProcessFactory& make_process);
  [[nodiscard]] std::vector<Buffer>& results() { return results_; }

  // ---- detail::Backend ----
  [[nodiscard]] const Machine& machine() const override { return machine_; }
  [[nodiscard]] const Topology& topology() const override { return topology_; }
  [[nodiscard]] const EngineOptions& options() const override { return options_; }
  [[nodiscard]] Time now() const override;
  [[nodiscard]] int current_strand() const override { return 0; }  ///< SimGrid runs record no traces
  [[nodiscard]] EngineObserver* observer() const override { return nullptr; }
  bool begin(detail::OpState& op, detail::Waiter& w) override;
  std::int64_t start_request(detail::OpState& op, detail::Waiter& w) override;
  void note_wait(NodeId, std::int64_t) override {}
  void prepare_waiter(detail::Waiter& w, std::coroutine_handle<> h, int count) override;
  bool end_start(detail::Waiter& w) override;
  void after_resume(const detail::Waiter&) override {}
  void check_node(NodeId node, const char* what) const override;
  void set_result(NodeId node, Buffer b) override { results_[static_cast<std::size_t>(node)] = std::move(b); }

  struct Impl;  // SimGrid types stay out of this header

 private:
  Machine machine_;
  Topology topology_;
  EngineOptions options_;
  SimGridOptions sg_;
  std::vector<Node> nodes_;
  std::vector<Buffer> results_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cubesim
