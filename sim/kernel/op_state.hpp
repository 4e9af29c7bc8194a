#pragma once
/// Kernel types behind the public operations of sim/op.hpp: the state of one operation in flight
/// and the record of who waits for it. The engines (sim/engine.hpp, sim/simgrid/) and observers
/// read them; algorithms never name them.
#include <coroutine>
#include <cstdint>
#include <vector>

#include "sim/buffer.hpp"
#include "sim/critical_path.hpp"
#include "sim/kernel/event.hpp"
#include "sim/kernel/pool.hpp"
#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace cubesim {

namespace detail {
enum class OpKind : std::uint8_t { send, recv, compute, copy, delay };

/// Who to resume when a group of operations has completed, and the chain that finished last.
/// Made in an awaiter for every co_await (Op::Single): a user-provided constructor, so that the
/// fields are set one by one from their initialisers (value-initialising the whole 160 bytes, padding
/// included, was a `rep stos` the next reads could not forward from, 5 % of a per-packet pipeline).
struct Waiter {
  Waiter() noexcept {}             // NOLINT(modernize-use-equals-default): `= default` would zero every field
  std::coroutine_handle<> handle;  ///< null for a request nobody awaits yet
  NodeId node = 0;
  int remaining = 0;
  int strand = 0;  ///< the process strand to resume (traces only)
  Time time;
  PathCounts path;
  // The engine's (sim/engine.cpp "Messages in closed form"), kept only where closed forms run:
  /// The key of the completion that set `time` and `path`, less its time (it is `time`) and the
  /// packet and phase (two completions of one waiter never share a message): a later one at the
  /// same time replaces it only if its key comes first, as the per-packet engine, which completes
  /// in key order, keeps the first. best_pushed -1: none.
  std::int64_t best_pushed = -1;
  std::uint64_t best_seq = 0;
  /// The key of the last completion, which may lie ahead of the clock: the process is resumed
  /// there (last_time -1: none).
  std::int64_t last_time = -1, last_pushed = 0;
  std::uint64_t last_seq = 0;
  std::uint32_t last_sub = 0;
  /// A group's operations, in one array (all_of(vector<Op>&)): what the process reads when it
  /// resumes, for the engine to ask the cache for ahead of the resume (null: none).
  std::uint32_t ops_bytes = 0;
  const void* ops = nullptr;
  std::uint8_t last_phase = 0;
  /// 1: not a coroutine's but a one-message relay's (Forwards, sim/node.cpp), which resume() then
  /// continues in place of a coroutine (its handle is the no-op coroutine's).
  std::uint8_t forward = 0;

  [[nodiscard]] Key last() const { return Key{last_time, last_pushed, last_seq, last_sub, last_phase}; }
  void set_last(const Key& k) {
    last_time = k.time;
    last_pushed = k.pushed;
    last_seq = k.seq;
    last_sub = k.sub;
    last_phase = k.phase;
  }
  /// `k`, at a tie of times with the kept chain, comes before it in the order of events.
  [[nodiscard]] bool before_best(const Key& k) const {
    return best_pushed >= 0 && (k.pushed != best_pushed ? k.pushed < best_pushed : k.seq < best_seq);
  }
};

/// Continues a relay of Forwards (sim/node.cpp) whose waiter `w` is.
void resume_forward(Waiter& w);
/// What a backend does to resume the waiter of a completed group: its coroutine, or a relay.
inline void resume(Waiter& w) {
  if (w.forward != 0) [[unlikely]]
    resume_forward(w);
  else
    w.handle.resume();
}

/// One operation in flight. Lives in the awaiting coroutine's frame until it completes.
///
/// Kept small (88 bytes, an Op 96; 120 and 128 until 2026-11-28): a step form holds one per message a node sends or
/// receives in a step, 2n on an n-cube, for every node at once (on 2^16 nodes the Ops were 470 MB at 224 bytes and
/// their cache misses a third of the run). What only a timed op needs while its end event waits
/// (the chain at its end) lives in the engine, named by `timed`; its end is that event's time.
struct RelaySpec;

struct OpState {
  OpKind kind = OpKind::delay;
  bool overhead_paid = false;  ///< send: its o_send has passed (the message may leave)
  /// send from a relay (Node::relay): its packet's end event takes the key (seq, sub) the relay
  /// gave it instead of a fresh sequence number, so that a relay train can know it in closed form.
  bool keyed = false;
  int tag = 0;
  // Node ids in 32 bits (a topology has at most 2^24 nodes): 8 bytes an operation.
  std::int32_t node = 0;
  std::int32_t peer = -1;  ///< send: destination; recv: source
  Buffer buffer;           ///< send: payload (moved out at start); recv: the result
  Waiter* waiter = nullptr;
  OpState* next = nullptr;  ///< engine's pending-receive list
  // Fields of one kind of operation only share their bytes (a union each, its first member the
  // one every operation is made with): a step form holds 2n OpStates a node, every node at once.
  union {
    /// compute: flops; copy: elements; delay: its length in picoseconds (duration()); send,
    /// recv: unused (their size is the buffer's).
    std::int64_t amount = 0;
    RelaySpec* relay;  ///< recv: the relay whose packet 0 it receives (Node::relay; set for every receive)
  };
  union {
    std::uint64_t key_seq = 0;  ///< send (keyed): see `keyed`
    std::uint64_t posted;       ///< recv: when it was posted, in order (engine; diagnostics)
  };
  std::uint32_t key_sub = 0;
  /// engine: while the op's end event waits, the index of the chain at its end (kNone: none).
  std::uint32_t timed = kNone;

  [[nodiscard]] Time duration() const { return Time::ps(amount); }
};
static_assert(sizeof(OpState) <= 88, "OpState is copied into every step form's ops: keep it small");
static_assert(Topology::kMaxNodes <= std::int64_t{1} << 31, "an OpState's node ids are 32-bit");

/// A relay (Node::relay) as the engine sees it: it lives in the relay's coroutine frame. A relay
/// forwards a stream of `packets` packets from `parent` (-1: it is the stream's source) to the
/// neighbours on `out_ports`, packet by packet (docs/performance.md "Relay trains").
struct RelaySpec {
  NodeId node = 0, parent = -1;
  int tag = 0;
  std::int64_t len = 0, packets = 0;
  std::vector<int> out_ports;
  OpState* first_recv = nullptr;    ///< the receive of packet 0 (OpState::relay points back)
  std::uint64_t seq = 0;            ///< the key of its packets' end events (taken when packet 0 leaves)
  int fed_by = -1;                  ///< engine: the relay train that carries its stream in
  Waiter* waiter = nullptr;         ///< engine: resumed when its train ends
  RelaySpec* next_claim = nullptr;  ///< engine: the node's other relays fed by trains
  RelaySpec* prev_claim = nullptr;  ///< (a doubly linked list: a train's end unlists in O(1))
  Buffer result;                    ///< engine: the whole stream, when its train ends
};

/// Thrown by the engine when something meets a relay train (a transmission wants one of its links,
/// a receive wants its messages): the run is made again with relay trains off.
struct RelayTrainAbort {};
}  // namespace detail

}  // namespace cubesim
