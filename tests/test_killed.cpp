// Issue 38: a run killed by SIGKILL (a batch system's time limit, the OOM killer) keeps every
// point it finished in its journal (OUT/.cubesim-journal), and --resume finishes it with the
// report an uninterrupted run writes, byte for byte (docs/reliability.md "Killed runs"). The
// journal's format (a torn last line), and `cubesim merge` refusing a shard of another config or
// binary.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "app/resume.hpp"
#include "app/sweep.hpp"
#include "tests/cli_helpers.hpp"

extern char** environ;

namespace cubesim::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// 36 points of a few to 50 ms each: about a second on two cores, so that kills at random
/// moments land at every stage of the sweep (starting, between points, in a point, committing).
std::string killed_config() {
  return write_temp("killed.json", R"({"schema": "cubesim.config/1", "name": "killed", "machine": "ipsc-nx",
    "algorithm": "allgather.sbt", "topology": {"kind": "hypercube", "dim": 9}, "params": {"M": 4}, "mode": "timing",
    "sweep": {"topology.dim": [9, 10, 11], "params.M": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]}})");
}

/// Starts `cubesim ARGS...` (stdout and stderr to /dev/null); its pid.
pid_t spawn_cli(const std::vector<std::string>& args) {
  std::vector<std::string> argv_s{CUBESIM_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("cannot start " + argv_s[0]);
  return pid;
}

/// Waits `delay`, then SIGKILLs `pid` if it still runs; true when the kill landed (the process
/// was running), false when it had ended (exit 0 expected).
bool kill_after(pid_t pid, std::chrono::microseconds delay) {
  std::this_thread::sleep_for(delay);
  int status = 0;
  if (::waitpid(pid, &status, WNOHANG) == pid) {
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a run that ended before its kill";
    return false;
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

/// How many points `cubesim -v run ... --resume` said it took from the journal (0 when none).
std::size_t points_taken(const std::string& err) {
  std::smatch m;
  static const std::regex re("--resume: ([0-9]+) of [0-9]+ points taken from");
  return std::regex_search(err, m, re) ? std::stoul(m[1]) : 0;
}

struct KillStats {
  int landed = 0, trials = 0;
  std::set<std::size_t> progress;  // points taken by the resumes: kills at different stages
};

/// Kills `cubesim run CFG EXTRA --out D --reproducible --jobs 2` at random moments (seeded)
/// until `kills` have landed, each in a fresh D, every other trial killing its first --resume
/// too; then resumes to the end and checks D's report.json and runs.csv against `whole`'s.
KillStats kill_and_resume(const std::string& cfg, const std::vector<std::string>& extra, const std::string& whole,
                          const std::string& name, double seconds, int kills, unsigned seed) {
  KillStats s;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> when(0.0, 0.9 * seconds);
  const std::string want_report = read_all(whole + "/report.json"), want_csv = read_all(whole + "/runs.csv");
  for (; s.landed < kills && s.trials < 2 * kills; ++s.trials) {
    SCOPED_TRACE(name + " trial " + std::to_string(s.trials));
    const std::string d = temp_dir(name + "_trial_" + std::to_string(s.trials));
    std::vector<std::string> args{"run", cfg, "--out", d, "--reproducible", "--jobs", "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto delay = [&] { return std::chrono::microseconds(static_cast<long>(when(rng) * 1e6)); };
    s.landed += kill_after(spawn_cli(args), delay());
    args.push_back("--resume");
    if (s.trials % 2 == 0) s.landed += kill_after(spawn_cli(args), delay());  // a resume killed too
    std::string line = "-v";
    for (const std::string& a : args) line += " " + a;
    const Result r = run_cli(line);
    if (r.code != 0) {
      ADD_FAILURE() << "the resume ended with " << r.code << ": " << r.err;
      continue;
    }
    s.progress.insert(points_taken(r.err));
    EXPECT_EQ(read_all(d + "/report.json"), want_report);
    EXPECT_EQ(read_all(d + "/runs.csv"), want_csv);
    EXPECT_FALSE(fs::exists(d + "/" + kJournalFile)) << "a finished run removes its journal";
    EXPECT_FALSE(fs::exists(d + "/resume.json"));
  }
  return s;
}

double timed_run(const std::string& args) {
  const auto t0 = Clock::now();
  EXPECT_EQ(run_cli(args).code, 0) << args;
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

TEST(Killed, TwentySigkillsOfASweepEachResumeToTheUninterruptedReport) {
  const std::string cfg = killed_config();
  const std::string whole = temp_dir("killed_whole");
  const double seconds = timed_run("run " + cfg + " --out " + whole + " --reproducible --jobs 2");
  const KillStats s = kill_and_resume(cfg, {}, whole, "killed", seconds, 20, 38);
  EXPECT_GE(s.landed, 20) << "in " << s.trials << " trials of a " << seconds << " s sweep";
  // The kills landed at different stages: the resumes found different numbers of points done.
  EXPECT_GE(s.progress.size(), 3u);
  std::string seen;
  for (std::size_t p : s.progress) seen += " " + std::to_string(p);
  std::cout << s.landed << " kills in " << s.trials << " trials of a " << seconds
            << " s sweep; points found done by the resumes:" << seen << "\n";
}

TEST(Killed, TwentySigkillsOfAShardEachResumeAndTheShardsMergeIntoTheSerialReport) {
  const std::string cfg = killed_config();
  const Result serial = run_cli("run " + cfg + " --json --reproducible --jobs 2");
  ASSERT_EQ(serial.code, 0) << serial.err;
  const std::string one = temp_dir("killed_shard_1"), two = temp_dir("killed_shard_2"),
                    three = temp_dir("killed_shard_3");
  ASSERT_EQ(run_cli("run " + cfg + " --shard 1/3 --out " + one + " --reproducible").code, 0);
  const double seconds = timed_run("run " + cfg + " --shard 2/3 --out " + two + " --reproducible --jobs 2");
  ASSERT_EQ(run_cli("run " + cfg + " --shard 3/3 --out " + three + " --reproducible").code, 0);
  const KillStats s = kill_and_resume(cfg, {"--shard", "2/3"}, two, "killed_shard", seconds, 20, 3838);
  EXPECT_GE(s.landed, 20) << "in " << s.trials << " trials of a " << seconds << " s shard";
  EXPECT_GE(s.progress.size(), 3u);
  // The last resumed shard merges with the others into the serial report.
  const std::string resumed = scratch_path("killed_shard_trial_" + std::to_string(s.trials - 1));
  ASSERT_TRUE(fs::exists(resumed + "/shard.json"));
  const Result merged = run_cli("merge " + cfg + " " + one + " " + resumed + " " + three + " --json --reproducible");
  ASSERT_EQ(merged.code, 0) << merged.err;
  EXPECT_EQ(merged.out, serial.out);
}

/// The header and the lines of a journal of every point of `cfg` (--out D's), as a run writes
/// them, in the order the points finish (serially: sweep order).
std::vector<std::string> journal_lines(const std::string& cfg) {
  static const Registry reg = make_registry();
  SweepOptions o;
  o.config = cfg;
  SweepPlan plan = plan_sweep(load_experiment(cfg, reg, {}), o);
  std::vector<std::string> lines{journal_header(plan.ex, plan.stamp)};
  SerialExecutor serial;
  RunnerOptions ro;
  ro.on_finished = [&](std::size_t, const RunOutcome& r) { lines.push_back(journal_line(plan.ex, r, plan.engine)); };
  (void)run_sweep(plan, serial, ro);
  return lines;
}

/// 14 points of a few milliseconds.
std::string journal_config() {
  return write_temp("journal.json", R"({"schema": "cubesim.config/1", "name": "journal", "machine": "ipsc-nx",
    "algorithm": "broadcast.sbt", "topology": {"kind": "hypercube", "dim": 1}, "params": {"M": 4},
    "sweep": {"topology.dim": [1, 2, 3, 4, 5, 6, 7], "params.M": [4, 64]}})");
}

TEST(Journal, ATornLastLineIsDroppedAndResumeRunsOnlyThePointsNotInTheJournal) {
  const std::string cfg = journal_config();
  const std::string whole = temp_dir("journal_whole");
  ASSERT_EQ(run_cli("run " + cfg + " --out " + whole + " --reproducible").code, 0);
  EXPECT_FALSE(fs::exists(whole + "/" + kJournalFile)) << "a finished run removes its journal";
  const std::vector<std::string> lines = journal_lines(cfg);
  ASSERT_EQ(lines.size(), 15u);
  // Out of order, as --jobs finishes them: points 1-5 and 9, then half of point 10's line.
  const std::string d = temp_dir("journal_torn");
  {
    std::ofstream j(d + "/" + kJournalFile, std::ios::binary);
    for (int i : {0, 1, 2, 3, 4, 5, 9}) j << lines[i];
    j << lines[10].substr(0, lines[10].size() / 2);
  }
  Result r = run_cli("-v run " + cfg + " --out " + d + " --reproducible --resume");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("--resume: 6 of 14 points taken from " + d + "/" + kJournalFile), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("are a line cut short (killed as it was written): dropped"), std::string::npos) << r.err;
  EXPECT_EQ(read_all(d + "/report.json"), read_all(whole + "/report.json"));
  EXPECT_EQ(read_all(d + "/runs.csv"), read_all(whole + "/runs.csv"));
  EXPECT_FALSE(fs::exists(d + "/" + kJournalFile));

  // A resume that is killed again appends after the whole lines, the torn one cut off: a journal
  // of a torn line then more lines reads every whole line.
  const std::string again = temp_dir("journal_again");
  {
    std::ofstream j(again + "/" + kJournalFile, std::ios::binary);
    j << lines[0] << lines[1] << lines[2].substr(0, 40);
  }
  {
    // What --resume keeps of it, and where it appends.
    const Journal read = read_journal(again + "/" + kJournalFile);
    EXPECT_TRUE(read.valid);
    EXPECT_EQ(read.table.size(), 1u);
    EXPECT_EQ(read.keep, lines[0].size() + lines[1].size());
    EXPECT_EQ(read.dropped, 40u);
    AppendFile f(again + "/" + kJournalFile, read.keep);
    f.append(lines[3]);
  }
  EXPECT_EQ(read_all(again + "/" + kJournalFile), lines[0] + lines[1] + lines[3]);
  r = run_cli("-v run " + cfg + " --out " + again + " --reproducible --resume");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("--resume: 2 of 14 points taken from"), std::string::npos) << r.err;
  EXPECT_EQ(read_all(again + "/report.json"), read_all(whole + "/report.json"));

  // A file that is not a journal is refused, one line naming it (exit 2); a run without
  // --resume starts a journal of its own over it.
  const std::string bad = temp_dir("journal_bad");
  write_temp("journal_bad/" + std::string(kJournalFile), "{\"schema\": \"something else\"}\n");
  r = run_cli("run " + cfg + " --out " + bad + " --resume");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(bad + "/" + kJournalFile + ": line 1: not a cubesim journal"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(run_cli("run " + cfg + " --out " + bad).code, 0);
  EXPECT_FALSE(fs::exists(bad + "/" + kJournalFile));
}

// --resume takes outcomes only from the binary that ran them: a resume.json or a journal that
// another binary wrote is refused in one line naming the file, and nothing is written.
TEST(Journal, ResumeRefusesTheOutcomesOfAnotherBinary) {
  const std::string cfg = journal_config();
  const std::string other = "cubesim 0.0.9 (git 0123456789ab)";
  for (const std::string file : {"resume.json", ".cubesim-journal"}) {
    SCOPED_TRACE(file);
    const std::string d = temp_dir("other_binary");
    const std::string path = d + "/" + file;
    if (file == "resume.json")
      std::ofstream(path) << R"({"schema": "cubesim.resume/1", "binary": ")" << other << R"(", "finished": []})";
    else
      std::ofstream(path) << R"({"schema": "cubesim.journal/1", "binary": ")" << other << "\"}\n";
    const Result r = run_cli("run " + cfg + " --out " + d + " --resume");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(path + ": was written by " + other + ", not by this cubesim 0.1.0"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("run without --resume"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(d + "/report.json"));
    // Without --resume the same folder runs every point afresh.
    EXPECT_EQ(run_cli("run " + cfg + " --out " + d).code, 0);
  }
}

TEST(Journal, MergeRefusesAShardOfAnotherSweepOrBinaryNamingItsFolder) {
  const std::string cfg = journal_config();
  const std::string a = temp_dir("stamp_1"), b = temp_dir("stamp_2"), other = temp_dir("stamp_other");
  ASSERT_EQ(run_cli("run " + cfg + " --shard 1/2 --out " + a).code, 0);
  ASSERT_EQ(run_cli("run " + cfg + " --shard 2/2 --out " + b).code, 0);
  ASSERT_EQ(run_cli("run " + cfg + " --shard 2/2 --set params.root=1 --out " + other).code, 0);
  ASSERT_EQ(run_cli("merge " + cfg + " " + a + " " + b + " --json").code, 0);
  auto refused = [&](const std::string& args, const std::string& says) {
    const Result r = run_cli("merge " + cfg + " " + args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.out, "");
  };
  // Another config (the same points' identities could not tell a missing shard from it).
  refused(a + " " + other, other + ": shard 2/2 ran another sweep than " + cfg);
  // The same shards merged with the --set they ran with: shard 1 is now the other sweep's.
  refused(a + " " + other + " --set params.root=1", a + ": shard 1/2 ran another sweep than " + cfg);
  // Another binary: shard.json names the one that ran it.
  const std::string f = b + "/shard.json";
  auto j = nlohmann::ordered_json::parse(read_all(f));
  EXPECT_EQ(j["shard"], "2/2");
  EXPECT_EQ(j["binary"], run_cli("--version").out.substr(0, run_cli("--version").out.find('\n')));
  j["binary"] = "cubesim 0.0.9 (git 0123456789ab)";
  std::ofstream(f) << j.dump(1);
  refused(a + " " + b, b + ": shard 2/2 was run by cubesim 0.0.9 (git 0123456789ab), not by this cubesim 0.1.0");
  j.erase("binary");
  std::ofstream(f) << j.dump(1);
  refused(a + " " + b, b + ": shard 2/2 names no binary or sweep");
}

}  // namespace
}  // namespace cubesim::test
