// Relay trains (docs/performance.md "Relay trains"): a stream relayed down a tree (Node::relay) is
// carried through every relay by two events an edge instead of one a packet, with every result the
// per-packet relays give; whatever meets a train (a transmission on its links, a receive of its
// messages) makes the engine run again without relay trains, with the same results.
#include <gtest/gtest.h>

#include "helpers.hpp"

using namespace cubesim;
using cubesim::test::simple_machine;

namespace {

const PortModel kAllPorts{PortKind::all, 0};

/// The SBT of the n-cube rooted at 0, relayed: node x's parent is across its lowest 1-bit, its
/// children across the dimensions below it (all of them at the root).
Task<> sbt_relay(Node& self, std::int64_t len, std::vector<Buffer>* got) {
  const NodeId x = self.id();
  const int n = self.topology().dim();
  int parent = -1;
  for (int d = 0; d < n; ++d)
    if ((x >> d) & 1) {
      parent = d;
      break;
    }
  std::vector<int> children;
  for (int d = (parent < 0 ? n : parent) - 1; d >= 0; --d) children.push_back(d);
  Buffer data = x == 0 ? Buffer::make(len, true, [](std::int64_t i) { return static_cast<Element>(i); }) : Buffer{};
  (*got)[static_cast<std::size_t>(x)] = co_await self.relay(parent, std::move(children), std::move(data), len, 7);
}

/// The same, and node 0 also sends one message of 5 elements on port 0 at `at` (tag 99), which
/// node 1 receives: it wants a link the root's train holds.
Task<> sbt_relay_and_a_message(Node& self, std::int64_t len, std::vector<Buffer>* got, Time at) {
  std::vector<Task<>> strands;
  strands.push_back(sbt_relay(self, len, got));
  if (self.id() == 0)
    strands.push_back([](Node& self, Time at) -> Task<> {
      co_await self.delay(at);
      co_await self.send(0, Buffer::sized(5), 99);
    }(self, at));
  if (self.id() == 1) strands.push_back([](Node& self) -> Task<> { co_await self.recv(0, 99); }(self));
  co_await all_of(std::move(strands));
}

using Outcome = cubesim::test::EngineOutcome;
using cubesim::test::expect_same_results;

}  // namespace

TEST(RelayTrains, ARelayedTreeIsOneTrainARelayAndGivesThePerPacketResults) {
  for (const std::int64_t len : {3, 10, 64, 67}) {
    for (const std::int64_t B : {1, 4}) {
      Machine m = simple_machine(kAllPorts);
      m.tau_msg = Time::ps(30);
      auto f = [len](Node& node, std::vector<Buffer>* got) { return sbt_relay(node, len, got); };
      const Outcome pp = cubesim::test::run_cube(m, 5, B, false, f), tr = cubesim::test::run_cube(m, 5, B, true, f);
      SCOPED_TRACE("len " + std::to_string(len) + " B " + std::to_string(B));
      expect_same_results(tr.st, pp.st);
      EXPECT_EQ(pp.st.relay_trains, 0);
      const std::int64_t K = (len + B - 1) / B;
      EXPECT_EQ(tr.st.relay_trains, K >= 3 ? 16 : 0);  // the root and the 15 inner relays of the 5-cube's SBT
      EXPECT_EQ(tr.st.relay_train_aborts, 0);
      if (K >= 3) {
        EXPECT_EQ(tr.st.events, 2 * 31);  // packet 0 and the last packet on each of 31 edges
      }
      EXPECT_EQ(pp.st.events, 31 * K);
      for (std::size_t x = 0; x < 32; ++x) {
        ASSERT_EQ(tr.got[x].size(), len);
        for (std::int64_t i = 0; i < len; ++i) EXPECT_EQ(tr.got[x].values()[i], static_cast<Element>(i));
      }
    }
  }
}

TEST(RelayTrains, ATransmissionOnATrainsLinkMakesTheRunAgainPerPacket) {
  const Machine m = simple_machine(kAllPorts);
  // Packets of 4 elements take tau + 4 t_c = 1,040 ps a hop; the root's stream of 25 packets
  // holds port 0 until 26,000 ps. The other message wants it at its start, within it, at its last
  // instant (its delay ends before the last packet's end in the event order) and after it.
  for (const std::int64_t at : {0, 1, 5555, 25999, 26000, 50000}) {
    auto f = [at](Node& node, std::vector<Buffer>* got) {
      return sbt_relay_and_a_message(node, 100, got, Time::ps(at));
    };
    const Outcome pp = cubesim::test::run_cube(m, 3, 4, false, f), tr = cubesim::test::run_cube(m, 3, 4, true, f);
    SCOPED_TRACE("message at " + std::to_string(at) + " ps");
    expect_same_results(tr.st, pp.st);
    EXPECT_EQ(tr.st.relay_train_aborts, at <= 26000 ? 1 : 0);
    for (std::size_t x = 0; x < 8; ++x) EXPECT_EQ(tr.got[x].size(), 100);
  }
}

TEST(RelayTrains, AReceiveOfATrainsMessagesMakesTheRunAgainPerPacket) {
  const Machine m = simple_machine(kAllPorts);
  // Node 1 also receives one message with the relay's tag from node 0 at 500 ps: per packet it
  // takes the packet that comes next, and the relay the extra message node 0 sends at the end.
  auto f = [](Node& node, std::vector<Buffer>* got) -> Task<> {
    std::vector<Task<>> strands;
    strands.push_back(sbt_relay(node, 40, got));
    if (node.id() == 1)
      strands.push_back([](Node& self) -> Task<> {
        co_await self.delay(Time::ps(500));
        co_await self.recv(0, 7);
      }(node));
    if (node.id() == 0)
      strands.push_back([](Node& self) -> Task<> {
        co_await self.delay(Time::ps(10000));
        co_await self.send(0, Buffer::make(4, true, [](std::int64_t) { return Element{-1}; }), 7);
      }(node));
    co_await all_of(std::move(strands));
  };
  const Outcome pp = cubesim::test::run_cube(m, 3, 4, false, f), tr = cubesim::test::run_cube(m, 3, 4, true, f);
  expect_same_results(tr.st, pp.st);
  EXPECT_EQ(tr.st.relay_train_aborts, 1);
}
