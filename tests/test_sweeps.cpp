// Sweeps on every core (docs/performance.md "Sweeps on every core"): --jobs gives the serial
// report byte for byte, --shard I/K and `cubesim merge` give it back from the shards, bad shard
// arguments are one line and exit 2, and the progress line never reaches a pipe.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "app/progress.hpp"
#include "tests/cli_helpers.hpp"

using cubesim::test::read_all;
using cubesim::test::Result;
using cubesim::test::run_cli;
using cubesim::test::temp_dir;

namespace {

// A sweep of 30 points over two algorithms (winners and margins compare points) and the
// quickstart's 14.
const char* const kConfigs[] = {"configs/tr530/fig9-matmul.json", "configs/quickstart.json"};

TEST(Sweeps, ParallelRunsGiveTheSerialReportByteForByte) {
  for (const char* c : kConfigs) {
    const Result serial = run_cli(std::string("run ") + c + " --json --reproducible --jobs 1");
    ASSERT_EQ(serial.code, 0) << serial.err;
    for (const char* jobs : {"2", "3", "0"}) {
      const Result par = run_cli(std::string("run ") + c + " --json --reproducible --jobs " + jobs);
      ASSERT_EQ(par.code, 0) << par.err;
      EXPECT_EQ(par.out, serial.out) << c << " --jobs " << jobs;
      EXPECT_EQ(par.err, "") << "no progress line on a pipe";
    }
    // The text table and the CSV too.
    const std::string a = temp_dir("sweep_serial"), b = temp_dir("sweep_parallel");
    ASSERT_EQ(run_cli(std::string("run ") + c + " --reproducible --jobs 1 --out " + a).code, 0);
    ASSERT_EQ(run_cli(std::string("run ") + c + " --reproducible --jobs 2 --out " + b).code, 0);
    EXPECT_EQ(read_all(a + "/runs.csv"), read_all(b + "/runs.csv"));
    EXPECT_EQ(read_all(a + "/report.json"), read_all(b + "/report.json"));
  }
}

TEST(Sweeps, ShardsMergeIntoTheSerialReport) {
  for (const char* c : kConfigs) {
    const Result serial = run_cli(std::string("run ") + c + " --json --reproducible");
    ASSERT_EQ(serial.code, 0) << serial.err;
    for (int k : {1, 3, 4}) {
      std::string dirs;
      for (int i = 1; i <= k; ++i) {
        const std::string d = temp_dir("shard_" + std::to_string(i) + "_of_" + std::to_string(k));
        const Result r = run_cli(std::string("run ") + c + " --reproducible --jobs 1 --shard " + std::to_string(i) +
                                 "/" + std::to_string(k) + " --out " + d);
        ASSERT_EQ(r.code, 0) << r.err;
        ASSERT_TRUE(std::filesystem::exists(d + "/shard.json"));
        dirs = " " + d + dirs;  // the order of the shards does not matter
      }
      const Result merged = run_cli(std::string("merge ") + c + dirs + " --json --reproducible");
      ASSERT_EQ(merged.code, 0) << merged.err;
      EXPECT_EQ(merged.out, serial.out) << c << " in " << k << " shards";
    }
  }
}

TEST(Sweeps, AMergeRunsNothingSoNeedsNoMemoryForThePoints) {
  // Shards run on big machines merge on a small one: a budget no point fits in refuses a run
  // (exit 2) but not a merge of finished shards.
  const std::string c = "configs/quickstart.json";
  const std::string a = temp_dir("small_merge_1"), b = temp_dir("small_merge_2");
  ASSERT_EQ(run_cli("run " + c + " --shard 1/2 --out " + a).code, 0);
  ASSERT_EQ(run_cli("run " + c + " --shard 2/2 --out " + b).code, 0);
  const Result refused = run_cli("run " + c + " --max-memory 1K");
  EXPECT_EQ(refused.code, 2) << refused.err;
  const Result merged = run_cli("merge " + c + " " + a + " " + b + " --max-memory 1K --json");
  EXPECT_EQ(merged.code, 0) << merged.err;
}

TEST(Sweeps, BadShardsAreOneLineAndExitTwo) {
  const std::string c = "configs/quickstart.json";
  const std::string one = temp_dir("bad_shard_1");
  ASSERT_EQ(run_cli("run " + c + " --shard 1/3 --out " + one).code, 0);
  const struct {
    std::string args, says;
  } cases[] = {
      {"run " + c + " --shard 0/3 --out " + one, "is not I/K with 1 <= I <= K"},
      {"run " + c + " --shard 4/3 --out " + one, "is not I/K with 1 <= I <= K"},
      {"run " + c + " --shard 1of3 --out " + one, "is not I/K with 1 <= I <= K"},
      {"run " + c + " --shard 1/3", "needs --out DIR"},
      {"run " + c + " --jobs -1", "must be a count of parallel runs"},
      {"merge " + c + " " + one, "point 2 of 14 is in none of the shards given"},
      {"merge configs/tr530/fig9-matmul.json " + one, one + ": shard 1/3 ran another sweep than"},
      {"merge " + c + " " + temp_dir("not_a_shard"), "has no shard.json"},
  };
  for (const auto& k : cases) {
    const Result r = run_cli(k.args);
    EXPECT_EQ(r.code, 2) << k.args << ": " << r.err;
    EXPECT_NE(r.err.find(k.says), std::string::npos) << k.args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << k.args << ": " << r.err;
    EXPECT_EQ(r.out, "") << k.args;
  }
}

TEST(Sweeps, TheProgressLineSaysPointsRateAndTimeLeft) {
  EXPECT_EQ(cubesim::Progress::line(3, 14, 12.34e6, 6.0), "cubesim: 3/14 points · 12.3 M events/s · about 22 s left");
  EXPECT_EQ(cubesim::Progress::line(0, 14, 2500.0, 3.0), "cubesim: 0/14 points · 2.5 k events/s");
  EXPECT_EQ(cubesim::Progress::line(1, 200, 1e6, 60.0), "cubesim: 1/200 points · 1.0 M events/s · about 199 min left");
  EXPECT_EQ(cubesim::Progress::line(0, 1, 5e6, 10.0), "cubesim: 1 run · 5.0 M events/s");
}

}  // namespace
