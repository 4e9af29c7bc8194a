#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "helpers.hpp"
#include "sim/kernel/event_queue.hpp"

using namespace cubesim;
using cubesim::test::simple_machine;

namespace {

struct Log {
  std::map<NodeId, std::vector<Time>> times;  // per node: times after each completed step
};

RunStats run(const Machine& m, const Topology& t, const Engine::ProcessFactory& f, std::int64_t B = 1 << 20) {
  Engine e(m, t, EngineOptions{B, true});
  return e.run(f);
}

// Nodes 1 and 2 both send 10 elements to node 0 at t = 0; node 0 receives from 1, then 2.
Task<> two_senders(Node& self, Log* log) {
  if (self.id() == 1 || self.id() == 2) {
    co_await self.send(self.topology().port_to(self.id(), 0), Buffer::sized(10));
  } else if (self.id() == 0) {
    co_await self.recv(0);
    log->times[0].push_back(self.now());
    co_await self.recv(1);
    log->times[0].push_back(self.now());
  }
}

}  // namespace

TEST(Engine, OnePortReceiverServesSendersFirstComeFirstServed) {
  Log log;
  const Topology t = Topology::hypercube(2);
  RunStats s = run(simple_machine(), t, [&](Node& n) { return two_senders(n, &log); });
  // one packet = tau + 10 t_c = 1100 ps; node 1 asked first (processes start in node order)
  EXPECT_EQ(log.times[0], (std::vector<Time>{Time::ps(1100), Time::ps(2200)}));
  EXPECT_EQ(s.time, Time::ps(2200));
  EXPECT_EQ(s.critical_path.startups, 2);  // the second transfer waited for the first
  EXPECT_EQ(s.critical_path.element_transfers, 20);
}

TEST(Engine, AllPortReceiverTakesBothAtOnce) {
  Log log;
  RunStats s =
      run(simple_machine({PortKind::all, 0}), Topology::hypercube(2), [&](Node& n) { return two_senders(n, &log); });
  EXPECT_EQ(log.times[0], (std::vector<Time>{Time::ps(1100), Time::ps(1100)}));
  EXPECT_EQ(s.time, Time::ps(1100));
}

namespace {
// Node 0 sends 10 elements on every port at once; the others receive.
Task<> fan_out(Node& self) {
  if (self.id() == 0) {
    std::vector<Op> sends;
    for (int d = 0; d < self.ports(); ++d) sends.push_back(self.send(d, Buffer::sized(10)));
    co_await all_of(sends);
  } else if (std::popcount(static_cast<std::uint64_t>(self.id())) == 1) {
    co_await self.recv(std::countr_zero(static_cast<std::uint64_t>(self.id())));
  }
}
}  // namespace

TEST(Engine, SendingOnTwoPortsTakesTwiceAsLongOnAOnePortMachine) {
  const Topology t2 = Topology::hypercube(2);
  EXPECT_EQ(run(simple_machine({PortKind::one, 1}), t2, fan_out).time, Time::ps(2200));
  EXPECT_EQ(run(simple_machine({PortKind::all, 0}), t2, fan_out).time, Time::ps(1100));
  const Topology t3 = Topology::hypercube(3);
  EXPECT_EQ(run(simple_machine({PortKind::one, 1}), t3, fan_out).time, Time::ps(3300));
  EXPECT_EQ(run(simple_machine({PortKind::k, 2}), t3, fan_out).time, Time::ps(2200));
  EXPECT_EQ(run(simple_machine({PortKind::k, 3}), t3, fan_out).time, Time::ps(1100));
  EXPECT_EQ(run(simple_machine({PortKind::all, 0}), t3, fan_out).time, Time::ps(1100));
}

namespace {
Task<> exchange(Node& self, std::int64_t S) {
  auto s = self.send(0, Buffer::make(S, true, [&](std::int64_t i) { return Element(self.id() * 100 + i); }));
  auto r = self.recv(0);
  co_await all_of(s, r);
  self.set_result(r.take());
}
}  // namespace

TEST(Engine, AnExchangeIsOneStepOnAOnePortMachine) {
  Engine e(simple_machine(), Topology::hypercube(1), EngineOptions{1 << 20, true});
  RunStats s = e.run([](Node& n) { return exchange(n, 10); });
  EXPECT_EQ(s.time, Time::ps(1100));
  EXPECT_EQ(e.results()[0].values()[3], 103.0);  // node 0 has node 1's data
  EXPECT_EQ(e.results()[1].values()[3], 3.0);
}

TEST(Engine, MessagesAreSplitIntoPacketsWithARemainder) {
  for (auto [S, B, packets] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
           {10, 4, 3}, {8, 4, 2}, {1, 4, 1}, {0, 4, 1}, {257, 256, 2}, {10, 1, 10}}) {
    const std::int64_t size = S;  // clang 14 cannot capture a structured binding
    RunStats s = run(
        simple_machine(), Topology::hypercube(1), [size](Node& n) { return exchange(n, size); }, B);
    EXPECT_EQ(s.time, Time::ps(1000 * packets + 10 * S)) << S << "/" << B;
    EXPECT_EQ(s.packets, 2 * packets);
    EXPECT_EQ(s.critical_path.startups, packets);
    EXPECT_EQ(s.critical_path.element_transfers, S);
  }
}

TEST(Engine, TauMsgIsPaidOncePerMessagePerHop) {
  Machine m = simple_machine();
  m.tau_msg = Time::ps(500);
  RunStats s = run(
      m, Topology::hypercube(1), [](Node& n) { return exchange(n, 10); }, 4);
  EXPECT_EQ(s.time, Time::ps(3 * 1000 + 100 + 500));
  EXPECT_EQ(s.critical_path.msg_startups, 1);
}

namespace {
Task<> routed(Node& self, NodeId src, NodeId dst, std::int64_t S, Log* log) {
  if (self.id() == src) co_await self.send_to(dst, Buffer::sized(S));
  if (self.id() == dst) {
    co_await self.recv_from(src);
    log->times[dst].push_back(self.now());
  }
}
}  // namespace

TEST(Engine, RoutedSendsStoreAndForwardAlongTheEcubePath) {
  Log log;
  const Topology t = Topology::hypercube(3);
  RunStats s = run(simple_machine(), t, [&](Node& n) { return routed(n, 0, 7, 10, &log); });
  EXPECT_EQ(s.time, Time::ps(3 * 1100));  // h (tau + S t_c)
  EXPECT_EQ(s.packet_hops, 3);
  EXPECT_EQ(s.element_hops, 30);
  EXPECT_EQ(s.messages, 1);
  // three packets (4, 4, 2) pipelined through three hops: flow shop
  RunStats p = run(
      simple_machine(), t, [&](Node& n) { return routed(n, 0, 7, 10, &log); }, 4);
  EXPECT_EQ(p.time, Time::ps((1040 + 1040 + 1020) + 2 * 1040));
  EXPECT_EQ(p.critical_path.startups, 5);
  EXPECT_EQ(p.critical_path.element_transfers, 10 + 2 * 4);
  // mesh: dimension order x then y
  const Topology mt = Topology::mesh({3, 3}, false);
  RunStats q = run(simple_machine({PortKind::all, 0}), mt, [&](Node& n) { return routed(n, 0, 8, 10, &log); });
  EXPECT_EQ(q.time, Time::ps(4 * 1100));
  EXPECT_EQ(q.packet_hops, 4);
}

namespace {
Task<> local_work(Node& self) {
  co_await self.compute(5);
  co_await self.copy(4);
  co_await self.delay(Time::ps(100));
  co_await self.compute(0);
}
}  // namespace

TEST(Engine, ComputeCopyAndDelayCostWhatTheMachineSays) {
  RunStats s = run(simple_machine(), Topology::hypercube(2), local_work);
  EXPECT_EQ(s.time, Time::ps(5 * 3 + 4 * 7 + 100));
  EXPECT_EQ(s.critical_path.flops, 5);
  EXPECT_EQ(s.critical_path.copies, 4);
  EXPECT_EQ(s.critical_path.delays, Time::ps(100));
}

namespace {
// Several concurrent subtasks inside one process, with contention: a stress for determinism.
Task<> worker(Node& self, NodeId peer, int tag) {
  co_await self.send_to(peer, Buffer::sized(3 + tag), tag);
  co_await self.compute(tag);
}
Task<> receiver(Node& self, NodeId src, int tag) { co_await self.recv_from(src, tag); }
Task<> busy(Node& self) {
  const NodeId N = self.size();
  std::vector<Task<>> tasks;
  for (int k = 1; k < 4; ++k) {
    tasks.push_back(worker(self, (self.id() + k * 5) % N, k));
    tasks.push_back(receiver(self, ((self.id() - k * 5) % N + N) % N, k));
  }
  co_await all_of(std::move(tasks));
}
}  // namespace

TEST(Engine, SameInputsGiveIdenticalRuns) {
  const Topology t = Topology::hypercube(5);
  RunStats a = run(simple_machine({PortKind::k, 2}), t, busy, 2);
  RunStats b = run(simple_machine({PortKind::k, 2}), t, busy, 2);
  EXPECT_EQ(a.time, b.time);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.critical_path, b.critical_path);
  EXPECT_EQ(a.max_link_load, b.max_link_load);
  EXPECT_GT(a.events, 100);
}

TEST(Engine, EventsAtTheSameTimeKeepTheirOrder) {
  // Two messages on one link of an all-port machine: the first message sent keeps the link for
  // all its packets; the second, queued behind it, follows.
  Log log;
  auto proc = [&](Node& self) -> Task<> {
    return [](Node& s, Log* lg) -> Task<> {
      if (s.id() == 0) {
        auto a = s.send(0, Buffer::sized(8), 1);
        auto b = s.send(0, Buffer::sized(4), 2);
        co_await all_of(a, b);
      } else {
        auto b = s.recv(0, 2);
        auto a = s.recv(0, 1);
        co_await a;
        lg->times[1].push_back(s.now());
        co_await b;
        lg->times[1].push_back(s.now());
      }
    }(self, &log);
  };
  run(simple_machine({PortKind::all, 0}), Topology::hypercube(1), proc, 4);
  EXPECT_EQ(log.times[1], (std::vector<Time>{Time::ps(2 * 1040), Time::ps(3 * 1040)}));
}

namespace {
Task<> thrower(Node& self) {
  co_await self.delay(Time::ps(5));
  if (self.id() == 3) throw std::runtime_error("boom");
}
Task<> bad_port(Node& self) { co_await self.send(7, Buffer::sized(1)); }
Task<> waits_forever(Node& self) {
  if (self.id() < 2) co_await self.recv(0);
}
}  // namespace

TEST(Engine, AnExceptionInAProcessEndsTheRunNamingNodeAndTime) {
  try {
    run(simple_machine(), Topology::hypercube(2), thrower);
    FAIL() << "no error";
  } catch (const SimulationError& e) {
    EXPECT_NE(std::string(e.what()).find("node 3 at t=5 ps: boom"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run(simple_machine(), Topology::hypercube(2), bad_port), SimulationError);
}

TEST(Engine, DeadlockIsReportedWithTheBlockedNodes) {
  try {
    run(simple_machine(), Topology::hypercube(2), waits_forever);
    FAIL() << "no deadlock";
  } catch (const DeadlockError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("2 of 4 processes never finish"), std::string::npos) << w;
    EXPECT_NE(w.find("node 0 waits for recv from node 1 (port 0) tag 0"), std::string::npos) << w;
    EXPECT_NE(w.find("node 1 waits for recv from node 0"), std::string::npos) << w;
  }
}

namespace {
// Node 1 never ends: it computes forever (time advances) or, with zero flops, forever at one
// instant (no event is ever queued); node 0 waits for a message node 1 never sends.
Task<> livelock(Node& self, std::int64_t flops) {
  if (self.id() == 0) co_await self.recv(0);
  if (self.id() == 1)
    for (;;) co_await self.compute(flops);
}

EngineOptions budget(std::int64_t max_events, const std::atomic<int>* stop = nullptr) {
  EngineOptions o{1, true};
  o.max_events = max_events;
  o.stop = stop;
  return o;
}
}  // namespace

TEST(Engine, AnEventBudgetStopsALivelockNamingWhatEachNodeWaitsFor) {
  for (const std::int64_t flops : {1, 0}) {
    Engine e(simple_machine(), Topology::hypercube(1), budget(1000));
    try {
      e.run([flops](Node& n) { return livelock(n, flops); });
      FAIL() << "no budget error";
    } catch (const BudgetError& err) {
      const std::string w = err.what();
      EXPECT_EQ(err.budget(), BudgetError::Budget::events);
      EXPECT_NE(w.find("the budget of 1000 events is spent (1001 "), std::string::npos) << w;
      if (flops == 0) {
        EXPECT_NE(w.find("(1001 awaited operations by t=0 s)"), std::string::npos) << w;
      }
      EXPECT_NE(w.find("2 of 2 processes still run: node 0 waits for recv from node 1 (port 0) tag 0; node 1 waits for "
                       "no receive"),
                std::string::npos)
          << w;
    }
  }
}

TEST(Engine, ARunWithinItsBudgetIsUnchangedByIt) {
  // An exchange of 10 packets: a budget it stays within changes nothing; one event less stops it.
  const RunStats free = run(
      simple_machine(), Topology::hypercube(1), [](Node& n) { return exchange(n, 10); }, 1);
  Engine e(simple_machine(), Topology::hypercube(1), budget(free.events + free.resumes));
  const RunStats bounded = e.run([](Node& n) { return exchange(n, 10); });
  EXPECT_EQ(bounded.time, free.time);
  EXPECT_EQ(bounded.events, free.events);
  Engine tight(simple_machine(), Topology::hypercube(1), budget(free.events - 1));
  EXPECT_THROW(tight.run([](Node& n) { return exchange(n, 10); }), BudgetError);
}

TEST(Engine, AMemoryBudgetStopsARunWhoseProcessHoldsMore) {
  // Any process holds more than 1 byte: the first reading of resident memory (after 65,536
  // events, resumes and awaits) stops the run that would otherwise never end.
  EngineOptions o = budget(0);
  o.max_resident_bytes = 1;
  Engine e(simple_machine(), Topology::hypercube(1), o);
  try {
    e.run([](Node& n) { return livelock(n, 1); });
    FAIL() << "no budget error";
  } catch (const BudgetError& err) {
    EXPECT_EQ(err.budget(), BudgetError::Budget::memory);
    EXPECT_NE(std::string(err.what()).find("the memory budget of 0 KiB is spent ("), std::string::npos) << err.what();
  }
}

TEST(Engine, TheStopFlagEndsARunAtTheNextCheck) {
  std::atomic<int> stop{0};
  Engine e(simple_machine(), Topology::hypercube(1), budget(0, &stop));
  stop.store(15);
  try {
    e.run([](Node& n) { return livelock(n, 1); });
    FAIL() << "not interrupted";
  } catch (const Interrupted& i) {
    EXPECT_EQ(i.signal(), 15);
  }
}

TEST(Engine, UnreceivedMessagesAreCounted) {
  auto proc = [](Node& self) -> Task<> {
    return [](Node& s) -> Task<> {
      if (s.id() == 0) co_await s.send(0, Buffer::sized(1));
    }(self);
  };
  EXPECT_EQ(run(simple_machine(), Topology::hypercube(1), proc).unreceived_messages, 1);
}

// A tie (RunStats::slot_ties, docs/simgrid.md "Ties"): on a one-port 2-cube, nodes 1 and 2 both
// send to node 0. At the same picosecond they tie once (one of them queues behind the other's
// request of that instant), with packet trains or without. When node 2 first computes for one
// t_a, it asks later: it still queues, behind a packet that asked earlier, which is no tie. And a
// packet that had waited since t = 0 and got the slot at a packet boundary is no tie for the
// sender's own next packet either (node 1's 3 packets against node 2's, all from t = 0).
TEST(Engine, SlotTiesCountSameInstantRequestsFromTwoNodes) {
  auto proc = [](std::int64_t delay_flops, std::int64_t elements) {
    return [=](Node& self) -> Task<> {
      return [](Node& s, std::int64_t f, std::int64_t m) -> Task<> {
        if (s.id() == 1) co_await s.send(0, Buffer::sized(m));
        if (s.id() == 2) {
          if (f > 0) co_await s.compute(f);
          co_await s.send(1, Buffer::sized(m));
        }
        if (s.id() == 0) {
          auto a = s.recv(0);
          auto b = s.recv(1);
          co_await all_of(a, b);
        }
      }(self, delay_flops, elements);
    };
  };
  for (const bool trains : {true, false}) {
    SCOPED_TRACE(trains ? "trains" : "per packet");
    auto go = [&](std::int64_t f, std::int64_t m, std::int64_t B) {
      EngineOptions o;
      o.packet_elements = B;
      o.packet_trains = trains;
      Engine e(simple_machine(), Topology::hypercube(2), o);
      return e.run(proc(f, m));
    };
    EXPECT_EQ(go(0, 1, 1).slot_ties, 1);
    EXPECT_EQ(go(1, 1, 1).slot_ties, 0);
    EXPECT_EQ(go(1, 1, 1).queued_transmissions, 1);
    EXPECT_EQ(go(0, 3, 1).slot_ties, 1);  // only the first request ties; later packets alternate
  }
}

namespace {
// Node 0 sends 10 elements to node 1 (at once, and again after node 1 has posted its receive).
Task<> ping(Node& self, Log* log) {
  if (self.id() == 0) {
    co_await self.send(0, Buffer::sized(10));
    log->times[0].push_back(self.now());
    co_await self.delay(Time::ps(5000));
    co_await self.send(0, Buffer::sized(10));
    log->times[0].push_back(self.now());
  } else if (self.id() == 1) {
    co_await self.delay(Time::ps(3000));  // the first message arrived at 1,100 (+ o_send)
    co_await self.recv(0);
    log->times[1].push_back(self.now());
    co_await self.recv(0);  // posted before the second arrives
    log->times[1].push_back(self.now());
  }
}
}  // namespace

// docs/model.md "Node software": o_send before a message enters the network, o_recv after it is
// in (or after the receive is posted, if it came earlier), t_call on every compute; each on the
// critical path as overhead_s, which with the rest accounts for the whole time.
TEST(Engine, NodeSoftwareOverheadsAreChargedOnTheirOperationsChains) {
  Machine m = simple_machine();  // tau 1000, t_c 10: a 10-element packet takes 1,100 ps
  m.o_send = Time::ps(200);
  m.o_recv = Time::ps(30);
  Log log;
  const RunStats s = run(m, Topology::hypercube(1), [&](Node& n) { return ping(n, &log); });
  // Send 1: o_send 200, then the packet 1,100: done at 1,300. Send 2 starts at 6,300: 7,600.
  EXPECT_EQ(log.times[0], (std::vector<Time>{Time::ps(1300), Time::ps(7600)}));
  // Receive 1 posted at 3,000 after the message came in (1,300): o_recv from 3,000. Receive 2
  // posted at 3,030, the message in at 7,600: o_recv from then.
  EXPECT_EQ(log.times[1], (std::vector<Time>{Time::ps(3030), Time::ps(7630)}));
  EXPECT_EQ(s.time, Time::ps(7630));
  EXPECT_EQ(s.critical_path.overheads, Time::ps(200 + 200 + 30));  // node 0's two o_send, then o_recv
  EXPECT_EQ(s.critical_path.time(m), s.time);

  Machine c = simple_machine();
  c.t_call = Time::ps(11);
  const RunStats w = run(c, Topology::hypercube(2), local_work);  // two computes (5 flops, 0 flops)
  EXPECT_EQ(w.time, Time::ps(5 * 3 + 4 * 7 + 100 + 2 * 11));
  EXPECT_EQ(w.critical_path.overheads, Time::ps(22));
}

TEST(Engine, NodeSoftwareOverheadsOfZeroChangeNothing) {
  Log a;
  const Topology t = Topology::hypercube(1);
  const RunStats x = run(simple_machine(), t, [&](Node& n) { return ping(n, &a); });
  EXPECT_EQ(a.times[0], (std::vector<Time>{Time::ps(1100), Time::ps(7200)}));
  EXPECT_EQ(a.times[1], (std::vector<Time>{Time::ps(3000), Time::ps(7200)}));
  EXPECT_EQ(x.critical_path.overheads, Time{});
}

// The event queue (sim/kernel/event_queue.hpp) gives events in exactly a binary heap's order, for
// a mix of pushes in order at few instants (its runs), out of order at one instant (a train's
// key made earlier) and at more instants than it keeps runs for (its spill heap), interleaved
// with pops as the run loop does.
TEST(EventQueue, GivesTheBinaryHeapsOrderForEveryMixOfPushes) {
  using cubesim::detail::before;
  using cubesim::detail::Event;
  const auto later = [](const Event& a, const Event& b) { return before(b, a); };
  cubesim::detail::EventQueue q;  // one queue for every mix: clear() must leave it as new
  std::uint32_t subs = 0;         // keys made earlier get a sub of their own: every key unique
  for (const int instants : {1, 3, 40, 200}) {
    for (const int disorder : {0, 5, 50}) {
      std::uint64_t x = 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(instants * 131 + disorder + 1);
      const auto rnd = [&](std::uint64_t n) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x % n;
      };
      std::vector<Event> heap;
      std::int64_t now = 0;
      std::uint64_t seq = 0;
      std::vector<Event> got, want;
      for (int step = 0; step < 20000; ++step) {
        if (rnd(100) < 55 || heap.empty()) {
          Event e{now + static_cast<std::int64_t>(rnd(static_cast<std::uint64_t>(instants))) * 10, now, seq++, 0, 0, 1};
          if (rnd(100) < static_cast<std::uint64_t>(disorder)) {  // a key made earlier
            e.pushed = now - static_cast<std::int64_t>(rnd(5));
            e.seq = rnd(seq);
            e.sub = ++subs;
          }
          q.push(e);
          heap.push_back(e);
          std::push_heap(heap.begin(), heap.end(), later);
        } else {
          ASSERT_EQ(q.size(), heap.size());
          std::pop_heap(heap.begin(), heap.end(), later);
          want.push_back(heap.back());
          heap.pop_back();
          const Event top = q.top();
          got.push_back(q.pop());
          ASSERT_EQ(top.seq, got.back().seq);
          now = got.back().time;
        }
      }
      while (heap.size() > 100) {  // most of the rest; clear() drops what is left
        std::pop_heap(heap.begin(), heap.end(), later);
        want.push_back(heap.back());
        heap.pop_back();
        got.push_back(q.pop());
      }
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i].time, want[i].time) << "instants " << instants << ", disorder " << disorder << ", event " << i;
        ASSERT_EQ(got[i].pushed, want[i].pushed) << i;
        ASSERT_EQ(got[i].seq, want[i].seq) << i;
        ASSERT_EQ(got[i].sub, want[i].sub) << i;
      }
      q.clear();
      EXPECT_TRUE(q.empty());
      EXPECT_EQ(q.size(), 0U);
    }
  }
}

// A run that never empties -- events at one instant that keep making more at that instant --
// holds only what is pending, not every event it gave (the queue's memory stays bounded).
TEST(EventQueue, AnInstantThatKeepsMakingEventsStaysSmall) {
  using cubesim::detail::Event;
  cubesim::detail::EventQueue q;
  std::uint64_t seq = 0;
  for (int i = 0; i < 4; ++i) q.push(Event{5, 0, seq++, 0, 0, 1});
  for (int i = 0; i < 200000; ++i) {
    const Event e = q.pop();
    ASSERT_EQ(e.seq, static_cast<std::uint64_t>(i));  // in the order pushed
    q.push(Event{5, 5, seq++, 0, 0, 1});
    ASSERT_EQ(q.size(), 4U);
  }
  EXPECT_LE(q.capacity(), 2 * 4096U + 64U);
}
