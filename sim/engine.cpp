#include "sim/engine.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "sim/budgets.hpp"
#include "sim/kernel/prefetch.hpp"
#include "sim/net/network.hpp"
#include "sim/resources.hpp"

namespace cubesim {

namespace {

/// The kernel's event kind of a relay train's packet end (network models number theirs from 1).
constexpr std::uint8_t kRelayTrain = 0xff;
/// The kernel's event kind of a resume owed by messages in closed form (payload: the Waiter).
constexpr std::uint8_t kResume = 0xfe;

}  // namespace

Engine::Engine(const Machine& machine, const Topology& topology, EngineOptions options)
    : machine_(machine),
      topology_(topology),
      options_(options),
      ports_(static_cast<std::size_t>(std::max(topology.num_ports(), 1))) {
  if (options_.packet_elements < 1) throw std::invalid_argument("packet size must be at least 1 element");
  const auto n = static_cast<std::size_t>(topology_.size());
  in_order_ = network_model_of(machine_).in_order;
  reset();
  nodes_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) nodes_.emplace_back(this, static_cast<NodeId>(i));
}

Engine::~Engine() = default;

void Engine::take(const detail::Event& ev) {
  check_invariant(ev.time >= now_.count(), "time never runs backwards");
  current_ = ev;
  now_ = Time::ps(ev.time);
  ++stats_.events;
  if (stats_.events + stats_.resumes + awaits_ >= next_check_) [[unlikely]]
    check_budgets();
}

std::uint64_t Engine::push(Time t, std::uint8_t kind, std::uint64_t payload) {
  const std::uint64_t seq = seq_++;
  push_keyed(detail::Event{t.count(), now_.count(), seq, payload, 0, kind});
  return seq;
}

void Engine::push_keyed(const detail::Event& e) {
  queue_.push(e);
  if (const auto queued = static_cast<std::int64_t>(queue_.size() + win_size_); queued > stats_.peak_queue)
    stats_.peak_queue = queued;
}

void Engine::prepare_waiter(detail::Waiter& w, std::coroutine_handle<> h, int count) {
  // A process that never waits for time to pass (zero-time operations, messages to itself, a
  // receive of what has arrived) runs on inside one resume: its awaits are where the budgets and
  // the stop flag are checked. Nothing is registered yet: what check_budgets() throws unwinds
  // the process, and after() passes it on.
  if (stats_.events + stats_.resumes + ++awaits_ >= next_check_) [[unlikely]]
    check_budgets();
  w.handle = h;
  w.remaining = count;
  w.time = now_;
  w.path = current_path_;
  w.strand = current_strand_;
  w.best_pushed = w.last_time = -1;  // none
}

void Engine::prefetch_begin(const detail::OpState& op, int stage) const {
  if (op.kind == detail::OpKind::recv) {
    if (stage == 0) {
      match_.prefetch(op.node, op.peer, op.tag);
    } else if (stage == 1 && closed_forms_on_) {  // a message in closed form waits there for it
      const detail::MatchTable::Slot* s = match_.find(op.node, op.peer, op.tag);
      if (s != nullptr && s->msg_head != detail::kNone) detail::prefetch_lines(messages_[s->msg_head]);
    }
    return;
  }
  if (op.kind != detail::OpKind::send || !closed_forms_on_) return;
  if (stage == 0) {
    match_.prefetch(op.peer, op.node, op.tag);
    net_->prefetch_send(op.node, op.peer);
    return;
  }
  const detail::MatchTable::Slot* s = match_.find(op.peer, op.node, op.tag);
  if (s == nullptr || s->op_head == nullptr) return;
  if (stage == 1)
    detail::prefetch_lines(*s->op_head);
  else if (s->op_head->waiter != nullptr)
    detail::prefetch_lines(*s->op_head->waiter);
}

bool Engine::end_start(detail::Waiter& w) {
  if (--w.remaining != 0) return true;
  if (!lies_ahead(w)) return false;
  wake(w);  // its last completion lies ahead: resumed there
  return true;
}

std::int64_t Engine::start_request(detail::OpState& op, detail::Waiter& w) {
  prepare_waiter(w, std::coroutine_handle<>{}, 1);
  w.node = op.node;
  const std::int64_t id = ++next_request_[static_cast<std::size_t>(op.node)];
  if (observer_ != nullptr) observer_->on_start(op.node, current_strand_, id, op);
  if (begin(op, w)) w.remaining = 0;
  return id;
}

void Engine::note_wait(NodeId node, std::int64_t id) {
  if (observer_ != nullptr) observer_->on_wait(node, current_strand_, id);
}

int Engine::fork(int count) {
  int& next = next_strand_[static_cast<std::size_t>(current_node_)];
  const int first = next + 1;
  next += count;
  observer_->on_fork(current_node_, current_strand_, first, count);
  return first;
}

void Engine::resume(detail::Waiter& w) {
  current_node_ = w.node;
  current_strand_ = w.strand;
  detail::resume(w);
  ++stats_.resumes;
}

void Engine::keep_chain(detail::Waiter& w, Time t, const PathCounts& p, const detail::Key& k) {
  // The chain that ends last is the one that made the waiter wait; ties keep the earlier one:
  // earlier in the order of events, which a completion in closed form, made ahead, may precede
  // (only where closed forms keep keys: before_best is false while none is kept).
  if (t > w.time || (t == w.time && w.before_best(k))) {
    w.time = t;
    w.path = p;
    if (closed_forms_on_) {
      w.best_pushed = k.pushed;
      w.best_seq = k.seq;
    }
  }
}

void Engine::complete(detail::Waiter& w, Time t, const PathCounts& p) {
  keep_chain(w, t, p, detail::key_of(current_));
  // A request nobody awaits yet just keeps its time and chain (Request::await_ready).
  if (--w.remaining == 0 && w.handle) wake(w);
}

void Engine::check_node(NodeId node, const char* what) const {
  if (node < 0 || node >= topology_.size())
    throw std::out_of_range(std::string(what) + ": node " + std::to_string(node) + " is outside the topology (" +
                            std::to_string(topology_.size()) + " nodes)");
}

std::uint32_t Engine::new_message() { return messages_.acquire(); }

bool Engine::begin(detail::OpState& op, detail::Waiter& w) {
  op.waiter = &w;
  switch (op.kind) {
    case detail::OpKind::send:
      if (machine_.o_send != Time{} && !op.overhead_paid) {
        // Node software (o_send): the call's CPU time first; the run loop starts the send at
        // its end (a kOpEnd of a send is only ever this).
        op.overhead_paid = true;
        PathCounts p = current_path_;
        p.overheads += machine_.o_send;
        compute_busy_[static_cast<std::size_t>(op.node)] += machine_.o_send;
        push_op_end(op, now_ + machine_.o_send, p);
        return false;
      }
      if (op.peer == op.node) {  // to itself: delivered at once, no link crossed
        const std::uint32_t mi = new_message();
        detail::Message& m = renew_message(mi, op.node, op.node, op.tag, std::move(op.buffer), 0);
        m.id = static_cast<std::uint64_t>(++stats_.messages);
        if (observer_ != nullptr) observer_->on_message(m.id, m.src, m.dst, m.tag, m.elements, now_);
        deliver(mi, now_, current_path_);
        return true;
      }
      start_send(op);
      return false;
    case detail::OpKind::recv:
      return start_recv(op);
    case detail::OpKind::compute:
    case detail::OpKind::copy:
    case detail::OpKind::delay: {
      Time dur;
      PathCounts p = current_path_;
      if (op.kind == detail::OpKind::compute) {
        dur = machine_.t_a * op.amount + machine_.t_call;  // t_call: the kernel's call overhead
        p.flops += op.amount;
        p.overheads += machine_.t_call;
      } else if (op.kind == detail::OpKind::copy) {
        dur = machine_.t_copy * op.amount;
        p.copies += op.amount;
      } else {
        dur = op.duration();
        p.delays += dur;
      }
      if (op.amount == 0 && dur == Time{}) return true;
      if (op.kind != detail::OpKind::delay) compute_busy_[static_cast<std::size_t>(op.node)] += dur;
      if (observer_ != nullptr)
        observer_->on_activity(op.node,
                               op.kind == detail::OpKind::compute ? ActivityKind::compute
                               : op.kind == detail::OpKind::copy  ? ActivityKind::copy
                                                                  : ActivityKind::delay,
                               op.amount, now_, now_ + dur);
      push_op_end(op, now_ + dur, p);
      return false;
    }
  }
  return true;
}

detail::Message& Engine::renew_message(std::uint32_t mi, NodeId src, NodeId dst, int tag, Buffer data,
                                       std::int64_t packets) {
  detail::Message& m = messages_[mi];
  // Every field, one by one: `m = Message{}` compiles to a `rep stos` of a temporary, which was
  // 8 % of allgather.sbt all-port on 2^16 nodes.
  static_assert(sizeof(detail::Message) == 216, "a new field of Message: set it here too (and fix the size)");
  m.id = 0;
  m.src = src;
  m.dst = dst;
  m.tag = tag;
  m.elements = data.size();
  m.packets = packets;
  m.delivered = 0;
  m.injected = 0;
  m.data = std::move(data);
  m.send_op = nullptr;
  m.order = 0;
  m.keyed = false;
  m.ahead = false;
  m.key_sub = 0;
  m.key_seq = 0;
  m.ahead_pushed = 0;
  m.next = detail::kNone;
  m.arrived = Time{};  // (path: only a message in closed form has one, set when it is listed)
  return m;
}

void Engine::start_send(detail::OpState& op) {
  const std::uint32_t mi = new_message();
  const std::int64_t b = options_.packet_elements, e = op.buffer.size();
  detail::Message& m = renew_message(mi, op.node, op.peer, op.tag, std::move(op.buffer), e == 0 ? 1 : (e + b - 1) / b);
  m.send_op = &op;
  m.keyed = op.keyed;
  m.key_seq = op.key_seq;
  m.key_sub = op.key_sub;
  m.id = static_cast<std::uint64_t>(++stats_.messages);
  stats_.packets += m.packets;
  stats_.largest_message = std::max(stats_.largest_message, m.elements);
  if (topology_.port_to(m.src, m.dst) < 0) ++stats_.routed_messages;
  if (!in_order_) m.order = ++order_.find_or_add(m.dst, m.src, m.tag).sent;
  if (observer_ != nullptr) observer_->on_message(m.id, m.src, m.dst, m.tag, m.elements, now_);
  net_->send(mi);
}

void Engine::deliver(std::uint32_t mi, Time t, const PathCounts& p) {
  if (in_order_ || messages_[mi].order == 0) {
    match(mi, t, p);
    return;
  }
  // A network that may reorder: a message that overtook an earlier one from the same source
  // with the same tag waits for it, and is received after it, from the time it arrives.
  const detail::Message& m = messages_[mi];
  const NodeId src = m.src, dst = m.dst;
  const int tag = m.tag;
  const std::uint64_t order = m.order;
  const auto* found = order_.find(dst, src, tag);
  check_invariant(found != nullptr, "a numbered message has its order");
  // The slot is found again after the matches: its address is not kept across calls that could
  // add keys to order_ (and so move its slots).
  std::uint64_t delivered = found->delivered;
  if (order != delivered + 1) {
    parked_.emplace(std::make_tuple(dst, src, tag, order), mi);
    return;
  }
  match(mi, t, p);
  ++delivered;
  for (auto it = parked_.find(std::make_tuple(dst, src, tag, delivered + 1)); it != parked_.end();
       it = parked_.find(std::make_tuple(dst, src, tag, delivered + 1))) {
    const std::uint32_t next = it->second;
    parked_.erase(it);
    match(next, t, p);
    ++delivered;
  }
  auto& o = order_.find_or_add(dst, src, tag);
  o.delivered = delivered;
  if (o.delivered == o.sent) order_.erase(o);
}

void Engine::match(std::uint32_t mi, Time t, const PathCounts& p) {
  detail::Message& m = messages_[mi];
  detail::MatchTable::Slot& s = match_.find_or_add(m.dst, m.src, m.tag);
  if (detail::OpState* op = take_posted(s)) {  // the oldest receive posted for it
    if (observer_ != nullptr) {
      observer_->on_recv_matched(*op, m.elements);
      observer_->on_delivered(m.id, m.dst, t);
    }
    op->buffer = std::move(m.data);
    m.data = Buffer{};
    messages_.release(mi);
    if (machine_.o_recv != Time{}) {  // node software: the receive's CPU time after arrival
      finish_recv(*op, t, p);
      return;
    }
    complete(*op->waiter, t, p);
    return;
  }
  if (observer_ != nullptr) observer_->on_delivered(m.id, m.dst, t);
  m.arrived = t;  // (its chain is not kept: a receive that takes it later has the later chain)
  list_message(s, mi);
}

detail::OpState* Engine::take_posted(detail::MatchTable::Slot& s) {
  detail::OpState* op = s.op_head;
  if (op == nullptr) return nullptr;
  s.op_head = op->next;
  if (s.op_head == nullptr) {
    s.op_tail = nullptr;
    match_.erase(s);
  }
  op->next = nullptr;
  return op;
}

void Engine::list_message(detail::MatchTable::Slot& s, std::uint32_t mi) {
  messages_[mi].next = detail::kNone;
  if (s.msg_tail == detail::kNone)
    s.msg_head = mi;
  else
    messages_[s.msg_tail].next = mi;
  s.msg_tail = mi;
}

void Engine::finish_recv(detail::OpState& op, Time from, PathCounts p) {
  p.overheads += machine_.o_recv;
  compute_busy_[static_cast<std::size_t>(op.node)] += machine_.o_recv;
  push_op_end(op, from + machine_.o_recv, p);
}

void Engine::keep_op_path(detail::OpState& op, const PathCounts& p) {
  op.timed = op_paths_.acquire();
  op_paths_[op.timed] = p;
}

void Engine::push_op_end(detail::OpState& op, Time end, const PathCounts& p) {
  keep_op_path(op, p);
  push(end, detail::kOpEnd, reinterpret_cast<std::uint64_t>(&op));
}

PathCounts Engine::take_op_path(detail::OpState& op) {
  check_invariant(op.timed != detail::kNone, "a timed op's end event finds its chain");
  const PathCounts p = op_paths_[op.timed];
  op_paths_.release(op.timed);
  op.timed = detail::kNone;
  return p;
}

bool Engine::start_recv(detail::OpState& op) {
  // A receive for messages a relay train carries would take one of them from the relay.
  if (live_claims_ > 0) [[unlikely]]
    for (const detail::RelaySpec* c = claims_[static_cast<std::size_t>(op.node)]; c != nullptr; c = c->next_claim)
      if (c->parent == op.peer && c->tag == op.tag) abort_relay_trains();
  detail::MatchTable::Slot& s = match_.find_or_add(op.node, op.peer, op.tag);
  if (const std::uint32_t mi = s.msg_head; mi != detail::kNone) {  // the oldest message arrived from it
    detail::Message& m = messages_[mi];
    s.msg_head = m.next;
    if (s.msg_head == detail::kNone) {
      s.msg_tail = detail::kNone;
      match_.erase(s);
    }
    if (observer_ != nullptr) observer_->on_recv_matched(op, m.elements);
    op.buffer = std::move(m.data);
    m.data = Buffer{};
    // In closed form it may not have arrived yet (engine.cpp "Messages in closed form"): its key.
    const detail::Key k{m.ahead ? m.arrived.count() : -1, m.ahead_pushed, m.key_seq, m.key_sub, 1};
    PathCounts path;
    if (m.ahead) path = m.path;
    messages_.release(mi);
    if (k.time >= 0) {
      if (detail::before(detail::key_of(current_), k)) {
        if (op.waiter->handle) {
          if (complete_ahead(*op.waiter, k, path)) wake(*op.waiter);
        } else {  // a request: its end is an event, at the message's end (and before its sender's resume)
          keep_op_path(op, path);
          push_keyed(
              detail::Event{k.time, k.pushed, k.seq, reinterpret_cast<std::uint64_t>(&op), k.sub, detail::kOpEnd, 1});
        }
        return false;
      }
    }
    if (machine_.o_recv != Time{}) {  // node software: the receive's CPU time, from now
      finish_recv(op, now_, current_path_);
      return false;
    }
    return true;  // arrived earlier: the process's own chain is the later one
  }
  op.next = nullptr;
  op.posted = ++posted_;
  if (s.op_tail == nullptr)
    s.op_head = &op;
  else
    s.op_tail->next = &op;
  s.op_tail = &op;
  return false;
}

std::string Engine::describe_wait(const detail::OpState& op) const {
  std::string s = "recv from node " + std::to_string(op.peer);
  const int port = topology_.port_to(op.node, op.peer);
  if (port >= 0) s += " (port " + std::to_string(port) + ")";
  return s + " tag " + std::to_string(op.tag);
}

std::string Engine::unfinished(const char* verb) const {
  // The receives still posted, by node in the order they were posted.
  std::vector<const detail::OpState*> posted;
  match_.for_each([&](const detail::MatchTable::Slot& s) {
    for (const detail::OpState* op = s.op_head; op != nullptr; op = op->next) posted.push_back(op);
  });
  std::sort(posted.begin(), posted.end(), [](const detail::OpState* a, const detail::OpState* b) {
    return a->node != b->node ? a->node < b->node : a->posted < b->posted;
  });
  std::int64_t count = 0;
  std::string list;
  auto next = posted.begin();
  for (std::size_t i = 0; i < processes_.size(); ++i) {
    if (processes_[i].done()) continue;
    ++count;
    if (count > 8) continue;
    std::string waits;
    while (next != posted.end() && (*next)->node < static_cast<NodeId>(i)) ++next;
    for (; next != posted.end() && (*next)->node == static_cast<NodeId>(i); ++next)
      waits += (waits.empty() ? "" : ", ") + describe_wait(**next);
    if (waits.empty()) waits = "no receive (a send, a computation or a delay)";
    list.append(list.empty() ? "" : "; ").append("node ").append(std::to_string(i)).append(" waits for ").append(waits);
  }
  std::string msg = std::to_string(count);
  msg.append(" of ")
      .append(std::to_string(processes_.size()))
      .append(" processes ")
      .append(verb)
      .append(": ")
      .append(list);
  if (count > 8) msg.append("; and ").append(std::to_string(count - 8)).append(" more");
  return msg;
}

void Engine::deadlock() {
  // The per-packet engine's clock would have reached the end of every message in closed form.
  if (ahead_end_ > now_) now_ = ahead_end_;
  throw DeadlockError("deadlock at t=" + format_time(now_) + ": " + unfinished("never finish"));
}

void Engine::check_budgets() {
  constexpr std::int64_t kInterval = 4096;  // steps (events, resumes, awaits) between two checks
  constexpr std::int64_t kMemoryEvery = 1;  // checks between two readings of resident memory (6 us each)
  const std::int64_t done = stats_.events + stats_.resumes + awaits_;
  next_check_ = done + kInterval;
  if (read_ahead_ == ReadAhead::by_pending) {
    const bool many = static_cast<std::int64_t>(queue_.size() + win_size_) >= kReadAheadPending;
    stats_.read_ahead_switches += many != reads_ahead_ ? 1 : 0;
    reads_ahead_ = many;
  }
  detail::publish_progress(options_, stats_.events, published_events_);
  if (options_.max_events > 0) next_check_ = std::min(next_check_, std::max(done + 1, options_.max_events + 1));
  detail::check_run_budgets(
      options_, {.events = stats_.events, .resumes = stats_.resumes, .awaits = awaits_},
      ++budget_checks_ % kMemoryEvery == 0, [&] { return " by t=" + format_time(now_); },
      [&] { return ": " + unfinished("still run"); });
}

RunStats Engine::run(const ProcessFactory& make_process) {
  const auto wall0 = std::chrono::steady_clock::now();
  std::int64_t relay_aborts = 0, closed_aborts = 0;
  for (;;) {
    try {
      RunStats st = run_once(make_process);
      if (relay_aborts + closed_aborts > 0) {
        st.relay_train_aborts = stats_.relay_train_aborts = relay_aborts;
        st.closed_form_aborts = stats_.closed_form_aborts = closed_aborts;
        st.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
        stats_.wall_s = st.wall_s;
      }
      return st;
    } catch (const detail::RelayTrainAbort&) {
    }
    // Something met a relay train or a message in closed form: the same run again without them
    // (the per-packet engine is the reference, so the report is the one this attempt would have
    // given). Each kind is turned off once, so a run is made at most three times.
    if (relay_abort_) {
      relay_trains_allowed_ = false;
      ++relay_aborts;
    }
    if (closed_abort_) {
      closed_forms_allowed_ = false;
      ++closed_aborts;
    }
    reset();
  }
}

void Engine::reset() {
  processes_.clear();  // after an attempt: destroys the coroutine frames before what they point into
  const auto n = static_cast<std::size_t>(topology_.size());
  now_ = Time{};
  seq_ = 0;
  current_ = detail::Event{0, -1, 0, 0, 0, detail::kOpEnd};
  queue_.clear();
  win_head_ = win_size_ = 0;
  ready_.clear();
  ready_head_ = 0;
  current_path_ = PathCounts{};
  messages_ = detail::Pool<detail::Message>{};
  op_paths_ = detail::Pool<PathCounts>{};
  // The hash part grows with the live keys; a hypercube's neighbours have slots of their own.
  match_ = detail::MatchTable(std::min<std::size_t>(n, 1024),
                              topology_.kind() == Topology::Kind::hypercube ? topology_.dim() : 0, topology_.size());
  posted_ = 0;
  results_.assign(n, Buffer{});
  link_load_.assign(n * ports_, 0);
  comm_busy_.assign(n, Time{});
  compute_busy_.assign(n, Time{});
  stats_ = RunStats{};
  next_check_ = 0;
  budget_checks_ = 0;
  awaits_ = 0;
  last_time_ = Time{};
  last_path_ = PathCounts{};
  running_ = false;
  current_node_ = 0;
  current_strand_ = 0;
  next_strand_.clear();
  next_request_.assign(n, 0);
  order_ = detail::KeyTable<OrderCounts>(16);
  parked_.clear();
  relay_trains_.clear();
  claims_.assign(n, nullptr);
  live_claims_ = 0;
  relay_abort_ = false;
  closed_abort_ = false;
  ahead_end_ = Time{};
  published_events_ = 0;  // the progress line keeps an aborted attempt's events
  net_ = network_model_of(machine_).make(*this);
}

// ---- The event window ---------------------------------------------------------------------------
//
// Each event lands on state no cache holds (docs/performance.md "The distance to the heap"): a
// transfer record, its message, the sender's link, the receiver's match slot, the posted
// receive, its waiter -- a chain of dependent loads, each a miss on large runs. The run loop
// therefore takes events from the heap up to kWindow ahead, in order, and while each waits its
// turn it walks that chain one link per stage (Network::prefetch): stage 0 when it enters the
// window, the later stages as it nears the front. The misses of several events then overlap.
//
// The order of events is the heap's: the window holds the smallest events, sorted; an event
// joins its end only if it comes after the window's last, and an event pushed since that comes
// before the window's first is taken first. Nearly every event of the collectives comes at the
// instant of the one before (all nodes move in step), so the window stays full.

bool Engine::next_event(detail::Event& ev) {
  const auto at = [&](std::size_t i) -> detail::Event& { return win_[(win_head_ + i) % kWindow]; };
  while (reads_ahead_ && win_size_ < kWindow && !queue_.empty() &&
         (win_size_ == 0 || detail::before(at(win_size_ - 1), queue_.top()))) {
    at(win_size_) = queue_.pop();
    prefetch(at(win_size_), 0);
    ++win_size_;
  }
  if (win_size_ == 0) {  // not reading ahead (or the queue is empty): straight from the queue
    if (queue_.empty()) return false;
    ev = queue_.pop();
    return true;
  }
  // (Reading ahead may have stopped with events in the window: they are taken in order, as ever.)
  if (!queue_.empty() && detail::before(queue_.top(), at(0))) {  // pushed since, and due first
    ev = queue_.pop();
    return true;
  }
  ev = at(0);
  win_head_ = (win_head_ + 1) % kWindow;
  --win_size_;
  if (!reads_ahead_) return true;
  // The distance from the front at which each later stage runs: several events apart, so that
  // what one stage asked for has arrived when the next reads it (16/11/7/4/2 of 16 events and
  // 26/18/10/2 of 32 measured the same; 32 events gained 9 % over 16 on 2^14 nodes, 64 nothing).
  constexpr std::array<std::size_t, 5> kStageAt{kWindow, 24, 16, 9, 4};
  for (int s = 1; s < static_cast<int>(kStageAt.size()); ++s)
    if (kStageAt[static_cast<std::size_t>(s)] < win_size_) prefetch(at(kStageAt[static_cast<std::size_t>(s)]), s);
  return true;
}

void Engine::prefetch(const detail::Event& ev, int stage) const {
  if (ev.kind == detail::kOpEnd) {  // a computation's end: the operation, then its waiter
    const auto* op = reinterpret_cast<const detail::OpState*>(ev.payload);
    if (stage == 0) detail::prefetch_lines(*op);
    if (stage == 2) detail::prefetch(op->waiter);
    return;
  }
  if (ev.kind == kResume) {  // the waiter, then the frame its process resumes in
    const auto* w = reinterpret_cast<const detail::Waiter*>(ev.payload);
    if (stage == 0) detail::prefetch_lines(*w);
    if (stage == 1 && w->ops != nullptr)  // a group's operations, which the process reads first
      for (std::uint32_t off = 0; off < w->ops_bytes; off += 64)
        detail::prefetch(static_cast<const char*>(w->ops) + off);
    if (stage == 2) detail::prefetch(w->handle.address());
    return;
  }
  if (ev.kind == kRelayTrain)
    prefetch_relay_train(ev, stage);
  else
    net_->prefetch(ev, stage);
}

void Engine::prefetch_relay_train(const detail::Event& ev, int stage) const {
  // The same chain on_relay_train_event reads, one link a stage (a hint: changes nothing). Only
  // what a live train holds is read: the lists are checked, as an earlier event of the same train
  // (its last port's) may have ended it.
  const auto t = static_cast<std::size_t>(ev.payload >> 17);
  if (t >= relay_trains_.size()) return;
  const RelayTrain& T = relay_trains_[t];
  if (stage == 0) {
    detail::prefetch(&T);
    detail::prefetch(&T.path0);
    return;
  }
  // A train that has ended (its list emptied, its relay forgotten) is not read any further.
  if (T.out.empty() || T.relay == nullptr) return;
  const auto i = static_cast<std::size_t>((ev.payload >> 1) & 0xffff);
  const bool first = (ev.payload & 1) == 0;
  const detail::RelaySpec* r = T.relay;
  if (stage == 1) {
    detail::prefetch_lines(*r);
    if (i < T.out.size()) detail::prefetch(T.out.data() + i);
    return;
  }
  if (stage == 2) {
    if (i < r->out_ports.size()) detail::prefetch(r->out_ports.data() + i);
    if (first && i < T.out.size()) detail::prefetch(&messages_[T.out[i].first]);
    if (!first && i < T.out.size()) detail::prefetch(T.out[i].child);
    return;
  }
  if (stage == 3) {
    if (first && i < r->out_ports.size()) {
      const NodeId c = topology_.neighbor(r->node, r->out_ports[i]);
      if (c >= 0) match_.prefetch(c, r->node, r->tag);
    } else if (!first && i < T.out.size() && T.out[i].child != nullptr) {
      detail::prefetch(T.out[i].child->waiter);
      detail::prefetch(r->waiter);
    }
    return;
  }
  if (first && i < r->out_ports.size()) {  // stage 4: the child's receive, posted in its frame
    const NodeId c = topology_.neighbor(r->node, r->out_ports[i]);
    if (c < 0) return;
    if (const detail::MatchTable::Slot* s = match_.find(c, r->node, r->tag); s != nullptr && s->op_head != nullptr) {
      detail::prefetch(s->op_head);
      detail::prefetch(s->op_head->relay);
    }
  }
}

RunStats Engine::run_once(const ProcessFactory& make_process) {
  check_invariant(!running_ && processes_.empty(), "an Engine runs once");
  relay_trains_on_ = relay_trains_allowed_ && options_.packet_trains && observer_ == nullptr &&
                     machine_.ports.kind == PortKind::all && machine_.o_send == Time{} && machine_.o_recv == Time{};
  closed_forms_on_ = closed_forms_allowed_ && options_.packet_trains && observer_ == nullptr && in_order_ &&
                     machine_.o_send == Time{} && machine_.o_recv == Time{} && net_->closed_forms();
  // Reading ahead (the event window's stages, a group's hints): by the number of pending events
  // (check_budgets), or forced by CUBESIM_READAHEAD=1 or 0 (measurements; it changes nothing else).
  if (const char* e = std::getenv("CUBESIM_READAHEAD"); e != nullptr && (e[0] == '0' || e[0] == '1'))
    read_ahead_ = e[0] == '1' ? ReadAhead::on : ReadAhead::off;
  reads_ahead_ = read_ahead_ == ReadAhead::on;
  running_ = true;
  const auto wall0 = std::chrono::steady_clock::now();
  const auto n = static_cast<std::size_t>(topology_.size());
  processes_.reserve(n);
  std::size_t finished = 0;
  processes_ended_ = 0;
  auto after = [&](NodeId node) {
    if (processes_ended_ == finished) return;  // none has ended since: its frame is not read
    Task<>& p = processes_[static_cast<std::size_t>(node)];
    check_invariant(p.done() && processes_ended_ == finished + 1, "only the process resumed can have ended");
    if (std::exception_ptr e = p.error()) {
      try {
        std::rethrow_exception(e);
      } catch (const BudgetError&) {
        throw;  // thrown by check_budgets() at the process's await: the run's, not the process's
      } catch (const Interrupted&) {
        throw;
      } catch (const std::bad_alloc&) {
        throw;  // the memory budget (sim/heap_meter.hpp) or the machine: the run's, not the process's
      } catch (const std::exception& ex) {
        throw SimulationError("node " + std::to_string(node) + " at t=" + format_time(now_) + ": " + ex.what());
      }
    }
    ++finished;
    // The run ends when its last process ends; that process's chain is the critical path.
    if (now_ > last_time_ || finished == 1) {
      last_time_ = now_;
      last_path_ = current_path_;
    }
  };
  // Strand ids are handed out only while an observer records: the engine is then the strand
  // hooks of every process (sim/task.hpp), which pass them on to the Tasks they run.
  if (observer_ != nullptr) next_strand_.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    processes_.push_back(make_process(nodes_[i]));
    processes_.back().handle().promise().ended = &processes_ended_;
    if (observer_ != nullptr) processes_.back().handle().promise().hooks = this;
  }
  for (std::size_t i = 0; i < n; ++i) {
    current_path_ = PathCounts{};
    current_node_ = static_cast<NodeId>(i);
    current_strand_ = 0;
    processes_[i].handle().resume();
    ++stats_.resumes;
    if (relay_abort_ || closed_abort_) [[unlikely]]
      throw detail::RelayTrainAbort{};
    after(static_cast<NodeId>(i));
  }
  for (;;) {
    while (ready_head_ < ready_.size()) {
      detail::Waiter* w = ready_[ready_head_++];
      const NodeId node = w->node;
      resume(*w);
      if (relay_abort_ || closed_abort_) [[unlikely]]
        throw detail::RelayTrainAbort{};  // thrown inside a coroutine, perhaps kept by its Task
      after(node);
      if (stats_.events + stats_.resumes + awaits_ >= next_check_) [[unlikely]]
        check_budgets();
    }
    ready_.clear();
    ready_head_ = 0;
    if (closed_abort_) [[unlikely]]
      throw detail::RelayTrainAbort{};  // flagged while an event was handled
    detail::Event ev;
    if (!next_event(ev)) break;
    if (ev.kind == kRelayTrain) {
      take(ev);
      on_relay_train_event(ev);
      continue;
    }
    if (ev.kind == kResume || ev.phase != 0) {
      take_owed(ev);
      continue;
    }
    if (ev.kind != detail::kOpEnd) {
      net_->on_event(ev);  // the model takes it, or drops it as stale
      continue;
    }
    take(ev);
    auto* op = reinterpret_cast<detail::OpState*>(ev.payload);
    if (op->kind == detail::OpKind::send) {  // its o_send has passed: the message leaves now
      current_node_ = op->node;
      current_path_ = take_op_path(*op);
      if (begin(*op, *op->waiter)) complete(*op->waiter, now_, current_path_);
      continue;
    }
    complete(*op->waiter, now_, take_op_path(*op));
  }
  if (options_.progress != nullptr)
    options_.progress->fetch_add(stats_.events - published_events_, std::memory_order_relaxed);
  if (finished != n) deadlock();

  stats_.time = last_time_;
  stats_.critical_path = last_path_;
  check_invariant(last_path_.time(machine_) == last_time_, "the critical path accounts for the whole simulated time");
  match_.for_each([&](const detail::MatchTable::Slot& s) {
    for (std::uint32_t mi = s.msg_head; mi != detail::kNone; mi = messages_[mi].next) ++stats_.unreceived_messages;
  });
  add_load_and_busy(topology_, ports_, link_load_, comm_busy_, compute_busy_, stats_);
  stats_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return stats_;
}

void add_load_and_busy(const Topology& topology, std::size_t ports, const std::vector<std::int64_t>& link_load,
                       const std::vector<Time>& comm_busy, const std::vector<Time>& compute_busy, RunStats& st) {
  const std::size_t n = comm_busy.size();
  std::int64_t links = 0, load = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t p = 0; p < ports && topology.num_ports() > 0; ++p) {
      if (topology.neighbor(static_cast<NodeId>(i), static_cast<int>(p)) < 0) continue;
      ++links;
      const std::int64_t l = link_load[i * ports + p];
      load += l;
      if (l > st.max_link_load) {
        st.max_link_load = l;
        st.busiest_link_node = static_cast<NodeId>(i);
        st.busiest_link_port = static_cast<int>(p);
      }
    }
    st.max_node_comm_busy = std::max(st.max_node_comm_busy, comm_busy[i]);
    st.mean_node_comm_busy_s += comm_busy[i].seconds() / static_cast<double>(n);
    if (!compute_busy.empty()) {
      st.max_node_compute_busy = std::max(st.max_node_compute_busy, compute_busy[i]);
      st.mean_node_compute_busy_s += compute_busy[i].seconds() / static_cast<double>(n);
    }
  }
  st.mean_link_load = links > 0 ? static_cast<double>(load) / static_cast<double>(links) : 0.0;
}

// ---- Relay trains (docs/performance.md "Relay trains") ----------------------------------------
//
// A relay (Node::relay) forwards packet k on all its out ports once packet k is in and packet k-1
// has left on every port. On an all-port store-and-forward machine without node software, a
// stream whose relays all wait for it and whose links nobody else wants is a perfect pipeline:
// packet k leaves a relay at s0 + k d (d = tau_msg + tau + B t_c) and its chain is the chain of
// packet 0 plus k full packets. A relay train pushes only the events that do something besides
// moving the stream along -- packet 0's end on each out port (the child relay starts) and the last
// packet's end (the link is released, a leaf relay ends; on the last port the relay itself ends) --
// each with the key the per-packet relay gives it (OpState::keyed: (seq, k m + i)), so that the
// order of every event is the per-packet engine's. What the train assumed is watched: another
// transmission wanting a train's link or another receive wanting its messages aborts the trains,
// and the run is made again without them.

void Engine::abort_relay_trains() {
  relay_abort_ = true;
  throw detail::RelayTrainAbort{};
}

bool Engine::relay_start(detail::RelaySpec& r, const Buffer* source_data) {
  if (!r.out_ports.empty()) r.seq = take_seq();  // per packet or by train: taken at the same point
  if (!relay_trains_on_) return false;
  if (r.fed_by >= 0) {  // a train carries its stream in: it must go on as one
    if (!r.out_ports.empty() && !start_relay_train(r, relay_trains_[static_cast<std::size_t>(r.fed_by)].stream))
      abort_relay_trains();
    return true;
  }
  return r.parent < 0 && source_data != nullptr && start_relay_train(r, *source_data);
}

bool Engine::start_relay_train(detail::RelaySpec& r, const Buffer& stream) {
  const std::int64_t K = r.packets, B = options_.packet_elements;
  const auto m = static_cast<std::int64_t>(r.out_ports.size());
  if (m == 0 || K < 3 || K * m >= (std::int64_t{1} << 32)) return false;
  const Time d = machine_.tau_msg + machine_.tau + machine_.t_c * B;
  const std::int64_t b_last = r.len - (K - 1) * B;
  const Time d_last = machine_.tau_msg + machine_.tau + machine_.t_c * b_last;
  if (d_last <= Time{}) return false;
  // Every link free; the child relays are checked when packet 0 reaches them (every process has
  // then had its turn at this instant).
  for (const int p : r.out_ports)
    if (topology_.neighbor(r.node, p) < 0 || !net_->relay_link_free(r.node, p)) return false;
  const auto idx = static_cast<std::uint32_t>(relay_trains_.size());
  relay_trains_.push_back(
      RelayTrain{&r, std::vector<RelayTrain::Out>(static_cast<std::size_t>(m)), current_path_, stream});
  RelayTrain& T = relay_trains_.back();
  const std::int64_t b0 = std::min(B, r.len);
  const Time s0 = now_, e0 = s0 + machine_.tau_msg + machine_.tau + machine_.t_c * b0;
  const Time s_last = s0 + d * (K - 1), e_last = s_last + d_last;
  ++stats_.relay_trains;
  stats_.messages += K * m;
  stats_.packets += K * m;
  stats_.packet_hops += K * m;
  stats_.element_hops += r.len * m;
  stats_.largest_message = std::max(stats_.largest_message, b0);
  for (std::int64_t i = 0; i < m; ++i) {
    const int p = r.out_ports[static_cast<std::size_t>(i)];
    net_->hold_relay_link(r.node, p);
    add_link_load(r.node, p, r.len);
    add_comm_busy(r.node, (machine_.tau_msg + machine_.tau) * K + machine_.t_c * r.len);
    const std::uint32_t mi = new_message();
    // (`stream` may have moved with relay_trains_: sliced from the train's own copy)
    renew_message(mi, r.node, topology_.neighbor(r.node, p), r.tag, T.stream.slice(0, b0), 1);
    T.out[static_cast<std::size_t>(i)].first = mi;
    const std::uint64_t at = static_cast<std::uint64_t>(idx) << 17 | static_cast<std::uint64_t>(i) << 1;
    push_keyed(detail::Event{e0.count(), s0.count(), r.seq, at, static_cast<std::uint32_t>(i), kRelayTrain});
    push_keyed(detail::Event{e_last.count(), s_last.count(), r.seq, at | 1, static_cast<std::uint32_t>((K - 1) * m + i),
                             kRelayTrain});
  }
  return true;
}

void Engine::claim(detail::RelaySpec& r) {
  detail::RelaySpec*& head = claims_[static_cast<std::size_t>(r.node)];
  r.next_claim = head;
  r.prev_claim = nullptr;
  if (head != nullptr) head->prev_claim = &r;
  head = &r;
  ++live_claims_;
}

void Engine::unclaim(detail::RelaySpec& r) {
  if (r.prev_claim != nullptr)
    r.prev_claim->next_claim = r.next_claim;
  else
    claims_[static_cast<std::size_t>(r.node)] = r.next_claim;
  if (r.next_claim != nullptr) r.next_claim->prev_claim = r.prev_claim;
  r.next_claim = r.prev_claim = nullptr;
  --live_claims_;
}

void Engine::on_relay_train_event(const detail::Event& ev) {
  RelayTrain& T = relay_trains_[static_cast<std::size_t>(ev.payload >> 17)];
  const auto i = static_cast<std::size_t>((ev.payload >> 1) & 0xffff);
  detail::RelaySpec& r = *T.relay;
  const std::int64_t K = r.packets, B = options_.packet_elements;
  PathCounts p = T.path0;
  if ((ev.payload & 1) == 0) {  // packet 0 is in: the child relay starts
    // It must be a relay of this stream waiting for it, its receive the only one posted there and
    // nothing else arrived; otherwise the per-packet stream would not be this train's.
    const NodeId c = topology_.neighbor(r.node, r.out_ports[i]);
    const detail::MatchTable::Slot* s = match_.find(c, r.node, r.tag);
    detail::OpState* recv = s != nullptr ? s->op_head : nullptr;
    if (recv == nullptr || recv->relay == nullptr || recv->next != nullptr || s->msg_head != detail::kNone)
      abort_relay_trains();
    detail::RelaySpec& child = *recv->relay;
    if (child.first_recv != recv || child.len != r.len || child.fed_by >= 0) abort_relay_trains();
    child.fed_by = static_cast<int>(ev.payload >> 17);
    claim(child);
    T.out[i].child = &child;
    const std::int64_t b0 = std::min(B, r.len);
    p.startups += 1;
    p.msg_startups += 1;
    p.element_transfers += b0;
    deliver(T.out[i].first, now_, p);
    return;
  }
  // The last packet is in: every packet before it passed as it would have, one at a time.
  p.startups += K;
  p.msg_startups += K;
  p.element_transfers += r.len;
  net_->release_relay_link(r.node, r.out_ports[i]);
  detail::RelaySpec& child = *T.out[i].child;
  if (child.out_ports.empty()) {  // a leaf: its stream is in
    unclaim(child);
    child.result = T.stream;
    complete(*child.waiter, now_, p);
  }
  if (i + 1 == r.out_ports.size()) {  // the relay's last packet has left on every port
    if (r.fed_by >= 0) unclaim(r);
    r.result = std::move(T.stream);
    T.out = {};         // the train is over: only its slot in relay_trains_ stays
    T.relay = nullptr;  // (its frame ends once resumed: the window's prefetch reads it no more)
    complete(*r.waiter, now_, p);
  }
}

// ---- Messages in closed form (docs/performance.md "Messages in closed form") ------------------
//
// On an all-port store-and-forward machine without node software, a message to a neighbour that
// finds its link free holds nothing another message could want but that link, and the link is its
// sender's own: nothing can touch the message until it has wholly arrived at its end event's key
// (time, start, sequence, packet), which is known the moment it leaves. Such a message takes no
// event. It goes at once into its receiver's list (or to the receive posted there), marked with
// that key; its send, and the receive that takes it, complete at that key, ahead of the clock. A
// process whose last completion lies ahead is resumed by one event at that key, with phase 1 for
// a receive and 2 for a send: exactly where, and in the order in which, the per-packet engine's
// end event would have put it on the ready list. The chain a waiter keeps at a tie of times is
// the completion with the first key, as the per-packet engine, completing in key order, keeps.
// What the closed form assumed is watched: a transmission that wants the link before the key
// passes aborts the run, which is made again without closed forms (as for relay trains).

bool Engine::lies_ahead(const detail::Waiter& w) const {
  return w.last_time >= 0 && detail::before(detail::key_of(current_), w.last());
}

void Engine::wake(detail::Waiter& w) {
  if (lies_ahead(w)) {
    push_keyed(detail::Event{w.last_time, w.last_pushed, w.last_seq, reinterpret_cast<std::uint64_t>(&w), w.last_sub,
                             kResume, w.last_phase});
    return;
  }
  ready_.push_back(&w);
}

void Engine::take_owed(const detail::Event& first) {
  // The resumes one message's end owes (its receiver's, phase 1, then its sender's, phase 2) are
  // taken together, before the ready list is drained, as the per-packet end event readies both
  // before either runs: a process the first resume readies at once (a message to itself) runs
  // after the second.
  detail::Event ev = first;
  for (;;) {
    take(ev);
    if (ev.kind == kResume) {
      ++stats_.resume_events;
      ready_.push_back(reinterpret_cast<detail::Waiter*>(ev.payload));
    } else {  // a request's receive of a message in closed form (start_recv)
      auto* op = reinterpret_cast<detail::OpState*>(ev.payload);
      complete(*op->waiter, Time::ps(ev.time), take_op_path(*op));
    }
    detail::Event next;
    if (!peek_event(next) || next.time != ev.time || next.pushed != ev.pushed || next.seq != ev.seq ||
        next.sub != ev.sub)
      return;
    next_event(ev);
  }
}

bool Engine::peek_event(detail::Event& ev) const {
  const detail::Event* front = win_size_ > 0 ? &win_[win_head_] : nullptr;
  if (!queue_.empty() && (front == nullptr || detail::before(queue_.top(), *front))) {
    ev = queue_.top();
    return true;
  }
  if (front == nullptr) return false;
  ev = *front;
  return true;
}

bool Engine::complete_ahead(detail::Waiter& w, const detail::Key& k, const PathCounts& p) {
  keep_chain(w, Time::ps(k.time), p, k);
  if (w.last_time < 0 || detail::before(w.last(), k)) w.set_last(k);
  return --w.remaining == 0;
}

bool Engine::can_deliver_ahead(std::uint32_t mi) const {
  const detail::Message& m = messages_[mi];
  if (!closed_forms_on_ || m.keyed || m.send_op == nullptr || m.send_op->waiter == nullptr ||
      !m.send_op->waiter->handle || live_claims_ > 0)
    return false;
  const detail::MatchTable::Slot* s = match_.find(m.dst, m.src, m.tag);
  if (s == nullptr || s->op_head == nullptr) return true;
  const detail::OpState* r = s->op_head;
  return r->waiter != nullptr && r->waiter->handle && r->relay == nullptr;
}

void Engine::deliver_ahead(std::uint32_t mi, const detail::Key& k, const PathCounts& p) {
  detail::Message& m = messages_[mi];
  detail::OpState* send_op = m.send_op;
  ++stats_.closed_form_messages;
  if (Time::ps(k.time) > ahead_end_) ahead_end_ = Time::ps(k.time);
  detail::MatchTable::Slot& s = match_.find_or_add(m.dst, m.src, m.tag);
  if (detail::OpState* op = take_posted(s)) {  // the oldest receive posted for it takes it now
    op->buffer = std::move(m.data);
    m.data = Buffer{};
    messages_.release(mi);
    detail::Key kr = k;
    kr.phase = 1;
    if (complete_ahead(*op->waiter, kr, p)) wake(*op->waiter);
  } else {  // listed, arriving at k
    m.ahead = true;
    m.arrived = Time::ps(k.time);
    m.ahead_pushed = k.pushed;
    m.key_seq = k.seq;
    m.key_sub = k.sub;
    m.path = p;
    list_message(s, mi);
  }
  detail::Key ks = k;
  ks.phase = 2;
  if (complete_ahead(*send_op->waiter, ks, p)) wake(*send_op->waiter);
}

void Engine::abort_closed_forms() {
  // Flagged, not thrown: the process or event at hand goes on (its timing no longer matters) and
  // the run loop throws once it is back, so that no coroutine unwinds with receives still posted.
  closed_abort_ = true;
  closed_forms_on_ = false;
}

}  // namespace cubesim
