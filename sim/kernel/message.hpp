#pragma once
/// Kernel: one message between two processes (engine internals; sim/engine.hpp).
///
/// The kernel makes it when a send starts (its packets counted with the packet size in force),
/// hands it to the run's network model, and matches it to a receive when the model delivers it.
#include <cstdint>

#include "sim/buffer.hpp"
#include "sim/critical_path.hpp"
#include "sim/kernel/op_state.hpp"
#include "sim/kernel/pool.hpp"

namespace cubesim::detail {

struct Message {
  std::uint64_t id = 0;  ///< 1, 2, ... in injection order (traces)
  NodeId src = 0, dst = 0;
  int tag = 0;
  std::int64_t elements = 0;
  std::int64_t packets = 0;    ///< ceil(elements / B), at least 1
  std::int64_t delivered = 0;  ///< packets the network model has delivered at dst
  std::int64_t injected = 0;   ///< packets the network model has taken from the source (routers)
  Buffer data;
  OpState* send_op = nullptr;
  /// Networks that may reorder (NetworkModelInfo::in_order false): 1, 2, ... among the messages
  /// from src to dst with this tag, so that none is received before one sent earlier (0: not
  /// numbered, a message to itself).
  std::uint64_t order = 0;
  bool keyed = false;  ///< from a relay: its end event's key is (key_seq, key_sub) (OpState::keyed)
  /// Carried in closed form (sim/engine.cpp "Messages in closed form"): it is in its receiver's
  /// list from the moment it left, and arrives at the key (arrived, ahead_pushed, key_seq,
  /// key_sub) its end event would have had; a receive posted before that key waits for it.
  bool ahead = false;
  std::uint32_t key_sub = 0;
  std::uint64_t key_seq = 0;
  std::int64_t ahead_pushed = 0;
  std::uint32_t next = kNone;  ///< arrived-list link (kernel)
  Time arrived;
  PathCounts path;  ///< in closed form: the chain at its end (set only then, read only then)
};

}  // namespace cubesim::detail
