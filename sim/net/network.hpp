#pragma once
/// Network models: how messages cross the machine (docs/architecture.md "Machine models").
///
/// The kernel (sim/engine.hpp) keeps what every model shares: the event queue and its order,
/// processes and their resumption, message matching, budgets, the run loop and the run's
/// statistics. A network model takes each message the kernel hands it (send), moves it with
/// events of its own kinds (on_event, one virtual call per event), and gives it back to the kernel
/// when it has arrived (Engine::deliver) and when its send completes (Engine::complete). A model
/// owns its state, charges its costs to the message's chain (PathCounts) and adds its counts to
/// the run's statistics (Engine::stats, link_load, comm_busy).
///
/// A model registers itself under a name at static initialisation (NetworkRegistration, in its
/// own .cpp under sim/net/; CMake compiles every file there); a machine names its model with the
/// key `network`, or leaves it to the default of its `switching`. The kernel never names a model.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/kernel/event.hpp"
#include "sim/machine.hpp"
#include "sim/topology.hpp"

namespace cubesim {

class Engine;

class Network {
 public:
  virtual ~Network() = default;
  /// Message `mi` (Engine::message) starts at now, from its source; the kernel has counted it.
  virtual void send(std::uint32_t mi) = 0;
  /// One of this model's events is due. Unless it is stale, the model calls Engine::take(ev)
  /// first (the clock moves to it and it is counted), then acts.
  virtual void on_event(const detail::Event& ev) = 0;
  /// A hint, never required: one of this model's events will be taken soon (Engine "The event
  /// window"). Stage 0 comes first, then 1, 2, ... a few events apart, so that each stage may read
  /// what the stage before asked the cache for and ask for the next record along its chain. It
  /// must not change anything, and it may see an event that will turn out stale.
  virtual void prefetch(const detail::Event& /*ev*/, int /*stage*/) const {}
  /// The model carries messages in closed form (sim/engine.cpp "Messages in closed form").
  [[nodiscard]] virtual bool closed_forms() const { return false; }
  /// A hint before a group's send from src to dst begins (Backend::prefetch_begin): asks the cache
  /// for the link state the send will read. Changes nothing.
  virtual void prefetch_send(NodeId /*src*/, NodeId /*dst*/) const {}
  /// Relay trains (docs/performance.md "Relay trains"): whether node n's link on `port` is free
  /// with nobody waiting, so that a train may hold it; models without relay trains say no.
  [[nodiscard]] virtual bool relay_link_free(NodeId /*n*/, int /*port*/) const { return false; }
  /// A relay train holds the link from now until release_relay_link; any other transmission that
  /// wants it meanwhile aborts the relay trains (Engine::abort_relay_trains).
  virtual void hold_relay_link(NodeId /*n*/, int /*port*/) {}
  virtual void release_relay_link(NodeId /*n*/, int /*port*/) {}
};

using NetworkFactory = std::unique_ptr<Network> (*)(Engine&);

struct NetworkModelInfo {
  const char* name;     ///< the machine's `network` value
  Switching switching;  ///< the cost model's family (predictions read it)
  const char* summary;  ///< one line for `cubesim list machines` and the docs
  NetworkFactory make;
  /// Whether two messages from one node to another always arrive in the order they were sent
  /// (store-and-forward: one route, first-come first-served queues). Where not (a router whose
  /// packets can take detours), the kernel holds a message that overtook an earlier one with the
  /// same tag until that one has arrived: messages are not overtaking, as in MPI.
  bool in_order = true;
};

/// Registers a model at static initialisation (one per model file).
struct NetworkRegistration {
  explicit NetworkRegistration(const NetworkModelInfo& info);
};

/// Every registered model, by name.
const std::vector<NetworkModelInfo>& network_models();
/// The model of that name, or null.
const NetworkModelInfo* find_network_model(std::string_view name);
/// The model a machine runs on: its `network`, or the default of its switching.
const NetworkModelInfo& network_model_of(const Machine& m);

}  // namespace cubesim
