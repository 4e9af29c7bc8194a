// Packet trains (docs/performance.md "Packet trains"): every registered algorithm gives the same
// report with and without them, to the picosecond and in every field but the engine's own
// counters (events), over a grid of packet sizes, port models and costs.
#include <filesystem>
#include <map>
#include <set>

#include "app/config.hpp"
#include "app/report.hpp"
#include "helpers.hpp"
#include "tests/cli_helpers.hpp"
#include "tests/report_compare.hpp"

namespace cubesim {
namespace {

namespace fs = std::filesystem;

using test::comparable;
using test::regress_configs;

/// The variants of a regress point the grid runs: as configured, with packets of 1 and 3
/// elements (the most trains and breaks), on the other port model, and with the simple machine's
/// costs (tau = 100 t_c: packets of one size end together, so ties abound).
std::vector<std::pair<std::string, Setup>> variants(const Setup& s) {
  std::vector<std::pair<std::string, Setup>> v{{"as configured", s}};
  for (std::int64_t b : {1, 3}) {
    Setup t = s;
    t.params.B = std::min<std::int64_t>(b, s.params.B);
    v.emplace_back("B=" + std::to_string(t.params.B), t);
  }
  Setup ports = s;
  ports.machine.ports =
      s.machine.ports.kind == PortKind::all ? PortModel{PortKind::one, 1} : PortModel{PortKind::all, 0};
  v.emplace_back("ports " + ports.machine.ports.name(), ports);
  const Setup simple = test::with_simple_costs(s);
  v.emplace_back("simple costs, B=" + std::to_string(simple.params.B), simple);
  return v;
}

/// One regress config, every point in every variant, both ways (one test a config, so that each
/// takes seconds; ctest runs them in parallel). The quick tier (CUBESIM_TEST_TIER=quick, the
/// sanitizer run) takes every sixteenth point of each config (the first always).
class RegressConfig : public ::testing::TestWithParam<std::string> {};

TEST_P(RegressConfig, GivesTheSameReportWithAndWithoutTrains) {
  const Registry reg = make_registry();
  const fs::path f = fs::path(CUBESIM_SOURCE_DIR) / "configs" / "regress" / (GetParam() + ".json");
  const Experiment ex = load_experiment(f.string(), reg);
  ASSERT_FALSE(ex.runs.empty());
  const std::size_t stride = test::quick_tier() ? 16 : 1;
  std::int64_t runs = 0, trains = 0, breaks = 0, events_packets = 0, events_trains = 0, closed = 0, closed_aborts = 0;
  RunLimits per_packet, with_trains;
  per_packet.packet_trains = false;
  for (std::size_t i = 0; i < ex.runs.size(); i += stride) {
    const RunPoint& p = ex.runs[i];
    for (const auto& [label, setup] : variants(p.setup)) {
      RunPoint rp = p;
      rp.setup = setup;
      const RunOutcome a = run_point(rp, *p.info, true, nullptr, per_packet);
      const RunOutcome b = run_point(rp, *p.info, true, nullptr, with_trains);
      ASSERT_EQ(comparable(a).dump(), comparable(b).dump()) << f.filename() << " " << p.info->name << " " << label;
      EXPECT_EQ(a.stats.packet_trains, 0);
      // Trains and closed forms take no more of the network's events than packets do; a message in
      // closed form has none, but the resumes it owes may each take one.
      EXPECT_EQ(a.stats.resume_events, 0);
      EXPECT_LE(b.stats.events - b.stats.resume_events, a.stats.events) << f.filename() << " " << label;
      EXPECT_LE(b.stats.resume_events, b.stats.resumes) << f.filename() << " " << label;
      closed += b.stats.closed_form_messages;
      closed_aborts += b.stats.closed_form_aborts;
      trains += b.stats.packet_trains;
      breaks += b.stats.train_breaks;
      events_packets += a.stats.events;
      events_trains += b.stats.events;
      ++runs;
    }
  }
  std::cout << "[ trains   ] " << GetParam() << ": " << runs << " runs both ways: " << trains << " trains, " << breaks
            << " broken, " << closed << " messages in closed form (" << closed_aborts << " runs made again); events "
            << events_packets << " per packet, " << events_trains << " with trains\n";
}

INSTANTIATE_TEST_SUITE_P(PacketTrains, RegressConfig, ::testing::ValuesIn(regress_configs()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

/// Every registered algorithm has a regress config, so the test above covers it; and the grid
/// exercises both trains and trains broken by a packet queueing at the receiver (checked on two
/// configs that do both: 3,392 trains and 840 breaks in matmul2d-outer, 913 and 20 in shift-ring).
TEST(PacketTrains, EveryRegisteredAlgorithmHasARegressConfigAndTheGridFormsAndBreaksTrains) {
  const Registry reg = make_registry();
  std::set<std::string> covered;
  for (const std::string& name : regress_configs()) {
    const Experiment ex =
        load_experiment((fs::path(CUBESIM_SOURCE_DIR) / "configs" / "regress" / (name + ".json")).string(), reg);
    for (const RunPoint& p : ex.runs) covered.insert(p.info->name);
  }
  for (const AlgorithmInfo* info : reg.all())
    EXPECT_TRUE(covered.count(info->name)) << info->name << " has no regress config";
  std::int64_t trains = 0, breaks = 0;
  RunLimits with_trains;
  for (const char* name : {"matmul2d-outer.json", "shift-ring.json"}) {
    const Experiment ex = load_experiment((fs::path(CUBESIM_SOURCE_DIR) / "configs" / "regress" / name).string(), reg);
    for (const RunPoint& p : ex.runs)
      for (const auto& [label, setup] : variants(p.setup)) {
        RunPoint rp = p;
        rp.setup = setup;
        const RunOutcome b = run_point(rp, *p.info, false, nullptr, with_trains);
        trains += b.stats.packet_trains;
        breaks += b.stats.train_breaks;
      }
  }
  EXPECT_GT(trains, 1000);
  EXPECT_GT(breaks, 10);
}

TEST(PacketTrains, PerPacketOnTheCommandLineGivesTheSameReportWithMoreEvents) {
  const test::Result trains = test::run_cli("run configs/quickstart.json --json --reproducible");
  const test::Result packets = test::run_cli("run configs/quickstart.json --json --reproducible --per-packet");
  ASSERT_EQ(trains.code, 0) << trains.err;
  ASSERT_EQ(packets.code, 0) << packets.err;
  ojson a = ojson::parse(trains.out), b = ojson::parse(packets.out);
  ASSERT_EQ(a["runs"].size(), b["runs"].size());
  std::int64_t fewer = 0;
  for (std::size_t i = 0; i < a["runs"].size(); ++i) {
    ojson& sa = a["runs"][i]["simulated"];
    ojson& sb = b["runs"][i]["simulated"];
    EXPECT_LE(sa["events"].get<std::int64_t>(), sb["events"].get<std::int64_t>());
    fewer += sb["events"].get<std::int64_t>() - sa["events"].get<std::int64_t>();
    sa.erase("events");
    sb.erase("events");
    sa.erase("resumes");  // a relay train resumes its relays once, not once a packet
    sb.erase("resumes");
  }
  EXPECT_EQ(a.dump(), b.dump());
  EXPECT_GT(fewer, 0) << "the quickstart's one-port messages of 60 packets are trains";
}

/// The event window reads ahead only while many events pend (sim/engine.hpp `Engine::ReadAhead`),
/// a hint that changes nothing: forced on (CUBESIM_READAHEAD=1), forced off (0), and switching
/// with the pending events give the same report, events and resumes included, on runs whose
/// pending events cross the threshold both ways (a window that still held events when reading
/// ahead stopped, and dropped or reordered them, would change the time or the verdict).
TEST(ReadAhead, ChangesNoFieldWhetherOnOffOrSwitchingWithThePendingEvents) {
  // allgather.sbt all-port on 2^12 nodes, M = 2: 49,152 events; reading ahead starts while the n
  // messages of each node pend and stops again at the end (2 switches).
  const Registry reg = make_registry();
  const Experiment ex =
      load_experiment((fs::path(CUBESIM_SOURCE_DIR) / "configs" / "regress" / "allgather-sbt.json").string(), reg);
  ASSERT_FALSE(ex.runs.empty());
  RunPoint rp = ex.runs.front();
  rp.setup.topology = Topology::hypercube(12);
  rp.setup.machine.ports = PortModel{PortKind::all, 0};
  rp.setup.params.M = 2;
  auto run = [&](const char* mode) {
    if (mode != nullptr)
      ::setenv("CUBESIM_READAHEAD", mode, 1);
    else
      ::unsetenv("CUBESIM_READAHEAD");
    RunOutcome o = run_point(rp, *rp.info, true, nullptr, RunLimits{});
    ::unsetenv("CUBESIM_READAHEAD");
    return o;
  };
  const RunOutcome on = run("1"), off = run("0"), by_pending = run(nullptr);
  auto all = [](const RunOutcome& o) {
    ojson j = comparable(o);
    j["events"] = o.stats.events;
    j["resumes"] = o.stats.resumes;
    return j.dump();
  };
  EXPECT_TRUE(on.verified) << on.error;
  EXPECT_EQ(all(on), all(off));
  EXPECT_EQ(all(on), all(by_pending));
  EXPECT_EQ(on.stats.read_ahead_switches, 0);
  EXPECT_EQ(off.stats.read_ahead_switches, 0);
  std::cout << "[ read-ahead ] allgather.sbt 2^12: " << by_pending.stats.read_ahead_switches << " switches, "
            << by_pending.stats.events << " events\n";
  EXPECT_GE(by_pending.stats.read_ahead_switches, 2) << "on, then off again";
}

}  // namespace
}  // namespace cubesim
