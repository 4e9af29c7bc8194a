#pragma once
/// Sweeps (docs/performance.md "Sweeps on every core" and "On a cluster: shards",
/// docs/reliability.md "Interrupted runs"). `cubesim run` and `cubesim merge` are
/// run_sweep_command over three pieces:
/// - the plan: which points of the config's sweep this command covers (all, or a shard's), which
///   are taken from earlier outcomes (--resume's resume.json, merge's shard.json files), which
///   run and in which order, the memory admission of those that run, and how many run at once;
/// - the runner: runs the plan's points on an executor (one at a time, or a pool of threads)
///   and keeps each outcome in its point's place, so that the report is the serial run's byte
///   for byte whatever the executor; a stop flag (a signal) keeps the points that finished;
/// - finish_sweep: the report of what finished, and the files of --out.
#include <spdlog/logger.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/config.hpp"
#include "app/io.hpp"
#include "app/report.hpp"
#include "app/resume.hpp"
#include "app/runner.hpp"
#include "app/trace_files.hpp"

namespace cubesim {

/// The file a shard leaves for `cubesim merge`: its points' outcomes, in resume.json's format.
inline constexpr const char* kShardFile = "shard.json";

/// One shard of a sweep (--shard I/K): the points I, I+K, I+2K, ... (1-based).
struct Shard {
  std::size_t index = 0;  ///< I - 1
  std::size_t count = 1;  ///< K
  std::string text;       ///< as given ("I/K"), for the command that resumes the shard
};
/// "I/K" -> that shard. InputError (--shard) unless I and K are numbers with 1 <= I <= K.
Shard parse_shard(const std::string& text);
/// The points (indexes from 0, ascending) of a sweep of `total` points that shard `s` runs.
std::vector<std::size_t> shard_points(std::size_t total, const Shard& s);

/// The command line's logger ("cubesim", set up by main); one that drops everything where there
/// is none (the tests). For the commands' progress and notes (run, merge, calibrate).
std::shared_ptr<spdlog::logger> command_log();

/// What `cubesim run` or `cubesim merge` asks for, its options parsed.
struct SweepOptions {
  std::string config;   ///< the experiment config
  std::string out_dir;  ///< --out; empty: no files
  EngineKind engine = EngineKind::cycle;
  trace::TraceFormats traces;      ///< --trace: into out_dir/traces/
  bool resume = false;             ///< --resume: reuse the outcomes in out_dir/resume.json
  std::optional<Shard> shard;      ///< --shard I/K: these points only; their outcomes to out_dir/shard.json
  std::vector<std::string> merge;  ///< cubesim merge: the shards' --out folders (their shard.json)
  int jobs = 0;                    ///< --jobs: points run at once; 0: one per core
  bool reproducible = false;       ///< --reproducible: no wall-clock fields in the report
  bool progress_line = false;      ///< the live progress line on stderr (app/progress.hpp)
  /// --machine NAME|FILE: the config's machine (and any machine axis) replaced by this one.
  std::string machine;
  /// --set KEY=VALUE, in order (parse_set_option): config keys changed without editing the file.
  std::vector<std::string> set;
  /// The config's text, when it comes from memory (the Python module's dict): parsed in place of
  /// reading `config`, which then only names it in messages.
  std::optional<std::string> config_text;
  /// Counted up as each point finishes (the Python module's progress bar); null: not counted.
  std::atomic<std::size_t>* points_done = nullptr;
};
/// The config keys a command line sets: --machine NAME|FILE (a file relative to where cubesim
/// runs) and each --set KEY=VALUE, in that order. InputError naming the option.
std::vector<KeyOverride> command_overrides(const std::string& machine, const std::vector<std::string>& set);
/// The checks of the options among themselves, before anything is read: InputError naming the
/// option (--trace under --engine simgrid, --resume or --shard without --out, --jobs below 0).
void check_sweep_options(const SweepOptions& o);

/// Which points run, in which order, and which are taken from earlier outcomes. Move-only: the
/// reused outcomes point into `ex.runs` (a move keeps them where they are, a copy would not).
struct SweepPlan {
  Experiment ex;  ///< the points this command covers (a shard's only), in sweep order
  EngineKind engine = EngineKind::cycle;
  /// Per point of ex.runs: the outcome taken from a resume or shard file; empty: the point runs.
  std::vector<std::optional<RunOutcome>> reused;
  std::vector<std::size_t> todo;  ///< the points (indexes into ex.runs) that run, in this order
  std::size_t jobs = 1;           ///< points run at once (make_executor)
  std::size_t threads = 1;        ///< threads a point may use (RunLimits::threads): the cores jobs leave
  /// This binary and the whole sweep (before a shard's points are taken): stamped into
  /// shard.json, resume.json and the journal; `cubesim merge` refuses a shard of another.
  SweepStamp stamp;
  /// --resume found a journal (OUT/.cubesim-journal) to go on with: the bytes of it to keep
  /// (its whole lines). Empty: the run starts a journal of its own.
  std::optional<std::uintmax_t> journal_keep;
  std::string resume_source;  ///< under --resume: the files the reused outcomes came from

  SweepPlan() = default;
  SweepPlan(SweepPlan&&) = default;
  SweepPlan& operator=(SweepPlan&&) = default;
  SweepPlan(const SweepPlan&) = delete;
  SweepPlan& operator=(const SweepPlan&) = delete;
  [[nodiscard]] std::size_t reused_count() const;
};

/// The plan of `ex` under `o`: the shard's points; every point one SimGrid can model (under
/// --engine simgrid|both); the outcomes of --resume (o.out_dir/resume.json and what a killed
/// run's journal holds, the journal's line winning; a warning when there is neither) or of the
/// shards to merge (each folder must hold shard.json of this sweep run by this binary, and every
/// point must be in one of them), a point stored as failed running again; memory admission (check_memory) of
/// the points that run only, the SimGrid engine excepted (its runs are processes of their own);
/// and `jobs`: o.jobs (0: one per core), 1 with traces or SimGrid, and no more than the points
/// that run or than the memory for their floors allows (both by each point's estimate under
/// `limits`: the lockstep simulator's where it takes the point). InputError naming the file and place.
SweepPlan plan_sweep(Experiment ex, const SweepOptions& o, const RunLimits& limits = {});

/// Runs tasks 0, 1, ..., n-1, each once, started in that order.
class Executor {
 public:
  virtual ~Executor() = default;
  /// A task that returns false, or throws, stops the executor from starting more; the first
  /// exception is rethrown once the tasks under way have ended.
  virtual void run(std::size_t n, const std::function<bool(std::size_t)>& task) = 0;
  [[nodiscard]] virtual std::size_t threads() const = 0;
};

/// One task after the other, on the calling thread.
class SerialExecutor final : public Executor {
 public:
  void run(std::size_t n, const std::function<bool(std::size_t)>& task) override;
  [[nodiscard]] std::size_t threads() const override { return 1; }
};

/// A pool of threads, each taking the next task as it finishes one.
class PoolExecutor final : public Executor {
 public:
  explicit PoolExecutor(std::size_t threads);
  void run(std::size_t n, const std::function<bool(std::size_t)>& task) override;
  [[nodiscard]] std::size_t threads() const override { return threads_; }

 private:
  std::size_t threads_;
};

/// SerialExecutor for jobs <= 1, else a pool of `jobs` threads.
std::unique_ptr<Executor> make_executor(std::size_t jobs);

/// How the runner runs the points.
struct RunnerOptions {
  /// The budgets; `limits.stop`, when set, is the stop flag: once it holds a signal's number no
  /// point starts and a running one ends (Interrupted), and the sweep says it was stopped.
  RunLimits limits;
  trace::TraceFormats traces;  ///< traces of each point that ran without error...
  std::string trace_dir;       ///< ...written here (an OutputDir's staged "traces") as it finishes
  /// Called for each point that finished, as it finishes, one call at a time.
  std::function<void(std::size_t point, const RunOutcome&)> on_finished;
};

/// The outcomes of a sweep, each in its point's place.
struct SweepRun {
  /// Per point of the plan: its outcome (reused, or run); empty where it did not run or finish.
  std::vector<std::optional<RunOutcome>> done;
  int stopped = 0;  ///< the signal that stopped the sweep; 0: every point ran
  /// The points finished in order up to the first that did not: the report's runs.
  [[nodiscard]] std::vector<RunOutcome> in_order() const;
  /// Every finished point: resume.json's and shard.json's.
  [[nodiscard]] std::vector<RunOutcome> finished() const;
};

/// Runs the plan's points on `executor`. A run's failure is its outcome's error; an InputError
/// (a trace that cannot be written) or another exception stops the sweep and passes through.
SweepRun run_sweep(const SweepPlan& plan, Executor& executor, const RunnerOptions& o);

/// What a sweep command leaves to print: the report and its exit status.
struct SweepResult {
  SweepPlan plan;                    ///< the experiment the outcomes point into
  std::vector<RunOutcome> outcomes;  ///< the report's runs (SweepRun::in_order)
  ReportOptions report_options;
  ojson report;
  int stopped = 0;  ///< the signal that stopped the sweep, or 0
  /// 128 + the signal when stopped; else 0 when every run is ok, 1 when one is not.
  [[nodiscard]] int exit_code() const;
};

/// The report of `run`; when `out` is active, it also writes runs.csv, resume.json (when
/// stopped; else it drops an earlier one), shard.json (under --shard) and report.json, commits
/// them, and then removes the run's journal (what it held is in the files committed; not under
/// merge). Logs how many points were reused.
SweepResult finish_sweep(SweepPlan plan, const SweepRun& run, const SweepOptions& o, OutputDir& out);

/// The journal of a run with --out: OUT/.cubesim-journal.
std::string journal_path(const std::string& out_dir);

/// `cubesim run` or `cubesim merge`: --out opened (refused before anything is read when not a
/// folder), the config loaded, planned, run and finished; under `run` with --out, each point's
/// outcome is appended to the journal (synced to disk) as it finishes, so that `--resume` after
/// a SIGKILL runs only the points that had not finished. `limits.stop` null: the command's
/// own stop flag, SIGINT and SIGTERM (app/interrupt.hpp), whose handlers are installed once the
/// plan is made.
SweepResult run_sweep_command(const Registry& reg, const SweepOptions& o, RunLimits limits);

/// `s` as one word for a POSIX shell (quoted only where it needs to be).
std::string shell_quote(const std::string& s);

}  // namespace cubesim
