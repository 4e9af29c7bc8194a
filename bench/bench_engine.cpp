// Engine speed: events per second for 2^10- and 2^16-node runs in timing-only mode.
// Run: ./build/cubesim_bench  (speed is measured here, never asserted in timed tests)
#include <benchmark/benchmark.h>

#include "sim/runner.hpp"

using namespace cubesim;

namespace {

void run_algorithm(benchmark::State& state, const char* algorithm, PortModel ports, std::int64_t M) {
  const Registry reg = make_registry();
  const AlgorithmInfo* info = reg.find(algorithm);
  RunPoint rp;
  rp.setup.machine.name = "ipsc-nx-like";
  rp.setup.machine.tau = Time::ps(1'500'000'000);
  rp.setup.machine.t_c = Time::ps(4'000'000);
  rp.setup.machine.packet_elements = 256;
  rp.setup.machine.ports = ports;
  rp.setup.topology = Topology::hypercube(static_cast<int>(state.range(0)));
  rp.setup.params.M = M;
  rp.setup.params.B = 256;
  rp.setup.data_mode = false;
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

}  // namespace

BENCHMARK(BM_AllgatherSbt)->Arg(10)->Arg(16)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_BroadcastSbtAllPort)->Arg(10)->Arg(16)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_AlltoallSbt)->Arg(10)->Unit(benchmark::kMillisecond)->Iterations(1);

BENCHMARK_MAIN();
