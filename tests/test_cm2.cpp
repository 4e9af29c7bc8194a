// The CM-2 network model (sim/net/cm2_router.cpp, preset cm2; docs/model.md "The CM-2"): 16
// processors share a router chip on a cube of chips. Every transpose and every neighbour-only
// algorithm runs on it and verifies; what differs from cm-router (one router a processor) is
// checked message by message.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "app/runner.hpp"
#include "helpers.hpp"
#include "machines/machine_loader.hpp"

using namespace cubesim;

namespace {

Machine preset(const std::string& name) { return machine_from_json(*preset_json(name), name, "", true); }

cubesim::Setup setup_on(const Machine& m, int n) {
  cubesim::Setup s;
  s.machine = m;
  s.topology = Topology::hypercube(n);
  s.params.M = 5;
  s.params.B = 1;
  s.params.P = s.params.Q = s.params.R = std::int64_t{1} << n;
  s.params.N1 = std::int64_t{1} << (n / 2);
  test::fill_grid_params(s.params, n, 17);
  return s;
}

RunOutcome run_on(const AlgorithmInfo& info, const cubesim::Setup& s) {
  RunPoint rp;
  rp.setup = s;
  return run_point(rp, info, true);
}

bool is_transpose(const std::string& name) {
  return name.rfind("transpose.", 0) == 0 || name.rfind("convert.", 0) == 0 || name.rfind("permute.", 0) == 0;
}

Task<> one_message(Node& self, NodeId to, std::int64_t elements) {
  if (self.id() == 0) co_await self.send_to(to, Buffer::sized(elements));
  if (self.id() == to) co_await self.recv_from(0);
}

/// The processors of chip 0 (0..15) swap one element in pairs (p, p xor 1): on the chip.
Task<> on_chip_swap(Node& self) {
  if (self.id() >= 16) co_return;
  co_await self.send_to(self.id() ^ 1, Buffer::sized(1));
  co_await self.recv_from(self.id() ^ 1);
}

}  // namespace

TEST(Cm2, EveryTransposeAndEveryNeighbourOnlyAlgorithmRunsAndVerifies) {
  // Neighbour-only: the algorithm sends to cube neighbours only (no routed message on the
  // store-and-forward iPSC with the same parameters). On the CM-2 a neighbour is on the same chip
  // (dimensions 0-3) or across one wire of the chips' cube (4-6): a 7-cube has 8 chips. Before
  // the kernel kept messages from overtaking (Engine::deliver), transpose.spt received a later
  // packet's block first here and failed its data check.
  const Registry reg = make_registry();
  const Machine cm2 = preset("cm2"), nx = preset("ipsc-nx");
  int transposes = 0, neighbour_only = 0, refused = 0, routed = 0;
  for (const AlgorithmInfo* info : reg.all()) {
    const int n = test::takes_matrix(*info) ? 6 : 7;
    cubesim::Setup on_nx = setup_on(nx, n), on_cm2 = setup_on(cm2, n);
    if (info->check(on_cm2).has_value() || info->check(on_nx).has_value()) {
      EXPECT_FALSE(is_transpose(info->name)) << info->name << " refuses the CM-2: " << info->check(on_cm2)->message;
      ++refused;
      continue;
    }
    const RunOutcome ref = run_on(*info, on_nx);
    ASSERT_TRUE(ref.error.empty()) << info->name << " on ipsc-nx: " << ref.error;
    const bool neighbours = ref.stats.routed_messages == 0;
    if (!neighbours && !is_transpose(info->name)) {
      ++routed;
      continue;
    }
    const RunOutcome o = run_on(*info, on_cm2);
    EXPECT_TRUE(o.error.empty()) << info->name << ": " << o.error;
    EXPECT_TRUE(o.verified) << info->name << ": " << o.verify_message;
    EXPECT_EQ(o.stats.unreceived_messages, 0) << info->name;
    EXPECT_LE(o.stats.router_peak_buffer, cm2.router_buffers) << info->name;
    (is_transpose(info->name) ? transposes : neighbour_only) += 1;
  }
  std::cout << "[ cm2 ] " << transposes << " transposes and " << neighbour_only
            << " other neighbour-only algorithms verified; " << routed << " routed ones not run, " << refused
            << " refused the setup\n";
  EXPECT_GE(transposes, 12);
  EXPECT_GE(neighbour_only, 25);
}

TEST(Cm2, AMessageWithinAChipCrossesNoWire) {
  const Machine m = preset("cm2");
  const Time cycle = m.t_hop + m.t_c;  // B = 1
  // 0 -> 15: the same chip. The start-up (11.36 us) ends in cycle 2 (of 5.112 us); the chip takes
  // the message in at the start of cycle 3 and it leaves the router at the end of that cycle.
  Engine e(m, Topology::hypercube(8), EngineOptions{1, false});
  const RunStats st = e.run([&](Node& n) { return one_message(n, 15, 1); });
  EXPECT_EQ(st.packet_hops, 0);
  EXPECT_EQ(st.time, cycle * 4);
  EXPECT_EQ(st.critical_path.time(m), st.time);
  // 0 -> 16: the next chip, across the chips' dimension 0 (processor dimension 4); cycle 3 serves
  // chip dimension 3 of the 4-cube of chips, so it waits for cycle 4 (dimension 0).
  Engine e2(m, Topology::hypercube(8), EngineOptions{1, false});
  const RunStats st2 = e2.run([&](Node& n) { return one_message(n, 16, 1); });
  EXPECT_EQ(st2.packet_hops, 1);
  EXPECT_EQ(st2.time, cycle * 5);
  EXPECT_EQ(st2.max_link_load, 1);
  EXPECT_EQ(st2.busiest_link_port, 4) << "the wire is the processors' dimension 4 at the chip's first processor";
}

TEST(Cm2, AChipTakesOneMessageACycleFromItsSixteenProcessors) {
  const Machine m = preset("cm2");
  const Time cycle = m.t_hop + m.t_c;
  // All 16 start-ups end in cycle 2 (11.36 us of 5.112 us cycles); the chip takes one message in
  // each of cycles 3..18 (the oldest first), and each leaves the router at the end of the cycle
  // that took it in: the last at the end of cycle 18.
  Engine one(m, Topology::hypercube(8), EngineOptions{1, false});
  const RunStats st = one.run([](Node& n) { return on_chip_swap(n); });
  EXPECT_EQ(st.packet_hops, 0);
  EXPECT_EQ(st.time, cycle * 19);
  // Without the limit (router_injections 0) the 5 buffers do not matter (nothing stays in them):
  // all 16 enter in cycle 3 and leave at its end.
  Machine all = m;
  all.router_injections = 0;
  Engine e(all, Topology::hypercube(8), EngineOptions{1, false});
  const RunStats st2 = e.run([](Node& n) { return on_chip_swap(n); });
  EXPECT_EQ(st2.time, cycle * 4);
  // Two injections a cycle: 8 cycles from cycle 3.
  all.router_injections = 2;
  Engine two(all, Topology::hypercube(8), EngineOptions{1, false});
  EXPECT_EQ(two.run([](Node& n) { return on_chip_swap(n); }).time, cycle * 11);
}

TEST(Cm2, OneProcessorARouterIsTheBitSerialRouter) {
  // The CM-2 model with 1 processor per router and no injection limit is cm-router's model: the
  // same runs, statistic for statistic (the router core is shared; this pins the grouping).
  const Registry reg = make_registry();
  Machine cm = preset("cm-router");
  Machine as_cm2 = cm;
  as_cm2.network = "cm2_router";
  as_cm2.processors_per_router = 1;
  as_cm2.router_injections = 0;
  for (const char* a : {"transpose.router_2d", "transpose.router", "transpose.exchange", "alltoall.sbt"}) {
    const AlgorithmInfo* info = reg.find(a);
    ASSERT_NE(info, nullptr);
    const RunOutcome x = run_on(*info, setup_on(cm, 6)), y = run_on(*info, setup_on(as_cm2, 6));
    ASSERT_TRUE(x.error.empty() && y.error.empty()) << a;
    EXPECT_EQ(x.stats.time, y.stats.time) << a;
    EXPECT_EQ(x.stats.critical_path, y.stats.critical_path) << a;
    EXPECT_EQ(x.stats.router_cycles, y.stats.router_cycles) << a;
    EXPECT_EQ(x.stats.router_collisions, y.stats.router_collisions) << a;
    EXPECT_EQ(x.stats.router_detours, y.stats.router_detours) << a;
    EXPECT_EQ(x.stats.packet_hops, y.stats.packet_hops) << a;
  }
}

TEST(Cm2, SixteenProcessorsARouterAreSlowerThanOneOnTheFullMachine) {
  // TR-572 §8.2.2, Fig. 16's size: a 256 x 256 matrix of 32-bit elements, one a processor, 2^16
  // processors. The CM-2's 4,096 chips share 12 wires each among 16 processors where cm-router
  // gives every processor 16 of its own: the CM-2 takes longer, by less than the 16x of its
  // wires (docs/model.md "The CM-2").
  const Registry reg = make_registry();
  const AlgorithmInfo* info = reg.find("transpose.router_2d");
  cubesim::Setup a = setup_on(preset("cm2"), 16), b = setup_on(preset("cm-router"), 16);
  a.params.P = a.params.Q = b.params.P = b.params.Q = 256;
  a.data_mode = b.data_mode = false;
  const RunOutcome cm2 = run_on(*info, a), cm1 = run_on(*info, b);
  ASSERT_TRUE(cm2.error.empty() && cm1.error.empty());
  const double per_cycle_cm2 = cm2.stats.time.seconds() / (a.machine.t_hop + a.machine.t_c).seconds();
  const double per_cycle_cm1 = cm1.stats.time.seconds() / (b.machine.t_hop + b.machine.t_c).seconds();
  std::cout << "[ cm2 ] 256 x 256 on 2^16: cm2 " << cm2.stats.time.seconds() * 1e3 << " ms (" << per_cycle_cm2
            << " dimension cycles), cm-router " << cm1.stats.time.seconds() * 1e3 << " ms (" << per_cycle_cm1 << ")\n";
  EXPECT_GT(per_cycle_cm2, per_cycle_cm1);
  EXPECT_LT(per_cycle_cm2, 16 * per_cycle_cm1);
}

TEST(Cm2, TheChipSizeMustBeAPowerOfTwo) {
  Machine m = preset("cm2");
  m.processors_per_router = 12;
  EXPECT_THROW(Engine(m, Topology::hypercube(8), EngineOptions{1, false}), std::invalid_argument);
  m.processors_per_router = 512;  // more processors a chip than the 8-cube has
  EXPECT_THROW(Engine(m, Topology::hypercube(8), EngineOptions{1, false}), std::invalid_argument);
}

TEST(Cm2, MessagesFromOneNodeToAnotherAreReceivedInTheOrderSent) {
  // On a router a later message can overtake an earlier one (a detour, another chip's buffers):
  // transpose.spt's packets of one path on a 10-cube of the CM-2 do. The kernel holds a message
  // that arrives before an earlier one from the same node with the same tag (MPI's
  // non-overtaking rule), so the receives get their blocks in order and the data verifies;
  // without it this run fails its data check.
  // The quick tier (the sanitizer run, 4x slower) takes an 8-cube: the same code, fewer overtakings.
  const Registry reg = make_registry();
  const int n = test::quick_tier() ? 8 : 10;
  cubesim::Setup s = setup_on(preset("cm2"), n);
  s.params.P = s.params.Q = std::int64_t{1} << n;
  const RunOutcome o = run_on(*reg.find("transpose.spt"), s);
  ASSERT_TRUE(o.error.empty()) << o.error;
  EXPECT_TRUE(o.verified) << o.verify_message;
}
