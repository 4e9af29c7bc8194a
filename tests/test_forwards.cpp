// Forwards (sim/node.hpp): one-message relays and receives without a coroutine each. They must be
// exactly the coroutines they stand for (routing::pipelined_path's relay and destination of a path
// of one packet): the same results and the same events, on every port model and with node software.
#include <gtest/gtest.h>

#include "algorithms/collectives/tree_routing.hpp"
#include "helpers.hpp"

using namespace cubesim;
using cubesim::test::simple_machine;

namespace {

/// Every node's block (S elements, values 100 x + i) goes to x XOR (N - 1) along dimensions 0, 1,
/// .., n - 1, one packet, tag 1 + source: node x is the source of its own path, a relay of n - 1
/// others and the destination of one. `forwards`: this node's relays and receive as Forwards,
/// begun in the order of the sources (as the transposition does); otherwise a pipelined_path
/// coroutine each. `late`: they begin after a delay, when what they receive has arrived (the own
/// send, then, goes first as a request both ways).
Task<> paths_across(Node& self, std::int64_t S, bool forwards, bool late, std::vector<Buffer>* got) {
  const NodeId x = self.id();
  const int n = self.topology().dim();
  std::vector<int> dims;
  for (int d = 0; d < n; ++d) dims.push_back(d);
  std::vector<NodeId> sources{x};  // the sources whose path passes x: x, then those that reach x at hop h
  for (int h = 1; h <= n; ++h) sources.push_back(x ^ ((NodeId{1} << h) - 1));
  const Buffer mine = Buffer::make(S, true, [&](std::int64_t i) { return static_cast<Element>(100 * x + i); });
  std::vector<Buffer> out(sources.size());
  // `late`: the own send goes first as a request, the parts after the delay; otherwise the own
  // send is a part (a request where `forwards`, else the source's coroutine).
  Request own;
  if (late) own = self.start(self.send(dims[0], mine.slice(0, S), static_cast<int>(1 + x)));
  if (late) co_await self.delay(Time::ps(1'000'000));
  routing::PathParts parts(self, sources.size(), forwards);
  for (std::size_t i = 0; i < sources.size(); ++i)
    if (!late || sources[i] != x)
      parts.add(dims, sources[i], static_cast<int>(1 + sources[i]), S, sources[i] == x ? mine : Buffer{}, &out[i]);
  co_await parts.done();
  if (late) co_await own;
  (*got)[static_cast<std::size_t>(x)] = std::move(out.back());  // the path that ends here: x's last source
}

}  // namespace

TEST(Forwards, AreTheRelayAndReceiveCoroutinesTheyStandForEventsIncluded) {
  const int n = 4;
  for (const PortModel ports : {PortModel{PortKind::all, 0}, PortModel{PortKind::one, 1}}) {
    for (const bool software : {false, true}) {
      for (const auto& c : {std::pair<std::int64_t, bool>{1, false}, {6, false}, {6, true}}) {
        const std::int64_t S = c.first;  // (named copies: clang does not capture structured bindings)
        const bool late = c.second;
        Machine m = simple_machine(ports, 8);
        m.tau_msg = Time::ps(30);
        if (software) {
          m.o_send = Time::ps(50);
          m.o_recv = Time::ps(70);
        }
        SCOPED_TRACE(std::string(ports.kind == PortKind::all ? "all-port" : "one-port") +
                     (software ? ", o_send/o_recv" : "") + ", S " + std::to_string(S) + (late ? ", late" : ""));
        auto f = [S, late](bool fw) {
          return [S, late, fw](Node& node, std::vector<Buffer>* got) { return paths_across(node, S, fw, late, got); };
        };
        const auto co = cubesim::test::run_cube(m, n, 8, true, f(false));
        const auto fw = cubesim::test::run_cube(m, n, 8, true, f(true));
        cubesim::test::expect_same_results(fw.st, co.st);
        EXPECT_EQ(fw.st.events, co.st.events);
        EXPECT_GT(fw.st.time, Time{});
        const NodeId N = NodeId{1} << n;
        for (NodeId x = 0; x < N; ++x) {
          const Buffer& b = fw.got[static_cast<std::size_t>(x)];
          ASSERT_EQ(b.size(), S) << "node " << x;
          for (std::int64_t i = 0; i < S; ++i) EXPECT_EQ(b.values()[i], static_cast<Element>(100 * (x ^ (N - 1)) + i));
        }
      }
    }
  }
}

TEST(Forwards, RefuseMoreRelaysThanTheyWereMadeForAndPortsWithoutALink) {
  const Machine m = simple_machine({PortKind::all, 0});
  auto f = [](Node& node, std::vector<Buffer>*) -> Task<> {
    Forwards relays(node, 1);
    relays.add(0, 1, 3);
    EXPECT_THROW(relays.add(1, 0, 4), std::logic_error);
    Forwards other(node, 2);
    EXPECT_THROW(other.add(0, 7, 5), std::out_of_range);  // a 2-cube has ports 0 and 1
    EXPECT_THROW(other.receive(9, 5, nullptr), std::out_of_range);
    co_await node.send(0, Buffer::sized(1), 3);  // feeds the relay of the neighbour across port 0
    co_await relays;                             // ours sent on across port 1 what came across 0
    co_await node.recv(1, 3);                    // what the relay across port 1 sent on
  };
  const auto r = cubesim::test::run_cube(m, 2, 8, true, f);
  EXPECT_EQ(r.st.messages, 8);
}
