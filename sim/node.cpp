#include "sim/node.hpp"

#include <algorithm>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

#include "sim/observer.hpp"

namespace cubesim {

namespace {
/// What `co_await` of one operation does (Op::Single, a relay's packet 0): readies waiter `w` for
/// coroutine `h`, tells a recording observer, starts `op`; true if the coroutine must suspend.
bool await_one(detail::Backend* engine, detail::OpState& op, detail::Waiter& w, std::coroutine_handle<> h) {
  engine->prepare_waiter(w, h, 1);
  w.node = op.node;
  if (EngineObserver* o = engine->observer()) {
    detail::OpState* one = &op;
    o->on_await(op.node, engine->current_strand(), std::span<detail::OpState* const>(&one, 1));
  }
  return !engine->begin(op, w);
}
}  // namespace

bool Op::Single::await_suspend(std::coroutine_handle<> h) { return await_one(op->engine_, op->st_, waiter, h); }

Buffer Op::Single::await_resume() {
  op->engine_->after_resume(waiter);
  return std::move(op->st_.buffer);
}

bool OpGroup::await_suspend(std::coroutine_handle<> h) {
  const std::size_t n = size();
  engine_ = at(0).engine_;
  engine_->prepare_waiter(waiter_, h, static_cast<int>(n) + 1);
  waiter_.node = at(0).st_.node;
  if (first_ != nullptr) {
    waiter_.ops = first_;
    waiter_.ops_bytes = static_cast<std::uint32_t>(std::min<std::size_t>(n * sizeof(Op), 1u << 16));
  }
  if (EngineObserver* o = engine_->observer()) {
    std::vector<detail::OpState*> sts;
    sts.reserve(n);
    for (std::size_t i = 0; i < n; ++i) sts.push_back(&at(i).st_);
    o->on_await(waiter_.node, engine_->current_strand(), sts);
  }
  if (n > 1 && engine_->reads_ahead())
    for (int stage = 0; stage < detail::Backend::kPrefetchStages; ++stage)
      for (std::size_t i = 0; i < n; ++i) engine_->prefetch_begin(at(i).st_, stage);
  for (std::size_t i = 0; i < n; ++i)
    if (engine_->begin(at(i).st_, waiter_)) --waiter_.remaining;
  return engine_->end_start(waiter_);  // +1 guard held while starting: all done at once -> no suspend
}

void OpGroup::await_resume() {
  if (engine_ != nullptr) engine_->after_resume(waiter_);
}

OpGroup all_of(std::vector<Op>& ops) { return OpGroup(ops.data(), ops.size()); }

Request Node::start(Op op) {
  Request r;
  r.s_ = std::make_unique<Request::State>();
  Request::State& s = *r.s_;
  s.engine = engine_;
  s.op = std::move(op.st_);
  s.id = engine_->start_request(s.op, s.waiter);
  return r;
}

bool Request::await_ready() {
  if (!s_) throw std::logic_error("awaiting an empty Request");
  s_->engine->note_wait(s_->op.node, s_->id);
  return s_->waiter.remaining == 0;  // completed earlier: the process's own chain is the later one
}

bool Request::await_suspend(std::coroutine_handle<> h) {
  s_->engine->prepare_waiter(s_->waiter, h, 1);
  s_->suspended = true;
  return true;
}

Buffer Request::await_resume() {
  if (s_->suspended) s_->engine->after_resume(s_->waiter);
  Buffer b = std::move(s_->op.buffer);
  s_.reset();
  return b;
}

NodeId Node::size() const { return engine_->topology().size(); }
const Topology& Node::topology() const { return engine_->topology(); }
const Machine& Node::machine() const { return engine_->machine(); }
std::int64_t Node::packet_elements() const { return engine_->options().packet_elements; }
bool Node::data_mode() const { return engine_->options().data_mode; }
Time Node::now() const { return engine_->now(); }
void Node::set_result(Buffer b) { engine_->set_result(id_, std::move(b)); }

namespace {
detail::OpState make(detail::OpKind k, NodeId node) {
  detail::OpState s;
  s.kind = k;
  s.node = node;
  if (k == detail::OpKind::recv) s.relay = nullptr;  // a receive's member of its union
  return s;
}
}  // namespace

Op Node::send(int port, Buffer data, int tag) {
  const NodeId dst = neighbor(port);
  if (dst < 0)
    throw std::out_of_range("send on port " + std::to_string(port) + ": node " + std::to_string(id_) +
                            " has no link there (" + topology().describe() + ")");
  detail::OpState s = make(detail::OpKind::send, id_);
  s.peer = dst;
  s.tag = tag;
  s.buffer = std::move(data);
  return Op(engine_, std::move(s));
}

Op Node::send_to(NodeId dst, Buffer data, int tag) {
  engine_->check_node(dst, "send_to");
  detail::OpState s = make(detail::OpKind::send, id_);
  s.peer = dst;
  s.tag = tag;
  s.buffer = std::move(data);
  return Op(engine_, std::move(s));
}

Op Node::recv(int port, int tag) {
  const NodeId src = neighbor(port);
  if (src < 0)
    throw std::out_of_range("recv on port " + std::to_string(port) + ": node " + std::to_string(id_) +
                            " has no link there (" + topology().describe() + ")");
  detail::OpState s = make(detail::OpKind::recv, id_);
  s.peer = src;
  s.tag = tag;
  return Op(engine_, std::move(s));
}

Op Node::recv_from(NodeId src, int tag) {
  engine_->check_node(src, "recv_from");
  detail::OpState s = make(detail::OpKind::recv, id_);
  s.peer = src;
  s.tag = tag;
  return Op(engine_, std::move(s));
}

Op Node::compute(std::int64_t flops) {
  if (flops < 0) throw std::invalid_argument("compute of a negative number of flops");
  detail::OpState s = make(detail::OpKind::compute, id_);
  s.amount = flops;
  return Op(engine_, std::move(s));
}

Op Node::copy(std::int64_t elements) {
  if (elements < 0) throw std::invalid_argument("copy of a negative number of elements");
  detail::OpState s = make(detail::OpKind::copy, id_);
  s.amount = elements;
  return Op(engine_, std::move(s));
}

Op Node::delay(Time t) {
  if (t < Time{}) throw std::invalid_argument("delay by a negative time");
  detail::OpState s = make(detail::OpKind::delay, id_);
  s.amount = t.count();
  return Op(engine_, std::move(s));
}

/// What a relay keeps from its start until its stream has passed, in one object of its frame
/// (Node::relay_run), with one waiter for the receive of packet 0 and then for the train's end.
struct Node::RelayRun {
  detail::RelaySpec r;
  detail::OpState in;     ///< the receive of packet 0 (r.first_recv points here while it waits)
  detail::Waiter waiter;  ///< that receive's, then the relay train's end
  Buffer data;            ///< the stream, at its source
  Buffer chunk;           ///< packet 0, for relay_stream
  int in_port = -1;

  /// Awaits the receive of packet 0 (as Op::Single does, with the run's waiter).
  struct First {
    detail::Backend* engine;
    RelayRun* s;
    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> h) { return await_one(engine, s->in, s->waiter, h); }
    void await_resume() { engine->after_resume(s->waiter); }  // the packet: s->in.buffer
  };
  /// Suspends the relay until the engine's train has carried its stream (Backend::relay_start).
  struct End {
    detail::Backend* engine;
    RelayRun* s;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) {
      engine->prepare_waiter(s->waiter, h, 1);
      s->waiter.node = s->r.node;
      s->r.waiter = &s->waiter;
    }
    void await_resume() { engine->after_resume(s->waiter); }  // the stream: s->r.result
  };
};

Task<Buffer> Node::relay(int in_port, std::vector<int> out_ports, Buffer data, std::int64_t len, int tag) {
  RelayRun s;
  s.r.node = id_;
  s.r.tag = tag;
  s.r.len = len;
  s.r.out_ports = std::move(out_ports);
  s.data = std::move(data);
  s.in_port = in_port;
  return relay_run(std::move(s));
}

Task<Buffer> Node::relay_run(RelayRun s) {
  const std::int64_t B = packet_elements();
  const bool source = s.in_port < 0;
  s.r.packets = s.r.len > 0 ? (s.r.len + B - 1) / B : 0;
  if (!source) {
    s.r.parent = neighbor(s.in_port);
    if (s.r.parent < 0)
      throw std::out_of_range("relay from port " + std::to_string(s.in_port) + ": node " + std::to_string(id_) +
                              " has no link there (" + topology().describe() + ")");
  }
  if (s.r.packets == 0) co_return source ? std::move(s.data) : Buffer{};
  if (source) {
    s.chunk = s.data.slice(0, std::min(B, s.r.len));
  } else {
    s.in = make(detail::OpKind::recv, id_);
    s.in.peer = s.r.parent;
    s.in.tag = s.r.tag;
    s.r.first_recv = &s.in;  // a relay train carrying the stream finds this relay through its receive
    s.in.relay = &s.r;
    co_await RelayRun::First{engine_, &s};
    s.chunk = std::move(s.in.buffer);
    s.r.first_recv = nullptr;
    s.in.relay = nullptr;
  }
  if (engine_->relay_start(s.r, source ? &s.data : nullptr))
    co_await RelayRun::End{engine_, &s};
  else
    co_await relay_stream(s);
  co_return std::move(s.r.result);
}

Task<> Node::relay_stream(RelayRun& s) {
  const detail::RelaySpec& r = s.r;
  const std::int64_t B = packet_elements();
  const bool source = s.in_port < 0;
  const auto m = static_cast<std::uint32_t>(r.out_ports.size());
  Buffer got;
  std::vector<Op> sends;  // reused from packet to packet
  sends.reserve(m);
  for (std::int64_t k = 0; k < r.packets; ++k) {
    if (k > 0 && source) {
      s.chunk = s.data.slice(k * B, std::min(B, r.len - k * B));
    } else if (k > 0) {  // (not one conditional expression: GCC 12 evaluates a co_await there wrongly)
      s.chunk = co_await recv(s.in_port, r.tag);
    }
    if (m > 0) {
      sends.clear();
      for (std::uint32_t i = 0; i < m; ++i) {
        sends.push_back(send(r.out_ports[i], s.chunk, r.tag));
        detail::OpState& st = sends.back().st_;
        st.keyed = true;
        st.key_seq = r.seq;
        st.key_sub = static_cast<std::uint32_t>(k) * m + i;
      }
      co_await all_of(sends);
    }
    if (!source) got.append(s.chunk);
  }
  s.r.result = source ? std::move(s.data) : std::move(got);
}

bool Node::observed() const { return engine_->observer() != nullptr; }

// ---- Forwards: one-message relays without coroutines -----------------------------------------
// Each step makes the calls the coroutine of the class comment makes at that point: Op::Single's
// await (await_one) for the receive, Node::start's start_request and Request's wait for the send.

Forwards::Forwards(Node& self, std::size_t capacity) : self_(self), engine_(self.engine_) {
  records_.reserve(capacity);
}

void Forwards::add(int in_port, int out_port, int tag) {
  const NodeId to = self_.neighbor(out_port);
  if (to < 0)
    throw std::out_of_range("send on port " + std::to_string(out_port) + ": node " + std::to_string(self_.id()) +
                            " has no link there (" + self_.topology().describe() + ")");
  Record r;
  r.to = to;
  begin(r, in_port, tag);
}

void Forwards::receive(int in_port, int tag, Buffer* out) {
  Record r;
  r.out = out;
  begin(r, in_port, tag);
}

void Forwards::begin(Record& made, int in_port, int tag) {
  if (records_.size() == records_.capacity())
    throw std::logic_error("Forwards: more relays than the " + std::to_string(records_.capacity()) +
                           " it was made for");
  const NodeId from = self_.neighbor(in_port);
  if (from < 0)
    throw std::out_of_range("recv on port " + std::to_string(in_port) + ": node " + std::to_string(self_.id()) +
                            " has no link there (" + self_.topology().describe() + ")");
  Record& r = records_.emplace_back(std::move(made));
  r.forward = 1;
  r.set = this;
  r.op = make(detail::OpKind::recv, self_.id());
  r.op.peer = from;
  r.op.tag = tag;
  ++remaining_;
  // co_await recv: the waiter readied for a coroutine (here none: the no-op one), the op begun.
  engine_->prepare_waiter(r, std::noop_coroutine(), 1);
  r.node = r.op.node;
  if (engine_->begin(r.op, r)) received(r);  // it had arrived: the coroutine would go on at once
}

void Forwards::received(Record& r) {
  engine_->after_resume(r);  // Op::Single::await_resume
  if (r.to < 0) {            // the path's end: the received message is its result
    *r.out = std::move(r.op.buffer);
    ended(r);
    return;
  }
  detail::OpState s = make(detail::OpKind::send, r.op.node);
  s.peer = r.to;
  s.tag = r.op.tag;
  s.buffer = std::move(r.op.buffer);
  r.op = std::move(s);
  r.sending = true;
  // Node::start(send): a request nobody awaits yet, then co_await of it (Request::await_ready,
  // await_suspend).
  const std::int64_t id = engine_->start_request(r.op, r);
  engine_->note_wait(r.op.node, id);
  if (r.remaining == 0) {  // completed at once: no suspension, no after_resume
    ended(r);
    return;
  }
  engine_->prepare_waiter(r, std::noop_coroutine(), 1);
}

void Forwards::ended(Record& r) {
  // The relay coroutine's end: its Task's final awaiter resumes the awaiting parent when it is
  // the last (Forwards is awaited after any Tasks of the same all_of, so "last" is the same).
  if (r.done) return;
  r.done = true;
  if (--remaining_ == 0 && parent_) std::exchange(parent_, {}).resume();
}

void Forwards::await_resume() {
  if (error_) std::rethrow_exception(error_);
}

namespace detail {
void resume_forward(Waiter& w) {
  auto& r = static_cast<Forwards::Record&>(w);
  Forwards& f = *r.set;
  try {
    if (!r.sending) {
      f.received(r);
    } else {
      f.engine_->after_resume(r);  // Request::await_resume of a suspended request
      f.ended(r);
    }
  } catch (...) {  // as a coroutine's exception: kept, and given to the parent when it resumes
    if (!f.error_) f.error_ = std::current_exception();
    f.ended(r);
  }
}
}  // namespace detail

}  // namespace cubesim
