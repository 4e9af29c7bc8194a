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
  // One help style: the Python tools' help in the layout of CLI11's (Usage, Positionals, Options).
  for (const char* cmd : {"run", "plot", "figures", "fit", "claims"}) {
    r = run_cli(std::string("help ") + cmd);
    ASSERT_EQ(r.code, 0) << cmd << ": " << r.err;
    EXPECT_NE(r.out.find(std::string("cubesim ") + cmd + " [OPTIONS]"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\nUsage: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\n\nOptions:\n  -h,--help                   Print this help message and exit\n"),
              std::string::npos)
        << r.out;
  }
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

TEST(FirstHour, CompareRanksLikeWorkAndCallsTiesTies) {
  // Issue 33 point 6: alltoall.* (M per destination) against transpose.* (a P x Q matrix) was
  // ranked as one ("740 % slower"); equal times were a win ("0.00 % slower"); the header said
  // "(ports one)" of a sweep that ran all-port too.
  const std::string cfg = write_temp("compare.json", R"({"schema": "cubesim.config/1", "machine": "ipsc-nx",
      "topology": {"kind": "hypercube", "dim": 2}, "algorithm": "alltoall.sbt", "params": {"M": 32, "P": 16, "Q": 16},
      "sweep": {"algorithm": ["alltoall.sbt", "alltoall.sbnt", "transpose.exchange", "transpose.router"],
                "machine_overrides.ports": ["one", "all"]}})");
  Result r = run_cli("run " + cfg);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("(ports one and all)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: alltoall.* and transpose.* do different work"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tie at machine_overrides.ports=\"one\" (alltoall.*): alltoall.sbt and alltoall.sbnt (equal "
                       "times)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("fastest at machine_overrides.ports=\"one\" (transpose.*): "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("0.00 % slower"), std::string::npos) << r.out;
  r = run_cli("run " + cfg + " --json --reproducible");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["runs"][0]["winner"], "alltoall.sbt");
  EXPECT_EQ(j["runs"][0]["tied_with"], nlohmann::json::array({"alltoall.sbnt"}));
  // The transposes compete only with each other: the winner of run 3 is a transpose.
  EXPECT_EQ(j["runs"][4]["winner"].get<std::string>().rfind("transpose.", 0), 0u) << j["runs"][4].dump();
}

TEST(FirstHour, TheReportSaysWhatRan) {
  // Issue 33 point 10: the command line's changes and the values every run shares, in the text
  // and the JSON (whose machine and params are the resolved ones).
  Result r =
      run_cli("run configs/quickstart.json --set params.M=1024 --machine ipsc-os2 --set 'sweep.topology.dim=[2]'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("quickstart: broadcast.sbt on ipsc-os2 (ports one and all)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("set on the command line: --machine ipsc-os2 --set params.M=1024 --set "
                       "'sweep.topology.dim=[2]'\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("every run: root=0 M=1024 B=256; hypercube n=2 (4 nodes)\n"), std::string::npos) << r.out;
  r = run_cli("run configs/quickstart.json --set params.M=1024 --json --reproducible");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["command_line"], nlohmann::json::array({"--set params.M=1024"}));
  EXPECT_EQ(j["runs"][0]["params"]["M"], 1024);
}

TEST(FirstHour, ThePlotToolsTakeTheirOwnOptions) {
  // The global options fall through to cubesim from every command but these, whose arguments
  // are the Python tool's (--markdown is claims', not cubesim's).
  const Result r = run_cli("claims --only no-such-claim --json");
  EXPECT_EQ(r.err.find("unknown option"), std::string::npos) << r.err;
  EXPECT_EQ(run_cli("fit --help").code, 0);
}
