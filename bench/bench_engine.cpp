// Engine speed (docs/performance.md). Speed is measured here, never asserted in timed tests.
//
//   ./build/cubesim_bench --benchmark_filter=Workload   the workloads beside the bare heap
//   ./build/cubesim_bench --benchmark_filter=BareHeap   the reference alone, at four live sizes
//   ./build/cubesim_bench --benchmark_filter=Engines    the cycle engine beside SimGrid
//
// Each workload runs in a child process of its own (fork), so that its peak resident memory is
// its own; timing mode, packet trains on. Its counters:
//   events_per_s   events the engine took from its queue per second of the run
//   heap_per_s     a bare binary-heap push+pop loop (the engine's event type and order) at the
//                  workload's peak queue length, measured in the same benchmark run
//   heap_ratio     events_per_s / heap_per_s: how close the engine runs to its queue's limit
//   packet_hops_per_s  the per-packet work a run stands for (trains carry many hops per event)
//   hop_ratio      packet_hops_per_s / heap_per_s: the per-packet work beside the heap (issue 35's
//                  measure; equal to heap_ratio where every packet-hop is an event)
//   wall_s, peak_MiB, bytes_per_node (resident growth of the child / nodes), live (peak queue)
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "app/runner.hpp"
#include "machines/machine_loader.hpp"
#include "sim/resources.hpp"

using namespace cubesim;

namespace {

// ---- The reference: a bare binary heap of the engine's events --------------------------------

/// The engine's event (sim/engine.hpp Engine::Event) and its order, copied: the reference must
/// cost what the engine's queue costs and no more.
struct Event {
  std::int64_t time, pushed;
  std::uint64_t seq, payload;
  std::uint32_t sub;
  std::uint8_t kind, phase;
};
struct Later {
  bool operator()(const Event& a, const Event& b) const {
    if (a.time != b.time) return a.time > b.time;
    if (a.pushed != b.pushed) return a.pushed > b.pushed;
    if (a.seq != b.seq) return a.seq > b.seq;
    if (a.sub != b.sub) return a.sub > b.sub;
    return a.phase > b.phase;
  }
};

/// Push+pop pairs per second with `live` events in the heap: pop the earliest, push one a
/// random time later (the hold model of event-queue benchmarks), for at least `seconds`.
double bare_heap_rate(std::int64_t live, double seconds = 0.3) {
  live = std::max<std::int64_t>(live, 1);
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<std::int64_t> step(1, 1'000'000);
  std::vector<Event> heap;
  heap.reserve(static_cast<std::size_t>(live) + 1);
  std::uint64_t seq = 0;
  for (std::int64_t i = 0; i < live; ++i) {
    heap.push_back(Event{step(rng), 0, seq++, 0, 0, 0, 0});
    std::push_heap(heap.begin(), heap.end(), Later{});
  }
  std::int64_t pairs = 0;
  const auto t0 = std::chrono::steady_clock::now();
  double elapsed = 0;
  std::uint64_t sink = 0;
  while (elapsed < seconds) {
    for (int i = 0; i < 65536; ++i) {
      std::pop_heap(heap.begin(), heap.end(), Later{});
      Event e = heap.back();
      heap.pop_back();
      sink += e.payload;
      e.pushed = e.time;
      e.time += step(rng);
      e.seq = seq++;
      heap.push_back(e);
      std::push_heap(heap.begin(), heap.end(), Later{});
    }
    pairs += 65536;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  benchmark::DoNotOptimize(sink);
  return static_cast<double>(pairs) / elapsed;
}

void BM_BareHeap(benchmark::State& state) {
  double rate = 0;
  for (auto _ : state) rate = bare_heap_rate(state.range(0));
  state.counters["push_pop_per_s"] = rate;
  state.counters["live"] = static_cast<double>(state.range(0));
}

// ---- Workloads -------------------------------------------------------------------------------

const Registry& registry() {
  static const Registry r = make_registry();
  return r;
}

/// The iPSC/860-like costs of TR-530's tables, or a preset's (the Connection Machine).
RunPoint point(const char* algorithm, PortModel ports, int n, std::int64_t M, const char* preset = nullptr) {
  RunPoint rp;
  if (preset != nullptr) {
    rp.setup.machine = machine_from_json(*preset_json(preset), preset, "", true);
  } else {
    rp.setup.machine.name = "ipsc-nx-like";
    rp.setup.machine.tau = Time::ps(1'500'000'000);
    rp.setup.machine.t_c = Time::ps(4'000'000);
    rp.setup.machine.t_a = Time::ps(33'333'333);
    rp.setup.machine.packet_elements = 256;
    rp.setup.machine.ports = ports;
  }
  rp.setup.topology = Topology::hypercube(n);
  rp.setup.params.M = M;
  rp.setup.params.B = rp.setup.machine.packet_elements;
  rp.setup.data_mode = false;
  rp.info = registry().find(algorithm);
  return rp;
}

/// What the child sends back.
struct Measured {
  bool ok = false;
  char error[200] = {};
  std::int64_t events = 0, packet_hops = 0, peak_queue = 0, trains = 0;
  double wall_s = 0;
  std::int64_t base_bytes = 0, peak_bytes = 0;
};

Measured run_in_child(const RunPoint& rp, bool engine_only = false) {
  int fd[2];
  if (pipe(fd) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    Measured m;
    m.base_bytes = resident_bytes();
    RunLimits limits;
    limits.lockstep = !engine_only;  // (the engine's own per-message path: --no-lockstep)
    const RunOutcome o = run_point(rp, *rp.info, true, nullptr, limits);
    if (!o.error.empty() || !o.verified || !o.relation_holds) {
      std::snprintf(m.error, sizeof m.error, "%s",
                    o.error.empty() ? "not verified or relation broken" : o.error.c_str());
    } else {
      m.ok = true;
    }
    m.events = o.stats.events;
    m.packet_hops = o.stats.packet_hops;
    m.peak_queue = o.stats.peak_queue;
    m.trains = o.stats.packet_trains + o.stats.relay_trains;
    m.wall_s = o.stats.wall_s;
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    m.peak_bytes = static_cast<std::int64_t>(ru.ru_maxrss) * 1024;
    const ssize_t w = write(fd[1], &m, sizeof m);
    _exit(w == static_cast<ssize_t>(sizeof m) ? 0 : 1);
  }
  close(fd[1]);
  Measured m;
  const ssize_t r = read(fd[0], &m, sizeof m);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (r != static_cast<ssize_t>(sizeof m)) std::snprintf(m.error, sizeof m.error, "the child died (status %d)", status);
  return m;
}

void workload(benchmark::State& state, const RunPoint& rp, bool engine_only = false) {
  Measured m;
  for (auto _ : state) m = run_in_child(rp, engine_only);
  if (!m.ok) {
    state.SkipWithError(m.error);
    return;
  }
  const double nodes = static_cast<double>(rp.setup.topology.size());
  const double rate = m.wall_s > 0 ? static_cast<double>(m.events) / m.wall_s : 0.0;
  const double heap = bare_heap_rate(m.peak_queue);
  state.counters["nodes"] = nodes;
  state.counters["events"] = static_cast<double>(m.events);
  state.counters["events_per_s"] = rate;
  state.counters["live"] = static_cast<double>(m.peak_queue);
  state.counters["heap_per_s"] = heap;
  state.counters["heap_ratio"] = heap > 0 ? rate / heap : 0.0;
  const double hops = m.wall_s > 0 ? static_cast<double>(m.packet_hops) / m.wall_s : 0.0;
  state.counters["packet_hops_per_s"] = hops;
  state.counters["hop_ratio"] = heap > 0 ? hops / heap : 0.0;
  state.counters["trains"] = static_cast<double>(m.trains);
  state.counters["wall_s"] = m.wall_s;
  state.counters["peak_MiB"] = static_cast<double>(m.peak_bytes) / (1024.0 * 1024.0);
  state.counters["bytes_per_node"] =
      static_cast<double>(std::max<std::int64_t>(m.peak_bytes - m.base_bytes, 0)) / nodes;
}

const PortModel kOne{PortKind::one, 1}, kAll{PortKind::all, 0};

void BM_Workload_AllgatherSbtOnePort_2e12(benchmark::State& s) { workload(s, point("allgather.sbt", kOne, 12, 1)); }
void BM_Workload_AllgatherSbtOnePort_2e16_M16(benchmark::State& s) {
  workload(s, point("allgather.sbt", kOne, 16, 16));
}
void BM_Workload_AlltoallSbtOnePort_2e12(benchmark::State& s) { workload(s, point("alltoall.sbt", kOne, 12, 1)); }
void BM_Workload_BroadcastSbtAllPort_2e16(benchmark::State& s) { workload(s, point("broadcast.sbt", kAll, 16, 4096)); }
void BM_Workload_RoutedAlltoall_2e10(benchmark::State& s) {
  RunPoint rp = point("transpose.router", kOne, 10, 0);
  rp.setup.params.P = rp.setup.params.Q = 1024;
  workload(s, rp);
}
// TR-572 Figs 16-18 (configs/tr572/fig16-18-cm.json): 256 x 256 on the Connection Machine's router.
void BM_Workload_CmRouterTranspose_2e16(benchmark::State& s) {
  RunPoint rp = point("transpose.router_2d", kOne, 16, 0, "cm-router");
  rp.setup.params.P = rp.setup.params.Q = 256;
  workload(s, rp);
}
void BM_Workload_BroadcastSbtOnePort_2e20(benchmark::State& s) { workload(s, point("broadcast.sbt", kOne, 20, 256)); }

// Issue 35's two size sweeps, 2^8 to 2^16 nodes (the argument is n), about 4 M packet-hops each:
// a workload that takes an event a packet-hop whatever the engine does (the one-port Gray-code
// pipeline: each packet is a message of its own, received and sent on by a loop in the algorithm;
// target: hop_ratio >= 0.5), and a pipelined broadcast that relay trains carry (all-port
// broadcast.sbt, Node::relay; target: hop_ratio >= 2). Since 2026-11-29 the one-port lockstep
// simulator times the pipeline as the runner runs it (an end a packet-hop, in the engine's order:
// docs/lockstep.md); ...Engine is the same run on the engine (--no-lockstep), whose per-message
// path the first measured until then.
std::int64_t sweep_M(int n) { return 256 * std::max<std::int64_t>(64, (std::int64_t{1} << 22) >> n); }
void BM_Workload_PerPacketGrayPipeline(benchmark::State& s) {
  const int n = static_cast<int>(s.range(0));
  workload(s, point("broadcast.gc", kOne, n, sweep_M(n)));
}
void BM_Workload_PerPacketGrayPipelineEngine(benchmark::State& s) {
  const int n = static_cast<int>(s.range(0));
  workload(s, point("broadcast.gc", kOne, n, sweep_M(n)), true);
}
void BM_Workload_PipelinedBroadcastByTrains(benchmark::State& s) {
  const int n = static_cast<int>(s.range(0));
  workload(s, point("broadcast.sbt", kAll, n, sweep_M(n)));
}
// The lockstep simulator (docs/lockstep.md) on one thread: the all-port GCEA(n,N), N - 1 steps of
// n messages a node, M = 16384 (201 M messages on 2^12 nodes). It keeps no event queue (live 0, no
// heap ratio): packet_hops_per_s and events_per_s (node-steps) are its figures.
void BM_Workload_LockstepGceaAllPort(benchmark::State& s) {
  workload(s, point("allgather.gcea", kAll, static_cast<int>(s.range(0)), 16384));
}
// Its one-port form (docs/lockstep.md "One-port"), in the engine's order of events: the hybrid
// (TR-530 §5.1) with k = n / 2, M = 16384, one end and one resume a message (17.2 M on 2^16
// nodes); events_per_s are ends taken.
void BM_Workload_LockstepHybridOnePort(benchmark::State& s) {
  RunPoint rp = point("allgather.hybrid", kOne, static_cast<int>(s.range(0)), 16384);
  rp.setup.params.k = s.range(0) / 2;
  workload(s, rp);
}

// ---- The cycle engine beside SimGrid ---------------------------------------------------------

// Both engines on one config: the cycle engine in this process, SimGrid in a fork of its own
// (sim/simgrid/isolate.hpp). Wall times are each engine's own simulation (SimGrid's includes
// building its platform); wall_ratio = SimGrid / cycle.
void run_engines(benchmark::State& state, const char* algorithm, PortModel ports, std::int64_t M) {
  const RunPoint rp = point(algorithm, ports, static_cast<int>(state.range(0)), M);
  const AlgorithmInfo* info = rp.info;
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

void BM_EnginesBroadcastSbtAllPort(benchmark::State& s) { run_engines(s, "broadcast.sbt", kAll, 1000); }
void BM_EnginesAllgatherSbtOnePort(benchmark::State& s) { run_engines(s, "allgather.sbt", kOne, 1); }

}  // namespace

BENCHMARK(BM_BareHeap)
    ->Arg(1 << 10)
    ->Arg(1 << 12)
    ->Arg(1 << 16)
    ->Arg(1 << 20)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_Workload_AllgatherSbtOnePort_2e12)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Workload_AllgatherSbtOnePort_2e16_M16)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Workload_AlltoallSbtOnePort_2e12)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Workload_BroadcastSbtAllPort_2e16)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Workload_RoutedAlltoall_2e10)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Workload_CmRouterTranspose_2e16)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Workload_BroadcastSbtOnePort_2e20)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Workload_PerPacketGrayPipeline)->DenseRange(8, 16, 2)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Workload_PerPacketGrayPipelineEngine)->DenseRange(8, 16, 2)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Workload_PipelinedBroadcastByTrains)->DenseRange(8, 16, 2)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Workload_LockstepGceaAllPort)->DenseRange(8, 12, 2)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Workload_LockstepHybridOnePort)->DenseRange(8, 16, 4)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_EnginesBroadcastSbtAllPort)->Arg(6)->Arg(10)->Arg(14)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_EnginesAllgatherSbtOnePort)->Arg(6)->Arg(10)->Arg(14)->Unit(benchmark::kMillisecond)->Iterations(1);

BENCHMARK_MAIN();
