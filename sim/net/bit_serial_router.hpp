#pragma once
/// Network model `bit_serial_router`: the bit-serial, pipelined router of a Connection-Machine-like
/// machine (TR-572 §8.2.2; Hillis 1985; docs/transpose.md "The Connection-Machine router").
///
/// Synchronous dimension cycles of length t_hop + B t_c (B the packet size in force), cycle k
/// serving dimension k mod n of the routers' cube, from time 0 (a petit cycle is n of them). At
/// the start of a cycle every router first takes packets from its processors (FIFO in the order
/// their start-ups ended, while it has buffer room and, where the model limits it, up to its
/// injections per cycle), then sends at most one packet across that cycle's dimension: the oldest
/// whose remaining relative address has that bit set. A packet crosses only if the router on the
/// other side has room after its own departure (two routers may always swap). A full router with
/// no packet for the dimension sends its oldest packet across it anyway, one hop further from
/// home ("desperation" routing, a detour). A packet that reaches its destination's router leaves
/// the network at the end of the cycle. The start-up tau (+ tau_msg) is paid once per message,
/// at the source, before injection, holding the source's outgoing slot (one-port, k-port).
///
/// Routers serve 2^g processors each (processor p's router is p >> g): g = 0 here, one router a
/// node; the CM-2 model (sim/net/cm2_router.cpp) has 16 processors a router chip. A packet
/// between two processors of one router crosses no wire and leaves at the end of the cycle that
/// injected it.
#include <cstdint>
#include <vector>

#include "sim/engine.hpp"
#include "sim/net/network.hpp"
#include "sim/net/slot.hpp"

namespace cubesim::net {

class BitSerialRouter : public Network {
 public:
  /// One router per node.
  explicit BitSerialRouter(Engine& k) : BitSerialRouter(k, 0, 0) {}
  void send(std::uint32_t mi) final;
  void on_event(const detail::Event& ev) final;

 protected:
  /// Routers of 2^group_bits processors each; each takes at most `inject_per_cycle` packets from
  /// its processors a cycle (0: as many as its buffers hold).
  BitSerialRouter(Engine& k, int group_bits, std::int64_t inject_per_cycle);

 private:
  /// A message's start-up at its source (holds the source's outgoing slot).
  struct Startup {
    std::uint32_t msg = 0;
    std::uint32_t next = detail::kNone;  ///< slot queue link
    NodeId from = 0;
    std::uint8_t stage = 0;  ///< 0: waits for the outgoing slot; 1: holds it
    Time time;               ///< end of `path`
    PathCounts path;
  };
  /// A packet in the router network.
  struct Packet {
    std::uint32_t msg = 0;
    std::uint64_t age = 0;  ///< queue order: the oldest wins a dimension
    NodeId at = 0;          ///< the router holding it
    std::int64_t elements = 0;
    Time ready;       ///< when its message's start-up ended
    PathCounts path;  ///< the chain up to `ready`
  };
  static constexpr std::uint8_t kStartupEnd = 1;
  static constexpr std::uint8_t kCycle = 2;

  void advance(std::uint32_t si);
  void startup_end(std::uint32_t si);
  void inject(std::uint32_t mi, const Startup& s);
  void schedule(Time earliest);
  void cycle();
  NodeId router_of(NodeId p) const { return p >> group_bits_; }

  Engine& k_;
  const Machine& m_;
  RunStats& st_;
  int group_bits_;
  std::int64_t inject_per_cycle_;
  int dims_;                     ///< dimensions of the routers' cube
  Time dim_cycle_;               ///< t_hop + B t_c
  std::vector<Slot> out_slots_;  ///< per processor (one-port, k-port)
  detail::Pool<Startup> startups_;
  detail::Pool<Packet> packets_;
  std::vector<std::vector<std::uint32_t>> buf_;     ///< per router: packets in it
  std::vector<std::vector<std::uint32_t>> inject_;  ///< per router: packets waiting to enter it (FIFO)
  std::vector<std::size_t> inject_head_;
  std::vector<NodeId> active_;  ///< routers with packets buffered or waiting
  std::vector<char> active_flag_;
  std::vector<std::uint32_t> deliver_;  ///< arrived in the last cycle, delivered at its end
  std::uint64_t age_ = 0;
  std::int64_t next_cycle_ = -1;  ///< index of the scheduled cycle, -1 when none
  std::int64_t last_cycle_ = -1;
  std::int64_t idle_cycles_ = 0;     ///< cycles in a row with no delivery or injection
  std::vector<std::uint32_t> cand_;  ///< per router: the packet it sends this cycle
  std::vector<char> detour_;
};

}  // namespace cubesim::net
