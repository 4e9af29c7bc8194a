#pragma once
/// Kernel: the event record and its total order (engine internals; sim/engine.hpp).
///
/// Events at one instant are taken in the order of (time, push time, sequence, sub): a message's
/// later packets inherit the sequence number of its first, so the order of a packet's end among
/// simultaneous events does not depend on how many events came before it (docs/performance.md
/// "Packet trains"). The kernel owns kind 0 (an operation's end); a network model numbers its
/// own kinds from 1 and interprets their payload.
#include <cstdint>

namespace cubesim::detail {

struct Event {
  std::int64_t time;
  std::int64_t pushed;    ///< when it was pushed (for a later packet: when the packet started)
  std::uint64_t seq;      ///< push order; a message's later packets inherit the first's
  std::uint64_t payload;  ///< the kernel's: an OpState*; a model's: its own
  std::uint32_t sub;      ///< packet index within its message (0 for every other event)
  std::uint8_t kind;      ///< kOpEnd, or a network model's own kind (>= 1)
};

/// The kernel's own event kind: a compute, copy or delay ends.
inline constexpr std::uint8_t kOpEnd = 0;

inline bool before(const Event& a, const Event& b) {
  if (a.time != b.time) return a.time < b.time;
  if (a.pushed != b.pushed) return a.pushed < b.pushed;
  if (a.seq != b.seq) return a.seq < b.seq;
  return a.sub < b.sub;
}

}  // namespace cubesim::detail
