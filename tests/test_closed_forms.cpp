// Messages in closed form (docs/performance.md "Messages in closed form"): on an all-port
// store-and-forward machine a message to a neighbour over a free link takes no event; its send and
// its receive complete at the key its end event would have had, and the processes resume there.
// Every result is the per-packet engine's; whatever meets such a message before its end (another
// transmission on its link) makes the engine run again without closed forms.
#include <gtest/gtest.h>

#include "helpers.hpp"
#include "sim/match_table.hpp"

using namespace cubesim;
using cubesim::test::simple_machine;

namespace closed_forms_test {

const PortModel kAllPorts{PortKind::all, 0};

using Outcome = cubesim::test::EngineOutcome;
using cubesim::test::expect_same_results;

Buffer values(std::int64_t len, NodeId from, int step) {
  return Buffer::make(len, true, [=](std::int64_t i) { return static_cast<Element>(from * 1000 + step * 100 + i); });
}

/// n steps; in step s every node exchanges with its neighbours across every dimension, a message
/// of len + (x + d + s) % 3 elements each way (sizes differ, so ends differ and tie), after a
/// computation of x % 3 flops (so nodes start their steps at different times). Each node keeps the
/// sum of what it received.
Task<> exchanges(Node& self, std::int64_t len, std::vector<Buffer>* got) {
  const NodeId x = self.id();
  const int n = self.topology().dim();
  Element sum = 0;
  for (int s = 0; s < n; ++s) {
    co_await self.compute(x % 3);
    std::vector<Op> ops;
    for (int d = 0; d < n; ++d) {
      ops.push_back(self.send(d, values(len + (x + d + s) % 3, x, s)));
      ops.push_back(self.recv(d));
    }
    co_await all_of(ops);
    for (int d = 0; d < n; ++d) {
      const Buffer b = ops[static_cast<std::size_t>(2 * d + 1)].take();
      EXPECT_EQ(b.size(), len + ((x ^ (NodeId{1} << d)) + d + s) % 3);
      for (const Element e : b.values()) sum += e;
    }
  }
  (*got)[static_cast<std::size_t>(x)] = Buffer::make(1, true, [=](std::int64_t) { return sum; });
}

TEST(ClosedForms, ExchangesOnEveryPortGiveThePerPacketResultsWithFewerEvents) {
  for (const std::int64_t len : {1, 4, 13}) {
    for (const std::int64_t B : {1, 4, 64}) {
      for (const bool ties : {true, false}) {
        Machine m = simple_machine(kAllPorts);
        m.t_a = Time::ps(ties ? 0 : 7);
        if (!ties) m.tau_msg = Time::ps(30);
        auto f = [len](Node& node, std::vector<Buffer>* got) { return exchanges(node, len, got); };
        const Outcome pp = cubesim::test::run_cube(m, 4, B, false, f), cf = cubesim::test::run_cube(m, 4, B, true, f);
        SCOPED_TRACE("len " + std::to_string(len) + " B " + std::to_string(B) + (ties ? " ties" : ""));
        expect_same_results(cf.st, pp.st);
        EXPECT_EQ(pp.st.closed_form_messages, 0);
        EXPECT_EQ(cf.st.closed_form_messages, 16 * 4 * 4);  // every message: 16 nodes, 4 steps, 4 ports
        EXPECT_EQ(cf.st.closed_form_aborts, 0);
        EXPECT_LT(cf.st.events, pp.st.events);
        EXPECT_LE(cf.st.resume_events, cf.st.resumes);
        for (std::size_t x = 0; x < 16; ++x) EXPECT_EQ(cf.got[x].values()[0], pp.got[x].values()[0]);
      }
    }
  }
}

TEST(ClosedForms, ASecondMessageOnTheLinkBeforeTheFirstEndsMakesTheRunAgain) {
  // Two strands of node 0 send to node 1: the first at 0 (two packets, in closed form: it holds
  // the link until its end), the second `gap` later. Before that end, and at it (the second's
  // delay ends first in the event order), the second meets the first: the run is made again.
  const Machine m = simple_machine(kAllPorts);
  const std::int64_t end1 = (m.tau * 2 + m.tau_msg + m.t_c * 8).count();
  for (const std::int64_t gap : {std::int64_t{0}, std::int64_t{1}, end1 - 1, end1, end1 + 1, 10 * end1}) {
    auto f = [gap](Node& self, std::vector<Buffer>* got) -> Task<> {
      if (self.id() == 0) {
        std::vector<Task<>> strands;
        strands.push_back([](Node& self) -> Task<> { co_await self.send(0, values(8, 0, 0)); }(self));
        strands.push_back([](Node& self, std::int64_t gap) -> Task<> {
          co_await self.delay(Time::ps(gap));
          co_await self.send(0, values(3, 0, 1));
        }(self, gap));
        co_await all_of(std::move(strands));
      }
      if (self.id() == 1) {
        (*got)[1] = co_await self.recv(0);
        const Buffer b = co_await self.recv(0);
        EXPECT_EQ(b.size(), 3);
      }
    };
    const Outcome pp = cubesim::test::run_cube(m, 1, 4, false, f), cf = cubesim::test::run_cube(m, 1, 4, true, f);
    SCOPED_TRACE("gap " + std::to_string(gap));
    expect_same_results(cf.st, pp.st);
    EXPECT_EQ(cf.st.closed_form_aborts, gap <= end1 ? 1 : 0);
    EXPECT_EQ(cf.st.closed_form_messages, gap <= end1 ? 0 : 2);  // the report of the run made again, if any
    ASSERT_EQ(cf.got[1].size(), 8);
    EXPECT_EQ(cf.got[1].values()[7], 7);
  }
}

TEST(ClosedForms, ARequestReceivesAMessageInClosedFormAtItsEnd) {
  // Node 0's message of 20 packets ends at 20 * (tau + 4 t_c); node 1 starts a receive request
  // before that end, at it, or after it, and awaits it later still (or at once).
  const Machine m = simple_machine(kAllPorts);
  const std::int64_t end = 20 * (m.tau + m.t_c * 4).count();
  for (const std::int64_t at : {std::int64_t{0}, std::int64_t{5}, end - 1, end, end + 1}) {
    for (const std::int64_t wait : {std::int64_t{0}, std::int64_t{7}, end}) {
      auto f = [at, wait](Node& self, std::vector<Buffer>* got) -> Task<> {
        if (self.id() == 0) co_await self.send(0, values(80, 0, 0));
        if (self.id() == 1) {
          co_await self.delay(Time::ps(at));
          Request r = self.start(self.recv(0));
          if (wait > 0) co_await self.delay(Time::ps(wait));
          (*got)[1] = co_await r;
          co_await self.send(0, values(1, 1, 0));  // its chain: the receive's, or the process's
        }
        if (self.id() == 0) co_await self.recv(0);
      };
      const Outcome pp = cubesim::test::run_cube(m, 1, 4, false, f), cf = cubesim::test::run_cube(m, 1, 4, true, f);
      SCOPED_TRACE("request at " + std::to_string(at) + " awaited " + std::to_string(wait) + " ps later");
      expect_same_results(cf.st, pp.st);
      EXPECT_GE(cf.st.closed_form_messages, 1);
      ASSERT_EQ(cf.got[1].size(), 80);
      EXPECT_EQ(cf.got[1].values()[79], 79);
    }
  }
}

TEST(ClosedForms, AtATieOfTimesTheWaiterKeepsTheChainOfTheFirstEvent) {
  // Node 1 sends node 0 200 elements at 0: tau + 200 t_c = 3,000 ps. Node 0 waits 2,000 ps, then
  // sends node 1 an empty message (tau: it also ends at 3,000 ps) and receives. Its two
  // completions tie; the per-packet engine keeps the one whose end event comes first (the receive:
  // its message started first), so node 0's chain -- the run's critical path, as node 0 then
  // computes and ends last -- is 1 start-up and 200 elements, not the wait. In closed form node 0's
  // send completes first (when it starts), its receive later (when posted): the key decides.
  Machine m = simple_machine(kAllPorts);
  m.tau = Time::ps(1000);
  m.t_c = Time::ps(10);
  m.tau_msg = Time{};
  m.t_a = Time::ps(1);
  auto f = [](Node& self, std::vector<Buffer>*) -> Task<> {
    if (self.id() == 0) {
      co_await self.delay(Time::ps(2000));
      auto s = self.send(0, Buffer::sized(0));
      auto r = self.recv(0);
      co_await all_of(s, r);
      co_await self.compute(1);
    } else {
      auto s = self.send(0, values(200, 1, 0));
      auto r = self.recv(0);
      co_await all_of(s, r);
    }
  };
  const Outcome pp = cubesim::test::run_cube(m, 1, 256, false, f), cf = cubesim::test::run_cube(m, 1, 256, true, f);
  expect_same_results(cf.st, pp.st);
  EXPECT_EQ(cf.st.closed_form_messages, 2);
  EXPECT_EQ(pp.st.critical_path.element_transfers, 200);
  EXPECT_EQ(pp.st.critical_path.delays, Time{});
}

/// tau = 1,000 ps, t_c = 10 ps, t_a = 1 ps: a message of 10 elements takes 1,100 ps, as long as
/// 1,100 flops, so a message's chain and a computation's tie.
Machine tie_machine() {
  Machine m = simple_machine(kAllPorts);
  m.tau = Time::ps(1000);
  m.t_c = Time::ps(10);
  m.t_a = Time::ps(1);
  m.tau_msg = Time{};
  return m;
}

RunStats run_plain(bool trains, int n, const std::function<Task<>(Node&)>& f) {
  EngineOptions o{1 << 20, true};
  o.packet_trains = trains;
  Engine e(tie_machine(), Topology::hypercube(n), o);
  return e.run(f);
}

TEST(ClosedForms, TiesOfAComputationAndAMessageKeepTheChainOfTheFirstEvent) {
  // Node 1 sends 10 elements (1,100 ps) to node 0, which computes 1,100 flops beside its receive
  // (the computation's end comes first in the event order: its chain is kept); then the other
  // way round, node 1 computing beside its send while node 0 only receives.
  auto receiver_computes = [](Node& self) -> Task<> {
    if (self.id() == 0) {
      auto c = self.compute(1100);
      auto r = self.recv(0);
      co_await all_of(c, r);
    } else {
      co_await self.send(0, Buffer::sized(10));
    }
  };
  auto sender_computes = [](Node& self) -> Task<> {
    if (self.id() == 0) {
      co_await self.recv(0);
    } else {
      auto c = self.compute(1100);
      auto s = self.send(0, Buffer::sized(10));
      co_await all_of(c, s);
    }
  };
  for (const auto& f :
       {std::function<Task<>(Node&)>(receiver_computes), std::function<Task<>(Node&)>(sender_computes)}) {
    const RunStats pp = run_plain(false, 1, f), cf = run_plain(true, 1, f);
    expect_same_results(cf, pp);
    EXPECT_EQ(cf.closed_form_messages, 1);
  }
}

TEST(ClosedForms, ResumesOwedAtOneEndAreTakenTogetherBeforeEitherRuns) {
  // Node 1 computes 1,100 flops beside a send to node 0 (both end at 1,100 ps). Node 0's strand B
  // posts its receive after the message left (two resumes owed at its end: B's, then node 1's)
  // and on resuming sends to itself, which completes strand A at once. Per packet the end event
  // readies B and node 1 before either runs, so node 1 runs before A; A then ends last and the
  // run's critical path is node 0's.
  auto f = [](Node& self) -> Task<> {
    if (self.id() == 0) {
      std::vector<Task<>> t;
      t.push_back([](Node& self) -> Task<> { co_await self.recv_from(self.id(), 9); }(self));
      t.push_back([](Node& self) -> Task<> {
        co_await self.delay(Time::ps(1));
        co_await self.recv(0);
        co_await self.send_to(self.id(), Buffer::sized(1), 9);
      }(self));
      co_await all_of(std::move(t));
    } else {
      auto c = self.compute(1100);
      auto s = self.send(0, Buffer::sized(10));
      co_await all_of(c, s);
    }
  };
  const RunStats pp = run_plain(false, 1, f), cf = run_plain(true, 1, f);
  expect_same_results(cf, pp);
  EXPECT_EQ(cf.closed_form_messages, 1);
  EXPECT_EQ(cf.resume_events, 2);
}

TEST(ClosedForms, ADeadlockIsReportedAtThePerPacketEnginesTime) {
  // Both nodes send (in closed form) and wait for a receive with a tag nobody sends: the
  // per-packet engine's clock reaches the messages' end (1.1 ns) before it finds the deadlock.
  auto f = [](Node& self) -> Task<> {
    auto s = self.send(0, Buffer::sized(10));
    auto r = self.recv(0, 5);
    co_await all_of(s, r);
  };
  std::string pp, cf;
  try {
    run_plain(false, 1, f);
  } catch (const DeadlockError& e) {
    pp = e.what();
  }
  try {
    run_plain(true, 1, f);
  } catch (const DeadlockError& e) {
    cf = e.what();
  }
  EXPECT_NE(pp.find("deadlock at t=1.1 ns"), std::string::npos) << pp;
  EXPECT_EQ(cf, pp);
}

TEST(MatchTable, AKeyBetweenNeighboursLivesInOnePlaceSoItsListsStayWhole) {
  // A 2-cube: node 0's (receiver, port) slots hold the first tag that uses them; a second tag at
  // once goes to the hash table, and stays there after the first frees its slot.
  detail::MatchTable t(16, 2, 4);
  detail::MatchTable::Slot& a = t.find_or_add(0, 1, 5);
  a.msg_head = 11;
  detail::MatchTable::Slot& b = t.find_or_add(0, 1, 6);  // the same port, another tag
  EXPECT_NE(&a, &b);
  b.msg_head = 22;
  EXPECT_EQ(&t.find_or_add(0, 1, 5), &a);
  a.msg_head = detail::MatchLists::kNone;
  t.erase(a);
  EXPECT_EQ(t.find(0, 1, 5), nullptr);
  const detail::MatchTable::Slot* again = t.find(0, 1, 6);  // still in the hash table...
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->msg_head, 22);
  EXPECT_EQ(t.find_or_add(0, 1, 6).msg_head, 22);  // ... and not made anew in the free slot
  // Keys that are not between neighbours (and receivers outside the table) go to the hash table.
  t.find_or_add(0, 3, 5).msg_head = 33;
  t.find_or_add(0, -1, 5).msg_head = 44;
  EXPECT_EQ(t.find(0, 3, 5)->msg_head, 33);
  EXPECT_EQ(t.find(0, -1, 5)->msg_head, 44);
  int live = 0;
  t.for_each([&](const detail::MatchTable::Slot&) { ++live; });
  EXPECT_EQ(live, 3);
  // A key moves back into its direct slot only once the hash table no longer holds it.
  detail::MatchTable::Slot& h = t.find_or_add(0, 1, 6);
  h.msg_head = detail::MatchLists::kNone;
  t.erase(h);
  detail::MatchTable::Slot& d = t.find_or_add(0, 1, 6);
  EXPECT_EQ(d.msg_head, detail::MatchLists::kNone);
  EXPECT_EQ(t.find(0, 1, 6), &d);
}

}  // namespace closed_forms_test
