#pragma once
/// What the libFuzzer harnesses share (docs/reliability.md "Fuzzing"). Each harness feeds its
/// input to one parser exactly as the command line does, and holds the parser to its contract:
/// bad input is an InputError (exit 2 for a user), anything else that escapes is a finding
/// (libFuzzer reports the uncaught exception). Inputs that parse and are small also run, under
/// an event budget, and their data must verify.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "app/replay.hpp"
#include "app/runner.hpp"
#include "sim/input_error.hpp"

namespace cubesim::fuzz {

inline const Registry& registry() {
  static const Registry r = make_registry();
  return r;
}

/// This process's scratch folder, made once and removed at exit.
inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    std::string t = (std::filesystem::temp_directory_path() / "cubesim_fuzz_XXXXXX").string();
    if (::mkdtemp(t.data()) == nullptr) std::abort();
    static const std::string keep = t;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(keep, ec);
    });
    return std::filesystem::path(t);
  }();
  return dir;
}

/// Writes `text` to `name` in the scratch folder; returns its path.
inline std::string put(const std::string& name, const std::string& text) {
  const std::filesystem::path p = scratch() / name;
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
  return p.string();
}

/// The parts of an input separated by a line "====" (several files in one input).
inline std::vector<std::string> parts(const std::string& text) {
  std::vector<std::string> v;
  const std::string sep = "\n====\n";
  std::size_t at = 0;
  for (std::size_t next; (next = text.find(sep, at)) != std::string::npos; at = next + sep.size())
    v.push_back(text.substr(at, next - at));
  v.push_back(text.substr(at));
  return v;
}

/// The budgets of a fuzzed run: a few milliseconds at most.
inline RunLimits small_limits() {
  RunLimits l;
  l.max_events = 200'000;
  return l;
}

/// A valid run that is small enough to simulate on every input.
inline bool small(const Setup& s) {
  const Params& p = s.params;
  return s.topology.size() <= 64 && p.M <= 4096 && s.topology.size() * p.M <= 65536 &&
         p.P * p.Q + p.Q * p.R + p.P * p.R <= 65536 && p.K <= 8;
}

/// A run of a valid input fails only by its budget or by simulated time past 64 bits; a wrong
/// result, a deadlock or a broken invariant is a finding.
inline void check_outcome(const RunOutcome& o) {
  if (!o.error.empty()) {
    if (o.error.find("budget of") != std::string::npos || o.error.find("overflow") != std::string::npos) return;
    std::fprintf(stderr, "a valid input failed: %s\n", o.error.c_str());
    std::abort();
  }
  if (o.verify_ran && !o.verified) {
    std::fprintf(stderr, "a valid input ran to a wrong result: %s\n", o.verify_message.c_str());
    std::abort();
  }
}

/// `cubesim replay PATH --format FORMAT --machine MACHINE`: loads the trace (bad input is an
/// InputError), replays it when it is small, and builds the report.
inline void replay(const char* format, const char* machine, const std::string& path) {
  try {
    trace::ReplayOptions opt;
    opt.format = format;
    opt.machine = machine;
    trace::ReplayResult r = trace::prepare_replay(path, opt, registry());
    if (r.setup.topology.size() <= 64) {
      trace::run_replay(r, registry(), nullptr, small_limits());
      (void)trace::replay_report(r, true).dump();
    }
  } catch (const InputError&) {
  }
}

}  // namespace cubesim::fuzz
