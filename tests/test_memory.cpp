// Memory budgets (docs/reliability.md "Budgets"): the heap meter counts what a run allocates and
// frees; each algorithm family's memory model stays within a factor of two of the peak it
// measures; and no run, SimGrid's included, passes --max-memory by more than 10 %.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "app/config.hpp"
#include "app/huge_pages.hpp"
#include "app/runner.hpp"
#include "sim/heap_meter.hpp"
#include "sim/kernel/huge_array.hpp"
#include "sim/resources.hpp"
#include "sim/simgrid/isolate.hpp"
#include "tests/cli_helpers.hpp"

extern char** environ;

namespace cubesim::test {
namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

/// A config of one point; `topology` a JSON object, or a hypercube dimension.
std::string config_on(const std::string& algorithm, const std::string& mode, const std::string& topology,
                      const std::string& params) {
  return R"({"schema": "cubesim.config/1", "name": "memory", "machine": "ipsc-nx",
    "machine_overrides": {"ports": "all"}, "topology": )" +
         topology + R"(, "algorithm": ")" + algorithm + R"(", "params": )" + params + R"(, "mode": ")" + mode +
         R"(", "verify": )" + (mode == "data" ? "true" : "false") + "}";
}
std::string config(const std::string& algorithm, const std::string& mode, int dim, const std::string& params) {
  return config_on(algorithm, mode, R"({"kind": "hypercube", "dim": )" + std::to_string(dim) + "}", params);
}
/// The same in timing mode on a `ports` ("one" or "all") machine.
std::string timing_config(const std::string& algorithm, const std::string& ports, int dim, const std::string& params) {
  std::string text = config(algorithm, "timing", dim, params);
  const std::string all = R"("ports": "all")";
  text.replace(text.find(all), all.size(), R"("ports": ")" + ports + "\"");
  return text;
}

struct Measured {
  int code = -1;
  long peak_kib = 0;  ///< the largest resident memory of cubesim and of its SimGrid child (wait4)
  std::string err;
};

/// Runs the binary with `args`, stdout thrown away, and measures its peak resident memory: wait4's
/// ru_maxrss covers the process and the children it waited for (the SimGrid process).
Measured run_measured(const std::vector<std::string>& args) {
  const std::string err_file = scratch_path("memory_stderr");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> all{CUBESIM_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  Measured m;
  pid_t pid = 0;
  if (posix_spawn(&pid, CUBESIM_BINARY, &fa, nullptr, argv.data(), environ) != 0) return m;
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  struct rusage ru {};
  while (::wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  m.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  m.peak_kib = ru.ru_maxrss;
  m.err = read_all(err_file);
  return m;
}

bool sanitized() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

// A run that would take 1.1 GiB (alltoall.nrsbt, 2^10 nodes, data mode) under a budget of 64 MiB:
// its memory model refuses it before anything is allocated, and the process stays in budget.
TEST(Memory, ASmallBudgetRefusesALargeRunUpFrontNamingTheEstimateAndTheBudget) {
  if (sanitized()) GTEST_SKIP() << "the sanitizer build's resident memory is ASan's shadow, not the run's";
  const std::string cfg = write_temp("a2a.json", config("alltoall.nrsbt", "data", 10, R"({"M": 16})"));
  const Measured r = run_measured({"run", cfg, "--max-memory", "64M"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("/topology: hypercube n=10 (1024 nodes) in data mode needs about 969.3 MiB of memory "
                       "(alltoall.nrsbt's memory model) and "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("under the memory budget of 64.0 MiB (--max-memory)"), std::string::npos) << r.err;
  EXPECT_LE(r.peak_kib * 1024, 64 * kMiB * 11 / 10) << r.err;
}

// The lockstep simulator's estimate only where it will run the point: not where the algorithm's
// factory declines the setup (broadcast.gc all-port: n rotated paths, the engine's; allgather.sbt
// one-port: another process), not with --no-lockstep, not for a traced run.
TEST(Memory, ThePointsTheLockstepSimulatorDoesNotTakeKeepTheEnginesEstimate) {
  const Registry reg = make_registry();
  RunLimits engine;
  engine.lockstep = false;
  for (const auto& [algorithm, ports] : {std::pair{"broadcast.gc", "all"}, {"allgather.sbt", "one"}}) {
    const Experiment ex = parse_experiment(timing_config(algorithm, ports, 10, R"({"M": 64})"), "m.json", reg);
    const RunPoint& point = ex.runs.at(0);
    ASSERT_TRUE(point.info->steps_memory) << algorithm;
    EXPECT_FALSE(lockstep_takes(point, RunLimits{})) << algorithm << " " << ports;
    EXPECT_EQ(point_memory_estimate(point, RunLimits{}), point_memory_estimate(point, engine)) << algorithm;
  }
  const Experiment ex = parse_experiment(timing_config("broadcast.gc", "one", 10, R"({"M": 64})"), "m.json", reg);
  const RunPoint& point = ex.runs.at(0);
  EXPECT_TRUE(lockstep_takes(point, RunLimits{}));
  EXPECT_LT(point_memory_estimate(point, RunLimits{}), point_memory_estimate(point, engine));
  EXPECT_FALSE(lockstep_takes(point, RunLimits{}, true)) << "a traced run is the engine's";
  EXPECT_EQ(point_memory_estimate(point, RunLimits{}, true), point_memory_estimate(point, engine));
}

// A point the lockstep simulator takes is admitted by its own estimate (32 MiB for the one-port
// Gray-code pipeline on 2^16 nodes), not the engine's (160 MiB): a budget of 100 MiB runs it, within
// the budget; the same config with --no-lockstep is refused up front by the engine's model, and a
// budget the lockstep run does not fit in refuses it naming the lockstep simulator's model.
TEST(Memory, ABudgetThatHoldsTheLockstepRunAdmitsItWhereTheEnginesModelWouldNot) {
  if (sanitized()) GTEST_SKIP() << "the sanitizer build's resident memory is ASan's shadow, not the run's";
  const std::string cfg = write_temp("gc.json", timing_config("broadcast.gc", "one", 16, R"({"M": 1024})"));
  const Measured ok = run_measured({"run", cfg, "--max-memory", "100M", "--json"});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_LE(ok.peak_kib * 1024, 100 * kMiB * 11 / 10) << ok.err;
  const Measured engine = run_measured({"run", cfg, "--max-memory", "100M", "--no-lockstep", "--json"});
  EXPECT_EQ(engine.code, 2) << engine.err;
  EXPECT_NE(engine.err.find("needs about 160.0 MiB of memory (broadcast.gc's memory model) and "), std::string::npos)
      << engine.err;
  const Measured small = run_measured({"run", cfg, "--max-memory", "48M", "--json"});
  EXPECT_EQ(small.code, 2) << small.err;
  EXPECT_NE(small.err.find("needs about 32.0 MiB of memory (broadcast.gc's memory model on the lockstep simulator)"),
            std::string::npos)
      << small.err;
}

// A run whose growth the up-front check does not see (here: no check at all, the run started
// directly) is stopped by the heap meter as it allocates, within 10 % of the budget: the budget
// is 48 MiB above what the process held when the run started, and the run would take 1.1 GiB.
TEST(Memory, ARunThatOutgrowsItsBudgetIsStoppedWithinTenPercent) {
  if (!heap::metered()) GTEST_SKIP() << "this build does not count its heap (the sanitizer build: ASan's allocator)";
  const Registry reg = make_registry();
  const Experiment ex = parse_experiment(config("alltoall.nrsbt", "data", 10, R"({"M": 16})"), "a2a.json", reg);
  std::int64_t budget = 0;
  const IsolatedResult r = run_isolated([&]() -> std::string {
    budget = resident_bytes() + 48 * kMiB;
    set_memory_budget(budget);
    RunLimits limits;
    limits.max_resident_bytes = budget;
    const RunOutcome out = run_point(ex.runs[0], *ex.runs[0].info, true, nullptr, limits);
    return std::to_string(budget) + " " + out.error;
  });
  ASSERT_TRUE(r.ok) << r.error;
  const std::int64_t child_budget = std::stoll(r.output.substr(0, r.output.find(' ')));
  EXPECT_NE(r.output.find("the memory budget of"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("is spent: the run asked for"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(--max-memory sets the budget)"), std::string::npos) << r.output;
  EXPECT_LE(r.max_rss_kib * 1024, child_budget * 11 / 10) << r.output;
}

// The SimGrid engine runs in a child process of its own: held to the same budget (the point's
// error names it, exit 1, the other points run), and neither process passes it by 10 %.
TEST(Memory, TheSimGridProcessIsHeldToTheBudget) {
  if (sanitized()) GTEST_SKIP() << "the sanitizer build's resident memory is ASan's shadow, not the run's";
  std::string cfg = config("allgather.nrsbt", "data", 4, R"({"M": 16})");
  cfg.insert(cfg.rfind('}'), R"(, "sweep": {"topology.dim": [4, 9, 5]})");
  const std::string path = write_temp("sg.json", cfg);
  const Measured r = run_measured({"run", path, "--engine", "simgrid", "--max-memory", "64M", "--json"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("the memory budget of 64.0 MiB is spent"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("SimGrid process"), std::string::npos) << r.err;
  EXPECT_LE(r.peak_kib * 1024, 64 * kMiB * 11 / 10) << r.err;
  // Without the budget the same sweep passes.
  EXPECT_EQ(run_measured({"run", path, "--engine", "simgrid", "--max-memory", "0", "--json"}).code, 0);
}

// Each family's memory model against the heap its run takes at its peak, on one mid-size point in
// each mode (heap bytes, counted by the meter: the process's baseline is not the run's). A model
// that drifts more than a factor of two from what it models fails here.
TEST(Memory, EachFamilysEstimateIsWithinAFactorOfTwoOfItsMeasuredPeak) {
  if (!heap::metered()) GTEST_SKIP() << "this build does not count its heap (the sanitizer build: ASan's allocator)";
  struct Point {
    std::string algorithm, mode;
    int dim;  ///< a hypercube's, or 0: `torus`
    std::string params;
    std::string torus;  ///< the shape of a torus, "[64, 64]"
  };
  const std::vector<Point> points = {
      {"broadcast.sbt", "data", 12, R"({"M": 1024})"},
      {"broadcast.sbt", "timing", 14, R"({"M": 1024})"},
      {"broadcast.nrsbt", "data", 11, R"({"M": 1024})"},
      {"broadcast.nrsbt", "timing", 13, R"({"M": 1024})"},
      {"allgather.sbt", "data", 8, R"({"M": 64})"},
      {"allgather.nrsbt", "timing", 12, R"({"M": 64})"},
      {"alltoall.sbt", "data", 8, R"({"M": 64})"},
      {"alltoall.nrsbt", "data", 8, R"({"M": 16})"},
      {"alltoall.nrsbt", "timing", 11, R"({"M": 16})"},
      {"scatter.sbt", "data", 11, R"({"M": 64})"},
      {"reduce.sbt", "data", 12, R"({"M": 1024})"},
      {"allreduce.sbt", "data", 12, R"({"M": 1024})"},
      {"matmul2d.cannon", "data", 6, R"({"P": 512, "Q": 512, "R": 512})"},
      {"transpose.spt", "data", 8, R"({"P": 1024, "Q": 1024})"},
      {"reduce_scatter.sbt", "data", 8, R"({"M": 64})"},
      {"alltosome.sbt", "data", 9, R"({"M": 64, "k": 2})"},
      {"sometoall.sbt", "data", 9, R"({"M": 64, "k": 2})"},
      {"matmul1d.a1.sbt", "data", 5, R"({"P": 512, "Q": 512, "R": 512})"},
      {"permute.bitreverse", "data", 10, R"({"M": 1024})"},
      {"shift.gc", "data", 12, R"({"M": 1024})"},
      {"convert.cyclic", "data", 8, R"({"P": 1024, "Q": 1024})"},
      {"broadcast.pipe", "data", 0, R"({"M": 1024})", "[64, 64]"},
      {"exchange.grid", "data", 0, R"({"M": 1024})", "[32, 32]"},
      {"matmul.foh", "data", 0, R"({"P": 512, "Q": 512, "R": 512})", "[8, 8]"},
  };
  const Registry reg = make_registry();
  for (const Point& p : points) {
    const std::string text =
        p.dim > 0 ? config(p.algorithm, p.mode, p.dim, p.params)
                  : config_on(p.algorithm, p.mode, R"({"kind": "torus", "shape": )" + p.torus + "}", p.params);
    const Experiment ex = parse_experiment(text, "m.json", reg);
    const RunPoint& point = ex.runs.at(0);
    const std::int64_t before = heap::live_bytes();
    heap::reset_peak();
    // The models are the engine's: timing-mode points whose process has a step program run on
    // the lockstep simulator by default, in a fraction of that (allgather.nrsbt on 2^12 nodes: 6.8
    // MiB against the engine's 22), where the estimate is an upper bound.
    RunLimits engine;
    engine.lockstep = false;
    const RunOutcome out = run_point(point, *point.info, p.mode == "data", nullptr, engine);
    ASSERT_TRUE(out.error.empty()) << p.algorithm << ": " << out.error;
    const double measured = static_cast<double>(heap::peak_bytes() - before);
    const double estimate = static_cast<double>(point_memory_estimate(point, engine));
    std::printf("%-18s %-6s n=%-2d %-32s estimate %8.1f MiB, measured %8.1f MiB, ratio %.2f\n", p.algorithm.c_str(),
                p.mode.c_str(), p.dim, p.params.c_str(), estimate / kMiB, measured / kMiB, estimate / measured);
    EXPECT_GT(measured, 4.0 * kMiB) << p.algorithm << ": a mid-size point, large enough to measure";
    EXPECT_LE(estimate, 2 * measured) << p.algorithm << " " << p.mode;
    EXPECT_GE(estimate, measured / 2) << p.algorithm << " " << p.mode;
  }
}

// The lockstep simulators' runs against their own estimate (AlgorithmInfo::steps_memory and the
// simulator's records, sim/lockstep.hpp lockstep_memory): every algorithm with a step program, on
// each port model it has one for, one point each that the simulator takes, within a factor of two
// of the heap it measures. With the engine's model these points were overstated 2 to 40 times
// (printed beside), so a --max-memory that fits the run refused it.
TEST(Memory, EachStepProgramsLockstepEstimateIsWithinAFactorOfTwoOfItsMeasuredPeak) {
  if (!heap::metered()) GTEST_SKIP() << "this build does not count its heap (the sanitizer build: ASan's allocator)";
  struct Point {
    std::string algorithm, ports;
    int dim;
    std::string params;
  };
  const std::vector<Point> points = {
      {"allgather.cra", "one", 12, R"({"M": 16})"},
      {"allgather.cra", "all", 11, R"({"M": 16})"},
      {"allgather.gcea", "one", 12, R"({"M": 16})"},
      {"allgather.gcea", "all", 11, R"({"M": 16})"},
      {"allgather.hybrid", "one", 14, R"({"M": 16, "k": 7})"},
      {"allgather.hybrid", "all", 14, R"({"M": 16, "k": 7})"},
      {"allgather.sbt", "all", 14, R"({"M": 16})"},
      {"allgather.sbnt", "one", 14, R"({"M": 16})"},
      {"allgather.sbnt", "all", 14, R"({"M": 16})"},
      {"allgather.nrsbt", "one", 14, R"({"M": 16})"},
      {"allgather.nrsbt", "all", 14, R"({"M": 16})"},
      {"alltoall.sbnt", "one", 12, R"({"M": 4})"},
      {"alltoall.sbnt", "all", 12, R"({"M": 4})"},
      {"alltoall.nrsbt", "one", 12, R"({"M": 4})"},
      {"alltoall.nrsbt", "all", 12, R"({"M": 4})"},
      {"matmul2d.cannon", "one", 12, R"({"P": 256, "Q": 256, "R": 256})"},
      {"matmul2d.cannon", "all", 12, R"({"P": 256, "Q": 256, "R": 256})"},
      {"matmul2d.dekel", "one", 12, R"({"P": 256, "Q": 256, "R": 256})"},
      {"matmul2d.dekel", "all", 12, R"({"P": 256, "Q": 256, "R": 256})"},
      {"matmul2d.outer", "one", 12, R"({"P": 256, "Q": 256, "R": 256})"},
      {"matmul2d.outer", "all", 12, R"({"P": 256, "Q": 256, "R": 256})"},
      {"broadcast.gc", "one", 16, R"({"M": 1024})"},
      {"broadcast.nesbt", "one", 14, R"({"M": 1024})"},
  };
  const Registry reg = make_registry();
  std::size_t with_program = 0;
  for (const AlgorithmInfo* info : reg.all())
    if (info->steps) ++with_program;
  std::set<std::string> named;
  for (const Point& p : points) named.insert(p.algorithm);
  EXPECT_EQ(named.size(), with_program) << "every algorithm with a step program has a point here";
  for (const Point& p : points) {
    const Experiment ex = parse_experiment(timing_config(p.algorithm, p.ports, p.dim, p.params), "m.json", reg);
    const RunPoint& point = ex.runs.at(0);
    ASSERT_TRUE(point.info->steps_memory) << p.algorithm << " states no memory for its step program";
    const RunLimits limits;
    ASSERT_TRUE(lockstep_takes(point, limits)) << p.algorithm << " " << p.ports;
    const std::int64_t before = heap::live_bytes();
    heap::reset_peak();
    const RunOutcome out = run_point(point, *point.info, false, nullptr, limits);
    ASSERT_TRUE(out.error.empty()) << p.algorithm << ": " << out.error;
    ASSERT_EQ(out.stats.lockstep_runs, 1) << p.algorithm << " " << p.ports << ": the lockstep simulator ran it";
    const double measured = static_cast<double>(heap::peak_bytes() - before);
    const double estimate = static_cast<double>(point_memory_estimate(point, limits));
    RunLimits engine;
    engine.lockstep = false;
    const double engines = static_cast<double>(point_memory_estimate(point, engine));
    std::printf("%-17s %-3s n=%-2d estimate %7.2f MiB, measured %7.2f MiB, ratio %.2f (the engine's model: %.1f)\n",
                p.algorithm.c_str(), p.ports.c_str(), p.dim, estimate / kMiB, measured / kMiB, estimate / measured,
                engines / measured);
    EXPECT_GT(measured, 1.0 * kMiB) << p.algorithm << ": a point large enough to measure";
    EXPECT_LE(estimate, 2 * measured) << p.algorithm << " " << p.ports;
    EXPECT_GE(estimate, measured / 2) << p.algorithm << " " << p.ports;
  }
}

// The meter's count comes back to where it was once a run has freed what it held (every allocation
// counted as it was freed), to within what the threads have not flushed yet.
TEST(Memory, TheHeapMeterCountsARunsAllocationsAndFrees) {
  if (!heap::metered()) GTEST_SKIP() << "this build does not count its heap (the sanitizer build: ASan's allocator)";
  const Registry reg = make_registry();
  const Experiment ex = parse_experiment(config("allgather.sbt", "data", 7, R"({"M": 64})"), "m.json", reg);
  const std::int64_t before = heap::live_bytes();
  heap::reset_peak();
  {
    const RunOutcome out = run_point(ex.runs.at(0), *ex.runs.at(0).info, true, nullptr, RunLimits{});
    ASSERT_TRUE(out.error.empty()) << out.error;
  }
  EXPECT_GT(heap::peak_bytes() - before, 4 * kMiB) << "128 nodes each end with 128 blocks of 64 elements";
  EXPECT_LT(std::abs(heap::live_bytes() - before), 2 * heap::kFlushBytes);
}

}  // namespace
}  // namespace cubesim::test

namespace cubesim::test {
namespace {

// The lockstep simulators' large arrays (sim/kernel/huge_array.hpp): a large one starts on a huge
// page boundary and is counted by the heap meter at its rounded size; a small one is an ordinary
// allocation; the contents survive growth across the threshold, over-aligned elements included.
TEST(HugePages, ALargeArrayIsAlignedToAHugePageAndCountedAndASmallOneIsOrdinary) {
  struct alignas(64) Line {
    std::int64_t v[8];
  };
  detail::HugeArray<std::int64_t> a;
  for (std::int64_t i = 0; i < 1000; ++i) a.push_back(i);
  EXPECT_FALSE(detail::HugeArrayAllocator<std::int64_t>::huge(a.capacity()));
  const std::int64_t before = heap::live_bytes();
  const std::size_t big = detail::kHugeArrayBytes / sizeof(std::int64_t) + 1;
  a.resize(big, -1);
  EXPECT_TRUE(detail::HugeArrayAllocator<std::int64_t>::huge(a.capacity()));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % detail::kHugePage, 0u);
  for (std::int64_t i = 0; i < 1000; ++i) ASSERT_EQ(a[static_cast<std::size_t>(i)], i);
  EXPECT_EQ(a.back(), -1);
  if (heap::metered())
    EXPECT_GE(heap::live_bytes() - before, static_cast<std::int64_t>(detail::kHugeArrayBytes) - heap::kFlushBytes);
  detail::HugeArray<Line> lines(detail::kHugeArrayBytes / sizeof(Line) - 1);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(lines.data()) % alignof(Line), 0u);
  lines.resize(detail::kHugeArrayBytes / sizeof(Line) + 5);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(lines.data()) % detail::kHugePage, 0u);
}

// Huge pages (app/huge_pages.hpp): the binary asks glibc for them where the kernel gives them on
// request, keeps any tunables already set, and never asks twice.
TEST(HugePages, TheTunableIsAddedOnlyWhereTheKernelGivesHugePagesOnRequest) {
  EXPECT_EQ(huge_pages_tunables(nullptr, "always [madvise] never").value_or("none"), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(huge_pages_tunables("", "always [madvise] never").value_or("none"), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(huge_pages_tunables("glibc.malloc.tcache_count=0", "always [madvise] never").value_or("none"),
            "glibc.malloc.tcache_count=0:glibc.malloc.hugetlb=1");
  EXPECT_FALSE(huge_pages_tunables("glibc.malloc.hugetlb=0", "always [madvise] never"));  // the user's choice
  EXPECT_FALSE(huge_pages_tunables(nullptr, "[always] madvise never"));  // every page may be huge already
  EXPECT_FALSE(huge_pages_tunables(nullptr, "always madvise [never]"));
  EXPECT_FALSE(huge_pages_tunables(nullptr, ""));
}

TEST(HugePages, OnlyCubesimHugepages1AsksForThem) {
  EXPECT_TRUE(huge_pages_requested("1"));
  EXPECT_FALSE(huge_pages_requested(nullptr));  // the default (docs/performance.md "Huge pages, where they pay")
  EXPECT_FALSE(huge_pages_requested("0"));
  EXPECT_FALSE(huge_pages_requested(""));
  EXPECT_FALSE(huge_pages_requested("yes"));
}

TEST(HugePages, TheBinaryRunsAgainWithThemOnlyWhenCubesimHugepages1AsksForThem) {
  std::string mode;
  std::getline(std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled"), mode);
  const char* tun = std::getenv("GLIBC_TUNABLES");
  const bool preset = tun != nullptr && std::string(tun).find("glibc.malloc.hugetlb") != std::string::npos;
  const std::string cfg = std::string(CUBESIM_SOURCE_DIR) + "/configs/quickstart.json";
  const std::string bin = std::string(CUBESIM_BINARY) + " -v validate " + cfg;
  const Result plain = run_command("env -u CUBESIM_HUGEPAGES " + bin);
  const Result on = run_command("CUBESIM_HUGEPAGES=1 " + bin);
  const Result off = run_command("CUBESIM_HUGEPAGES=0 " + bin);
  ASSERT_EQ(plain.code, 0) << plain.err;
  ASSERT_EQ(on.code, 0) << on.err;
  ASSERT_EQ(off.code, 0) << off.err;
  const bool asked = preset || (kHugePagesBuild && mode.find("[madvise]") != std::string::npos);
  EXPECT_EQ(on.err.find("huge pages: asked for") != std::string::npos, asked) << on.err;
  EXPECT_EQ(plain.err.find("huge pages: asked for") != std::string::npos, preset) << plain.err;
  EXPECT_EQ(off.err.find("huge pages: asked for") != std::string::npos, preset) << off.err;
  EXPECT_EQ(on.out, plain.out);
  EXPECT_EQ(off.out, plain.out);
}

}  // namespace
}  // namespace cubesim::test
