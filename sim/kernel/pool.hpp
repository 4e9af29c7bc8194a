#pragma once
/// Kernel: a pool of records addressed by 32-bit index, with a free list (engine internals).
///
/// The engine's messages and every network model's in-flight records (transfers, router packets)
/// live in pools: an index stays valid while its record is in use, records are reused last freed
/// first (so steady state allocates nothing), and an index fits in an event's payload. Records
/// are not reset on reuse: the caller assigns what it needs (a transfer keeps its generation, so
/// that an event pushed for an earlier use is recognised as stale).
#include <cstdint>
#include <vector>

namespace cubesim::detail {

inline constexpr std::uint32_t kNone = 0xffffffffu;

template <class T>
class Pool {
 public:
  /// A record's index: a freed one if any (last freed first), else a new default-made one.
  /// May grow the pool: references into it taken before are then invalid.
  std::uint32_t acquire() {
    if (!free_.empty()) {
      const std::uint32_t i = free_.back();
      free_.pop_back();
      return i;
    }
    items_.emplace_back();
    return static_cast<std::uint32_t>(items_.size() - 1);
  }
  void release(std::uint32_t i) { free_.push_back(i); }
  /// When every record is free: hands them out again in the order of their indices (the lockstep
  /// simulator's pooled messages, freed in the order of their receivers, then come out in the
  /// order of their senders, side by side). O(capacity); false (nothing done) while any is held.
  bool rewind() {
    if (free_.size() != items_.size()) return false;
    reset();
    return true;
  }
  /// Every record free again, handed out in the order of their indices (rewind's order).
  void reset() {
    free_.resize(items_.size());
    for (std::size_t k = 0; k < free_.size(); ++k) free_[k] = static_cast<std::uint32_t>(free_.size() - 1 - k);
  }
  T& operator[](std::uint32_t i) { return items_[i]; }
  const T& operator[](std::uint32_t i) const { return items_[i]; }
  [[nodiscard]] std::size_t capacity() const { return items_.size(); }

 private:
  std::vector<T> items_;
  std::vector<std::uint32_t> free_;
};

}  // namespace cubesim::detail
