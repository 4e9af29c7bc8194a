// The sweep layer in process (app/sweep.hpp, issue 31): the plan (shards, resume and shard files,
// memory admission), the executors, and the runner, whose report is the serial one whatever the
// executor and whose stop flag keeps the points that finished. The command line over them is
// tested in test_sweeps.cpp and test_hardening.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "app/resume.hpp"
#include "app/sweep.hpp"
#include "sim/input_error.hpp"
#include "sim/resources.hpp"
#include "tests/cli_helpers.hpp"

namespace cubesim {
namespace {

using test::read_all;
using test::temp_dir;

const Registry& reg() {
  static const Registry r = make_registry();
  return r;
}

/// Ten quick points: a broadcast on cubes of 2 to 32 nodes, two message sizes.
const char* const kSweep = R"({"schema": "cubesim.config/1", "name": "plan", "machine": "ipsc-nx",
  "algorithm": "broadcast.sbt", "topology": {"kind": "hypercube", "dim": 1}, "params": {"M": 4},
  "sweep": {"topology.dim": [1, 2, 3, 4, 5], "params.M": [4, 64]}})";

Experiment sweep() { return parse_experiment(kSweep, "plan.json", reg()); }

std::string label(const RunPoint& p) {
  std::string s;
  for (const auto& [k, v] : p.point) s += k + "=" + v.dump() + " ";
  return s;
}

/// The report of `run` as `cubesim run --reproducible --json` prints it.
std::string report_of(const SweepPlan& plan, const SweepRun& run) {
  return report_json(plan.ex, run.in_order(), ReportOptions{true, plan.engine}).dump(2);
}

/// Plans and runs `o` on `exec`, finishing into o.out_dir when given.
SweepResult run_all(const SweepOptions& o, Executor& exec, const std::atomic<int>* stop = nullptr,
                    std::function<void(std::size_t, const RunOutcome&)> on_finished = {}) {
  SweepPlan plan = plan_sweep(sweep(), o);
  RunnerOptions ro;
  ro.limits.stop = stop;
  ro.on_finished = std::move(on_finished);
  const SweepRun run = run_sweep(plan, exec, ro);
  OutputDir out(o.out_dir);
  return finish_sweep(std::move(plan), run, o, out);
}

TEST(SweepPlan, ShardsSelectEveryKthPointAndPartitionTheSweep) {
  const Shard s = parse_shard("2/3");
  EXPECT_EQ(s.index, 1u);
  EXPECT_EQ(s.count, 3u);
  EXPECT_EQ(shard_points(10, s), (std::vector<std::size_t>{1, 4, 7}));
  EXPECT_EQ(shard_points(10, parse_shard("3/3")), (std::vector<std::size_t>{2, 5, 8}));
  EXPECT_EQ(shard_points(2, parse_shard("4/4")), std::vector<std::size_t>{});
  for (std::size_t k = 1; k <= 11; ++k) {
    std::multiset<std::size_t> all;
    for (std::size_t i = 1; i <= k; ++i)
      for (std::size_t p : shard_points(10, parse_shard(std::to_string(i) + "/" + std::to_string(k)))) all.insert(p);
    std::multiset<std::size_t> want;
    for (std::size_t p = 0; p < 10; ++p) want.insert(p);
    EXPECT_EQ(all, want) << k << " shards";
  }
  for (const char* bad : {"0/3", "4/3", "1of3", "/3", "1/", "", "-1/3", "1/3/4", "1234567890/1234567890"})
    EXPECT_THROW(parse_shard(bad), InputError) << bad;

  // The plan of shard 2/3 holds the sweep's points 2, 5 and 8, in order, and runs them all.
  const Experiment whole = sweep();
  ASSERT_EQ(whole.runs.size(), 10u);
  SweepOptions o;
  o.shard = s;
  o.out_dir = "unused";
  const SweepPlan plan = plan_sweep(sweep(), o);
  ASSERT_EQ(plan.ex.runs.size(), 3u);
  for (std::size_t j = 0; j < 3; ++j) EXPECT_EQ(label(plan.ex.runs[j]), label(whole.runs[1 + 3 * j]));
  EXPECT_EQ(plan.todo, (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(plan.reused_count(), 0u);
}

TEST(SweepPlan, OptionsThatCannotGoTogetherAreRefusedNamingTheOption) {
  const auto refused = [](const SweepOptions& o) -> std::string {
    try {
      check_sweep_options(o);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  SweepOptions o;
  EXPECT_EQ(refused(o), "");
  o.resume = true;
  EXPECT_NE(refused(o).find("--resume"), std::string::npos) << refused(o);
  o.out_dir = "d";
  EXPECT_EQ(refused(o), "");
  o.out_dir.clear();
  o.resume = false;
  o.shard = parse_shard("1/2");
  EXPECT_NE(refused(o).find("--shard: needs --out DIR"), std::string::npos) << refused(o);
  o.shard.reset();
  o.jobs = -1;
  EXPECT_NE(refused(o).find("--jobs"), std::string::npos) << refused(o);
  o.jobs = 0;
  o.engine = EngineKind::simgrid;
  o.traces.chrome = true;
  EXPECT_NE(refused(o).find("traces are recorded by the cycle engine"), std::string::npos) << refused(o);
}

TEST(SweepRunner, OneAndThreeThreadsGiveTheSameOutcomesInTheSweepsOrder) {
  SweepOptions o;
  o.jobs = 3;
  SweepPlan plan = plan_sweep(sweep(), o);
  EXPECT_EQ(plan.jobs, 3u);
  SerialExecutor serial;
  PoolExecutor pool(3);
  EXPECT_EQ(make_executor(plan.jobs)->threads(), 3u);
  EXPECT_EQ(make_executor(1)->threads(), 1u);
  std::set<std::thread::id> threads;  // on_finished is called one at a time
  RunnerOptions ro;
  ro.on_finished = [&](std::size_t, const RunOutcome&) { threads.insert(std::this_thread::get_id()); };
  const SweepRun one = run_sweep(plan, serial, ro);
  EXPECT_EQ(threads.size(), 1u);
  const SweepRun three = run_sweep(plan, pool, ro);
  EXPECT_EQ(one.stopped, 0);
  EXPECT_EQ(three.stopped, 0);
  ASSERT_EQ(one.in_order().size(), 10u);
  ASSERT_EQ(three.in_order().size(), 10u);
  for (std::size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(three.done[i]->point, &plan.ex.runs[i]) << "each outcome in its point's place";
    EXPECT_EQ(three.done[i]->stats.time, one.done[i]->stats.time) << label(plan.ex.runs[i]);
    EXPECT_TRUE(three.done[i]->ok()) << label(plan.ex.runs[i]);
  }
  EXPECT_EQ(report_of(plan, three), report_of(plan, one));
  // The points differ (the comparison above can fail): the 32-node broadcast is slower.
  EXPECT_LT(one.done[0]->stats.time, one.done[9]->stats.time);
}

TEST(SweepRunner, TheCommandWritesTheSameFilesWithOneAndThreeJobs) {
  const std::string config = test::write_temp("plan.json", kSweep);
  std::atomic<int> stop{0};  // the test's own flag: no signal handlers in this process
  RunLimits limits;
  limits.stop = &stop;
  std::string files[2];
  for (int jobs : {1, 3}) {
    SweepOptions o;
    o.config = config;
    o.jobs = jobs;
    o.reproducible = true;
    o.out_dir = temp_dir("plan_command_" + std::to_string(jobs));
    const SweepResult r = run_sweep_command(reg(), o, limits);
    EXPECT_EQ(r.plan.jobs, static_cast<std::size_t>(jobs));
    EXPECT_EQ(r.exit_code(), 0);
    EXPECT_EQ(r.outcomes.size(), 10u);
    EXPECT_EQ(read_all(o.out_dir + "/report.json"), r.report.dump(2) + "\n");
    EXPECT_FALSE(std::filesystem::exists(o.out_dir + "/resume.json"));
    files[jobs == 3] = read_all(o.out_dir + "/report.json") + read_all(o.out_dir + "/runs.csv");
  }
  EXPECT_EQ(files[1], files[0]);
  EXPECT_NE(files[0].find("plan"), std::string::npos);
}

TEST(SweepRunner, ExecutorsRunEachTaskOnceStopOnFalseAndPassErrorsOn) {
  for (std::size_t threads : {1u, 3u}) {
    SCOPED_TRACE(threads);
    const auto exec = make_executor(threads);
    std::mutex m;
    std::multiset<std::size_t> ran;
    exec->run(50, [&](std::size_t k) {
      std::lock_guard lock(m);
      ran.insert(k);
      return true;
    });
    std::multiset<std::size_t> want;
    for (std::size_t k = 0; k < 50; ++k) want.insert(k);
    EXPECT_EQ(ran, want);
    // A task that returns false: no task starts after it (those under way finish; each thread
    // ends after its first false, so at most one more per other thread).
    std::atomic<std::size_t> count{0}, last{0};
    exec->run(50, [&](std::size_t k) {
      ++count;
      for (std::size_t l = last.load(); k > l && !last.compare_exchange_weak(l, k);) {
      }
      return k < 4;
    });
    if (threads == 1) {
      EXPECT_EQ(count.load(), 5u);
    }
    EXPECT_GE(count.load(), 1u);
    EXPECT_LE(last.load(), 3u + threads);
    // An exception reaches the caller.
    EXPECT_THROW(exec->run(50,
                           [&](std::size_t k) -> bool {
                             if (k == 7) throw std::runtime_error("point 8 failed");
                             return true;
                           }),
                 std::runtime_error);
  }
}

TEST(SweepRunner, TheStopFlagKeepsTheFinishedPointsAndResumeReusesThem) {
  SerialExecutor serial;
  SweepOptions whole_o;
  whole_o.reproducible = true;
  whole_o.config = "plan.json";
  whole_o.out_dir = temp_dir("plan_whole");
  const SweepResult whole = run_all(whole_o, serial);
  ASSERT_EQ(whole.exit_code(), 0);

  // Stopped (as by SIGINT) once three points have finished: those three are the report, marked
  // partial, and resume.json keeps them.
  SweepOptions o = whole_o;
  o.out_dir = temp_dir("plan_stopped");
  std::atomic<int> stop{0};
  std::size_t finished = 0;
  const SweepResult stopped = run_all(o, serial, &stop, [&](std::size_t, const RunOutcome&) {
    if (++finished == 3) stop.store(SIGINT);
  });
  EXPECT_EQ(stopped.stopped, SIGINT);
  EXPECT_EQ(stopped.exit_code(), 128 + SIGINT);
  EXPECT_EQ(stopped.outcomes.size(), 3u);
  EXPECT_EQ(stopped.report["partial"]["points_finished"], 3);
  // The resume command keeps what shapes the report (issue 39: it dropped --reproducible).
  EXPECT_EQ(stopped.report_options.resume_command,
            "cubesim run plan.json --out " + o.out_dir + " --resume --reproducible");
  ASSERT_TRUE(std::filesystem::exists(o.out_dir + "/resume.json"));
  EXPECT_EQ(read_resume(o.out_dir + "/resume.json").size(), 3u);

  // The resumed plan takes the three from the file and runs the other seven.
  o.resume = true;
  {
    const SweepPlan plan = plan_sweep(sweep(), o);
    EXPECT_EQ(plan.reused_count(), 3u);
    EXPECT_EQ(plan.todo, (std::vector<std::size_t>{3, 4, 5, 6, 7, 8, 9}));
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(plan.reused[i]->point, &plan.ex.runs[i]);
  }
  std::size_t ran = 0;
  const SweepResult resumed = run_all(o, serial, nullptr, [&](std::size_t, const RunOutcome&) { ++ran; });
  EXPECT_EQ(ran, 7u);
  EXPECT_EQ(resumed.exit_code(), 0);
  EXPECT_EQ(read_all(o.out_dir + "/report.json"), read_all(whole_o.out_dir + "/report.json"));
  EXPECT_EQ(read_all(o.out_dir + "/runs.csv"), read_all(whole_o.out_dir + "/runs.csv"));
  EXPECT_FALSE(std::filesystem::exists(o.out_dir + "/resume.json")) << "a finished run leaves nothing to resume";

  // A flag already set: nothing runs.
  stop.store(SIGTERM);
  SweepOptions none;
  const SweepResult nothing = run_all(none, serial, &stop);
  EXPECT_EQ(nothing.stopped, SIGTERM);
  EXPECT_TRUE(nothing.outcomes.empty());
}

TEST(SweepRunner, AStopOnAPoolKeepsWhatFinishedInOrder) {
  SweepPlan plan = plan_sweep(sweep(), SweepOptions{});
  PoolExecutor pool(3);
  std::atomic<int> stop{0};
  RunnerOptions ro;
  ro.limits.stop = &stop;
  ro.on_finished = [&](std::size_t, const RunOutcome&) { stop.store(SIGINT); };
  const SweepRun run = run_sweep(plan, pool, ro);
  EXPECT_EQ(run.stopped, SIGINT);
  // The first point to finish set the flag: at most the two under way with it finish as well.
  const std::vector<RunOutcome> finished = run.finished();
  EXPECT_GE(finished.size(), 1u);
  EXPECT_LE(finished.size(), 3u);
  const std::vector<RunOutcome> in_order = run.in_order();
  EXPECT_LE(in_order.size(), finished.size());
  for (std::size_t i = 0; i < in_order.size(); ++i) EXPECT_EQ(in_order[i].point, &plan.ex.runs[i]);
}

TEST(SweepPlan, MergeTakesEveryPointFromTheShardsAndNamesAMissingOne) {
  SerialExecutor serial;
  SweepOptions serial_o;
  serial_o.reproducible = true;
  const SweepResult whole = run_all(serial_o, serial);
  std::vector<std::string> dirs;
  for (const char* s : {"1/3", "2/3", "3/3"}) {
    SweepOptions o = serial_o;
    o.shard = parse_shard(s);
    o.out_dir = temp_dir(std::string("plan_shard_") + s[0]);
    const SweepResult r = run_all(o, serial);
    ASSERT_EQ(r.exit_code(), 0);
    ASSERT_TRUE(std::filesystem::exists(o.out_dir + "/shard.json"));
    dirs.insert(dirs.begin(), o.out_dir);  // the order of the shards does not matter
  }
  SweepOptions m = serial_o;
  m.merge = dirs;
  const SweepPlan plan = plan_sweep(sweep(), m);
  EXPECT_EQ(plan.reused_count(), 10u);
  EXPECT_TRUE(plan.todo.empty());
  std::size_t ran = 0;
  const SweepResult merged = run_all(m, serial, nullptr, [&](std::size_t, const RunOutcome&) { ++ran; });
  EXPECT_EQ(ran, 0u);
  EXPECT_EQ(merged.report.dump(2), whole.report.dump(2));

  m.merge.pop_back();  // shard 1/3 missing: the sweep's first point is in none
  try {
    plan_sweep(sweep(), m);
    ADD_FAILURE() << "a merge without shard 1/3";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("point 1 of 10 is in none of the shards given"), std::string::npos)
        << e.what();
  }
  m.merge = {temp_dir("plan_not_a_shard")};
  EXPECT_THROW(plan_sweep(sweep(), m), InputError);
}

/// Sets the process's memory budget for one scope.
struct BudgetScope {
  std::int64_t before = memory_budget();
  explicit BudgetScope(std::int64_t bytes) { set_memory_budget(bytes); }
  ~BudgetScope() { set_memory_budget(before); }
};

TEST(SweepPlan, MemoryAdmissionRefusesAPointTooLargeUnlessItIsReused) {
  // Point 2, 2^20 nodes, needs more than 1 GiB of engine state.
  const std::string text = R"({"schema": "cubesim.config/1", "name": "big", "machine": "ipsc-nx",
    "algorithm": "broadcast.sbt", "topology": {"kind": "hypercube", "dim": 3}, "params": {"M": 1},
    "mode": "timing", "sweep": {"topology.dim": [3, 20]}})";
  const BudgetScope budget(std::int64_t{1} << 30);
  try {
    plan_sweep(parse_experiment(text, "big.json", reg()), SweepOptions{});
    ADD_FAILURE() << "the 2^20-node point fits in 1 GiB?";
  } catch (const InputError& e) {
    const std::string w = e.what();
    EXPECT_NE(
        w.find("big.json: /sweep (at topology.dim=20): hypercube n=20 (1048576 nodes) needs about 2.5 GiB of memory "
               "(broadcast.sbt's memory model)"),
        std::string::npos)
        << w;
    EXPECT_NE(w.find("under the memory budget of 1.0 GiB (--max-memory)"), std::string::npos) << w;
  }
  // The first point alone fits: its shard is admitted.
  SweepOptions first;
  first.shard = parse_shard("1/2");
  first.out_dir = "unused";
  EXPECT_NO_THROW(plan_sweep(parse_experiment(text, "big.json", reg()), first));

  // Only the points that run must fit: with the big point's outcome stored (as a shard run on a
  // larger machine leaves it), the plan runs the small one only.
  const Experiment ex = parse_experiment(text, "big.json", reg());
  RunOutcome big;
  big.point = &ex.runs[1];
  big.prediction = ex.runs[1].info->predict(ex.runs[1].setup);
  big.stats.time = big.prediction.time;
  SweepOptions resume;
  resume.resume = true;
  resume.out_dir = temp_dir("plan_big");
  std::ofstream(resume.out_dir + "/resume.json") << resume_text(ex, {big}, EngineKind::cycle);
  const SweepPlan plan = plan_sweep(parse_experiment(text, "big.json", reg()), resume);
  EXPECT_EQ(plan.todo, std::vector<std::size_t>{0});
  EXPECT_EQ(plan.reused_count(), 1u);
  EXPECT_EQ(plan.reused[1]->stats.time, big.prediction.time);
}

}  // namespace
}  // namespace cubesim
