// The bad-input corpus (issue 18; issue 17 grows it): every case is input a user or a tool might
// give, and each must end the same way: exit 2, nothing on stdout, one line on stderr that names
// the file (or the option) and the place, and nothing written where --out points.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/cli_helpers.hpp"

namespace cubesim::test {
namespace {

namespace fs = std::filesystem;

struct BadCase {
  std::string name;
  std::vector<std::pair<std::string, std::string>> files;  ///< written into the case's folder {d}
  std::string args;      ///< the command line after "cubesim"; {d} is the case's folder
  std::string prefix;    ///< stderr starts with this ({d} replaced)
  std::string contains;  ///< and contains this
  std::string env;       ///< variables set for the command ("NAME=value ")
};

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (std::size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size())
    s.replace(at, from.size(), to);
  return s;
}

std::string config(const std::string& rest) {
  return R"({"schema": "cubesim.config/1", "machine": "ipsc-nx", )" + rest + "}";
}
std::string cube(int dim) { return R"("topology": {"kind": "hypercube", "dim": )" + std::to_string(dim) + "}"; }

/// The first line of the quickstart trace with `edit` applied to its header.
std::string trace_header(const std::string& from, const std::string& to) {
  const std::string text = read_all("traces/samples/quickstart.trace");
  return replace_all(text.substr(0, text.find('\n') + 1), from, to);
}

/// "1, 2, ..., n"
std::string numbers(int n) {
  std::string s;
  for (int i = 1; i <= n; ++i) s.append(i > 1 ? ", " : "").append(std::to_string(i));
  return s;
}

std::vector<BadCase> corpus() {
  const std::string deep = "[" + std::string(200000, '[') + std::string(200000, ']') + "]";
  const std::string deep_config = config(cube(3) + R"(, "algorithm": "broadcast.sbt", "params": )" + deep);
  const std::string huge_m = R"(, "params": {"M": 1099511627776}, "mode": "timing")";
  const std::string sg = "0 init\n1 init\n";
  std::vector<BadCase> v = {
      // 1. Deep nesting: refused at parse time, before any recursion.
      {"deep_validate",
       {{"c.json", deep_config}},
       "validate {d}/c.json",
       "{d}/c.json: line 1, column ",
       "nested more than 64 levels deep"},
      {"deep_run",
       {{"c.json", deep_config}},
       "run {d}/c.json --out {d}/out",
       "{d}/c.json: line 1, column ",
       "nested more than 64"},
      {"deep_predict",
       {{"c.json", deep_config}},
       "predict {d}/c.json",
       "{d}/c.json: line 1, column ",
       "nested more than 64"},
      // 2. Counts that would wrap: refused naming the parameter.
      {"overflow_alltoall",
       {{"c.json", config(cube(24) + R"(, "algorithm": "alltoall.sbt")" + huge_m)}},
       "predict {d}/c.json",
       "{d}/c.json: /params/M: the busiest node's data, N M, is more than 9.2e18 elements",
       ""},
      {"overflow_allgather_nrsbt",
       {{"c.json", config(cube(24) + R"(, "algorithm": "allgather.nrsbt")" + huge_m)}},
       "predict {d}/c.json",
       "{d}/c.json: /params/M: ",
       "beyond the 2^40"},
      {"overflow_sometoall",
       {{"c.json", config(cube(24) + R"(, "algorithm": "sometoall.sbt", "params": {"M": 1099511627776, "k": 2})")}},
       "predict {d}/c.json",
       "{d}/c.json: /params/M: ",
       "beyond the 2^40"},
      {"overflow_time",
       {{"c.json", config(cube(4) + R"(, "algorithm": "alltoall.sbt", "params": {"M": 68719476736})")}},
       "predict {d}/c.json",
       "{d}/c.json: /params/M: the predicted start-ups times tau overflows",
       ""},
      {"overflow_machine_tau",
       {{"c.json", config(R"("machine_overrides": {"tau": 9e6}, )" + cube(3) +
                          R"(, "algorithm": "broadcast.sbt", "params": {"M": 4})")}},
       "validate {d}/c.json",
       "{d}/c.json: /params/M: the predicted start-ups times tau overflows",
       ""},
      // 3. What the JSON library said raw, now in the one-line form.
      {"params_not_object_swept",
       {{"c.json", config(cube(3) + R"(, "algorithm": "broadcast.sbt", "params": 5, "sweep": {"params.M": [1, 2]})")}},
       "validate {d}/c.json",
       "{d}/c.json: /params: params must be an object to sweep \"params.M\"",
       ""},
      {"sweep_key_tilde",
       {{"c.json",
         config(cube(3) + R"(, "algorithm": "broadcast.sbt", "params": {"M": 4}, "sweep": {"params.a~2": [1, 2]})")}},
       "validate {d}/c.json",
       "{d}/c.json: /params/a~2: unknown parameter \"a~2\"",
       ""},
      {"overrides_array_swept",
       {{"c.json",
         config(
             R"("machine_overrides": [1], )" + cube(3) +
             R"(, "algorithm": "broadcast.sbt", "params": {"M": 4}, "sweep": {"machine_overrides.ports": [1, 2]})")}},
       "validate {d}/c.json",
       "{d}/c.json: /machine_overrides: machine_overrides must be an object",
       ""},
      {"number_1e400_config",
       {{"c.json", config(cube(3) + R"(, "algorithm": "broadcast.sbt", "params": {"M": 1e400})")}},
       "run {d}/c.json --out {d}/out",
       "{d}/c.json: line 1, column 145: the number 1e400 is out of range",
       ""},
      {"number_1e400_suite",
       {{"s.json", R"({"schema": "cubesim.suite/1", "tolerance": 1e400, "experiments": []})"}},
       "regress {d}/s.json --out {d}/out",
       "{d}/s.json: line 1, column 44: the number 1e400 is out of range",
       ""},
      {"number_1e400_trace",
       {{"t.trace", trace_header("\"M\":15360", "\"M\":1e400")}},
       "replay {d}/t.trace",
       "{d}/t.trace: line 1, column ",
       "the number 1e400 is out of range"},
      {"simgrid_rank_beyond_int64",
       {{"a.txt", "99999999999999999999 init\n"}},
       "replay {d}/a.txt --machine ipsc-nx",
       "{d}/a.txt: line 1: rank 99999999999999999999 is beyond the largest machine",
       ""},
      {"suite_config_name_too_long",
       {{"s.json",
         R"({"schema": "cubesim.suite/1", "experiments": [{"config": ")" + std::string(300, 'a') + R"(.json"}]})"}},
       "regress {d}/s.json",
       "{d}/s.json: /experiments/0/config: no such config: ",
       "File name too long"},
      {"machine_file_name_too_long",
       {},
       "replay traces/samples/quickstart.trace --machine " + std::string(300, 'a') + ".json",
       "<input>: --machine: \"aaaa",
       "is neither a machine preset"},
      // 4. A trace format a point cannot be written in: refused naming the point, --out untouched.
      {"simgrid_trace_of_forks",
       {},
       "run configs/regress/broadcast-gc.json --out {d}/out --trace simgrid",
       "configs/regress/broadcast-gc.json: /sweep (at ",
       "--trace simgrid: this trace has concurrent strands"},
      // 5. Kilobytes of input that would take gigabytes: refused before allocating.
      {"trace_claims_24_cube",
       {{"t.trace", replace_all(trace_header(R"("topology":{"kind":"hypercube","dim":4})",
                                             R"("topology":{"kind":"hypercube","dim":24})"),
                                R"("nodes":16,)", R"("nodes":16777216,)")}},
       "replay {d}/t.trace",
       "{d}/t.trace: line 1: /topology: replaying this trace on the hypercube n=24 (16777216 nodes) needs at least",
       "",
       "CUBESIM_MEMORY_LIMIT=1000000000 "},
      {"trace_undeclared_strand",
       {{"t.trace", trace_header("", "") + "0 16777216 compute 1\n1 16777216 compute 1\n"}},
       "replay {d}/t.trace",
       "{d}/t.trace: line 2: strand 16777216 of node 0 was not declared by a fork above",
       ""},
      {"trace_forks_beyond_its_size",
       {{"t.trace", trace_header("", "") + "0 0 fork 1 1048576\n"}},
       "replay {d}/t.trace",
       "{d}/t.trace: line 2: the forks declare 1048576 strands, more than the trace's",
       ""},
      {"simgrid_ranks_beyond_memory",
       {{"a.txt", "0 init\n16777215 init\n"}},
       "replay {d}/a.txt --machine ipsc-nx",
       "{d}/a.txt: replaying 16777216 ranks needs at least",
       "",
       "CUBESIM_MEMORY_LIMIT=1000000000 "},
      {"simgrid_ranks_missing",
       {{"a.txt", "0 init\n3 init\n"}},
       "replay {d}/a.txt --machine ipsc-nx",
       "{d}/a.txt: rank 1 has no actions (ranks 0..3 expected)",
       ""},
      {"data_mode_24_cube",
       {{"c.json", config(cube(24) + R"(, "algorithm": "broadcast.sbt", "params": {"M": 1}, "mode": "data")")}},
       "run {d}/c.json --out {d}/out",
       "{d}/c.json: /topology: hypercube n=24 (16777216 nodes) in data mode needs at least",
       "",
       "CUBESIM_MEMORY_LIMIT=1000000000 "},
      // 6. One bad point of a sweep: found by validate, before any point runs.
      {"sweep_point_overflows",
       {{"c.json",
         config(
             cube(3) +
             R"(, "algorithm": "broadcast.sbt", "params": {"M": 4}, "sweep": {"params.M": [1000, 1125899906842624]})")}},
       "run {d}/c.json --out {d}/out",
       "{d}/c.json: /sweep/params.M/1: M = 1125899906842624 is beyond 2^40",
       ""},
      // 7. SimGrid TI numbers out of range.
      {"simgrid_count_1e300",
       {{"a.txt", sg + "0 send 1 0 1e300\n1 recv 0 0 1\n"}},
       "replay {d}/a.txt --machine ipsc-nx",
       "{d}/a.txt: line 3: send: count 1e300 is beyond 2^40 bytes",
       ""},
      {"simgrid_count_9e18",
       {{"a.txt", sg + "0 send 1 0 9300000000000000000\n1 recv 0 0 1\n"}},
       "replay {d}/a.txt --machine ipsc-nx",
       "{d}/a.txt: line 3: send: count 9300000000000000000 is beyond 2^40 bytes",
       ""},
      {"simgrid_tag_3e9",
       {{"a.txt", sg + "0 send 1 3000000000 1\n1 recv 0 0 1\n"}},
       "replay {d}/a.txt --machine ipsc-nx",
       "{d}/a.txt: line 3: send: tag 3000000000 is beyond an MPI tag's range",
       ""},
      {"simgrid_sleep_1e10",
       {{"a.txt", sg + "0 sleep 1e10\n"}},
       "replay {d}/a.txt --machine ipsc-nx",
       "{d}/a.txt: line 3: sleep: 1e10 s is beyond the 1e6 s",
       ""},
      {"simgrid_compute_1e30",
       {{"a.txt", sg + "0 compute 1e30\n"}},
       "replay {d}/a.txt --machine ipsc-nx",
       "{d}/a.txt: line 3: compute: 1e30 flops is beyond the 1e15",
       ""},
      // 9. Control characters in a key: escaped, one line.
      {"key_with_newline",
       {{"c.json", config(cube(3) + R"(, "algorithm": "broadcast.sbt", "params": {"M": 4, "a\nb": 1})")}},
       "validate {d}/c.json",
       "{d}/c.json: /params/a\\nb: unknown parameter \"a\\nb\"",
       ""},
      {"key_with_terminal_escape",
       {{"c.json", config(cube(3) + R"(, "algorithm": "broadcast.sbt", "params": {"M": 4, "\u001b[31m": 1})")}},
       "validate {d}/c.json",
       "{d}/c.json: /params/\\x1b[31m: unknown parameter",
       ""},
      // 11. --out naming a file: refused before running.
      {"out_is_a_file",
       {{"f", "not a folder"}},
       "run configs/quickstart.json --out {d}/f",
       "<input>: --out: {d}/f exists and is not a folder",
       ""},
      // 13. Numbers on the command line.
      {"point_negative",
       {},
       "export-platform configs/quickstart.json --point -1",
       "<input>: --point: points are numbered from 1, not -1",
       ""},
      {"point_beyond",
       {},
       "export-platform configs/quickstart.json --point 99",
       "<input>: --point: the config has 14 point(s)",
       ""},
      {"trace_max_events_negative",
       {},
       "run configs/quickstart.json --out {d}/out --trace chrome --trace-max-events -5",
       "<input>: --trace-max-events: must be a count of at least 1, not -5",
       ""},
      {"trace_max_events_without_trace",
       {},
       "run configs/quickstart.json --trace-max-events 5",
       "<input>: --trace-max-events: needs --trace chrome",
       ""},

      // Issue 17: configs.
      {"dim_30_data_mode",
       {{"c.json", config(cube(30) + R"(, "algorithm": "broadcast.sbt", "params": {"M": 1}, "mode": "data")")}},
       "run {d}/c.json --out {d}/out",
       "{d}/c.json: /topology/dim: dim 30 is outside 0..24",
       ""},
      {"sweep_of_millions",
       {{"c.json", config(cube(3) + R"(, "algorithm": "broadcast.sbt", "params": {"M": 1}, "sweep": {"params.M": [)" +
                          numbers(2000) + R"(], "params.B": [)" + numbers(2000) + "]}")}},
       "run {d}/c.json --out {d}/out",
       "{d}/c.json: /sweep: the sweep has more than 100000 points",
       ""},
      {"config_unknown_key",
       {{"c.json", config(cube(3) + R"(, "algorithm": "broadcast.sbt", "params": {"M": 1}, "colour": 1)")}},
       "validate {d}/c.json",
       "{d}/c.json: /colour: unknown key",
       ""},
      {"config_unknown_algorithm",
       {{"c.json", config(cube(3) + R"(, "algorithm": "broadcast.warp", "params": {"M": 1})")}},
       "predict {d}/c.json",
       "{d}/c.json: /algorithm: unknown algorithm \"broadcast.warp\"",
       ""},
      {"config_algorithm_on_a_mesh",
       {{"c.json",
         config(R"("topology": {"kind": "mesh", "shape": [4, 4]}, "algorithm": "broadcast.sbt", "params": {"M": 1})")}},
       "run {d}/c.json --out {d}/out",
       "{d}/c.json: /topology/kind: this algorithm runs on a hypercube, not a mesh",
       ""},
      {"config_grid_not_powers_of_two",
       {{"c.json", config(cube(4) + R"(, "algorithm": "allgather.ring", "params": {"M": 4, "grid": [4, 3]})")}},
       "run {d}/c.json --out {d}/out",
       "{d}/c.json: /params/grid/1: grid extent 3 must be a power of two on a hypercube",
       ""},
      {"config_axis_outside_the_grid",
       {{"c.json",
         config(
             R"("topology": {"kind": "torus", "shape": [4, 4]}, "algorithm": "shift.ring", "params": {"M": 4, "axis": 2})")}},
       "validate {d}/c.json",
       "{d}/c.json: /params/axis: axis 2 is not an axis of the grid [4, 4]",
       ""},
      {"config_foh_emulated",
       {{"c.json",
         config(R"("topology": {"kind": "torus", "shape": [16]}, "algorithm": "matmul.foh", "params": {"M": 8})")}},
       "run {d}/c.json --out {d}/out",
       "{d}/c.json: /topology/shape: FOH runs on a 2-D torus or mesh itself, not a grid emulated on the torus 16 (16 "
       "nodes)",
       ""},
      {"config_negative_m",
       {{"c.json", config(cube(3) + R"(, "algorithm": "broadcast.sbt", "params": {"M": -4})")}},
       "validate {d}/c.json",
       "{d}/c.json: /params/M: M must be between 0 and 2^50, got -4",
       ""},
      {"config_unknown_mode",
       {{"c.json", config(cube(3) + R"(, "algorithm": "broadcast.sbt", "params": {"M": 4}, "mode": "fast")")}},
       "validate {d}/c.json",
       "{d}/c.json: /mode: mode must be \"data\"",
       ""},
      {"config_missing_file", {}, "run {d}/none.json --out {d}/out", "{d}/none.json: cannot read the file", ""},
      {"config_not_json",
       {{"c.json", "{\"schema\": \"cubesim.config/1\",\n  \"machine\": ipsc}"}},
       "validate {d}/c.json",
       "{d}/c.json: line 2, column ",
       "invalid JSON"},
      // Issue 17: machines.
      {"machine_inline_bad_time",
       {{"c.json", R"({"schema": "cubesim.config/1", "machine": {"name": "x", "tau": "-1 us"}, )" + cube(3) +
                       R"(, "algorithm": "broadcast.sbt", "params": {"M": 4}})"}},
       "validate {d}/c.json",
       "{d}/c.json: /machine/tau: '-1 us' is not a time",
       ""},
      {"machine_override_unknown",
       {{"c.json", config(R"("machine_overrides": {"warp": 1}, )" + cube(3) +
                          R"(, "algorithm": "broadcast.sbt", "params": {"M": 4})")}},
       "validate {d}/c.json",
       "{d}/c.json: /machine_overrides/warp: unknown override",
       ""},
      {"machine_override_ports",
       {{"c.json", config(R"("machine_overrides": {"ports": "seven"}, )" + cube(3) +
                          R"(, "algorithm": "broadcast.sbt", "params": {"M": 4})")}},
       "validate {d}/c.json",
       "{d}/c.json: /machine_overrides/ports: ports must be \"one\", \"all\" or an integer",
       ""},
      {"machine_file_incomplete",
       {{"m.json", R"({"name": "x"})"}},
       "replay traces/samples/quickstart.trace --machine {d}/m.json",
       "{d}/m.json: missing machine parameter \"tau\"",
       ""},
      {"machine_unknown_preset",
       {{"c.json", R"({"schema": "cubesim.config/1", "machine": "cm-9", )" + cube(3) +
                       R"(, "algorithm": "broadcast.sbt", "params": {"M": 4}})"}},
       "validate {d}/c.json",
       "{d}/c.json: /machine: ",
       "cm-9"},
      // Issue 31: preset selectors.
      {"machine_selector_malformed",
       {{"c.json", R"({"schema": "cubesim.config/1", "machine": "presets:", )" + cube(3) +
                       R"(, "algorithm": "broadcast.sbt", "params": {"M": 4}})"}},
       "validate {d}/c.json",
       "{d}/c.json: /machine: a preset selector is \"presets\" or \"presets:KEY=VALUE[,KEY=VALUE...]\"",
       ""},
      {"machine_selector_unknown_key",
       {{"c.json", config(cube(3) + R"(, "algorithm": "broadcast.sbt", "params": {"M": 4},
                                      "sweep": {"machine": "presets:warp=9"})")}},
       "validate {d}/c.json",
       "{d}/c.json: /sweep/machine: unknown machine key \"warp\"",
       "(known: tau, "},
      {"machine_selector_bad_value",
       {{"c.json", config(cube(3) + R"(, "algorithm": "broadcast.sbt", "params": {"M": 4},
                                      "sweep": {"machine": "presets:switching=fast"})")}},
       "validate {d}/c.json",
       "{d}/c.json: /sweep/machine: in the preset selector \"presets:switching=fast\": switching: switching must be",
       ""},
      {"machine_selector_matches_none",
       {{"c.json", config(cube(3) + R"(, "algorithm": "broadcast.sbt", "params": {"M": 4},
                                      "sweep": {"machine": "presets:packet_elements=3"})")}},
       "validate {d}/c.json",
       "{d}/c.json: /sweep/machine: the preset selector \"presets:packet_elements=3\" matches no preset",
       ""},
      // Issue 17: traces.
      {"trace_unknown_operation",
       {{"t.trace", trace_header("", "") + "0 0 warp 3\n"}},
       "replay {d}/t.trace",
       "{d}/t.trace: line 2: unknown operation \"warp\"",
       ""},
      {"trace_not_native",
       {{"t.trace", R"({"schema": "cubesim.trace/9"})"}},
       "replay {d}/t.trace --format cubesim",
       "{d}/t.trace: line 1: not a cubesim trace",
       ""},
      {"simgrid_unknown_action",
       {{"a.txt", "0 init\n0 teleport 1\n"}},
       "replay {d}/a.txt --machine ipsc-nx",
       "{d}/a.txt: line 2: action \"teleport\" is not supported",
       ""},
      {"simgrid_send_without_tag",
       {{"a.txt", sg + "0 send 1\n1 recv 0 0 1\n"}},
       "replay {d}/a.txt --machine ipsc-nx",
       "{d}/a.txt: line 3: send: missing tag",
       ""},
      {"simgrid_without_machine",
       {{"a.txt", sg}},
       "replay {d}/a.txt",
       "<input>: --machine: a SimGrid trace records no machine",
       ""},
      // Issue 17: suites.
      {"suite_entry_unknown_key",
       {{"s.json", R"({"schema": "cubesim.suite/1", "experiments": [{"config": "x.json", "colour": 1}]})"}},
       "regress {d}/s.json --out {d}/out",
       "{d}/s.json: /experiments/0/colour: unknown key",
       ""},
      {"suite_golden_not_a_name",
       {{"s.json", R"({"schema": "cubesim.suite/1", "golden": 5, "experiments": [{"config": "x.json"}]})"}},
       "regress {d}/s.json",
       "{d}/s.json: /golden: golden must be a file name",
       ""},
      // Issue 17: command-line arguments.
      {"max_events_negative",
       {},
       "run configs/quickstart.json --out {d}/out --max-events -1",
       "<input>: --max-events: must be a count of events (0 for none), not -1",
       ""},
      {"max_events_not_a_number",
       {},
       "replay traces/samples/quickstart.trace --max-events x",
       "cubesim: ",
       "--max-events"},
      {"max_memory_unit",
       {},
       "run configs/quickstart.json --out {d}/out --max-memory 5X",
       "<input>: --max-memory: \"5X\" is not a size",
       ""},
      {"max_memory_beyond_2_63",
       {},
       "regress configs/regress --max-memory 99999999999999T",
       "<input>: --max-memory: \"99999999999999T\" is more than 2^63 bytes",
       ""},
      {"max_memory_too_small",
       {},
       "run configs/quickstart.json --out {d}/out --max-memory 1M",
       "configs/quickstart.json: /sweep (at ",
       "under the memory budget of 1.0 MiB (--max-memory)"},
      {"resume_without_out", {}, "run configs/quickstart.json --resume", "<input>: --resume: needs --out DIR", ""},
      {"resume_file_not_a_resume",
       {{"resume.json", "{}"}},
       "run configs/quickstart.json --out {d} --resume",
       "{d}/resume.json: /schema: not a resume file",
       ""},
      {"resume_file_not_json",
       {{"resume.json", "nope"}},
       "run configs/quickstart.json --out {d} --resume",
       "{d}/resume.json: line 1, column ",
       "invalid JSON"},
      {"resume_entry_malformed",
       {{"resume.json", R"({"schema": "cubesim.resume/1", "finished": [{"identity": {}}]})"}},
       "run configs/quickstart.json --out {d} --resume",
       "{d}/resume.json: /finished/0: must be an object",
       ""},
      {"engine_unknown",
       {},
       "run configs/quickstart.json --engine warp",
       "<input>: --engine: unknown engine \"warp\"",
       ""},
      {"trace_without_out", {}, "run configs/quickstart.json --trace chrome", "<input>: --trace: traces are files", ""},
      {"trace_unknown_format",
       {},
       "run configs/quickstart.json --out {d}/out --trace pdf",
       "<input>: --trace: unknown trace format \"pdf\"",
       ""},
      {"trace_nodes_backwards",
       {},
       "run configs/quickstart.json --out {d}/out --trace chrome --trace-nodes 5-2",
       "<input>: --trace-nodes: expected a node or a range A-B, got \"5-2\"",
       ""},
      {"replay_topology_unknown",
       {},
       "replay traces/samples/quickstart.trace --topology cube:3",
       "<input>: --topology: ",
       "\"cube\""},
      {"replay_packet_negative",
       {},
       "replay traces/samples/quickstart.trace --packet -1",
       "<input>: --packet: a packet size is at least 1 element",
       ""},
      {"replay_format_unknown",
       {},
       "replay traces/samples/quickstart.trace --format xml",
       "<input>: --format: format must be auto",
       ""},
      {"list_unknown", {}, "list widgets", "<input>: list: list what?", ""},
      // Found by the fuzzers (docs/reliability.md "Fuzzing").
      {"golden_schema_not_a_string",
       {{"s.json", R"({"schema": "cubesim.suite/1", "experiments": [{"config": "c.json"}]})"},
        {"c.json", config(cube(2) + R"(, "algorithm": "broadcast.sbt", "params": {"M": 4})")},
        {"golden.json", R"({"schema": {"schema": "cte/0"}, "experiments": {}})"}},
       "regress {d}/s.json",
       "{d}/golden.json: a golden file is ",
       ""},
      {"trace_name_not_a_string",
       {{"t.trace", replace_all(trace_header("\"name\":\"quickstart\"", "\"name\":5"), "", "") + "0 0 compute 1\n"}},
       "replay {d}/t.trace --json",
       "{d}/t.trace: line 1: /name: name must be a string",
       ""},
  };
  return v;
}

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, ExitsTwoWithOneLineNamingThePlaceAndWritesNothing) {
  const BadCase& c = GetParam();
  const std::string d = temp_dir("bad_" + c.name);
  for (const auto& [name, text] : c.files) write_temp("bad_" + c.name + "/" + name, text);
  std::vector<std::string> before;
  for (const auto& e : fs::directory_iterator(d)) before.push_back(e.path().filename().string());
  const Result r = run_command(c.env + std::string(CUBESIM_BINARY) + " " + replace_all(c.args, "{d}", d));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  const std::string prefix = replace_all(c.prefix, "{d}", d);
  EXPECT_EQ(r.err.substr(0, prefix.size()), prefix) << r.err;
  EXPECT_NE(r.err.find(replace_all(c.contains, "{d}", d)), std::string::npos) << r.err;
  std::vector<std::string> after;
  for (const auto& e : fs::directory_iterator(d)) after.push_back(e.path().filename().string());
  std::sort(before.begin(), before.end());
  std::sort(after.begin(), after.end());
  EXPECT_EQ(after, before) << "nothing written beside the inputs (no --out, no staging)";
  fs::remove_all(d);
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadInput, ::testing::ValuesIn(corpus()),
                         [](const ::testing::TestParamInfo<BadCase>& i) { return i.param.name; });

}  // namespace
}  // namespace cubesim::test
