#pragma once
/// Network model `store_and_forward` (DESIGN.md "Cost model"; the iPSC, the Mark II, meshes).
///
/// A packet crossing a link acquires, in this order and first-come first-served at each:
///   1. an outgoing slot of the sending node (one-port: 1, k-port: k, all-port: none needed),
///   2. the directed link,
///   3. an incoming slot of the receiving node (one-port: 1, k-port: k, all-port: none needed),
/// holding what it has while it waits for the next, and all three for its whole transmission of
/// tau (+ tau_msg for the first packet of a message at each hop) + b * t_c. A message holds its
/// outgoing slot at the source from its first packet to its last, so the messages a node sends
/// leave in the order they were sent. Forwarded packets (routed sends) queue at each
/// intermediate node like any other packet and move on only once fully arrived
/// (store-and-forward). Holders of an incoming slot are always transmitting, so the order of
/// acquisition cannot deadlock.
///
/// Packet trains (docs/performance.md "Packet trains"): a message of k packets to a neighbour
/// that nothing can interleave with (all-port, or one-port with nobody waiting for the
/// receiver's slot) is carried by one event at its last packet's end, with the key the
/// per-packet engine would give that event; the moment another packet queues for the
/// receiver's slot the train is broken back into packets at the packet in flight.
#include <cstdint>
#include <vector>

#include "sim/engine.hpp"
#include "sim/net/network.hpp"
#include "sim/net/slot.hpp"

namespace cubesim::net {

class StoreAndForward final : public Network {
 public:
  explicit StoreAndForward(Engine& k);
  void send(std::uint32_t mi) override;
  void on_event(const detail::Event& ev) override;
  void prefetch(const detail::Event& ev, int stage) const override;
  /// All-port only: a message then holds nothing but its link.
  [[nodiscard]] bool closed_forms() const override { return in_slots_.empty(); }
  void prefetch_send(NodeId src, NodeId dst) const override {
    const int port = topo_.next_hop(src, dst);
    if (port < 0) return;
    const std::size_t li = link_index(src, port);
    detail::prefetch(&links_[li]);
    if (!ahead_.empty()) detail::prefetch(&ahead_[li], true);
    k_.prefetch_link_load(src, port);
  }
  [[nodiscard]] bool relay_link_free(NodeId n, int port) const override;
  void hold_relay_link(NodeId n, int port) override;
  void release_relay_link(NodeId n, int port) override;

 private:
  /// One packet crossing one link, or (at the source) a message sending its packets in turn.
  struct Transfer {
    std::uint32_t msg = 0;
    std::uint32_t next = detail::kNone;  ///< slot queue link
    NodeId from = 0, to = 0;
    int port = 0;
    std::uint32_t gen = 0;  ///< bumped when a train breaks: its pushed end event is stale
    std::uint8_t stage = 0;
    bool at_source = false;
    bool first = false;         ///< first packet of its message (pays tau_msg)
    std::int64_t elements = 0;  ///< this packet's elements
    std::int64_t sent = 0;      ///< at source: packets already started
    std::int64_t packet = 0;    ///< forwarded: index of this packet in its message
    Time time;                  ///< end of `path`
    PathCounts path;
    std::uint64_t seq0 = 0;  ///< at source: sequence number of the first packet's end event
    bool train = false;      ///< at source: a packet train in flight (time and path: its last packet's)
  };
  static constexpr std::uint8_t kTransferEnd = 1;
  static std::uint64_t payload(std::uint32_t ti, std::uint32_t gen) {
    return static_cast<std::uint64_t>(ti) | static_cast<std::uint64_t>(gen) << 32;
  }

  /// Every field of a record taken from the pool as a new one's, but its generation.
  static void renew(Transfer& t);
  void advance(std::uint32_t ti);
  void enqueue(Slot& r, std::uint32_t ti);
  void release(Slot& r, const Transfer& by);
  void on_transfer_end(std::uint32_t ti);
  bool train_eligible(const Transfer& t) const;
  /// A whole train's transmission: k start-ups, one message start-up, every element.
  Time train_time(const detail::Message& m) const;
  /// A whole message's transmission taking `busy` (a train, or a message in closed form) counted
  /// at once: its chain, the packet- and element-hops, the link's load, the sender's busy time.
  void count_whole(const detail::Message& m, NodeId from, int port, Time busy, PathCounts& path);
  void start_train(std::uint32_t ti);
  void break_train(std::uint32_t ti);
  void note_in_grant(NodeId to, Time asked, NodeId by);
  /// A message in closed form (sim/engine.cpp "Messages in closed form"): all-port, to a
  /// neighbour, over a free link: no transfer record and no event; the link is its until `ahead_`.
  bool closed_form(std::uint32_t mi, int port);
  /// Link (n, port) is held by a message in closed form whose end is still ahead.
  [[nodiscard]] bool held_ahead(std::size_t link) const {
    return !ahead_.empty() && ahead_[link].time >= 0 &&
           detail::before(detail::key_of(k_.current_event()), ahead_[link]);
  }

  Slot* out_slot(NodeId n) { return out_slots_.empty() ? nullptr : &out_slots_[static_cast<std::size_t>(n)]; }
  Slot* in_slot(NodeId n) { return in_slots_.empty() ? nullptr : &in_slots_[static_cast<std::size_t>(n)]; }
  std::size_t link_index(NodeId n, int port) const {
    return static_cast<std::size_t>(n) * k_.ports() + static_cast<std::size_t>(port);
  }
  Slot& link(NodeId n, int port) { return links_[link_index(n, port)]; }

  Engine& k_;
  const Machine& m_;
  const Topology& topo_;
  RunStats& st_;
  std::vector<Slot> out_slots_, in_slots_, links_;
  detail::Pool<Transfer> transfers_;
  std::vector<std::uint8_t> relay_links_;  ///< per link: held by a relay train (all-port only)
  std::vector<detail::Key> ahead_;         ///< per link: the end of its last message in closed form
  std::vector<std::uint32_t> train_in_;    ///< per node: the train holding its incoming slot (one-port)
  /// Per node's incoming slot: the last claim granted and the last queued (when it was asked for,
  /// and by which node), to count same-instant ties (RunStats::slot_ties).
  struct SlotClaims {
    std::int64_t granted_ps = -1, queued_ps = -1;
    NodeId granted_by = -1, queued_by = -1;
  };
  std::vector<SlotClaims> in_claims_;
};

}  // namespace cubesim::net
