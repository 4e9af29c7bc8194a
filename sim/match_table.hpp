#pragma once
/// Message matching in O(1) (engine internals; sim/engine.cpp "deliver", "start_recv"): for each
/// (receiver, source, tag) that has receives posted or messages arrived and not yet received, one
/// slot holding the head and tail of each FIFO. At most one of the two is non-empty: a message
/// that arrives takes the oldest posted receive, a receive posted takes the oldest arrived
/// message. Open addressing with linear probing and backward-shift deletion (no tombstones): a
/// slot is freed the moment both its lists empty, so the table holds only the live keys and never
/// allocates in steady state. Before this, each node's two lists were searched from the head,
/// O(posted receives) a message: 68 % of a routed all-to-all's time on 2^10 nodes.
///
/// The same table (KeyTable) keeps the per-(source, receiver, tag) counts of networks that may
/// reorder messages (Engine "order"): a std::unordered_map there allocated a node a message and
/// was 16 % of a 2^16-processor DPT transpose on the CM router.
#include <bit>
#include <cstdint>
#include <vector>

#include "sim/kernel/op_state.hpp"
#include "sim/kernel/prefetch.hpp"

namespace cubesim::detail {

/// What MatchTable keeps per key: the two FIFOs.
struct MatchLists {
  static constexpr std::uint32_t kNone = 0xffffffffu;
  std::uint32_t msg_head = kNone, msg_tail = kNone;  ///< arrived messages (Message::next links)
  OpState* op_head = nullptr;                        ///< posted receives (OpState::next links)
  OpState* op_tail = nullptr;
};

/// An open-addressed table from (node, src, tag) to a Payload, default-constructed when added.
template <class Payload>
class KeyTable {
 public:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  struct Slot : Payload {
    NodeId node = -1;  ///< -1: empty slot
    NodeId src = 0;
    int tag = 0;
    Slot() = default;
    Slot(NodeId n, NodeId s, int t) : node(n), src(s), tag(t) {}
  };

  explicit KeyTable(std::size_t expected = 16) { rehash(capacity_for(expected)); }

  /// The slot of a key, made empty if it has none. Valid until the next find_or_add or erase.
  Slot& find_or_add(NodeId node, NodeId src, int tag) {
    if ((size_ + 1) * 10 > slots_.size() * 7) rehash(slots_.size() * 2);
    std::size_t i = home(node, src, tag);
    for (;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.node < 0) {
        s = Slot{node, src, tag};
        ++size_;
        return s;
      }
      if (s.node == node && s.src == src && s.tag == tag) return s;
    }
  }
  /// The slot of a key, or null.
  [[nodiscard]] const Slot* find(NodeId node, NodeId src, int tag) const {
    for (std::size_t i = home(node, src, tag);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.node < 0) return nullptr;
      if (s.node == node && s.src == src && s.tag == tag) return &s;
    }
  }
  /// The slot where the key's search starts (what MatchTable::prefetch asks the cache for).
  [[nodiscard]] const void* search_start(NodeId node, NodeId src, int tag) const {
    return &slots_[home(node, src, tag)];
  }
  /// Frees `s` (both lists empty) and shifts back the slots probing past it.
  void erase(Slot& s) {
    std::size_t hole = static_cast<std::size_t>(&s - slots_.data());
    for (std::size_t j = (hole + 1) & mask_;; j = (j + 1) & mask_) {
      Slot& t = slots_[j];
      if (t.node < 0) break;
      const std::size_t h = home(t.node, t.src, t.tag);
      // t may move into the hole if its home is not cyclically in (hole, j].
      if (((j - h) & mask_) >= ((j - hole) & mask_)) {
        slots_[hole] = t;
        hole = j;
      }
    }
    slots_[hole] = Slot{};
    --size_;
  }
  [[nodiscard]] const std::vector<Slot>& slots() const { return slots_; }
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  static std::size_t capacity_for(std::size_t n) {
    std::size_t c = 16;
    while (c * 7 < n * 10) c *= 2;
    return c;
  }
  [[nodiscard]] std::size_t home(NodeId node, NodeId src, int tag) const {
    std::uint64_t x = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(node)) << 32) ^
                      static_cast<std::uint32_t>(src) ^
                      (static_cast<std::uint64_t>(static_cast<std::uint32_t>(tag)) << 17);
    x ^= x >> 30;  // splitmix64's finalizer
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return static_cast<std::size_t>(x) & mask_;
  }
  void rehash(std::size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    size_ = 0;
    for (const Slot& s : old) {
      if (s.node < 0) continue;
      std::size_t i = home(s.node, s.src, s.tag);
      while (slots_[i].node >= 0) i = (i + 1) & mask_;
      slots_[i] = s;
      ++size_;
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

/// The match table of a run: on a hypercube, a slot of its own for each (receiver, port) -- the
/// key (receiver, neighbour, tag) of the first tag that uses it -- in a plain array of 32-byte records, and the hash
/// table (KeyTable) for every other key: messages between nodes that are not neighbours, a second
/// tag between two neighbours at once, every key on other topologies. Nearly every message of the
/// hypercube algorithms is between neighbours with one tag at a time, so its match costs an index,
/// not a hash and a probe, and freeing the key is a store, not a backward shift (KeyTable::erase
/// was 9.6 % of `allgather.sbt` all-port on 2^14 nodes; docs/performance.md).
///
/// A key lives in one place at a time: it goes into its (receiver, port) slot only when that slot
/// is free and the hash table does not hold the key, so each FIFO stays whole.
class MatchTable {
 public:
  /// What a caller sees of a key's slot: its two lists (a hash slot's or a direct one's).
  using Slot = MatchLists;
  /// The most (receiver, port) slots made (32 bytes each): beyond, every key goes to the hash table.
  static constexpr std::size_t kMaxDirect = std::size_t{1} << 21;

  explicit MatchTable(std::size_t expected = 16, int cube_dim = 0, std::int64_t nodes = 0) : hash_(expected) {
    const auto slots = static_cast<std::size_t>(nodes) * static_cast<std::size_t>(cube_dim);
    if (cube_dim > 0 && slots <= kMaxDirect) {
      dim_ = cube_dim;
      nodes_ = nodes;
      direct_.assign(slots, Direct{});
    }
  }

  /// The slot of a key, made empty if it has none. Valid until the next find_or_add or erase.
  Slot& find_or_add(NodeId node, NodeId src, int tag) {
    if (const std::size_t d = direct_index(node, src); d != kNoDirect) {
      Direct& s = direct_[d];
      if (s.used) {
        if (s.tag == tag) return s;
      } else if (hash_.size() == 0 || hash_.find(node, src, tag) == nullptr) {
        s.used = true;
        s.tag = tag;
        return s;
      }
    }
    return hash_.find_or_add(node, src, tag);
  }
  /// The slot of a key, or null.
  [[nodiscard]] const Slot* find(NodeId node, NodeId src, int tag) const {
    if (const std::size_t d = direct_index(node, src); d != kNoDirect) {
      const Direct& s = direct_[d];
      if (s.used && s.tag == tag) return &s;
    }
    return hash_.size() == 0 ? nullptr : hash_.find(node, src, tag);
  }
  /// Asks the cache for the slot where the key's search starts (a hint: Engine "The event window").
  /// Through detail::prefetch: with a bare __builtin_prefetch GCC 12 deleted every call of this
  /// function (sim/kernel/prefetch.hpp; tests/check_prefetch_codegen.sh).
  void prefetch(NodeId node, NodeId src, int tag) const {
    const std::size_t d = direct_index(node, src);
    detail::prefetch(d != kNoDirect ? static_cast<const void*>(&direct_[d]) : hash_.search_start(node, src, tag));
  }
  /// Frees `s` (both lists empty).
  void erase(Slot& s) {
    if (!direct_.empty() && static_cast<const void*>(&s) >= static_cast<const void*>(direct_.data()) &&
        static_cast<const void*>(&s) < static_cast<const void*>(direct_.data() + direct_.size()))
      static_cast<Direct&>(s) = Direct{};
    else
      hash_.erase(static_cast<KeyTable<MatchLists>::Slot&>(s));
  }
  /// Calls f(slot) for every live key's slot, in no particular order.
  template <class F>
  void for_each(F&& f) const {
    for (const Direct& s : direct_)
      if (s.used) f(static_cast<const Slot&>(s));
    for (const auto& s : hash_.slots())
      if (s.node >= 0) f(static_cast<const Slot&>(s));
  }

 private:
  /// A (receiver, port) slot: the key's receiver and source are its index; 32 bytes, so that none
  /// straddles two cache lines (a 48-byte hash slot does every other time).
  struct alignas(32) Direct : MatchLists {
    int tag = 0;
    bool used = false;
  };
  static_assert(sizeof(Direct) == 32);
  static constexpr std::size_t kNoDirect = ~std::size_t{0};
  /// The (receiver, port) slot of a key between neighbours of the cube, or kNoDirect.
  [[nodiscard]] std::size_t direct_index(NodeId node, NodeId src) const {
    if (dim_ == 0 || node < 0 || node >= nodes_ || src < 0 || src >= nodes_) return kNoDirect;
    const auto x = static_cast<std::uint64_t>(static_cast<std::uint32_t>(node ^ src));
    if (x == 0 || (x & (x - 1)) != 0) return kNoDirect;
    const int port = std::countr_zero(x);
    if (port >= dim_) return kNoDirect;
    return static_cast<std::size_t>(node) * static_cast<std::size_t>(dim_) + static_cast<std::size_t>(port);
  }

  KeyTable<MatchLists> hash_;
  std::vector<Direct> direct_;  ///< [node * dim + port]
  int dim_ = 0;
  std::int64_t nodes_ = 0;
};

}  // namespace cubesim::detail
