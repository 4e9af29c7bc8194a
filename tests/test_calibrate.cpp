// `cubesim calibrate` (docs/calibrate.md): machine keys fitted to measured times. The measurements
// here are made by the simulator itself on a machine whose tau and t_c are known, so that the fit
// must find them again: exactly from exact times, within its 95 % interval from noisy ones.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/calibrate.hpp"
#include "sim/input_error.hpp"
#include "tests/cli_helpers.hpp"

using cubesim::test::read_all;
using cubesim::test::Result;
using cubesim::test::run_cli;
using cubesim::test::temp_dir;
using cubesim::test::write_temp;
using nlohmann::json;

namespace {

// The truth: ipsc-nx with these two keys changed (its base values are 1.5 ms and 4 us).
constexpr double kTau = 1.1e-3, kTc = 3.3e-6;

// The row config: the CSV's columns set the algorithm, the cube and the message.
constexpr const char* kRowConfig = R"({"schema": "cubesim.config/1", "machine": "ipsc-nx",
  "topology": {"kind": "hypercube", "dim": 3}, "algorithm": "broadcast.sbt", "params": {"root": 0, "M": 1000}})";

struct Truth {
  std::string point;     // "algorithm,dim,M" as CSV cells
  std::int64_t time_ps;  // simulated on the true machine
};

// Twelve measurements (two algorithms, two cubes, three sizes across packet boundaries), simulated
// once on the true machine by `cubesim run`.
const std::vector<Truth>& truth() {
  static const std::vector<Truth> t = [] {
    const std::string cfg = write_temp("calibrate-truth.json", R"({"schema": "cubesim.config/1", "machine": "ipsc-nx",
      "machine_overrides": {"tau": "1.1ms", "t_c": "3.3us"}, "topology": {"kind": "hypercube", "dim": 3},
      "algorithm": "broadcast.sbt", "params": {"root": 0, "M": 1000},
      "sweep": {"algorithm": ["broadcast.sbt", "allgather.sbt"], "topology.dim": [2, 4], "params.M": [50, 300, 1000]}})");
    const Result r = run_cli("run " + cfg + " --json --reproducible");
    if (r.code != 0) throw std::runtime_error("the truth did not run: " + r.err);
    std::vector<Truth> v;
    const json report = json::parse(r.out);
    for (const json& run : report["runs"]) {
      const json& p = run["point"];
      v.push_back({p["algorithm"].get<std::string>() + "," + std::to_string(p["topology.dim"].get<int>()) + "," +
                       std::to_string(p["params.M"].get<int>()),
                   run["simulated"]["time_ps"].get<std::int64_t>()});
    }
    return v;
  }();
  return t;
}

// A deterministic +-1 % noise, different on every row.
constexpr double kNoise[] = {0.010, -0.010, 0.005, -0.007, 0.003, -0.004, 0.008, -0.002, 0.006, -0.009, 0.001, -0.005};

// MEASURED.csv in folder `dir` beside its row config: the truth, noisy or exact.
std::string measured_csv(const std::string& dir, bool noisy) {
  write_temp(std::filesystem::path(dir).filename().string() + "/row.json", kRowConfig);
  std::string csv = "# made by tests/test_calibrate.cpp\nconfig,algorithm,topology.dim,params.M,time\n";
  for (std::size_t i = 0; i < truth().size(); ++i) {
    const Truth& t = truth()[i];
    char time[64];
    if (noisy)
      std::snprintf(time, sizeof time, "%.12g", static_cast<double>(t.time_ps) * 1e-12 * (1 + kNoise[i]));
    else
      std::snprintf(time, sizeof time, "%lldps", static_cast<long long>(t.time_ps));
    csv += "row.json," + t.point + "," + time + "\n";
  }
  return write_temp(std::filesystem::path(dir).filename().string() + "/measured.csv", csv);
}

json calibrate_json(const std::string& args) {
  const Result r = run_cli("calibrate " + args + " --json");
  EXPECT_EQ(r.code, 0) << r.err;
  return json::parse(r.out);
}

}  // namespace

TEST(Calibrate, NoisyMeasurementsGiveTheTrueValuesWithinNarrowIntervals) {
  const std::string csv = measured_csv(temp_dir("noisy"), true);
  const json j = calibrate_json(csv + " --machine ipsc-nx --fit tau,t_c");
  EXPECT_EQ(j["schema"], "cubesim.calibration/1");
  EXPECT_TRUE(j["converged"].get<bool>());
  EXPECT_LE(j["iterations"].get<int>(), 6);  // the times are linear in tau and t_c
  EXPECT_EQ(j["rows"], 12);
  EXPECT_EQ(j["dof"], 10);
  ASSERT_TRUE(j["intervals"].get<bool>());
  for (const auto& [key, truth_s] : {std::pair{"tau", kTau}, std::pair{"t_c", kTc}}) {
    const json& f = j["fit"][key];
    const double v = f["value_s"], ci = f["ci95_s"];
    EXPECT_LE(std::fabs(v - truth_s), ci) << key << " = " << v << " ± " << ci << ", truth " << truth_s;
    EXPECT_GT(ci, 0) << key;
    EXPECT_LT(ci, 0.05 * truth_s) << key << ": the interval is not narrow";
  }
  ASSERT_EQ(j["residuals_by_row"].size(), 12u);
  for (const json& r : j["residuals_by_row"]) {
    EXPECT_LT(std::fabs(r["relative_error"].get<double>()), 0.03);
    EXPECT_EQ(r["relative_error"].get<double>(),
              (r["simulated_s"].get<double>() - r["measured_s"].get<double>()) / r["measured_s"].get<double>());
  }
  // The text report says the same.
  const Result t = run_cli("calibrate " + csv + " --machine ipsc-nx --fit tau,t_c");
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("converged after"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("(95 %)"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("12 rows, 10 degrees of freedom"), std::string::npos) << t.out;
}

TEST(Calibrate, ExactMeasurementsGiveTheTrueValues) {
  const std::string csv = measured_csv(temp_dir("exact"), false);
  // From both sides of the truth (a preset above it, a machine file below), the rows run one at a time.
  const std::string below =
      write_temp("exact/below.json", R"({"name": "below", "tau": "0.2ms", "t_c": "1us", "packet_elements": 256})");
  for (const std::string& base : {std::string("ipsc-nx"), below}) {
    const json j = calibrate_json(csv + " --machine " + base + " --fit tau,t_c --jobs 1");
    EXPECT_TRUE(j["converged"].get<bool>()) << base;
    EXPECT_NEAR(j["fit"]["tau"]["value_s"].get<double>(), kTau, 1e-6 * kTau) << base;
    EXPECT_NEAR(j["fit"]["t_c"]["value_s"].get<double>(), kTc, 1e-6 * kTc) << base;
    for (const json& r : j["residuals_by_row"]) EXPECT_LT(std::fabs(r["relative_error"].get<double>()), 1e-6) << base;
  }
  // A third key whose truth is 0 (the truth has no per-message start-up): the step pushes it below
  // 0, it stays at the bound, and the other two still reach the truth.
  const json j = calibrate_json(csv + " --machine ipsc-nx --fit tau_msg,tau,t_c");
  EXPECT_TRUE(j["converged"].get<bool>());
  EXPECT_EQ(j["fit"]["tau_msg"]["value_ps"], 0);
  EXPECT_TRUE(j["fit"]["tau_msg"]["at_bound"].get<bool>());
  EXPECT_NEAR(j["fit"]["tau"]["value_s"].get<double>(), kTau, 1e-6 * kTau);
  EXPECT_NEAR(j["fit"]["t_c"]["value_s"].get<double>(), kTc, 1e-6 * kTc);
}

TEST(Calibrate, TheMachineFileLoadsAndRunsAtTheCalibratedTimes) {
  const std::string dir = temp_dir("written");
  const std::string csv = measured_csv(dir, true), out = dir + "/ipsc-lab.json";
  const json j = calibrate_json(csv + " --machine ipsc-nx --fit tau,t_c --out " + out);
  ASSERT_EQ(j["machine_file"], out);
  const json m = json::parse(read_all(out));
  EXPECT_EQ(m["schema"], "cubesim.machine/1");
  EXPECT_EQ(m["name"], "ipsc-lab");
  EXPECT_EQ(m["kind"]["value"], "calibrated");
  EXPECT_NE(m["tau"]["source"].get<std::string>().find("fitted by cubesim calibrate to " + csv + " (12 rows): "),
            std::string::npos)
      << m["tau"]["source"];
  EXPECT_NE(m["t_c"]["source"].get<std::string>().find("(95 %)"), std::string::npos);
  EXPECT_EQ(m["t_a"]["value"], "33.333333us");  // copied from the base, with its source
  EXPECT_NE(m["t_a"]["source"].get<std::string>().find("TR-530"), std::string::npos);
  // A config with the file as its machine runs each row at the time the calibration reported.
  for (std::size_t i : {0u, 7u, 11u}) {
    const json& row = j["residuals_by_row"][i];
    const json& set = row["set"];
    json cfg = {{"schema", "cubesim.config/1"},
                {"machine", m},
                {"topology", {{"kind", "hypercube"}, {"dim", set["topology.dim"]}}},
                {"algorithm", set["algorithm"]},
                {"params", {{"M", set["params.M"]}}}};
    const Result r = run_cli("run " + write_temp("written/row-" + std::to_string(i) + ".json", cfg.dump()) + " --json");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(json::parse(r.out)["runs"][0]["simulated"]["time_ps"], row["simulated_ps"]) << i;
  }
  // replay --machine FILE re-times a recorded run on it to the same time.
  const Result rec = run_cli("run " + dir + "/row.json --out " + dir + "/rec --trace cubesim");
  ASSERT_EQ(rec.code, 0) << rec.err;
  const Result rep = run_cli("replay " + dir + "/rec/traces/row.trace --machine " + out + " --json");
  ASSERT_EQ(rep.code, 0) << rep.err;
  const std::string one = write_temp("written/one.csv", "config,time\nrow.json,20ms\n");
  const json k = calibrate_json(one + " --machine " + out + " --fit tau");  // the file is a base machine too
  EXPECT_EQ(json::parse(rep.out)["runs"][0]["simulated"]["time_ps"].get<std::int64_t>(), [&] {
    // row.json (broadcast.sbt, d = 3, M = 1000) on the written machine, one-port:
    // 3 (4 tau + 1000 t_c), the values as the file holds them.
    const json& f = j["fit"];
    return 3 * (4 * f["tau"]["value_ps"].get<std::int64_t>() + 1000 * f["t_c"]["value_ps"].get<std::int64_t>());
  }());
  EXPECT_TRUE(k["converged"].get<bool>());
  EXPECT_EQ(k["fit"]["tau"]["base_s"], j["fit"]["tau"]["value_s"]);
}

TEST(Calibrate, AFitThatDoesNotConvergeExitsOneAndWritesNothing) {
  const std::string dir = temp_dir("unconverged");
  const std::string csv = measured_csv(dir, true), out = dir + "/m.json";
  const Result r = run_cli("calibrate " + csv + " --machine ipsc-nx --fit tau,t_c --max-iterations 1 --out " + out);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("NOT CONVERGED after 1 iteration"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("did not converge"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(Calibrate, AsManyRowsAsKeysFitsWithoutIntervals) {
  const std::string dir = temp_dir("square");
  write_temp("square/row.json", kRowConfig);
  const std::string csv =
      write_temp("square/m.csv", "config,params.M,time\nrow.json,100,4.29ms\nrow.json,1000,23.1ms\n");
  const Result r = run_cli("calibrate " + csv + " --machine ipsc-nx --fit tau,t_c");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("no intervals"), std::string::npos) << r.out;
  const json j = calibrate_json(csv + " --machine ipsc-nx --fit tau,t_c");
  EXPECT_FALSE(j["intervals"].get<bool>());
  EXPECT_TRUE(j["fit"]["tau"]["ci95_s"].is_null());
  // 3 (tau + 100 t_c) = 4.29 ms and 3 (4 tau + 1000 t_c) = 23.1 ms: tau = 1.1 ms, t_c = 3.3 us.
  EXPECT_NEAR(j["fit"]["tau"]["value_s"].get<double>(), kTau, 1e-6 * kTau);
  EXPECT_NEAR(j["fit"]["t_c"]["value_s"].get<double>(), kTc, 1e-6 * kTc);
}

TEST(Calibrate, BadInputIsOneLineExitTwoAndWritesNothing) {
  const std::string dir = temp_dir("bad");
  write_temp("bad/row.json", kRowConfig);
  write_temp("bad/broken.json", R"({"schema": "cubesim.config/1", "machine": "ipsc-nx", "algorithm": "nope"})");
  write_temp("bad/overrides-tau.json", R"({"schema": "cubesim.config/1", "machine": "ipsc-nx",
    "machine_overrides": {"tau": "1ms"}, "topology": {"kind": "hypercube", "dim": 3}, "algorithm": "broadcast.sbt",
    "params": {"M": 100}})");
  write_temp("bad/sweeps.json", R"({"schema": "cubesim.config/1", "machine": "ipsc-nx",
    "topology": {"kind": "hypercube", "dim": 3}, "algorithm": "broadcast.sbt", "params": {"M": 100},
    "sweep": {"params.M": [100, 200]}})");
  const std::string good = "config,params.M,time\nrow.json,100,12ms\nrow.json,1000,30ms\nrow.json,2000,50ms\n";
  struct Case {
    const char* name;
    std::string csv;  // empty: no file
    std::string args;
    std::string expect;  // a part of the one line
  };
  const std::string f = dir + "/m.csv";
  const std::vector<Case> cases = {
      {"missing_file", "", "--fit tau", f + ": cannot read the file"},
      {"only_comments", "# nothing\n\n", "--fit tau", f + ": no header row and no measurements"},
      {"no_header", "row.json,12ms\n", "--fit tau", f + ": line 1: no header row"},
      {"no_rows", "config,time\n# none\n", "--fit tau", f + ": no measurements"},
      {"no_config_column", "time,params.M\n1ms,5\n", "--fit tau", "line 1: the header has no \"config\" column"},
      {"no_time_column", "config,params.M\nrow.json,5\n", "--fit tau", "line 1: the header has no \"time\" column"},
      {"unknown_column", "config,params.M,colour,time\nrow.json,5,red,1ms\n", "--fit tau",
       "line 1, column 3: unknown column \"colour\""},
      {"machine_column", "config,machine,time\nrow.json,ipsc-nx,1ms\n", "--fit tau",
       "line 1, column 2: a column cannot set the machine"},
      {"fitted_key_column", "config,machine_overrides.tau,time\nrow.json,1ms,1ms\n", "--fit tau",
       "line 1, column 2: column \"machine_overrides.tau\" sets a key that --fit fits"},
      {"column_twice", "config,time,time\nrow.json,1ms,2ms\n", "--fit tau",
       "line 1, column 3: column \"time\" is named twice"},
      {"bad_time", "config,time\nrow.json,12 parsecs\n", "--fit tau", "line 2, column 2 (time): unknown time unit"},
      {"negative_time", "config,time\n\nrow.json,-3ms\n", "--fit tau",
       "line 3, column 2 (time): a measured time cannot be negative"},
      {"zero_time", "config,time\nrow.json,0\n", "--fit tau",
       "line 2, column 2 (time): a measured time must be above 0"},
      {"bad_weight", "config,time,weight\nrow.json,1ms,heavy\n", "--fit tau",
       "line 2, column 3 (weight): a weight is a number above 0"},
      {"field_count", "config,time\nrow.json,1ms,2\n", "--fit tau", "line 2: 3 fields, but the header names 2 columns"},
      {"open_quote", "config,time\n\"row.json,1ms\n", "--fit tau", "line 2: a quoted field is not closed"},
      {"missing_config", "config,time\nnone.json,1ms\n", "--fit tau", "line 2: " + dir + "/none.json: cannot read"},
      {"config_fails", "config,time\nbroken.json,1ms\n", "--fit tau", "line 2: " + dir + "/broken.json: /algorithm: "},
      {"bad_cell", "config,params.M,time\nrow.json,many,1ms\n", "--fit tau", "line 2, column 2 (params.M): "},
      {"config_sweeps", "config,time\nsweeps.json,1ms\n", "--fit tau",
       "line 2: sweeps.json sweeps 2 points (params.M): a row is one run"},
      {"config_overrides_fitted", "config,time\noverrides-tau.json,1ms\n", "--fit tau",
       "line 2: overrides-tau.json sets tau in its machine_overrides, and --fit fits it"},
      {"unknown_fit_key", good, "--fit tau,colour", "--fit: unknown machine key \"colour\""},
      {"fit_key_not_time", good, "--fit tau,ports", "--fit: \"ports\" is not a time"},
      {"fit_key_twice", good, "--fit tau,tau", "--fit: \"tau\" is named twice"},
      {"fewer_rows_than_keys", "config,time\nrow.json,12ms\n", "--fit tau,t_c",
       f + ": 1 measurement cannot fix 2 keys (tau, t_c)"},
      {"key_changes_nothing", good, "--fit tau,t_a", f + ": --fit t_a: changes no simulated time of these 3 rows"},
      {"keys_inseparable", "config,params.M,time\nrow.json,100,12ms\nrow.json,200,20ms\nrow.json,250,30ms\n",
       "--fit tau,tau_msg", f + ": --fit tau,tau_msg: the two keys change every row's"},  // one packet a message
      {"unknown_machine", good, "--fit tau --machine ipsc-nine",
       "--machine: \"ipsc-nine\" is neither a machine preset"},
      {"bad_residuals", good, "--fit tau --residuals squared", "--residuals: must be relative or absolute"},
      {"out_is_a_folder", good, "--fit tau --out " + dir, dir + ": --out: is a folder"},
  };
  for (const Case& c : cases) {
    std::filesystem::remove(f);
    if (!c.csv.empty()) write_temp("bad/m.csv", c.csv);
    const std::string out = dir + "/out.json";
    const bool has_machine = c.args.find("--machine") != std::string::npos;
    const bool has_out = c.args.find("--out") != std::string::npos;
    const Result r = run_cli("calibrate " + f + (has_machine ? "" : " --machine ipsc-nx") + " " + c.args +
                             (has_out ? "" : " --out " + out));
    EXPECT_EQ(r.code, 2) << c.name << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.name << ": " << r.out;
    ASSERT_FALSE(r.err.empty()) << c.name;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << c.name << ": not one line: " << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.name << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << c.name;
  }
}

TEST(Calibrate, TheCsvFormat) {
  // Comments, blank lines, quoted fields, empty cells (the config's own value) and weights.
  const std::string text =
      "# measured on the lab's iPSC\n\n"
      " config , topology.shape , params.M , time , weight \n"
      "a.json, , 100, 12.5ms, 2\n"
      "  # a comment row\n"
      "\"b,c.json\", \"[4, 4]\", , 0.25, \n"
      "/abs/d.json, , \"1\"\"0\", 1e-3 ,\n";
  const cubesim::MeasuredTable t = cubesim::parse_measured(text, "data/m.csv");
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[0].line, 4);
  EXPECT_EQ(t.rows[0].config_path, "data/a.json");
  EXPECT_DOUBLE_EQ(t.rows[0].time_s, 12.5e-3);
  EXPECT_DOUBLE_EQ(t.rows[0].weight, 2);
  ASSERT_EQ(t.rows[0].cells.size(), 1u);
  EXPECT_EQ(t.rows[0].cells[0], (std::pair<std::string, std::string>{"params.M", "100"}));
  EXPECT_EQ(t.rows[1].line, 6);
  EXPECT_EQ(t.rows[1].config, "b,c.json");
  EXPECT_DOUBLE_EQ(t.rows[1].time_s, 0.25);
  EXPECT_DOUBLE_EQ(t.rows[1].weight, 1);
  EXPECT_EQ(t.rows[1].cells[0], (std::pair<std::string, std::string>{"topology.shape", "[4, 4]"}));
  EXPECT_EQ(t.rows[2].config_path, "/abs/d.json");
  EXPECT_EQ(t.rows[2].cells[0].second, "1\"0");
  EXPECT_DOUBLE_EQ(t.rows[2].time_s, 1e-3);
}

TEST(Calibrate, StudentQuantiles) {
  // Two-sided 95 % points of Student's t, from the tables.
  for (const auto& [df, t] : {std::pair{1.0, 12.7062}, std::pair{2.0, 4.3027}, std::pair{5.0, 2.5706},
                              std::pair{10.0, 2.2281}, std::pair{30.0, 2.0423}, std::pair{1000.0, 1.9623}})
    EXPECT_NEAR(cubesim::student_t975(df), t, 1e-4) << df;
}

TEST(Calibrate, TheShippedExampleFindsItsTruth) {
  // docs/calibrate.md's example: stand-in measurements made on ipsc-nx with tau 1.2 ms and t_c 3.6 us.
  const json j = calibrate_json("configs/calibrate/ipsc-example.csv --machine ipsc-nx --fit tau,t_c");
  EXPECT_TRUE(j["converged"].get<bool>());
  EXPECT_EQ(j["rows"], 16);
  for (const auto& [key, truth_s] : {std::pair{"tau", 1.2e-3}, std::pair{"t_c", 3.6e-6}})
    EXPECT_LE(std::fabs(j["fit"][key]["value_s"].get<double>() - truth_s), j["fit"][key]["ci95_s"].get<double>())
        << key;
}
