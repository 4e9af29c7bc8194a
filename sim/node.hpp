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
#include <memory>
#include <vector>

#include "sim/backend.hpp"
#include "sim/buffer.hpp"
#include "sim/critical_path.hpp"
#include "sim/machine.hpp"
#include "sim/task.hpp"
#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace cubesim {

namespace detail {
enum class OpKind : std::uint8_t { send, recv, compute, copy, delay };

/// Who to resume when a group of operations has completed, and the chain that finished last.
struct Waiter {
  std::coroutine_handle<> handle;  ///< null for a request nobody awaits yet
  int remaining = 0;
  NodeId node = 0;
  int strand = 0;                  ///< the process strand to resume (traces only)
  Time time;
  PathCounts path;
};

/// One operation in flight. Lives in the awaiting coroutine's frame until it completes.
struct OpState {
  OpKind kind = OpKind::delay;
  NodeId node = 0;
  NodeId peer = -1;        ///< send: destination; recv: source
  int tag = 0;
  std::int64_t amount = 0; ///< flops or elements
  Time duration;           ///< delay
  Buffer buffer;           ///< send: payload (moved out at start); recv: the result
  Waiter* waiter = nullptr;
  OpState* next = nullptr; ///< engine's pending-receive list
  Time end;                ///< timed ops: completion time
  PathCounts path;         ///< timed ops: chain at completion
  std::int64_t trace_slot = -1;  ///< a recording observer's handle on this op
};
}  // namespace detail

/// One awaitable operation; also combinable with all_of(op, op, ...).
class [[nodiscard]] Op {
 public:
  friend class Node;
  Op(detail::Backend* e, detail::OpState st) : engine_(e), st_(std::move(st)) {}
  Op(Op&&) = default;
  Op(const Op&) = delete;
  Op& operator=(const Op&) = delete;

  bool await_ready() const noexcept { return false; }
  bool await_suspend(std::coroutine_handle<> h);
  Buffer await_resume();
  /// The received data, after the op has completed inside an all_of.
  Buffer take() { return std::move(st_.buffer); }

 private:
  friend class OpGroup;
  detail::Backend* engine_;
  detail::OpState st_;
  detail::Waiter waiter_;
};

/// all_of(a, b, ...) or all_of(vector<Op>&): starts every operation at once; resumes when all
/// have completed. Results stay in the Op objects (Op::take()).
class [[nodiscard]] OpGroup {
 public:
  OpGroup(detail::Backend* e, std::vector<Op*> ops) : engine_(e), ops_(std::move(ops)) {}
  bool await_ready() const noexcept { return ops_.empty(); }
  bool await_suspend(std::coroutine_handle<> h);
  void await_resume();

 private:
  detail::Backend* engine_;
  std::vector<Op*> ops_;
  detail::Waiter waiter_;
};

/// An operation started by Node::start and awaited later (co_await request).
class [[nodiscard]] Request {
 public:
  Request() = default;
  bool await_ready();
  bool await_suspend(std::coroutine_handle<> h);
  Buffer await_resume();
  /// True once the operation has completed (it may not have been awaited yet).
  [[nodiscard]] bool done() const { return s_ && s_->waiter.remaining == 0; }

 private:
  friend class Node;
  struct State {
    detail::Backend* engine = nullptr;
    detail::OpState op;
    detail::Waiter waiter;
    std::int64_t id = 0;
    bool suspended = false;
  };
  std::unique_ptr<State> s_;
};

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

  /// The data this node ends with, checked by the algorithm's verify().
  void set_result(Buffer b);

 private:
  detail::Backend* engine_;
  NodeId id_;
};

template <class... Ops>
OpGroup all_of(Op& first, Ops&... rest) {
  return OpGroup(nullptr, std::vector<Op*>{&first, &rest...});
}
OpGroup all_of(std::vector<Op>& ops);

}  // namespace cubesim
