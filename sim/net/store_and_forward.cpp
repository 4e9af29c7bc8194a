#include "sim/net/store_and_forward.hpp"

#include <algorithm>
#include <memory>
#include <string>

#include "sim/kernel/prefetch.hpp"

namespace cubesim::net {

namespace {
const NetworkRegistration kRegistrationStoreAndForward{{
    .name = "store_and_forward",
    .switching = Switching::store_and_forward,
    .summary = "store-and-forward packets over one-, k- or all-port nodes, with exact packet trains",
    .make = [](Engine& k) -> std::unique_ptr<Network> { return std::make_unique<StoreAndForward>(k); },
}};
}  // namespace

StoreAndForward::StoreAndForward(Engine& k) : k_(k), m_(k.machine()), topo_(k.topology()), st_(k.stats()) {
  const auto n = static_cast<std::size_t>(topo_.size());
  if (m_.ports.kind != PortKind::all) {
    const int cap = m_.ports.kind == PortKind::one ? 1 : m_.ports.k;
    out_slots_.assign(n, Slot{0, cap, detail::kNone, detail::kNone});
    in_slots_.assign(n, Slot{0, cap, detail::kNone, detail::kNone});
  }
  links_.assign(n * k_.ports(), Slot{});
  if (!in_slots_.empty()) {
    train_in_.assign(n, detail::kNone);
    in_claims_.assign(n, SlotClaims{});
  }
}

// A record made anew for another use keeps its generation, so that an event pushed for an earlier
// use stays stale; every other field is set, one by one: a whole-record assignment (t = {}) compiles
// to a `rep stos` of a temporary, which was 9 % of allgather.sbt all-port on 2^16 nodes.
void StoreAndForward::renew(Transfer& t) {
  static_assert(sizeof(Transfer) == 152, "a new field of Transfer: set it here too (and fix the size)");
  t.msg = 0;
  t.next = detail::kNone;
  t.from = t.to = 0;
  t.port = 0;
  t.stage = 0;
  t.at_source = false;
  t.first = false;
  t.elements = 0;
  t.sent = 0;
  t.packet = 0;
  t.time = Time{};
  t.path = PathCounts{};
  t.seq0 = 0;
  t.train = false;
}

void StoreAndForward::send(std::uint32_t mi) {
  const detail::Message& m = k_.message(mi);
  if (k_.closed_forms_on()) {
    const int port = topo_.next_hop(m.src, m.dst);
    if (topo_.neighbor(m.src, port) == m.dst && closed_form(mi, port)) return;
  }
  const std::uint32_t ti = transfers_.acquire();
  Transfer& t = transfers_[ti];
  renew(t);
  t.msg = mi;
  t.from = m.src;
  t.port = topo_.next_hop(m.src, m.dst);
  t.to = topo_.neighbor(m.src, t.port);
  t.at_source = true;
  t.first = true;
  t.elements = k_.packet_size(m, 0);
  t.time = k_.now();
  t.path = k_.current_path();
  advance(ti);
}

void StoreAndForward::on_event(const detail::Event& ev) {
  const auto ti = static_cast<std::uint32_t>(ev.payload & 0xffffffffu);
  if (transfers_[ti].gen != ev.payload >> 32) return;  // a broken train's end: its packets have events of their own
  k_.take(ev);
  on_transfer_end(ti);
}

// Network::prefetch: a transmission's end reads its transfer, its message, the sender's link,
// and -- when it is the message's last hop -- the receiver's match slot, the receive posted there
// and its waiter, and the send's operation and waiter (engine.cpp "The event window").
void StoreAndForward::prefetch(const detail::Event& ev, int stage) const {
  const auto ti = static_cast<std::uint32_t>(ev.payload & 0xffffffffu);
  if (ev.kind != kTransferEnd || ti >= transfers_.capacity()) return;
  const Transfer& t = transfers_[ti];
  using detail::prefetch_lines;
  if (stage == 0) {
    prefetch_lines(t);
    return;
  }
  if (t.gen != ev.payload >> 32 || t.msg == detail::kNone) return;  // stale: nothing to read ahead
  const detail::Message& m = k_.message(t.msg);
  switch (stage) {
    case 1:
      prefetch_lines(m);
      detail::prefetch(&links_[link_index(t.from, t.port)]);
      break;
    case 2:
      if (t.to == m.dst) k_.prefetch_match(m.dst, m.src, m.tag);
      if (t.at_source && m.send_op != nullptr) prefetch_lines(*m.send_op);  // alive: its send is under way
      break;
    case 3:
      // Every line of the operations and waiters: stage 4 and the event read `waiter` in an
      // operation's second line (offset 88), and completing one writes its end and chain in its
      // third and fourth; asking for the first line only left those misses (29 % and 19 % of
      // this function's samples on one-port CRA, 2^12 nodes, sat on the two loads of `waiter`).
      if (t.to == m.dst)
        if (const detail::OpState* r = k_.posted_receive(m.dst, m.src, m.tag)) prefetch_lines(*r);
      if (t.at_source && m.send_op != nullptr && m.send_op->waiter != nullptr) prefetch_lines(*m.send_op->waiter);
      break;
    case 4:
      if (t.to == m.dst)
        if (const detail::OpState* r = k_.posted_receive(m.dst, m.src, m.tag); r != nullptr && r->waiter != nullptr)
          prefetch_lines(*r->waiter);
      break;
    default:
      break;
  }
}

void StoreAndForward::note_in_grant(NodeId to, Time asked, NodeId by) {
  if (in_claims_.empty()) return;
  SlotClaims& c = in_claims_[static_cast<std::size_t>(to)];
  c.granted_ps = asked.count();
  c.granted_by = by;
}

void StoreAndForward::enqueue(Slot& r, std::uint32_t ti) {
  ++st_.queued_transmissions;
  r.enqueue(transfers_, ti);
}

// Moves a transfer through its acquisitions (out slot, link, in slot) and starts it when it holds
// all three; stops where it must wait. Never allocates, so references into transfers_ stay valid.
void StoreAndForward::advance(std::uint32_t ti) {
  Transfer& t = transfers_[ti];
  for (;;) {
    Slot* r = nullptr;
    switch (t.stage) {
      case 0:
        r = out_slot(t.from);
        break;
      case 1:
        r = &link(t.from, t.port);
        // A link a relay train holds: the train assumed nobody else would want it.
        if (!relay_links_.empty() && relay_links_[link_index(t.from, t.port)] != 0) k_.abort_relay_trains();
        // The same for a message in closed form, until its end.
        if (held_ahead(link_index(t.from, t.port))) k_.abort_closed_forms();
        break;
      case 2:
        r = in_slot(t.to);
        // A packet about to queue for a slot a train holds: the train becomes packets again,
        // so that this one gets the slot at the next packet boundary, as it would have.
        if (r != nullptr && r->head == detail::kNone && r->busy >= r->cap &&
            train_in_[static_cast<std::size_t>(t.to)] != detail::kNone)
          break_train(train_in_[static_cast<std::size_t>(t.to)]);
        break;
      default: {
        check_invariant(t.time == k_.now(), "a transmission starts when its last constraint is met");
        if (t.at_source && t.sent == 0 && train_eligible(t)) {
          start_train(ti);
          return;
        }
        Time dur = m_.tau + m_.t_c * t.elements;
        if (t.first) dur += m_.tau_msg;
        t.path.startups += 1;
        t.path.msg_startups += t.first ? 1 : 0;
        t.path.element_transfers += t.elements;
        t.time = k_.now() + dur;
        ++st_.packet_hops;
        st_.element_hops += t.elements;
        k_.add_link_load(t.from, t.port, t.elements);
        k_.add_comm_busy(t.from, dur);
        if (k_.observer() != nullptr) {
          const detail::Message& m = k_.message(t.msg);
          const std::int64_t index = t.at_source ? t.sent : t.packet;
          k_.observer()->on_transmission(
              Transmission{m.id, t.from, t.to, t.port, k_.now(), t.time, t.elements, index, t.first});
        }
        if (t.at_source && t.sent == 0 && k_.message(t.msg).keyed) {  // a relay's packet: its own key
          const detail::Message& m = k_.message(t.msg);
          t.seq0 = m.key_seq;
          k_.push_keyed(
              detail::Event{t.time.count(), k_.now().count(), m.key_seq, payload(ti, t.gen), m.key_sub, kTransferEnd});
        } else if (t.at_source && t.sent > 0)  // a later packet: the first one's sequence number
          k_.push_keyed(detail::Event{t.time.count(), k_.now().count(), t.seq0, payload(ti, t.gen),
                                      static_cast<std::uint32_t>(t.sent), kTransferEnd});
        else
          t.seq0 = k_.push(t.time, kTransferEnd, payload(ti, t.gen));
        return;
      }
    }
    if (r != nullptr) {
      if (r->free()) {
        ++r->busy;
        if (t.stage == 2) note_in_grant(t.to, k_.now(), t.from);
      } else {
        if (t.stage == 2 && !in_claims_.empty()) {
          SlotClaims& c = in_claims_[static_cast<std::size_t>(t.to)];
          if ((c.granted_ps == k_.now().count() && c.granted_by != t.from) ||
              (c.queued_ps == k_.now().count() && c.queued_by != t.from))
            ++st_.slot_ties;
          c.queued_ps = k_.now().count();
          c.queued_by = t.from;
        }
        enqueue(*r, ti);
        return;
      }
    }
    ++t.stage;
  }
}

void StoreAndForward::release(Slot& r, const Transfer& by) {
  if (r.head == detail::kNone) {
    --r.busy;
    return;
  }
  const std::uint32_t wi = r.pop(transfers_);
  Transfer& w = transfers_[wi];
  // The resource passes straight to the oldest waiter; its chain now runs through `by`.
  if (by.time > w.time) {
    w.time = by.time;
    w.path = by.path;
  }
  ++w.stage;
  advance(wi);
}

void StoreAndForward::on_transfer_end(std::uint32_t ti) {
  if (transfers_[ti].train) {  // a train's last packet: from here on it is one like any other
    transfers_[ti].train = false;
    if (!train_in_.empty()) train_in_[static_cast<std::size_t>(transfers_[ti].to)] = detail::kNone;
  }
  // Copy what we need: forwarding below may grow transfers_.
  const Transfer done = transfers_[ti];
  if (Slot* r = in_slot(done.to)) {
    if (r->head != detail::kNone)
      note_in_grant(done.to, transfers_[r->head].time, transfers_[r->head].from);  // when it asked
    release(*r, done);
  }
  const bool source_continues =
      done.at_source && done.msg != detail::kNone && transfers_[ti].sent + 1 < k_.message(done.msg).packets;
  // At the source a message keeps its outgoing slot and its link until its last packet.
  if (!source_continues) release(link(done.from, done.port), done);

  const detail::Message& m = k_.message(done.msg);
  const NodeId dst = m.dst;
  const std::uint32_t mi = done.msg;
  const bool last_first_hop = done.at_source && !source_continues;
  detail::OpState* send_op = last_first_hop ? m.send_op : nullptr;

  if (done.at_source) {
    Transfer& t = transfers_[ti];
    ++t.sent;
    if (source_continues) {
      t.first = false;
      t.elements = k_.packet_size(k_.message(mi), t.sent);
      t.stage = 2;  // holds out slot and link already
      advance(ti);
    } else {
      if (Slot* r = out_slot(done.from)) release(*r, done);
      transfers_.release(ti);
    }
  } else {
    if (Slot* r = out_slot(done.from)) release(*r, done);
    transfers_.release(ti);
  }

  if (done.to == dst) {
    detail::Message& mm = k_.message(mi);
    if (++mm.delivered == mm.packets) k_.deliver(mi, k_.now(), done.path);
  } else {
    const std::uint32_t fi = transfers_.acquire();
    Transfer& f = transfers_[fi];
    renew(f);
    f.msg = mi;
    f.from = done.to;
    f.port = topo_.next_hop(done.to, dst);
    f.to = topo_.neighbor(done.to, f.port);
    f.first = done.first;
    f.elements = done.elements;
    f.packet = done.at_source ? done.sent : done.packet;
    f.time = k_.now();
    f.path = done.path;
    advance(fi);
  }
  // The send completes when its last packet has left the source.
  if (send_op != nullptr) k_.complete(*send_op->waiter, k_.now(), done.path);
}

bool StoreAndForward::relay_link_free(NodeId n, int port) const {
  if (!in_slots_.empty()) return false;  // all-port only: a train then holds nothing but links
  const Slot& l = links_[link_index(n, port)];
  return l.free() && l.head == detail::kNone && !held_ahead(link_index(n, port));
}

void StoreAndForward::hold_relay_link(NodeId n, int port) {
  if (relay_links_.empty()) relay_links_.assign(links_.size(), 0);
  ++link(n, port).busy;
  relay_links_[link_index(n, port)] = 1;
}

void StoreAndForward::release_relay_link(NodeId n, int port) {
  --link(n, port).busy;  // nobody waits: a wish for it would have aborted the trains
  relay_links_[link_index(n, port)] = 0;
}

bool StoreAndForward::closed_form(std::uint32_t mi, int port) {
  const std::size_t li = link_index(k_.message(mi).src, port);
  const Slot& l = links_[li];
  if (!l.free() || l.head != detail::kNone || held_ahead(li)) return false;
  if (!relay_links_.empty() && relay_links_[li] != 0) return false;
  if (!k_.can_deliver_ahead(mi)) return false;
  const detail::Message& m = k_.message(mi);
  const std::int64_t k = m.packets;
  // What the per-packet engine (one packet) or a packet train (more) would do and push: one packet
  // takes tau_msg + tau + b t_c, as a train of one would.
  const Time busy = train_time(m);
  if (busy <= Time{}) return false;  // it would end at the instant it starts: not ahead of anything
  const Time end = k_.now() + busy;
  const Time pushed = k == 1 ? k_.now() : end - (m_.tau + m_.t_c * k_.packet_size(m, k - 1));
  const detail::Key key{end.count(), pushed.count(), k_.take_seq(), static_cast<std::uint32_t>(k - 1), 0};
  PathCounts p = k_.current_path();
  count_whole(m, m.src, port, busy, p);
  if (ahead_.empty()) ahead_.assign(links_.size(), detail::Key{});
  ahead_[li] = key;
  k_.deliver_ahead(mi, key, p);
  return true;
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

void StoreAndForward::count_whole(const detail::Message& m, NodeId from, int port, Time busy, PathCounts& path) {
  const std::int64_t k = m.packets;
  path.startups += k;
  path.msg_startups += 1;
  path.element_transfers += m.elements;
  st_.packet_hops += k;
  st_.element_hops += m.elements;
  k_.add_link_load(from, port, m.elements);
  k_.add_comm_busy(from, busy);
  if (k > 1) ++st_.packet_trains;
}

Time StoreAndForward::train_time(const detail::Message& m) const {
  return transmission_time(m_, m.packets, m.elements);
}

bool StoreAndForward::train_eligible(const Transfer& t) const {
  if (!k_.options().packet_trains || k_.observer() != nullptr) return false;
  const detail::Message& m = k_.message(t.msg);
  if (m.packets < 2 || t.to != m.dst) return false;
  if (in_slots_.empty()) return true;
  const Slot& in = in_slots_[static_cast<std::size_t>(t.to)];
  return in.cap == 1 && in.head == detail::kNone;
}

void StoreAndForward::start_train(std::uint32_t ti) {
  Transfer& t = transfers_[ti];
  detail::Message& m = k_.message(t.msg);
  const std::int64_t k = m.packets;
  const std::int64_t last = k_.packet_size(m, k - 1);
  const Time busy = train_time(m);
  t.train = true;
  count_whole(m, t.from, t.port, busy, t.path);
  t.time = k_.now() + busy;
  t.sent = k - 1;
  t.first = false;
  t.elements = last;
  m.delivered = k - 1;
  if (!train_in_.empty()) train_in_[static_cast<std::size_t>(t.to)] = ti;
  t.seq0 = k_.take_seq();  // the first packet's end event would have taken it
  const Time pushed = t.time - (m_.tau + m_.t_c * last);
  k_.push_keyed(detail::Event{t.time.count(), pushed.count(), t.seq0, payload(ti, t.gen),
                              static_cast<std::uint32_t>(k - 1), kTransferEnd});
}

void StoreAndForward::break_train(std::uint32_t ti) {
  Transfer& t = transfers_[ti];
  detail::Message& m = k_.message(t.msg);
  const std::int64_t k = m.packets;
  train_in_[static_cast<std::size_t>(t.to)] = detail::kNone;
  t.train = false;
  const Time train_start = t.time - train_time(m);  // t.time: the last packet's end
  // The packet in flight: the first whose end event comes after the one being processed. Every
  // packet but the last is full, so packet j ends at start + tau_msg + (j+1)(tau + B t_c).
  const std::int64_t B = k_.options().packet_elements;
  const Time d = m_.tau + m_.t_c * B, base = train_start + m_.tau_msg;
  auto key = [&](std::int64_t j) {
    const Time pushed = j == 0 ? train_start : base + d * j;
    return detail::Event{(base + d * (j + 1)).count(),  pushed.count(), t.seq0, 0,
                         static_cast<std::uint32_t>(j), kTransferEnd};
  };
  std::int64_t j = 0;
  if (d > Time{} && k_.current_event().time > (base + d).count())  // packets ended before this instant
    j = std::min(k - 1, (k_.current_event().time - base.count() - 1) / d.count());
  while (j < k - 1 && detail::before(key(j), k_.current_event())) ++j;
  // Packet j > 0 asked for the slot when packet j - 1 ended, as it does per packet; packet 0's
  // grant (and when it asked, perhaps earlier: it may have waited) was noted when it got the slot.
  if (j > 0) note_in_grant(t.to, base + d * j, t.from);
  if (j == k - 1) return;  // only the last packet is left: the pushed event is right as it is
  detail::Event in_flight = key(j);
  ++st_.train_breaks;
  // Take back what the packets after j would have added when they start (packets up to j are full).
  const std::int64_t rest = m.elements - (j + 1) * B, later = k - 1 - j;
  t.path.startups -= later;
  t.path.element_transfers -= rest;
  st_.packet_hops -= later;
  st_.element_hops -= rest;
  k_.add_link_load(t.from, t.port, -(rest));
  k_.add_comm_busy(t.from, Time{} - (m_.tau * later + m_.t_c * rest));
  t.sent = j;
  t.first = j == 0;
  t.elements = k_.packet_size(m, j);
  t.time = Time::ps(in_flight.time);
  m.delivered = j;
  ++t.gen;  // the train's event is stale
  in_flight.payload = payload(ti, t.gen);
  k_.push_keyed(in_flight);
}

}  // namespace cubesim::net
