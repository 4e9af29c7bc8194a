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
  /// Last in the order: the resumes a message in closed form owes its receiver (1) and its
  /// sender (2) come right after its end's key, in the order its end event would have made them
  /// (engine.cpp "Messages in closed form"); 0 for every other event.
  std::uint8_t phase = 0;
};

/// An event's place in the order, without what it carries.
struct Key {
  std::int64_t time = -1;  ///< -1: none
  std::int64_t pushed = 0;
  std::uint64_t seq = 0;
  std::uint32_t sub = 0;
  std::uint8_t phase = 0;
};
inline Key key_of(const Event& e) { return Key{e.time, e.pushed, e.seq, e.sub, e.phase}; }

/// The kernel's own event kind: a compute, copy or delay ends.
inline constexpr std::uint8_t kOpEnd = 0;

/// The order of events and of their keys (both have the five fields).
template <class A, class B>
bool key_before(const A& a, const B& b) {
  if (a.time != b.time) return a.time < b.time;
  if (a.pushed != b.pushed) return a.pushed < b.pushed;
  if (a.seq != b.seq) return a.seq < b.seq;
  if (a.sub != b.sub) return a.sub < b.sub;
  return a.phase < b.phase;
}
inline bool before(const Event& a, const Event& b) { return key_before(a, b); }
inline bool before(const Key& a, const Key& b) { return key_before(a, b); }

}  // namespace cubesim::detail
