#include "app/sweep.hpp"

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>

#include "app/interrupt.hpp"
#include "app/progress.hpp"
#include "app/resume.hpp"
#include "app/version.hpp"
#include "machines/machine_loader.hpp"
#include "sim/input_error.hpp"
#include "sim/resources.hpp"
#include "sim/simgrid/platform.hpp"

namespace cubesim {

std::shared_ptr<spdlog::logger> command_log() {
  if (auto log = spdlog::get("cubesim")) return log;
  static const auto none =
      std::make_shared<spdlog::logger>("cubesim-quiet", std::make_shared<spdlog::sinks::null_sink_mt>());
  return none;
}

namespace {

/// Every point must be one SimGrid can model, before anything runs.
void check_simgrid(const Experiment& ex) {
  for (const RunPoint& p : ex.runs)
    if (auto why = sgplat::unsupported(p.setup.machine, p.setup.topology))
      throw InputError(ex.file, p.point.empty() ? (why->machine ? "/machine" : "/topology") : "/sweep",
                       "--engine simgrid: " + why->message);
}

/// The file stem of point `index`'s traces: the config's name, numbered in a sweep.
std::string run_stem(const std::string& name, std::size_t index, std::size_t count) {
  if (count == 1) return name;
  char buf[32];
  std::snprintf(buf, sizeof buf, "-%03zu", index + 1);
  return name + buf;
}

std::string resume_path(const SweepOptions& o) { return (std::filesystem::path(o.out_dir) / kResumeFile).string(); }

/// A shard to merge must be one of this sweep, run by this binary: else one line naming its folder.
void check_shard_stamp(const std::string& dir, const std::string& file, const SweepStamp& mine,
                       const std::string& config) {
  const SweepStamp theirs = read_resume_stamp(file);
  const std::string which = theirs.shard.empty() ? "the shard" : "shard " + theirs.shard;
  if (theirs.binary.empty() || theirs.sweep.empty())
    throw InputError(
        dir, "", which + " names no binary or sweep (written by a cubesim before 0.1.0's merge checks): run it again");
  if (theirs.binary != mine.binary)
    throw InputError(dir, "",
                     which + " was run by " + theirs.binary + ", not by this " + mine.binary +
                         ": merge with the binary that ran the shards, or run this shard again");
  if (theirs.sweep != mine.sweep)
    throw InputError(dir, "",
                     which + " ran another sweep than " + config + " (sweep " + theirs.sweep + ", this one " +
                         mine.sweep +
                         "): another config, --engine, --machine or --set; merge with the ones it ran with, or run "
                         "it again");
}

}  // namespace

std::string journal_path(const std::string& out_dir) {
  return (std::filesystem::path(out_dir) / kJournalFile).string();
}

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  auto number = [&](const std::string& t) -> long long {
    if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::stoll(t);
  };
  const long long i = slash == std::string::npos ? -1 : number(text.substr(0, slash));
  const long long k = slash == std::string::npos ? -1 : number(text.substr(slash + 1));
  if (i < 1 || k < 1 || i > k)
    throw InputError("", "--shard",
                     "\"" + text + "\" is not I/K with 1 <= I <= K (shard I of K runs points I, I+K, I+2K, ...)");
  return {static_cast<std::size_t>(i - 1), static_cast<std::size_t>(k), text};
}

std::vector<std::size_t> shard_points(std::size_t total, const Shard& s) {
  std::vector<std::size_t> mine;
  for (std::size_t i = s.index; i < total; i += s.count) mine.push_back(i);
  return mine;
}

void check_sweep_options(const SweepOptions& o) {
  if (o.engine == EngineKind::simgrid && o.traces.any())
    throw InputError("", "--trace", "traces are recorded by the cycle engine: use --engine both (or cycle)");
  if (o.resume && o.out_dir.empty())
    throw InputError("", "--resume", "needs --out DIR, the folder of the interrupted run");
  if (o.shard && o.out_dir.empty())
    throw InputError("", "--shard", "needs --out DIR: the shard's outcomes go to DIR/shard.json for cubesim merge");
  if (o.jobs < 0)
    throw InputError("", "--jobs",
                     "must be a count of parallel runs (0 for one per core), not " + std::to_string(o.jobs));
}

std::size_t SweepPlan::reused_count() const {
  return static_cast<std::size_t>(
      std::count_if(reused.begin(), reused.end(), [](const std::optional<RunOutcome>& o) { return o.has_value(); }));
}

SweepPlan plan_sweep(Experiment ex, const SweepOptions& o, const RunLimits& limits) {
  SweepPlan plan;
  plan.ex = std::move(ex);
  plan.engine = o.engine;
  Experiment& e = plan.ex;
  plan.stamp = SweepStamp{version_text(), sweep_hash(e, o.engine), o.shard ? o.shard->text : ""};
  if (o.shard) {  // every K-th point, from the I-th
    std::vector<RunPoint> mine;
    for (std::size_t i : shard_points(e.runs.size(), *o.shard)) mine.push_back(e.runs[i]);
    e.runs = std::move(mine);
  }
  if (o.engine != EngineKind::cycle) check_simgrid(e);
  const bool merging = !o.merge.empty();
  std::string resume_file = resume_path(o);
  ResumeTable stored;
  std::error_code ec;
  if (merging) {
    for (const std::string& dir : o.merge) {
      const std::string f = (std::filesystem::path(dir) / kShardFile).string();
      if (!std::filesystem::exists(f, ec))
        throw InputError(dir, "",
                         "has no " + std::string(kShardFile) + ": not the --out folder of a `cubesim run --shard I/K`");
      check_shard_stamp(dir, f, plan.stamp, e.file);
      for (auto& [id, outcome] : read_resume(f)) stored.emplace(id, std::move(outcome));
    }
    for (std::size_t i = 0; i < e.runs.size(); ++i)
      if (!stored.count(point_identity(e.runs[i], e.verify, o.engine)))
        throw InputError(e.file, e.runs[i].point.empty() ? "" : sweep_pointer(e.runs[i]),
                         "point " + std::to_string(i + 1) + " of " + std::to_string(e.runs.size()) +
                             " is in none of the shards given (a shard missing, another config, or another --engine)");
  } else if (o.resume) {
    // resume.json (a run a signal stopped) and the journal (a run killed since: its lines are
    // newer, and win).
    // Outcomes of another binary are not this one's: its timing or its checks may differ, and a
    // report must come from one binary (as a merge's shards must).
    auto same_binary = [&](const std::string& file, const std::string& theirs) {
      if (!theirs.empty() && theirs != plan.stamp.binary)
        throw InputError(file, "",
                         "was written by " + theirs + ", not by this " + plan.stamp.binary +
                             ": resume with the binary that ran it, or run without --resume (every point runs again)");
    };
    const bool has_resume = std::filesystem::exists(resume_file, ec);
    if (has_resume) {
      same_binary(resume_file, read_resume_stamp(resume_file).binary);
      stored = read_resume(resume_file);
    }
    const std::string jf = journal_path(o.out_dir);
    if (std::filesystem::exists(jf, ec)) {
      Journal j = read_journal(jf);
      same_binary(jf, j.binary);
      if (j.dropped > 0)
        command_log()->info("--resume: {}: the last {} bytes are a line cut short (killed as it was written): dropped",
                            jf, j.dropped);
      for (auto& [id, outcome] : j.table) stored[id] = std::move(outcome);
      if (j.valid) plan.journal_keep = j.keep;
      resume_file = has_resume ? resume_file + " and " + jf : jf;
    } else if (!has_resume) {
      command_log()->warn(
          "--resume: {} has no {} and no journal (its last run finished or never ran): running every point", o.out_dir,
          kResumeFile);
    }
  }
  plan.resume_source = resume_file;
  plan.reused.resize(e.runs.size());
  for (std::size_t i = 0; i < e.runs.size(); ++i) {
    // A point stored as failed runs again, as under --resume (merge included).
    plan.reused[i] = resumed_outcome(stored, e.runs[i], e.verify, o.engine, merging ? o.merge.front() : resume_file);
    if (!plan.reused[i]) plan.todo.push_back(i);
  }
  // Only the points that will run must fit (a merge on a small machine of shards run on big ones).
  if (o.engine != EngineKind::simgrid) {
    Experiment running = e;
    running.runs.clear();
    for (std::size_t i : plan.todo) running.runs.push_back(e.runs[i]);
    check_memory(running, limits, o.traces.any());
  }
  // Points run in parallel on the cycle engine without traces (SimGrid runs in a process of its
  // own per point, traces are written as points finish): each is independent and its report is
  // the same whichever thread runs it. No more at once than the memory for their floors allows.
  std::size_t jobs = o.jobs > 0 ? static_cast<std::size_t>(o.jobs) : std::max(1u, std::thread::hardware_concurrency());
  if (o.traces.any() || o.engine != EngineKind::cycle) jobs = 1;
  std::int64_t floor = 1;
  for (std::size_t i : plan.todo) floor = std::max(floor, point_memory_estimate(e.runs[i], limits, o.traces.any()));
  plan.jobs = std::max<std::size_t>(
      1, std::min({jobs, plan.todo.size(),
                   static_cast<std::size_t>(std::max<std::int64_t>(1, available_memory_bytes() / floor))}));
  // A point the lockstep simulator times may split its sweeps among the cores the other points
  // leave (one point: all of them): the same report for any number (docs/lockstep.md).
  plan.threads = std::max<std::size_t>(1, jobs / plan.jobs);
  return plan;
}

void SerialExecutor::run(std::size_t n, const std::function<bool(std::size_t)>& task) {
  for (std::size_t k = 0; k < n; ++k)
    if (!task(k)) return;
}

PoolExecutor::PoolExecutor(std::size_t threads) : threads_(std::max<std::size_t>(1, threads)) {}

void PoolExecutor::run(std::size_t n, const std::function<bool(std::size_t)>& task) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> halt{false};
  std::mutex error_mutex;
  std::exception_ptr error;
  std::vector<std::thread> workers;
  for (std::size_t w = 0; w < std::min(threads_, n); ++w)
    workers.emplace_back([&] {
      for (std::size_t k; (k = next.fetch_add(1)) < n;) {
        if (halt.load()) return;
        try {
          if (!task(k)) {
            halt.store(true);
            return;
          }
        } catch (...) {
          std::lock_guard lock(error_mutex);
          if (!error) error = std::current_exception();
          halt.store(true);  // the others start no new task; the error is what is reported
          return;
        }
      }
    });
  for (std::thread& t : workers) t.join();
  if (error) std::rethrow_exception(error);
}

std::unique_ptr<Executor> make_executor(std::size_t jobs) {
  if (jobs <= 1) return std::make_unique<SerialExecutor>();
  return std::make_unique<PoolExecutor>(jobs);
}

std::vector<RunOutcome> SweepRun::in_order() const {
  std::vector<RunOutcome> v;
  for (const std::optional<RunOutcome>& o : done) {
    if (!o) break;
    v.push_back(*o);
  }
  return v;
}

std::vector<RunOutcome> SweepRun::finished() const {
  std::vector<RunOutcome> v;
  for (const std::optional<RunOutcome>& o : done)
    if (o) v.push_back(*o);
  return v;
}

SweepRun run_sweep(const SweepPlan& plan, Executor& executor, const RunnerOptions& o) {
  const Experiment& ex = plan.ex;
  const std::size_t n = ex.runs.size();
  SweepRun run;
  run.done = plan.reused;
  std::atomic<int> stopped{0};
  std::mutex done_mutex;
  auto stop_flag = [&o] { return o.limits.stop ? o.limits.stop->load() : 0; };
  // Runs the k-th point to run; false when the stop flag stopped it (or stops the sweep).
  auto run_one = [&](std::size_t k) -> bool {
    if (const int sig = stop_flag(); sig != 0) {
      stopped.store(sig);
      return false;
    }
    const std::size_t i = plan.todo[k];
    const RunPoint& p = ex.runs[i];
    trace::TraceSession session(o.traces, p.setup.topology);
    RunOutcome out;
    try {
      out = run_point(p, *p.info, ex.verify, plan.engine, session.observer(), o.limits);
    } catch (const Interrupted& e) {
      stopped.store(e.signal());
      return false;
    }
    // A signal during a SimGrid run kills its process: that point did not finish.
    if (const int sig = stop_flag(); sig != 0 && (!out.error.empty() || (out.simgrid && !out.simgrid->error.empty()))) {
      stopped.store(sig);
      return false;
    }
    if (o.traces.any() && out.error.empty()) {
      const std::string stem = run_stem(ex.name, i, n);
      try {
        for (const std::string& f :
             session.write(o.trace_dir, stem, trace_header(ex.name, p.info->name, p.setup, out.stats), p.setup.machine))
          command_log()->info("wrote {}", f);
      } catch (const InputError& e) {
        // A trace this point cannot be written as (a SimGrid TI trace of concurrent strands):
        // name the point; --out stays as it was.
        throw InputError(ex.file, sweep_pointer(p), e.where() + ": " + e.message());
      }
    }
    std::lock_guard lock(done_mutex);
    run.done[i] = std::move(out);
    if (o.on_finished) o.on_finished(i, *run.done[i]);
    return true;
  };
  executor.run(plan.todo.size(), run_one);
  run.stopped = stopped.load();
  return run;
}

int SweepResult::exit_code() const {
  if (stopped != 0) return 128 + stopped;
  bool ok = true;
  for (const RunOutcome& o : outcomes) ok = ok && o.ok();
  return ok ? 0 : 1;
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

SweepResult finish_sweep(SweepPlan plan, const SweepRun& run, const SweepOptions& o, OutputDir& out) {
  SweepResult r;
  r.plan = std::move(plan);
  const Experiment& ex = r.plan.ex;
  // The report holds the points finished in order up to the first that did not.
  r.outcomes = run.in_order();
  const std::vector<RunOutcome> all_finished = run.finished();
  const std::size_t reused = r.plan.reused_count(), n = ex.runs.size();
  if (reused > 0 && !o.merge.empty())
    command_log()->info("merge: {} of {} points taken from {} shard(s)", reused, n, o.merge.size());
  else if (reused > 0)
    command_log()->info("--resume: {} of {} points taken from {}", reused, n, r.plan.resume_source);
  ReportOptions& opt = r.report_options;
  opt = ReportOptions{o.reproducible, o.engine};
  if (!o.machine.empty()) opt.command_line.push_back("--machine " + shell_quote(o.machine));
  for (const std::string& kv : o.set) opt.command_line.push_back("--set " + shell_quote(kv));
  r.stopped = run.stopped;
  if (r.stopped != 0) {
    opt.interrupted_by = r.stopped;
    if (out.active()) {
      opt.resume_command = "cubesim run " + shell_quote(o.config) + " --out " + shell_quote(o.out_dir) + " --resume";
      if (o.engine != EngineKind::cycle) opt.resume_command += " --engine " + engine_name(o.engine);
      if (o.shard) opt.resume_command += " --shard " + o.shard->text;
      if (!o.machine.empty()) opt.resume_command += " --machine " + shell_quote(o.machine);
      for (const std::string& kv : o.set) opt.resume_command += " --set " + shell_quote(kv);
      // What shapes the report and its pace (issue 39): the resumed report is the same only with
      // the same --reproducible, and --jobs is the user's choice of cores.
      if (o.reproducible) opt.resume_command += " --reproducible";
      if (o.jobs != 0) opt.resume_command += " --jobs " + std::to_string(o.jobs);
    }
  }
  r.report = report_json(ex, r.outcomes, opt);
  if (out.active()) {
    out.write("runs.csv", report_csv(ex, r.outcomes, opt));
    if (r.stopped != 0)
      out.write(kResumeFile, resume_text(ex, all_finished, o.engine, r.plan.stamp));
    else
      out.drop(kResumeFile);
    if (o.shard) out.write(kShardFile, resume_text(ex, all_finished, o.engine, r.plan.stamp));
    out.write("report.json", r.report.dump(2) + "\n");
    out.commit("report.json");
    // Everything the journal held is in what was committed (resume.json when stopped). A kill
    // before this line leaves the journal: --resume then takes every point from it.
    std::error_code ec;
    if (o.merge.empty()) std::filesystem::remove(journal_path(o.out_dir), ec);
  }
  return r;
}

std::vector<KeyOverride> command_overrides(const std::string& machine, const std::vector<std::string>& set) {
  std::vector<KeyOverride> overrides;
  if (!machine.empty()) {
    // A file named on the command line is relative to where cubesim runs, not to the config.
    std::string m = machine;
    (void)machine_argument(m, "--machine");  // a preset or a file: else one line naming --machine
    if (!preset_json(m) && !m.ends_with(".json"))
      throw InputError("", "--machine", "a machine file is named NAME.json, not \"" + m + "\"");
    if (std::error_code ec; m.ends_with(".json") && std::filesystem::is_regular_file(m, ec))
      m = std::filesystem::absolute(m).string();
    overrides.push_back(KeyOverride{.key = "machine", .value = m, .file = "", .where = "--machine"});
  }
  for (const std::string& s : set) overrides.push_back(parse_set_option(s));
  return overrides;
}

SweepResult run_sweep_command(const Registry& reg, const SweepOptions& o, RunLimits limits) {
  OutputDir out(o.out_dir);
  const std::vector<KeyOverride> overrides = command_overrides(o.machine, o.set);
  SweepPlan plan = plan_sweep(o.config_text ? parse_experiment(*o.config_text, o.config, reg, overrides)
                                            : load_experiment(o.config, reg, overrides),
                              o, limits);
  if (limits.stop == nullptr) {
    install_stop_handlers();
    limits.stop = &stop_signal();
  }
  auto log = command_log();
  const Experiment& ex = plan.ex;
  // The journal: each point's outcome on disk as it finishes, for a --resume after a SIGKILL
  // (docs/reliability.md "Killed runs"). Not under merge (it runs only points stored as failed).
  std::unique_ptr<AppendFile> journal;
  std::error_code ec;
  const bool out_existed = out.active() && std::filesystem::exists(o.out_dir, ec);
  if (out.active() && o.merge.empty()) {
    try {
      journal = std::make_unique<AppendFile>(journal_path(o.out_dir), plan.journal_keep.value_or(0));
      if (!plan.journal_keep) journal->append(journal_header(ex, plan.stamp));
    } catch (const std::runtime_error& e) {
      journal.reset();
      log->warn("{}: a SIGKILL would lose every point of this run", e.what());
    }
  }
  SweepRun run;
  {
    Progress progress(plan.todo.size(), o.progress_line);
    RunnerOptions ro;
    ro.limits = limits;
    ro.limits.progress = &progress.events;
    ro.limits.threads = static_cast<int>(plan.threads);
    ro.traces = o.traces;
    if (o.traces.any()) ro.trace_dir = out.staged("traces");
    ro.on_finished = [&](std::size_t i, const RunOutcome& r) {
      if (journal) try {
          journal->append(journal_line(ex, r, plan.engine));
        } catch (const std::runtime_error& e) {
          journal.reset();
          log->warn("{}: a SIGKILL would lose the points that finish from now on", e.what());
        }
      if (r.cycle_ran && !r.error.empty())
        log->error("{}: {}", ex.name, r.error);
      else if (r.cycle_ran)
        log->info("{} point {}: simulated {} predicted {} ({} events, {:.3f} s wall)", ex.name, i + 1,
                  format_time(r.stats.time), format_time(r.prediction.time), r.stats.events, r.stats.wall_s);
      if (r.simgrid && !r.simgrid->error.empty())
        log->error("{}: SimGrid: {}", ex.name, r.simgrid->error);
      else if (r.simgrid)
        log->info("{} point {}: SimGrid {:.12g} s ({} activities, {:.3f} s wall, {} MiB)", ex.name, i + 1,
                  r.simgrid->stats.time_s, r.simgrid->stats.activities, r.simgrid->stats.wall_s,
                  r.simgrid->max_rss_kib / 1024);
      progress.point_done();
      if (o.points_done != nullptr) o.points_done->fetch_add(1, std::memory_order_relaxed);
    };
    try {
      run = run_sweep(plan, *make_executor(plan.jobs), ro);
    } catch (...) {
      // An error that ends the command (exit 2: a trace that cannot be written) leaves --out as
      // it was: a journal this run started goes too.
      if (journal && !plan.journal_keep) {
        journal.reset();
        std::filesystem::remove(journal_path(o.out_dir), ec);
        if (!out_existed) std::filesystem::remove(o.out_dir, ec);  // only if empty
      }
      throw;
    }
  }
  journal.reset();
  return finish_sweep(std::move(plan), run, o, out);
}

}  // namespace cubesim
