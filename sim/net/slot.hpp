#pragma once
/// Network models: a counted resource with a first-come first-served queue of waiting records
/// (a node's outgoing or incoming slots, a directed link). The queue is intrusive: it links the
/// waiters' own `next` fields in the model's pool, so waiting allocates nothing.
#include <cstdint>

#include "sim/kernel/pool.hpp"

namespace cubesim::net {

struct Slot {
  std::int32_t busy = 0;
  std::int32_t cap = 1;
  std::uint32_t head = detail::kNone;  ///< oldest waiter
  std::uint32_t tail = detail::kNone;

  /// Free for a newcomer: a unit is free and nobody waits before it.
  [[nodiscard]] bool free() const { return busy < cap && head == detail::kNone; }

  /// Appends waiter `i` (a record of `pool` with a `next` field).
  template <class Pool>
  void enqueue(Pool& pool, std::uint32_t i) {
    pool[i].next = detail::kNone;
    if (tail == detail::kNone)
      head = i;
    else
      pool[tail].next = i;
    tail = i;
  }
  /// Removes and returns the oldest waiter, which now holds the unit its predecessor gave up.
  template <class Pool>
  std::uint32_t pop(Pool& pool) {
    const std::uint32_t i = head;
    head = pool[i].next;
    if (head == detail::kNone) tail = detail::kNone;
    return i;
  }
};

}  // namespace cubesim::net
