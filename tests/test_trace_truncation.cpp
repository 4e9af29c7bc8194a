// Issue 38 (3): a trace cut at any byte (a run killed while writing, a copy that stopped) is
// refused with one line naming the byte where it ends, never replayed in part (docs/traces.md,
// "Whole or refused"). The native format ends with an end line; a cubesim.trace/1 file, which has
// none, is refused with the command that makes a whole one a cubesim.trace/2 file; a SimGrid TI
// action file cut inside its last line is refused too.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "sim/input_error.hpp"
#include "tests/cli_helpers.hpp"
#include "traces/simgrid_ti.hpp"
#include "traces/ti_trace.hpp"

namespace cubesim {
namespace {

using test::read_all;
using test::run_cli;
using test::temp_dir;
using test::write_temp;

/// The quickstart's broadcast on a 2-cube, recorded now through `cubesim run --trace cubesim`.
std::string record_small_trace() {
  const std::string dir = temp_dir("trunc_record");
  const test::Result r = run_cli(
      "run configs/traces/quickstart-trace.json --set topology.dim=2 --set params.M=8 --trace cubesim --out " + dir);
  EXPECT_EQ(r.code, 0) << r.err;
  return dir + "/traces/quickstart.trace";
}

TEST(TraceTruncation, EveryCutOfARecordedTraceIsRefusedNamingTheByte) {
  const std::string path = record_small_trace();
  const std::string text = read_all(path);
  ASSERT_GT(text.size(), 100u);
  ASSERT_TRUE(text.starts_with(std::string(trace::kSchema) + " "));
  // The whole file reads, and its end line counts its steps and the bytes before it.
  const trace::Trace whole = trace::read_text(text, path);
  const std::size_t end_at = text.rfind('\n', text.size() - 2) + 1;
  EXPECT_EQ(text.substr(end_at), "end " + std::to_string(whole.steps()) + " " + std::to_string(end_at) + "\n");
  // Every cut: the in-process reader refuses it before reading any of it, naming the byte.
  for (std::size_t k = 0; k < text.size(); ++k) {
    try {
      trace::read_text(text.substr(0, k), "t.trace");
      ADD_FAILURE() << "a cut at byte " << k << " of " << text.size() << " was accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.where(), "byte " + std::to_string(k)) << e.what();
      EXPECT_TRUE(e.message().starts_with("the trace ends early")) << e.what();
      EXPECT_NE(e.message().find("truncated?"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
  // The command line, on a handful of cuts: exit 2, one line naming the file and the byte.
  const std::size_t header_end = text.find('\n') + 1;
  const std::size_t second_end = text.find('\n', header_end) + 1;
  const std::string dir = temp_dir("trunc_cli");
  for (const std::size_t k : {std::size_t{0}, std::size_t{7}, std::size_t{15}, header_end / 2, header_end,
                              header_end + 3, second_end, end_at, end_at + 4, text.size() - 1}) {
    const std::string cut = dir + "/cut-" + std::to_string(k) + ".trace";
    std::ofstream(cut, std::ios::binary) << text.substr(0, k);
    const test::Result r = run_cli("replay " + cut + " --out " + dir + "/out");
    EXPECT_EQ(r.code, 2) << k << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << k << ": " << r.err;
    EXPECT_NE(r.err.find(cut + ": byte " + std::to_string(k) + ": "), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_FALSE(std::filesystem::exists(dir + "/out/report.json")) << k;
  }
  // The whole file replays.
  const test::Result r = run_cli("replay " + path);
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST(TraceTruncation, AnEndLineThatDoesNotMatchIsRefused) {
  const std::string text = read_all("traces/samples/quickstart.trace");
  const std::size_t end_at = text.rfind('\n', text.size() - 2) + 1;
  const std::string body = text.substr(0, end_at);
  struct Case {
    std::string text, where, what;
  };
  const std::size_t lines = static_cast<std::size_t>(std::count(body.begin(), body.end(), '\n'));
  const std::string end_line = "line " + std::to_string(lines + 1) + " (the end line)";
  const std::vector<Case> cases = {
      // A step lost in the middle (cut and joined): the byte count no longer matches.
      {body.substr(0, body.rfind('\n', body.size() - 2) + 1) + text.substr(end_at),
       "line " + std::to_string(lines) + " (the end line)", "bytes before it"},
      {body + "end 1 " + std::to_string(end_at) + "\n", end_line, "the end line counts 1 steps"},
      {body + "end x\n", end_line, "expected \"end <steps> <bytes>\""},
      {text + "end 0 " + std::to_string(text.size()) + "\n", "line " + std::to_string(lines + 1),
       "an end line before the last line"},
      {"cubesim.trace/7 {}\nend 0 19\n", "line 1", "\"cubesim.trace/7\" is not a trace format this cubesim reads"},
  };
  for (const Case& c : cases) {
    try {
      trace::read_text(c.text, "t.trace");
      ADD_FAILURE() << "accepted: " << c.text.substr(c.text.size() - 40);
    } catch (const InputError& e) {
      EXPECT_EQ(e.where(), c.where) << e.what();
      EXPECT_NE(e.message().find(c.what), std::string::npos) << e.what();
    }
  }
}

TEST(TraceTruncation, VersionOneIsRefusedWithTheCommandThatSealsAWholeOne) {
  const std::string v2 = read_all("traces/samples/quickstart.trace");
  const std::size_t end_at = v2.rfind('\n', v2.size() - 2) + 1;
  // The same trace as cubesim wrote it before the end line.
  std::string v1 = v2.substr(0, end_at);
  for (std::size_t at = 0; (at = v1.find(trace::kSchema, at)) != std::string::npos && at < v1.find('\n');)
    v1.replace(at, std::string(trace::kSchema).size(), trace::kSchemaV1);
  try {
    trace::read_text(v1, "old.trace");
    ADD_FAILURE() << "a cubesim.trace/1 file was read";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "line 1");
    EXPECT_NE(e.message().find("has no end line, so a cut one cannot be told from a whole one"), std::string::npos)
        << e.what();
    // The line it suggests is the end line cubesim.trace/2 writes for the same steps.
    EXPECT_NE(e.message().find("echo '" + v2.substr(end_at, v2.size() - end_at - 1) + "' >> 'old.trace'"),
              std::string::npos)
        << e.what();
    EXPECT_NE(e.message().find("sed -i '1s|cubesim\\.trace/1|cubesim.trace/2|g' 'old.trace'"), std::string::npos);
  }
  // A version-1 file cut inside a line is a cut file first.
  try {
    trace::read_text(v1.substr(0, v1.size() - 3), "old.trace");
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "byte " + std::to_string(v1.size() - 3)) << e.what();
  }
  // with_end_line seals what a writer by hand wrote: the same bytes as cubesim's writer.
  EXPECT_EQ(trace::with_end_line(v2.substr(0, end_at)), v2);
}

TEST(TraceTruncation, ASimGridActionFileCutInsideALineIsRefused) {
  std::string text;
  for (int r = 0; r < 4; ++r)
    text += read_all("traces/samples/simgrid-handwritten/ranks/rank-" + std::to_string(r) + ".txt");
  ASSERT_EQ(text.back(), '\n');
  const auto import = [](const std::string& t) {
    return trace::import_simgrid("a.txt", 4, [&](const std::string&) -> std::optional<std::string> { return t; });
  };
  EXPECT_NO_THROW(import(text));
  int refused = 0;
  for (std::size_t k = 1; k < text.size(); ++k) {
    if (text[k - 1] == '\n') continue;  // a cut at a line boundary: SimGrid's format cannot tell
    const std::size_t line_start = text.rfind('\n', k - 1) == std::string::npos ? 0 : text.rfind('\n', k - 1) + 1;
    const std::string last = text.substr(line_start, k - line_start);
    if (last.find_first_not_of(" \t") == std::string::npos || last[last.find_first_not_of(" \t")] == '#') continue;
    try {
      import(text.substr(0, k));
      ADD_FAILURE() << "a cut at byte " << k << " was accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.where(), "byte " + std::to_string(k)) << e.what();
      EXPECT_NE(e.message().find("truncated?"), std::string::npos) << e.what();
      ++refused;
    }
  }
  EXPECT_GT(refused, 100);
}

}  // namespace
}  // namespace cubesim
