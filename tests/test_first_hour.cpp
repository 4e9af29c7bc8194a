// The first hour of a new user (issue 33): the command line's basics, changing a value without
// editing JSON, replaying on another machine without silent reinterpretation. The bad-input side
// of the same points (misspellings, duplicate keys, folders, configs given to replay) is in
// tests/test_bad_input.cpp's corpus.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/suggest.hpp"
#include "tests/cli_helpers.hpp"

using cubesim::test::read_all;
using cubesim::test::Result;
using cubesim::test::run_cli;
using cubesim::test::run_command;
using cubesim::test::write_temp;

TEST(FirstHour, EditDistanceSuggestsTheClosestNames) {
  EXPECT_EQ(cubesim::edit_distance("broadcast.sbtt", "broadcast.sbt"), 1u);
  EXPECT_EQ(cubesim::edit_distance("ab", "ba"), 1u);  // a swap of neighbours is one edit
  EXPECT_EQ(cubesim::edit_distance("", "abc"), 3u);
  EXPECT_EQ(cubesim::edit_distance("TAU", "tau"), 0u);
  const std::vector<std::string> known = {"run", "merge", "replay", "regress", "predict"};
  EXPECT_EQ(cubesim::did_you_mean("runn", known), " (did you mean \"run\"?)");
  EXPECT_EQ(cubesim::did_you_mean("regres", known), " (did you mean \"regress\"?)");
  EXPECT_EQ(cubesim::did_you_mean("xyzzy", known), "");
  EXPECT_EQ(cubesim::did_you_mean("run", known), "");  // a known name is not a suggestion
  EXPECT_EQ(cubesim::closest_names("rn", {"replay", "regress", "run"}), std::vector<std::string>{"run"});
  EXPECT_EQ(cubesim::closest_names("broadcast", {"broadcast.sbt", "scatter.sbt"}),
            std::vector<std::string>{"broadcast.sbt"});  // a prefix
}

TEST(FirstHour, VersionNamesTheGitRevision) {
  const Result r = run_cli("--version");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("cubesim 0.1.0 (git ", 0), 0u) << r.out;
}

TEST(FirstHour, HelpIsACommandAndGlobalOptionsGoAnywhere) {
  Result r = run_cli("help");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Subcommands:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("completion"), std::string::npos);
  r = run_cli("help run");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("--set"), std::string::npos) << r.out;
  r = run_cli("help plot");  // the plot tool's own help
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("usage: cubesim plot"), std::string::npos) << r.out;
  // -v after the command, as users type it.
  r = run_cli("validate configs/quickstart.json -v");
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST(FirstHour, BashCompletionCompletesCommandsAndTheirOptions) {
  const Result r = run_cli("completion bash");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string script = write_temp("completion.bash", r.out);
  EXPECT_EQ(run_command("bash -n " + script).code, 0);
  const auto complete = [&](const std::string& words, int cword) {
    return run_command("bash -c 'source " + script + "; COMP_WORDS=(" + words +
                       "); COMP_CWORD=" + std::to_string(cword) + "; _cubesim; echo \"${COMPREPLY[@]}\"'")
        .out;
  };
  EXPECT_EQ(complete("cubesim ru", 1), "run\n");
  EXPECT_EQ(complete("cubesim run --trace-n", 2), "--trace-nodes\n");
  EXPECT_EQ(complete("cubesim -v regress --upd", 3), "--update\n");
}

TEST(FirstHour, TheManPageIsBuiltWhenHelp2manIsThere) {
  const std::filesystem::path page = std::filesystem::path(CUBESIM_BINARY).parent_path() / "cubesim.1";
  if (run_command("command -v help2man >/dev/null").code != 0) GTEST_SKIP() << "help2man is not installed";
  ASSERT_TRUE(std::filesystem::exists(page)) << page;
  const std::string text = read_all(page.string());
  EXPECT_NE(text.find(".TH CUBESIM"), std::string::npos);
  EXPECT_NE(text.find("EXIT STATUS"), std::string::npos);
}

TEST(FirstHour, SetChangesAnyConfigKeyWithoutEditingTheFile) {
  const Result r = run_cli(
      "run configs/quickstart.json --json --set params.M=1024 --set machine.tau=100us "
      "--set 'sweep.topology.dim=[2,3]' --set name=mine");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["name"], "mine");
  ASSERT_EQ(j["runs"].size(), 4u);  // ports one and all, times dim 2 and 3
  for (const auto& run : j["runs"]) {
    EXPECT_EQ(run["params"]["M"], 1024) << run.dump();
    EXPECT_EQ(run["relation_holds"], true);
  }
  EXPECT_EQ(j["machine"]["tau_ps"], 100'000'000);
  // The same --set is what predict and validate see.
  const Result v = run_cli("validate configs/quickstart.json --set 'sweep.topology.dim=[2,3]'");
  ASSERT_EQ(v.code, 0) << v.err;
  EXPECT_NE(v.out.find("4 runs"), std::string::npos) << v.out;
}

TEST(FirstHour, ReplayOnOtherElementsSaysHowItReadThem) {
  // A machine whose elements are 8 bytes: the quickstart trace counts 4-byte elements.
  const Result base = run_cli("list machines");
  ASSERT_EQ(base.code, 0);
  const std::string machine = write_temp("wide.json", R"({"name": "wide", "tau": "1ms", "t_c": "1us",
      "packet_elements": 256, "element_bytes": 8, "ports": "one", "default_topology": {"kind": "hypercube", "dim": 4}})");
  Result keep = run_cli("replay traces/samples/quickstart.trace --machine " + machine + " --json");
  ASSERT_EQ(keep.code, 0) << keep.err;
  const auto k = nlohmann::json::parse(keep.out);
  EXPECT_NE(k["replay"]["elements"].get<std::string>().find("the same element counts"), std::string::npos);
  Result bytes = run_cli("replay traces/samples/quickstart.trace --machine " + machine + " --elements bytes --json");
  ASSERT_EQ(bytes.code, 0) << bytes.err;
  const auto b = nlohmann::json::parse(bytes.out);
  EXPECT_NE(b["replay"]["elements"].get<std::string>().find("scaled"), std::string::npos);
  // Half the elements of twice the size: half the element transfers on the critical path.
  EXPECT_EQ(2 * b["runs"][0]["simulated"]["critical_path"]["element_transfers"].get<long>(),
            k["runs"][0]["simulated"]["critical_path"]["element_transfers"].get<long>());
  // The recorded machine itself: nothing to say.
  const Result same = run_cli("replay traces/samples/quickstart.trace --json");
  ASSERT_EQ(same.code, 0) << same.err;
  EXPECT_FALSE(nlohmann::json::parse(same.out)["replay"].contains("elements"));
  // hypercube:nodes=N is the papers' N.
  const Result nodes = run_cli("replay traces/samples/quickstart.trace --topology hypercube:nodes=16 --json");
  EXPECT_EQ(nodes.code, 0) << nodes.err;
}
