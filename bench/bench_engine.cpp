// Engine speed: events per second for 2^10- and 2^16-node runs in timing-only mode, and the
// cycle engine beside the SimGrid backend on the same configs at 2^6, 2^10 and 2^14 nodes.
// Run: ./build/cubesim_bench  (speed is measured here, never asserted in timed tests)
//      ./build/cubesim_bench --benchmark_filter=Engines   (the side-by-side comparison only)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>

#include "app/runner.hpp"

using namespace cubesim;

namespace {

RunPoint point(PortModel ports, int n, std::int64_t M) {
  RunPoint rp;
  rp.setup.machine.name = "ipsc-nx-like";
  rp.setup.machine.tau = Time::ps(1'500'000'000);
  rp.setup.machine.t_c = Time::ps(4'000'000);
  rp.setup.machine.t_a = Time::ps(33'333'333);
  rp.setup.machine.packet_elements = 256;
  rp.setup.machine.ports = ports;
  rp.setup.topology = Topology::hypercube(n);
  rp.setup.params.M = M;
  rp.setup.params.B = 256;
  rp.setup.data_mode = false;
  return rp;
}

void run_algorithm(benchmark::State& state, const char* algorithm, PortModel ports, std::int64_t M) {
  const Registry reg = make_registry();
  const AlgorithmInfo* info = reg.find(algorithm);
  const RunPoint rp = point(ports, static_cast<int>(state.range(0)), M);
  std::int64_t events = 0;
  for (auto _ : state) {
    RunOutcome o = run_point(rp, *info, true);
    if (!o.error.empty() || !o.verified || !o.relation_holds) state.SkipWithError("run failed");
    events += o.stats.events;
    benchmark::DoNotOptimize(o.stats.time);
  }
  state.counters["events"] = benchmark::Counter(static_cast<double>(events) / static_cast<double>(state.iterations()));
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["nodes"] = static_cast<double>(rp.setup.topology.size());
}

void BM_AllgatherSbt(benchmark::State& s) { run_algorithm(s, "allgather.sbt", {PortKind::one, 1}, s.range(0) == 10 ? 64 : 1); }
void BM_BroadcastSbtAllPort(benchmark::State& s) { run_algorithm(s, "broadcast.sbt", {PortKind::all, 0}, 4096); }
void BM_AlltoallSbt(benchmark::State& s) { run_algorithm(s, "alltoall.sbt", {PortKind::one, 1}, 1); }

// Both engines on one config: the cycle engine in this process, SimGrid in a fork of its own
// (sim/simgrid/isolate.hpp). Wall times are each engine's own simulation (SimGrid's includes
// building its platform); wall_ratio = SimGrid / cycle.
void run_engines(benchmark::State& state, const char* algorithm, PortModel ports, std::int64_t M) {
  const Registry reg = make_registry();
  const AlgorithmInfo* info = reg.find(algorithm);
  const RunPoint rp = point(ports, static_cast<int>(state.range(0)), M);
  double cycle_wall = 0, sg_wall = 0, worst = 0;
  std::int64_t events = 0, activities = 0;
  long rss = 0;
  for (auto _ : state) {
    RunOutcome o = run_point(rp, *info, true, EngineKind::both);
    if (!o.error.empty() || !o.verified || !o.simgrid || !o.simgrid->error.empty() || !o.simgrid->verified) {
      state.SkipWithError("run failed");
      break;
    }
    cycle_wall += o.stats.wall_s;
    sg_wall += o.simgrid->stats.wall_s;
    events += o.stats.events;
    activities += o.simgrid->stats.activities;
    rss = std::max(rss, o.simgrid->max_rss_kib);
    worst = std::max(worst, std::fabs(relative_difference(o.simgrid->stats.time_s, o.stats.time)));
  }
  state.counters["nodes"] = static_cast<double>(rp.setup.topology.size());
  state.counters["cycle_wall_s"] = cycle_wall / static_cast<double>(state.iterations());
  state.counters["simgrid_wall_s"] = sg_wall / static_cast<double>(state.iterations());
  state.counters["wall_ratio"] = cycle_wall > 0 ? sg_wall / cycle_wall : 0.0;
  state.counters["cycle_events_per_s"] = cycle_wall > 0 ? static_cast<double>(events) / cycle_wall : 0.0;
  state.counters["simgrid_activities_per_s"] = sg_wall > 0 ? static_cast<double>(activities) / sg_wall : 0.0;
  state.counters["simgrid_rss_MiB"] = static_cast<double>(rss) / 1024.0;
  state.counters["rel_diff"] = worst;
}

void BM_EnginesBroadcastSbtAllPort(benchmark::State& s) { run_engines(s, "broadcast.sbt", {PortKind::all, 0}, 1000); }
void BM_EnginesAllgatherSbtOnePort(benchmark::State& s) { run_engines(s, "allgather.sbt", {PortKind::one, 1}, 1); }

}  // namespace

BENCHMARK(BM_EnginesBroadcastSbtAllPort)->Arg(6)->Arg(10)->Arg(14)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_EnginesAllgatherSbtOnePort)->Arg(6)->Arg(10)->Arg(14)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_AllgatherSbt)->Arg(10)->Arg(16)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_BroadcastSbtAllPort)->Arg(10)->Arg(16)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_AlltoallSbt)->Arg(10)->Unit(benchmark::kMillisecond)->Iterations(1);

BENCHMARK_MAIN();
