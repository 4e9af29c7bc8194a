#pragma once
/// What the engine tells an observer (traces/ records with it; the engine knows no format).
///
/// Two levels:
///  - the process level, for time-independent traces: every await a process makes (the
///    operations it awaited together), every request it starts and waits for, every fork of
///    concurrent strands (all_of of Tasks), and the size of every message a receive matched;
///  - the timed level, for timelines: every packet transmission over a link, every compute, copy
///    and delay, every message injected and delivered.
/// With no observer set the engine pays one pointer test per hook.
#include <cstdint>
#include <span>

#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace cubesim {

namespace detail {
struct OpState;
}

/// One packet crossing one link.
struct Transmission {
  std::uint64_t message = 0;  ///< message id (1, 2, ... in injection order)
  NodeId from = 0, to = 0;
  int port = 0;  ///< the sender's port
  Time start, end;
  std::int64_t elements = 0;
  std::int64_t packet = 0;        ///< index of the packet within its message
  bool first_of_message = false;  ///< paid tau_msg
};

enum class ActivityKind : std::uint8_t { compute, copy, delay };

class EngineObserver {
 public:
  virtual ~EngineObserver() = default;
  // ---- process level ----
  /// A process (strand `strand` of node `node`) awaits `ops` together (one op: a plain await).
  virtual void on_await(NodeId /*node*/, int /*strand*/, std::span<detail::OpState* const> /*ops*/) {}
  /// A receive matched a message of `elements` elements (called once per receive).
  virtual void on_recv_matched(detail::OpState& /*op*/, std::int64_t /*elements*/) {}
  /// Strand `parent` of `node` runs `count` child strands (ids first..first+count-1) and waits.
  virtual void on_fork(NodeId /*node*/, int /*parent*/, int /*first*/, int /*count*/) {}
  /// A non-blocking request `id` (per node, 1, 2, ...) starts `op` on strand `strand`.
  virtual void on_start(NodeId /*node*/, int /*strand*/, std::int64_t /*id*/, detail::OpState& /*op*/) {}
  /// Strand `strand` waits for request `id`.
  virtual void on_wait(NodeId /*node*/, int /*strand*/, std::int64_t /*id*/) {}
  // ---- timed level ----
  virtual void on_message(std::uint64_t /*id*/, NodeId /*src*/, NodeId /*dst*/, int /*tag*/, std::int64_t /*elements*/,
                          Time /*t*/) {}
  virtual void on_transmission(const Transmission& /*t*/) {}
  virtual void on_delivered(std::uint64_t /*id*/, NodeId /*dst*/, Time /*t*/) {}
  virtual void on_activity(NodeId /*node*/, ActivityKind /*kind*/, std::int64_t /*amount*/, Time /*start*/,
                           Time /*end*/) {}
};

}  // namespace cubesim
