#pragma once
/// The API a simulated process sees (DESIGN.md "Engine"): its node, and awaitable operations.
///
///   Task<> run(Node& self, Params p) {
///     Buffer b = co_await self.recv(port);             // one operation
///     auto s = self.send(0, b); auto r = self.recv(0);
///     co_await all_of(s, r);                           // several at once (an exchange)
///     Buffer got = r.take();
///   }
///
/// Semantics (the cost model):
///  - send(port, data) sends to the neighbour on `port`; send_to(dst, data) to any node along the
///    dimension-order route. The message is split into ceil(S/B) packets at the packet size B in
///    force (the last one holds the remainder; an empty message is one empty packet). A send
///    completes when its last packet has left this node (crossed the first link): the buffer is
///    free again. Receivers buffer without limit: a send never waits for the receive to be posted.
///  - recv(port) / recv_from(src) takes the oldest message from that node with that tag; it
///    completes when the message's last packet has arrived, or at once if it already has.
///  - compute(flops), copy(elements), delay(t) take flops*t_a, elements*t_copy and t.
///  - start(op) begins an operation now and returns a Request to await later (MPI_Isend/Irecv);
///    the process runs on meanwhile. Every Request must be awaited before it is destroyed.
/// Nothing here tells how the engine keeps time: algorithms see only these operations.
#include <cstdint>
#include <exception>
#include <vector>

#include "sim/buffer.hpp"
#include "sim/kernel/backend.hpp"
#include "sim/machine.hpp"
#include "sim/op.hpp"
#include "sim/request.hpp"
#include "sim/task.hpp"
#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace cubesim {

class Forwards;

class Node {
 public:
  Node(detail::Backend* e, NodeId id) : engine_(e), id_(id) {}
  [[nodiscard]] NodeId id() const { return id_; }
  [[nodiscard]] NodeId size() const;
  [[nodiscard]] const Topology& topology() const;
  [[nodiscard]] const Machine& machine() const;
  [[nodiscard]] int ports() const { return topology().num_ports(); }
  [[nodiscard]] NodeId neighbor(int port) const { return topology().neighbor(id_, port); }
  /// The packet size in force for this run (the algorithm's B, at most the machine's B_m).
  [[nodiscard]] std::int64_t packet_elements() const;
  /// True in data mode (payloads carry values); false in timing-only mode.
  [[nodiscard]] bool data_mode() const;
  [[nodiscard]] Time now() const;

  Op send(int port, Buffer data, int tag = 0);
  Op send_to(NodeId dst, Buffer data, int tag = 0);
  Op recv(int port, int tag = 0);
  Op recv_from(NodeId src, int tag = 0);
  Op compute(std::int64_t flops);
  Op copy(std::int64_t elements);
  Op delay(Time t);
  /// Begins `op` now; the process goes on and awaits the Request later.
  Request start(Op op);

  /// Forwards a stream of `len` elements packet by packet, as a pipelined tree does (TR-530
  /// §4.1): receives it from the neighbour on `in_port` in messages of one packet (B elements,
  /// the last the remainder), or, at the stream's source (`in_port` < 0), cuts `data` into them;
  /// sends each packet on every port of `out_ports` as soon as it is in and the previous one has
  /// left on all of them; returns the whole stream. Exactly the loop
  ///   for each packet k: chunk = recv(in_port, tag) (or data's k-th packet);
  ///                      co_await all_of(send(p, chunk, tag) for p in out_ports); append chunk
  /// except that its packets' end events are keyed by the relay (OpState::keyed), which lets the
  /// engine carry an uncontended stream through every relay as one train (docs/performance.md
  /// "Relay trains").
  Task<Buffer> relay(int in_port, std::vector<int> out_ports, Buffer data, std::int64_t len, int tag = 0);

  /// The data this node ends with, checked by the algorithm's verify().
  void set_result(Buffer b);
  /// Whether an observer records this run (a trace): Forwards are then not used (its relays
  /// have no strands of their own), the coroutines they stand for are.
  [[nodiscard]] bool observed() const;

 private:
  /// What a relay keeps from its start until its stream has passed (sim/node.cpp).
  struct RelayRun;
  /// relay() up to packet 0, then as a train or relay_stream. One object, `s`, holds what it
  /// keeps, with one waiter for its receive and its train's end, and no awaited value lives in
  /// its frame: the frame was 1,088 bytes, a million of them in nESBT on 2^16 nodes.
  Task<Buffer> relay_run(RelayRun s);
  /// relay() packet by packet, from packet 0 (s.chunk, in), leaving the stream in s.r.result:
  /// the reference, and what a relay runs when no train carries its stream. Its own frame, so
  /// that a relay a train carries keeps only what it needs for packet 0.
  Task<> relay_stream(RelayRun& s);

  friend class Forwards;
  detail::Backend* engine_;
  NodeId id_;
};

/// Relays of one message each, begun now and awaited together: `add(in, out, tag)` is exactly the
/// coroutine (the relay of a pipelined path of one packet, routing::pipelined_path)
///   Buffer b = co_await node.recv(in, tag);
///   Request r = node.start(node.send(out, std::move(b), tag));
///   co_await r;
/// begun at once, and `co_await forwards` waits for all of them as an all_of of those coroutines
/// would: the same calls to the engine in the same order, so the same events and reports. Without
/// a coroutine frame, a Task or a request state a relay: the record (an operation and a waiter,
/// 264 bytes) is reused for the receive and then the send. A million such relays run at once in
/// the all-port transposition on 2^16 nodes (docs/performance.md). Not for a recorded run
/// (Node::observed()): traces give each relay coroutine a strand.
class Forwards {
 public:
  /// Room for `capacity` relays: records do not move once begun.
  Forwards(Node& self, std::size_t capacity);
  Forwards(const Forwards&) = delete;
  Forwards& operator=(const Forwards&) = delete;
  ~Forwards() = default;
  /// Begins a relay from the neighbour on `in_port` to the one on `out_port`, messages tagged `tag`.
  void add(int in_port, int out_port, int tag);
  /// Begins the receive that ends such a path: exactly the coroutine `*out = co_await
  /// node.recv(in_port, tag);`, `*out` set when it completes.
  void receive(int in_port, int tag, Buffer* out);

  bool await_ready() const noexcept { return remaining_ == 0; }
  void await_suspend(std::coroutine_handle<> h) noexcept { parent_ = h; }
  void await_resume();

 private:
  struct Record : detail::Waiter {
    detail::OpState op;
    Forwards* set = nullptr;
    NodeId to = -1;  ///< the send's destination (-1: a receive alone, into `out`)
    Buffer* out = nullptr;
    bool sending = false;
    bool done = false;
  };
  friend void detail::resume_forward(detail::Waiter& w);
  void begin(Record& r, int in_port, int tag);
  void received(Record& r);
  void ended(Record& r);

  Node& self_;
  detail::Backend* engine_;
  std::vector<Record> records_;
  std::size_t remaining_ = 0;
  std::coroutine_handle<> parent_;
  std::exception_ptr error_;
};

}  // namespace cubesim
