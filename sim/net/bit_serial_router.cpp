#include "sim/net/bit_serial_router.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

namespace cubesim::net {

namespace {
const NetworkRegistration kRegistrationBitSerialRouter{{
    .name = "bit_serial_router",
    .switching = Switching::pipelined,
    .summary = "a Connection-Machine-like bit-serial router a node: synchronous dimension cycles, start-up once a "
               "message, oldest-first arbitration, desperation routing",
    .make = [](Engine& k) -> std::unique_ptr<Network> { return std::make_unique<BitSerialRouter>(k); },
    .in_order = false,
}};
}  // namespace

BitSerialRouter::BitSerialRouter(Engine& k, int group_bits, std::int64_t inject_per_cycle)
    : k_(k), m_(k.machine()), st_(k.stats()), group_bits_(group_bits), inject_per_cycle_(inject_per_cycle) {
  const Topology& topo = k.topology();
  if (topo.kind() != Topology::Kind::hypercube)
    throw std::invalid_argument("the pipelined (bit-serial router) switching runs on hypercubes only");
  if (group_bits_ < 0 || group_bits_ > topo.dim())
    throw std::invalid_argument("a " + std::to_string(topo.size()) + "-node cube cannot be split into routers of " +
                                std::to_string(std::int64_t{1} << std::clamp(group_bits_, 0, 62)) + " processors");
  dims_ = topo.dim() - group_bits_;
  dim_cycle_ = m_.t_hop + m_.t_c * k.options().packet_elements;
  if (dim_cycle_ <= Time{})
    throw std::invalid_argument("a pipelined machine needs t_hop + B t_c > 0 (a dimension cycle takes time)");
  const auto n = static_cast<std::size_t>(topo.size());
  if (m_.ports.kind != PortKind::all) {
    const int cap = m_.ports.kind == PortKind::one ? 1 : m_.ports.k;
    out_slots_.assign(n, Slot{0, cap, detail::kNone, detail::kNone});
  }
  const std::size_t routers = n >> group_bits_;
  buf_.resize(routers);
  inject_.resize(routers);
  inject_head_.assign(routers, 0);
  active_flag_.assign(routers, 0);
  cand_.assign(routers, detail::kNone);
  detour_.assign(routers, 0);
}

void BitSerialRouter::send(std::uint32_t mi) {
  const std::uint32_t si = startups_.acquire();
  Startup& s = startups_[si];
  s = Startup{};
  s.msg = mi;
  s.from = k_.message(mi).src;
  s.time = k_.now();
  s.path = k_.current_path();
  advance(si);
}

// The start-up holds the source's outgoing slot (first come, first served), then takes
// tau + tau_msg; its packets then enter the router.
void BitSerialRouter::advance(std::uint32_t si) {
  Startup& s = startups_[si];
  if (s.stage == 0) {
    if (!out_slots_.empty()) {
      Slot& r = out_slots_[static_cast<std::size_t>(s.from)];
      if (!r.free()) {
        ++st_.queued_transmissions;
        r.enqueue(startups_, si);
        return;
      }
      ++r.busy;
    }
    s.stage = 1;
  }
  check_invariant(s.time == k_.now(), "a transmission starts when its last constraint is met");
  const Time dur = m_.tau + m_.tau_msg;
  s.path.startups += 1;
  s.path.msg_startups += 1;
  s.time = k_.now() + dur;
  k_.add_comm_busy(s.from, dur);
  k_.push(s.time, kStartupEnd, si);
}

void BitSerialRouter::on_event(const detail::Event& ev) {
  k_.take(ev);
  if (ev.kind == kCycle)
    cycle();
  else
    startup_end(static_cast<std::uint32_t>(ev.payload));
}

void BitSerialRouter::startup_end(std::uint32_t si) {
  const Startup done = startups_[si];
  if (!out_slots_.empty()) {
    Slot& r = out_slots_[static_cast<std::size_t>(done.from)];
    if (r.head == detail::kNone) {
      --r.busy;
    } else {  // the slot passes straight to the oldest waiter; its chain now runs through `done`
      const std::uint32_t wi = r.pop(startups_);
      Startup& w = startups_[wi];
      if (done.time > w.time) {
        w.time = done.time;
        w.path = done.path;
      }
      w.stage = 1;
      advance(wi);
    }
  }
  startups_.release(si);
  inject(done.msg, done);
}

void BitSerialRouter::inject(std::uint32_t mi, const Startup& s) {
  const detail::Message& m = k_.message(mi);
  const NodeId x = router_of(m.src);
  const auto xi = static_cast<std::size_t>(x);
  for (std::int64_t i = 0; i < m.packets; ++i) {
    const std::uint32_t pi = packets_.acquire();
    packets_[pi] = Packet{mi, ++age_, x, k_.packet_size(m, i), k_.now(), s.path};
    inject_[xi].push_back(pi);
  }
  if (!active_flag_[xi]) {
    active_flag_[xi] = 1;
    active_.push_back(x);
  }
  schedule(k_.now());
}

void BitSerialRouter::schedule(Time earliest) {
  if (next_cycle_ >= 0) return;
  const std::int64_t c = dim_cycle_.count();
  const std::int64_t k = std::max((earliest.count() + c - 1) / c, last_cycle_ + 1);
  next_cycle_ = k;
  k_.push(Time::ps(k * c), kCycle, 0);
}

void BitSerialRouter::cycle() {
  const std::int64_t k = next_cycle_;
  next_cycle_ = -1;
  last_cycle_ = k;
  ++st_.router_cycles;
  const Time now = k_.now();
  bool progress = false;
  // Packets that crossed their last dimension in the cycle that just ended.
  for (std::uint32_t pi : deliver_) {
    const Packet& p = packets_[pi];
    PathCounts path = p.path;
    path.routing += now - p.ready;
    const std::uint32_t mi = p.msg;
    packets_.release(pi);
    detail::Message& m = k_.message(mi);
    if (++m.delivered == m.packets) k_.deliver(mi, now, path);
    progress = true;
  }
  deliver_.clear();

  const int n = dims_;
  const int d = static_cast<int>(k % std::max(n, 1));
  const auto cap = static_cast<std::size_t>(m_.router_buffers);
  auto older = [&](std::uint32_t a, std::uint32_t b) { return packets_[a].age < packets_[b].age; };
  auto dst_router = [&](const Packet& p) { return router_of(k_.message(p.msg).dst); };
  // Injection, then each router's choice for dimension d.
  for (NodeId x : active_) {
    const auto xi = static_cast<std::size_t>(x);
    auto& q = inject_[xi];
    auto& buf = buf_[xi];
    std::int64_t taken = 0;
    while (inject_head_[xi] < q.size() && (cap == 0 || buf.size() < cap) &&
           (inject_per_cycle_ == 0 || taken < inject_per_cycle_)) {
      const std::uint32_t pi = q[inject_head_[xi]++];
      ++taken;
      progress = true;
      detail::Message& m = k_.message(packets_[pi].msg);
      if (router_of(m.dst) == x)
        deliver_.push_back(pi);  // to a processor of the same router: crosses no wire
      else
        buf.push_back(pi);
      if (++m.injected == m.packets && m.send_op != nullptr) {  // the send's buffer is free
        PathCounts path = packets_[pi].path;
        path.routing += now - packets_[pi].ready;
        k_.complete(*m.send_op->waiter, now, path);
      }
    }
    if (inject_head_[xi] == q.size()) {
      q.clear();
      inject_head_[xi] = 0;
    }
    st_.router_peak_buffer = std::max(st_.router_peak_buffer, static_cast<std::int64_t>(buf.size()));
    std::uint32_t best = detail::kNone, oldest = detail::kNone;
    std::int64_t wanting = 0;
    for (std::uint32_t pi : buf) {
      const Packet& p = packets_[pi];
      if (oldest == detail::kNone || older(pi, oldest)) oldest = pi;
      if (((p.at ^ dst_router(p)) >> d & 1) == 0) continue;
      ++wanting;
      if (best == detail::kNone || older(pi, best)) best = pi;
    }
    if (wanting > 1) st_.router_collisions += wanting - 1;
    detour_[xi] = 0;
    if (best == detail::kNone && cap != 0 && buf.size() >= cap && n > 0) {
      best = oldest;
      detour_[xi] = 1;
    }
    cand_[xi] = best;
  }
  // Moves: x -> y = x xor 2^d when y has room after its own departure (a swap always fits).
  const std::size_t active = active_.size();
  for (std::size_t a = 0; a < active; ++a) {
    const NodeId x = active_[a];
    const auto xi = static_cast<std::size_t>(x);
    const std::uint32_t pi = cand_[xi];
    if (pi == detail::kNone) continue;
    const NodeId y = x ^ (NodeId{1} << d);
    const auto yi = static_cast<std::size_t>(y);
    const bool y_leaves = active_flag_[yi] && cand_[yi] != detail::kNone && packets_[cand_[yi]].at == y;
    if (cap != 0 && !y_leaves && buf_[yi].size() >= cap) {
      ++st_.router_blocked;
      continue;
    }
    auto& buf = buf_[xi];
    buf.erase(std::find(buf.begin(), buf.end(), pi));
    Packet& p = packets_[pi];
    p.at = y;
    ++st_.packet_hops;
    st_.element_hops += p.elements;
    // The wire of router dimension d is the processors' cube dimension d + g, at the router's
    // first processor.
    k_.add_link_load(x << group_bits_, d + group_bits_, p.elements);
    if (detour_[xi]) ++st_.router_detours;
    if (y == dst_router(p)) {
      deliver_.push_back(pi);
    } else {
      buf_[yi].push_back(pi);
      if (!active_flag_[yi]) {
        active_flag_[yi] = 1;
        active_.push_back(y);
      }
    }
  }
  // Keep the routers that still hold or await packets, in a deterministic order.
  std::size_t w = 0;
  for (std::size_t a = 0; a < active_.size(); ++a) {
    const auto xi = static_cast<std::size_t>(active_[a]);
    cand_[xi] = detail::kNone;
    st_.router_peak_buffer = std::max(st_.router_peak_buffer, static_cast<std::int64_t>(buf_[xi].size()));
    if (buf_[xi].empty() && inject_[xi].empty())
      active_flag_[xi] = 0;
    else
      active_[w++] = active_[a];
  }
  active_.resize(w);
  if (!deliver_.empty()) progress = true;
  idle_cycles_ = progress ? 0 : idle_cycles_ + 1;
  if (idle_cycles_ > 64 * std::max(n, 1) + 1024)
    throw SimulationError("the router delivered and injected nothing for " + std::to_string(idle_cycles_) +
                          " dimension cycles (livelock) at t=" + format_time(now));
  if (!active_.empty() || !deliver_.empty()) schedule(now + dim_cycle_);
}

}  // namespace cubesim::net
