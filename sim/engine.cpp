#include "sim/engine.hpp"

#include <algorithm>
#include <string>

#include "sim/resources.hpp"

namespace cubesim {

namespace {
/// Engine invariant checks survive NDEBUG (STYLE.md habit 9).
void check(bool ok, const char* what) {
  if (!ok) throw SimulationError(std::string("engine invariant broken: ") + what);
}
}  // namespace

Engine::Engine(const Machine& machine, const Topology& topology, EngineOptions options)
    : machine_(machine),
      topology_(topology),
      options_(options),
      ports_(static_cast<std::size_t>(std::max(topology.num_ports(), 1))) {
  if (options_.packet_elements < 1) throw std::invalid_argument("packet size must be at least 1 element");
  const auto n = static_cast<std::size_t>(topology_.size());
  if (machine_.ports.kind != PortKind::all) {
    const int cap = machine_.ports.kind == PortKind::one ? 1 : machine_.ports.k;
    out_slots_.assign(n, Resource{0, cap, kNone, kNone});
    in_slots_.assign(n, Resource{0, cap, kNone, kNone});
  }
  links_.assign(n * ports_, Resource{});
  link_load_.assign(n * ports_, 0);
  if (!in_slots_.empty()) {
    train_in_.assign(n, kNone);
    in_claims_.assign(n, SlotClaims{});
  }
  match_ = detail::MatchTable(std::min<std::size_t>(n, 1024));  // grows with the live keys
  next_request_.assign(n, 0);
  results_.resize(n);
  comm_busy_.assign(n, Time{});
  compute_busy_.assign(n, Time{});
  if (machine_.switching == Switching::pipelined) {
    if (topology_.kind() != Topology::Kind::hypercube)
      throw std::invalid_argument("the pipelined (bit-serial router) switching runs on hypercubes only");
    pipelined_ = true;
    dim_cycle_ = machine_.t_hop + machine_.t_c * options_.packet_elements;
    if (dim_cycle_ <= Time{})
      throw std::invalid_argument("a pipelined machine needs t_hop + B t_c > 0 (a dimension cycle takes time)");
    rbuf_.resize(n);
    rinject_.resize(n);
    rinject_head_.assign(n, 0);
    ractive_flag_.assign(n, 0);
    rcand_.assign(n, kNone);
    rdetour_.assign(n, 0);
  }
  nodes_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) nodes_.emplace_back(this, static_cast<NodeId>(i));
}

Engine::~Engine() = default;

std::uint64_t Engine::push(Time t, EventKind k, std::uint64_t payload) {
  const std::uint64_t seq = seq_++;
  push_keyed(Event{t.count(), now_.count(), seq, payload, 0, k});
  return seq;
}

void Engine::push_keyed(Event e) {
  heap_.push_back(e);
  if (static_cast<std::int64_t>(heap_.size()) > stats_.peak_queue)
    stats_.peak_queue = static_cast<std::int64_t>(heap_.size());
  std::push_heap(heap_.begin(), heap_.end(), EventLater{});
}

void Engine::reset_transfer(Transfer& t) {
  const std::uint32_t gen = t.gen;  // kept: an event pushed for an earlier use stays stale
  t = Transfer{};
  t.gen = gen;
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
  w.handle.resume();
  ++stats_.resumes;
}

void Engine::complete(detail::Waiter& w, Time t, const PathCounts& p) {
  // The chain that ends last is the one that made the waiter wait; ties keep the earlier one.
  if (t > w.time) {
    w.time = t;
    w.path = p;
  }
  // A request nobody awaits yet just keeps its time and chain (Request::await_ready).
  if (--w.remaining == 0 && w.handle) ready_.push_back(&w);
}

void Engine::check_node(NodeId node, const char* what) const {
  if (node < 0 || node >= topology_.size())
    throw std::out_of_range(std::string(what) + ": node " + std::to_string(node) + " is outside the topology (" +
                            std::to_string(topology_.size()) + " nodes)");
}

std::uint32_t Engine::new_transfer() {
  if (!free_transfers_.empty()) {
    std::uint32_t i = free_transfers_.back();
    free_transfers_.pop_back();
    return i;
  }
  transfers_.emplace_back();
  return static_cast<std::uint32_t>(transfers_.size() - 1);
}

std::uint32_t Engine::new_message() {
  if (!free_messages_.empty()) {
    std::uint32_t i = free_messages_.back();
    free_messages_.pop_back();
    return i;
  }
  messages_.emplace_back();
  return static_cast<std::uint32_t>(messages_.size() - 1);
}

std::int64_t Engine::packet_size(const Message& m, std::int64_t index) const {
  const std::int64_t b = options_.packet_elements;
  return std::min(b, m.elements - index * b);
}

bool Engine::begin(detail::OpState& op, detail::Waiter& w) {
  op.waiter = &w;
  switch (op.kind) {
    case detail::OpKind::send:
      if (op.peer == op.node) {  // to itself: delivered at once, no link crossed
        const std::uint32_t mi = new_message();
        Message& m = messages_[mi];
        m = Message{};
        m.src = m.dst = op.node;
        m.tag = op.tag;
        m.elements = op.buffer.size();
        m.packets = 0;
        m.data = std::move(op.buffer);
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
      op.path = current_path_;
      if (op.kind == detail::OpKind::compute) {
        dur = machine_.t_a * op.amount;
        op.path.flops += op.amount;
      } else if (op.kind == detail::OpKind::copy) {
        dur = machine_.t_copy * op.amount;
        op.path.copies += op.amount;
      } else {
        dur = op.duration;
        op.path.delays += op.duration;
      }
      if (op.amount == 0 && dur == Time{}) return true;
      if (op.kind != detail::OpKind::delay) compute_busy_[static_cast<std::size_t>(op.node)] += dur;
      op.end = now_ + dur;
      if (observer_ != nullptr)
        observer_->on_activity(op.node,
                               op.kind == detail::OpKind::compute ? ActivityKind::compute
                               : op.kind == detail::OpKind::copy  ? ActivityKind::copy
                                                                  : ActivityKind::delay,
                               op.kind == detail::OpKind::delay ? dur.count() : op.amount, now_, op.end);
      push(op.end, EventKind::op_end, reinterpret_cast<std::uint64_t>(&op));
      return false;
    }
  }
  return true;
}

void Engine::start_send(detail::OpState& op) {
  const std::uint32_t mi = new_message();
  Message& m = messages_[mi];
  m = Message{};
  m.src = op.node;
  m.dst = op.peer;
  m.tag = op.tag;
  m.elements = op.buffer.size();
  const std::int64_t b = options_.packet_elements;
  m.packets = m.elements == 0 ? 1 : (m.elements + b - 1) / b;
  m.data = std::move(op.buffer);
  m.send_op = &op;
  m.id = static_cast<std::uint64_t>(++stats_.messages);
  stats_.packets += m.packets;
  if (topology_.port_to(m.src, m.dst) < 0) ++stats_.routed_messages;
  if (observer_ != nullptr) observer_->on_message(m.id, m.src, m.dst, m.tag, m.elements, now_);

  const std::uint32_t ti = new_transfer();
  Transfer& t = transfers_[ti];
  reset_transfer(t);
  t.msg = mi;
  t.from = op.node;
  t.port = topology_.next_hop(op.node, op.peer);
  t.to = topology_.neighbor(op.node, t.port);
  t.at_source = true;
  t.first = true;
  t.elements = packet_size(m, 0);
  t.time = now_;
  t.path = current_path_;
  advance(ti);
}

void Engine::enqueue(Resource& r, std::uint32_t ti) {
  ++stats_.queued_transmissions;
  transfers_[ti].next = kNone;
  if (r.tail == kNone)
    r.head = ti;
  else
    transfers_[r.tail].next = ti;
  r.tail = ti;
}

// Moves a transfer through its acquisitions (out slot, link, in slot) and starts it when it holds
// all three; stops where it must wait. Never allocates, so references into transfers_ stay valid.
void Engine::advance(std::uint32_t ti) {
  Transfer& t = transfers_[ti];
  for (;;) {
    Resource* r = nullptr;
    switch (t.stage) {
      case 0:
        r = out_slot(t.from);
        break;
      case 1:
        r = pipelined_ ? nullptr : &links_[link_index(t.from, t.port)];
        break;
      case 2:
        r = pipelined_ ? nullptr : in_slot(t.to);
        // A packet about to queue for a slot a train holds: the train becomes packets again,
        // so that this one gets the slot at the next packet boundary, as it would have.
        if (r != nullptr && r->head == kNone && r->busy >= r->cap && train_in_[static_cast<std::size_t>(t.to)] != kNone)
          break_train(train_in_[static_cast<std::size_t>(t.to)]);
        break;
      default: {
        check(t.time == now_, "a transmission starts when its last constraint is met");
        if (pipelined_) {  // the message's start-up at its source; the router moves its packets
          const Time dur = machine_.tau + machine_.tau_msg;
          t.path.startups += 1;
          t.path.msg_startups += 1;
          t.time = now_ + dur;
          comm_busy_[static_cast<std::size_t>(t.from)] += dur;
          push(t.time, EventKind::transfer_end, transfer_payload(ti, t.gen));
          return;
        }
        if (t.at_source && t.sent == 0 && train_eligible(t)) {
          start_train(ti);
          return;
        }
        Time dur = machine_.tau + machine_.t_c * t.elements;
        if (t.first) dur += machine_.tau_msg;
        t.path.startups += 1;
        t.path.msg_startups += t.first ? 1 : 0;
        t.path.element_transfers += t.elements;
        t.time = now_ + dur;
        ++stats_.packet_hops;
        stats_.element_hops += t.elements;
        link_load_[link_index(t.from, t.port)] += t.elements;
        comm_busy_[static_cast<std::size_t>(t.from)] += dur;
        if (observer_ != nullptr) {
          const Message& m = messages_[t.msg];
          const std::int64_t index = t.at_source ? t.sent : t.packet;
          observer_->on_transmission(
              Transmission{m.id, t.from, t.to, t.port, now_, t.time, t.elements, index, t.first});
        }
        if (t.at_source && t.sent > 0)  // a later packet: the first one's sequence number
          push_keyed(Event{t.time.count(), now_.count(), t.seq0, transfer_payload(ti, t.gen),
                           static_cast<std::uint32_t>(t.sent), EventKind::transfer_end});
        else
          t.seq0 = push(t.time, EventKind::transfer_end, transfer_payload(ti, t.gen));
        return;
      }
    }
    if (r != nullptr) {
      if (r->busy < r->cap && r->head == kNone) {
        ++r->busy;
        if (t.stage == 2) note_in_grant(t.to, now_, t.from);
      } else {
        if (t.stage == 2 && !in_claims_.empty()) {
          SlotClaims& c = in_claims_[static_cast<std::size_t>(t.to)];
          if ((c.granted_ps == now_.count() && c.granted_by != t.from) ||
              (c.queued_ps == now_.count() && c.queued_by != t.from))
            ++stats_.slot_ties;
          c.queued_ps = now_.count();
          c.queued_by = t.from;
        }
        enqueue(*r, ti);
        return;
      }
    }
    ++t.stage;
  }
}

void Engine::release(Resource& r, const Transfer& by) {
  if (r.head == kNone) {
    --r.busy;
    return;
  }
  const std::uint32_t wi = r.head;
  Transfer& w = transfers_[wi];
  r.head = w.next;
  if (r.head == kNone) r.tail = kNone;
  // The resource passes straight to the oldest waiter; its chain now runs through `by`.
  if (by.time > w.time) {
    w.time = by.time;
    w.path = by.path;
  }
  ++w.stage;
  advance(wi);
}

void Engine::on_transfer_end(std::uint32_t ti) {
  if (transfers_[ti].train) {  // a train's last packet: from here on it is one like any other
    transfers_[ti].train = false;
    if (!train_in_.empty()) train_in_[static_cast<std::size_t>(transfers_[ti].to)] = kNone;
  }
  // Copy what we need: forwarding below may grow transfers_.
  const Transfer done = transfers_[ti];
  if (pipelined_) {
    if (Resource* r = out_slot(done.from)) release(*r, done);
    free_transfers_.push_back(ti);
    router_inject(done.msg, done);
    return;
  }
  if (Resource* r = in_slot(done.to)) {
    if (r->head != kNone) note_in_grant(done.to, transfers_[r->head].time, transfers_[r->head].from);  // when it asked
    release(*r, done);
  }
  const bool source_continues =
      done.at_source && done.msg != kNone && transfers_[ti].sent + 1 < messages_[done.msg].packets;
  // At the source a message keeps its outgoing slot and its link until its last packet.
  if (!source_continues) release(links_[link_index(done.from, done.port)], done);

  const Message& m = messages_[done.msg];
  const NodeId dst = m.dst;
  const std::uint32_t mi = done.msg;
  const bool last_first_hop = done.at_source && !source_continues;
  detail::OpState* send_op = last_first_hop ? m.send_op : nullptr;

  if (done.at_source) {
    Transfer& t = transfers_[ti];
    ++t.sent;
    if (source_continues) {
      t.first = false;
      t.elements = packet_size(messages_[mi], t.sent);
      t.stage = 2;  // holds out slot and link already
      advance(ti);
    } else {
      if (Resource* r = out_slot(done.from)) release(*r, done);
      free_transfers_.push_back(ti);
    }
  } else {
    if (Resource* r = out_slot(done.from)) release(*r, done);
    free_transfers_.push_back(ti);
  }

  if (done.to == dst) {
    Message& mm = messages_[mi];
    if (++mm.delivered == mm.packets) deliver(mi, now_, done.path);
  } else {
    const std::uint32_t fi = new_transfer();
    Transfer& f = transfers_[fi];
    reset_transfer(f);
    f.msg = mi;
    f.from = done.to;
    f.port = topology_.next_hop(done.to, dst);
    f.to = topology_.neighbor(done.to, f.port);
    f.first = done.first;
    f.elements = done.elements;
    f.packet = done.at_source ? done.sent : done.packet;
    f.time = now_;
    f.path = done.path;
    advance(fi);
  }
  // The send completes when its last packet has left the source.
  if (send_op != nullptr) complete(*send_op->waiter, now_, done.path);
}

void Engine::deliver(std::uint32_t mi, Time t, const PathCounts& p) {
  Message& m = messages_[mi];
  detail::MatchTable::Slot& s = match_.find_or_add(m.dst, m.src, m.tag);
  if (detail::OpState* op = s.op_head) {  // the oldest receive posted for it
    s.op_head = op->next;
    if (s.op_head == nullptr) {
      s.op_tail = nullptr;
      match_.erase(s);
    }
    op->next = nullptr;
    if (observer_ != nullptr) {
      observer_->on_recv_matched(*op, m.elements);
      observer_->on_delivered(m.id, m.dst, t);
    }
    op->buffer = std::move(m.data);
    m.data = Buffer{};
    free_messages_.push_back(mi);
    complete(*op->waiter, t, p);
    return;
  }
  if (observer_ != nullptr) observer_->on_delivered(m.id, m.dst, t);
  m.arrived = t;
  m.path = p;
  m.next = kNone;
  if (s.msg_tail == kNone)
    s.msg_head = mi;
  else
    messages_[s.msg_tail].next = mi;
  s.msg_tail = mi;
}

// ---- Packet trains (docs/performance.md "Packet trains") --------------------------------------
//
// In the per-packet engine the end of packet j < k of a message to a neighbour, on a machine
// without incoming slots or with one slot nobody waits for, only starts packet j+1: the
// message holds its outgoing slot and link throughout, the receiver's slot passes back to it,
// and the packet is only counted as delivered. Packet j+1's end event gets the key
// (t_{j+1}, t_j, seq of packet 1, j): known in closed form from the train's start. So a train
// pushes only its last packet's end, with that key, and adds every packet's counts at once;
// everything that happens at that event, and the order of events, is the per-packet engine's.
// The one thing that can interleave is another packet queueing for the receiver's slot: then the
// train is broken at the packet in flight (the first whose end event has not yet been passed,
// compared with the event being processed) and goes on packet by packet from there.

Time Engine::train_time(const Message& m) const {
  return machine_.tau * m.packets + machine_.tau_msg + machine_.t_c * m.elements;
}

bool Engine::train_eligible(const Transfer& t) const {
  if (!options_.packet_trains || observer_ != nullptr || pipelined_) return false;
  const Message& m = messages_[t.msg];
  if (m.packets < 2 || t.to != m.dst) return false;
  if (in_slots_.empty()) return true;
  const Resource& in = in_slots_[static_cast<std::size_t>(t.to)];
  return in.cap == 1 && in.head == kNone;
}

void Engine::start_train(std::uint32_t ti) {
  Transfer& t = transfers_[ti];
  Message& m = messages_[t.msg];
  const std::int64_t k = m.packets;
  const std::int64_t last = packet_size(m, k - 1);
  const Time busy = train_time(m);
  t.train = true;
  t.path.startups += k;
  t.path.msg_startups += 1;
  t.path.element_transfers += m.elements;
  t.time = now_ + busy;
  t.sent = k - 1;
  t.first = false;
  t.elements = last;
  m.delivered = k - 1;
  stats_.packet_hops += k;
  stats_.element_hops += m.elements;
  link_load_[link_index(t.from, t.port)] += m.elements;
  comm_busy_[static_cast<std::size_t>(t.from)] += busy;
  ++stats_.packet_trains;
  if (!train_in_.empty()) train_in_[static_cast<std::size_t>(t.to)] = ti;
  t.seq0 = seq_++;  // the first packet's end event would have taken it
  const Time pushed = t.time - (machine_.tau + machine_.t_c * last);
  push_keyed(Event{t.time.count(), pushed.count(), t.seq0, transfer_payload(ti, t.gen),
                   static_cast<std::uint32_t>(k - 1), EventKind::transfer_end});
}

void Engine::break_train(std::uint32_t ti) {
  Transfer& t = transfers_[ti];
  Message& m = messages_[t.msg];
  const std::int64_t k = m.packets;
  train_in_[static_cast<std::size_t>(t.to)] = kNone;
  t.train = false;
  const Time train_start = t.time - train_time(m);  // t.time: the last packet's end
  // The packet in flight: the first whose end event comes after the one being processed. Every
  // packet but the last is full, so packet j ends at start + tau_msg + (j+1)(tau + B t_c).
  const std::int64_t B = options_.packet_elements;
  const Time d = machine_.tau + machine_.t_c * B, base = train_start + machine_.tau_msg;
  auto key = [&](std::int64_t j) {
    const Time pushed = j == 0 ? train_start : base + d * j;
    return Event{(base + d * (j + 1)).count(),  pushed.count(),         t.seq0, 0,
                 static_cast<std::uint32_t>(j), EventKind::transfer_end};
  };
  std::int64_t j = 0;
  if (d > Time{} && current_.time > (base + d).count())  // packets ended before this instant
    j = std::min(k - 1, (current_.time - base.count() - 1) / d.count());
  while (j < k - 1 && before(key(j), current_)) ++j;
  // Packet j > 0 asked for the slot when packet j - 1 ended, as it does per packet; packet 0's
  // grant (and when it asked, perhaps earlier: it may have waited) was noted when it got the slot.
  if (j > 0) note_in_grant(t.to, base + d * j, t.from);
  if (j == k - 1) return;  // only the last packet is left: the pushed event is right as it is
  Event in_flight = key(j);
  ++stats_.train_breaks;
  // Take back what the packets after j would have added when they start (packets up to j are full).
  const std::int64_t rest = m.elements - (j + 1) * B, later = k - 1 - j;
  t.path.startups -= later;
  t.path.element_transfers -= rest;
  stats_.packet_hops -= later;
  stats_.element_hops -= rest;
  link_load_[link_index(t.from, t.port)] -= rest;
  comm_busy_[static_cast<std::size_t>(t.from)] -= machine_.tau * later + machine_.t_c * rest;
  t.sent = j;
  t.first = j == 0;
  t.elements = packet_size(m, j);
  t.time = Time::ps(in_flight.time);
  m.delivered = j;
  ++t.gen;  // the train's event is stale
  in_flight.payload = transfer_payload(ti, t.gen);
  push_keyed(in_flight);
}

bool Engine::start_recv(detail::OpState& op) {
  detail::MatchTable::Slot& s = match_.find_or_add(op.node, op.peer, op.tag);
  if (const std::uint32_t mi = s.msg_head; mi != kNone) {  // the oldest message arrived from it
    Message& m = messages_[mi];
    s.msg_head = m.next;
    if (s.msg_head == kNone) {
      s.msg_tail = kNone;
      match_.erase(s);
    }
    if (observer_ != nullptr) observer_->on_recv_matched(op, m.elements);
    op.buffer = std::move(m.data);
    m.data = Buffer{};
    free_messages_.push_back(mi);
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
  for (const detail::MatchTable::Slot& s : match_.slots())
    for (const detail::OpState* op = s.op_head; op != nullptr; op = op->next) posted.push_back(op);
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
  throw DeadlockError("deadlock at t=" + format_time(now_) + ": " + unfinished("never finish"));
}

void Engine::check_budgets() {
  constexpr std::int64_t kInterval = 4096;  // steps (events, resumes, awaits) between two checks
  constexpr std::int64_t kMemoryEvery = 1;  // checks between two readings of resident memory (6 us each)
  const std::int64_t done = stats_.events + stats_.resumes + awaits_;
  next_check_ = done + kInterval;
  if (options_.progress != nullptr) {
    options_.progress->fetch_add(stats_.events - published_events_, std::memory_order_relaxed);
    published_events_ = stats_.events;
  }
  if (options_.max_events > 0) next_check_ = std::min(next_check_, std::max(done + 1, options_.max_events + 1));
  if (options_.stop != nullptr) {
    if (const int sig = options_.stop->load(std::memory_order_relaxed); sig != 0) throw Interrupted(sig);
  }
  const std::int64_t max = options_.max_events;
  if (max > 0 && (stats_.events > max || stats_.resumes > max || awaits_ > max)) {
    const std::string spent = stats_.events > max    ? std::to_string(stats_.events) + " events"
                              : stats_.resumes > max ? std::to_string(stats_.resumes) + " resumes"
                                                     : std::to_string(awaits_) + " awaited operations";
    throw BudgetError(BudgetError::Budget::events,
                      "the budget of " + std::to_string(max) + " events is spent (" + spent +
                          " by t=" + format_time(now_) +
                          "), a livelock or a run longer than the budget: " + unfinished("still run"));
  }
  if (options_.max_resident_bytes > 0 && ++budget_checks_ % kMemoryEvery == 0) {
    if (const std::int64_t rss = resident_bytes(); rss > options_.max_resident_bytes)
      throw BudgetError(BudgetError::Budget::memory,
                        "the memory budget of " + format_bytes(options_.max_resident_bytes) + " is spent (" +
                            format_bytes(rss) + " resident after " + std::to_string(stats_.events) +
                            " events, t=" + format_time(now_) + "): " + unfinished("still run"));
  }
}

// ---- Router: the bit-serial, pipelined router of a Connection-Machine-like machine ----------
//
// Synchronous dimension cycles of length t_hop + B t_c (B the packet size in force), cycle k
// serving dimension k mod n, from time 0 (a petit cycle is n of them). At the start of a cycle
// every router first takes packets from its processor (FIFO, while it has buffer room), then
// sends at most one packet across that cycle's dimension: the oldest whose remaining relative
// address has that bit set. A packet crosses only if the router on the other side has room
// after its own departure (two routers may always swap). A full router with no packet for the
// dimension sends its oldest packet across it anyway, one hop further from home ("desperation"
// routing, a detour). A packet that reaches its destination leaves the network at the end of the
// cycle. The start-up tau (+ tau_msg) is paid once per message, at the source, before injection.
// Docs: docs/transpose.md "The Connection-Machine router".

void Engine::router_inject(std::uint32_t mi, const Transfer& startup) {
  Message& m = messages_[mi];
  const auto x = static_cast<std::size_t>(m.src);
  for (std::int64_t i = 0; i < m.packets; ++i) {
    std::uint32_t pi;
    if (!free_rpackets_.empty()) {
      pi = free_rpackets_.back();
      free_rpackets_.pop_back();
    } else {
      rpackets_.emplace_back();
      pi = static_cast<std::uint32_t>(rpackets_.size() - 1);
    }
    rpackets_[pi] = RouterPacket{mi, ++rage_, m.src, packet_size(m, i), now_, startup.path};
    rinject_[x].push_back(pi);
  }
  if (!ractive_flag_[x]) {
    ractive_flag_[x] = 1;
    ractive_.push_back(m.src);
  }
  router_schedule(now_);
}

void Engine::router_schedule(Time earliest) {
  if (rnext_cycle_ >= 0) return;
  const std::int64_t c = dim_cycle_.count();
  const std::int64_t k = std::max((earliest.count() + c - 1) / c, rlast_cycle_ + 1);
  rnext_cycle_ = k;
  push(Time::ps(k * c), EventKind::router_cycle, 0);
}

void Engine::router_cycle() {
  const std::int64_t k = rnext_cycle_;
  rnext_cycle_ = -1;
  rlast_cycle_ = k;
  ++stats_.router_cycles;
  bool progress = false;
  // Packets that crossed their last dimension in the cycle that just ended.
  for (std::uint32_t pi : rdeliver_) {
    const RouterPacket& p = rpackets_[pi];
    PathCounts path = p.path;
    path.routing += now_ - p.ready;
    const std::uint32_t mi = p.msg;
    free_rpackets_.push_back(pi);
    Message& m = messages_[mi];
    if (++m.delivered == m.packets) deliver(mi, now_, path);
    progress = true;
  }
  rdeliver_.clear();

  const int n = topology_.dim();
  const int d = static_cast<int>(k % std::max(n, 1));
  const auto cap = static_cast<std::size_t>(machine_.router_buffers);
  auto older = [&](std::uint32_t a, std::uint32_t b) { return rpackets_[a].age < rpackets_[b].age; };
  // Injection, then each router's choice for dimension d.
  for (NodeId x : ractive_) {
    const auto xi = static_cast<std::size_t>(x);
    auto& q = rinject_[xi];
    auto& buf = rbuf_[xi];
    while (rinject_head_[xi] < q.size() && (cap == 0 || buf.size() < cap)) {
      const std::uint32_t pi = q[rinject_head_[xi]++];
      buf.push_back(pi);
      progress = true;
      Message& m = messages_[rpackets_[pi].msg];
      if (++m.injected == m.packets && m.send_op != nullptr) {  // the send's buffer is free
        PathCounts path = rpackets_[pi].path;
        path.routing += now_ - rpackets_[pi].ready;
        complete(*m.send_op->waiter, now_, path);
      }
    }
    if (rinject_head_[xi] == q.size()) {
      q.clear();
      rinject_head_[xi] = 0;
    }
    stats_.router_peak_buffer = std::max(stats_.router_peak_buffer, static_cast<std::int64_t>(buf.size()));
    std::uint32_t best = kNone, oldest = kNone;
    std::int64_t wanting = 0;
    for (std::uint32_t pi : buf) {
      const RouterPacket& p = rpackets_[pi];
      if (oldest == kNone || older(pi, oldest)) oldest = pi;
      if (((p.at ^ messages_[p.msg].dst) >> d & 1) == 0) continue;
      ++wanting;
      if (best == kNone || older(pi, best)) best = pi;
    }
    if (wanting > 1) stats_.router_collisions += wanting - 1;
    rdetour_[xi] = 0;
    if (best == kNone && cap != 0 && buf.size() >= cap && n > 0) {
      best = oldest;
      rdetour_[xi] = 1;
    }
    rcand_[xi] = best;
  }
  // Moves: x -> y = x xor 2^d when y has room after its own departure (a swap always fits).
  const std::size_t active = ractive_.size();
  for (std::size_t a = 0; a < active; ++a) {
    const NodeId x = ractive_[a];
    const auto xi = static_cast<std::size_t>(x);
    const std::uint32_t pi = rcand_[xi];
    if (pi == kNone) continue;
    const NodeId y = x ^ (NodeId{1} << d);
    const auto yi = static_cast<std::size_t>(y);
    const bool y_leaves = ractive_flag_[yi] && rcand_[yi] != kNone && rpackets_[rcand_[yi]].at == y;
    if (cap != 0 && !y_leaves && rbuf_[yi].size() >= cap) {
      ++stats_.router_blocked;
      continue;
    }
    auto& buf = rbuf_[xi];
    buf.erase(std::find(buf.begin(), buf.end(), pi));
    RouterPacket& p = rpackets_[pi];
    p.at = y;
    ++stats_.packet_hops;
    stats_.element_hops += p.elements;
    link_load_[link_index(x, d)] += p.elements;
    if (rdetour_[xi]) ++stats_.router_detours;
    if (y == messages_[p.msg].dst) {
      rdeliver_.push_back(pi);
    } else {
      rbuf_[yi].push_back(pi);
      if (!ractive_flag_[yi]) {
        ractive_flag_[yi] = 1;
        ractive_.push_back(y);
      }
    }
  }
  // Keep the nodes that still hold or await packets, in a deterministic order.
  std::size_t w = 0;
  for (std::size_t a = 0; a < ractive_.size(); ++a) {
    const auto xi = static_cast<std::size_t>(ractive_[a]);
    rcand_[xi] = kNone;
    stats_.router_peak_buffer = std::max(stats_.router_peak_buffer, static_cast<std::int64_t>(rbuf_[xi].size()));
    if (rbuf_[xi].empty() && rinject_[xi].empty())
      ractive_flag_[xi] = 0;
    else
      ractive_[w++] = ractive_[a];
  }
  ractive_.resize(w);
  if (!rdeliver_.empty()) progress = true;
  ridle_cycles_ = progress ? 0 : ridle_cycles_ + 1;
  if (ridle_cycles_ > 64 * std::max(n, 1) + 1024)
    throw SimulationError("the router delivered and injected nothing for " + std::to_string(ridle_cycles_) +
                          " dimension cycles (livelock) at t=" + format_time(now_));
  if (!ractive_.empty() || !rdeliver_.empty()) router_schedule(now_ + dim_cycle_);
}

RunStats Engine::run(const ProcessFactory& make_process) {
  check(!running_ && processes_.empty(), "an Engine runs once");
  running_ = true;
  const auto wall0 = std::chrono::steady_clock::now();
  const auto n = static_cast<std::size_t>(topology_.size());
  processes_.reserve(n);
  std::size_t finished = 0;
  auto after = [&](NodeId node) {
    Task<>& p = processes_[static_cast<std::size_t>(node)];
    if (!p.done()) return;
    if (std::exception_ptr e = p.error()) {
      try {
        std::rethrow_exception(e);
      } catch (const BudgetError&) {
        throw;  // thrown by check_budgets() at the process's await: the run's, not the process's
      } catch (const Interrupted&) {
        throw;
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
    if (observer_ != nullptr) processes_.back().handle().promise().hooks = this;
  }
  for (std::size_t i = 0; i < n; ++i) {
    current_path_ = PathCounts{};
    current_node_ = static_cast<NodeId>(i);
    current_strand_ = 0;
    processes_[i].handle().resume();
    ++stats_.resumes;
    after(static_cast<NodeId>(i));
  }
  for (;;) {
    while (ready_head_ < ready_.size()) {
      detail::Waiter* w = ready_[ready_head_++];
      const NodeId node = w->node;
      resume(*w);
      after(node);
      if (stats_.events + stats_.resumes + awaits_ >= next_check_) [[unlikely]]
        check_budgets();
    }
    ready_.clear();
    ready_head_ = 0;
    if (heap_.empty()) break;
    std::pop_heap(heap_.begin(), heap_.end(), EventLater{});
    const Event ev = heap_.back();
    heap_.pop_back();
    if (ev.kind == EventKind::transfer_end && transfers_[ev.payload & 0xffffffffu].gen != ev.payload >> 32)
      continue;  // a broken train's end: its packets have events of their own
    check(ev.time >= now_.count(), "time never runs backwards");
    current_ = ev;
    now_ = Time::ps(ev.time);
    ++stats_.events;
    if (stats_.events + stats_.resumes + awaits_ >= next_check_) [[unlikely]]
      check_budgets();
    if (ev.kind == EventKind::transfer_end) {
      on_transfer_end(static_cast<std::uint32_t>(ev.payload & 0xffffffffu));
    } else if (ev.kind == EventKind::router_cycle) {
      router_cycle();
    } else {
      auto* op = reinterpret_cast<detail::OpState*>(ev.payload);
      complete(*op->waiter, op->end, op->path);
    }
  }
  if (options_.progress != nullptr)
    options_.progress->fetch_add(stats_.events - published_events_, std::memory_order_relaxed);
  if (finished != n) deadlock();

  stats_.time = last_time_;
  stats_.critical_path = last_path_;
  check(last_path_.time(machine_) == last_time_, "the critical path accounts for the whole simulated time");
  for (const detail::MatchTable::Slot& s : match_.slots())
    for (std::uint32_t mi = s.msg_head; mi != kNone; mi = messages_[mi].next) ++stats_.unreceived_messages;
  std::int64_t links = 0, load = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t p = 0; p < ports_ && topology_.num_ports() > 0; ++p) {
      if (topology_.neighbor(static_cast<NodeId>(i), static_cast<int>(p)) < 0) continue;
      ++links;
      const std::int64_t l = link_load_[i * ports_ + p];
      load += l;
      if (l > stats_.max_link_load) {
        stats_.max_link_load = l;
        stats_.busiest_link_node = static_cast<NodeId>(i);
        stats_.busiest_link_port = static_cast<int>(p);
      }
    }
    stats_.max_node_comm_busy = std::max(stats_.max_node_comm_busy, comm_busy_[i]);
    stats_.max_node_compute_busy = std::max(stats_.max_node_compute_busy, compute_busy_[i]);
    stats_.mean_node_comm_busy_s += comm_busy_[i].seconds() / static_cast<double>(n);
    stats_.mean_node_compute_busy_s += compute_busy_[i].seconds() / static_cast<double>(n);
  }
  stats_.mean_link_load = links > 0 ? static_cast<double>(load) / static_cast<double>(links) : 0.0;
  stats_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return stats_;
}

}  // namespace cubesim
