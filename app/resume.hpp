#pragma once
/// Interrupted runs and --resume (docs/reliability.md "Interrupted runs"). A run stopped by
/// SIGINT or SIGTERM writes a partial report of the points it finished and, beside it,
/// resume.json: each finished point's identity (algorithm, swept values, machine, topology,
/// parameters, mode, engine, verification) and its outcome, exact. `cubesim run --resume` reuses
/// the outcome of every point whose identity it finds there and runs the rest; the report it
/// writes is the one an uninterrupted run writes (bit for bit with --reproducible).
#include <map>
#include <string>
#include <vector>

#include "app/runner.hpp"

namespace cubesim {

inline constexpr const char* kResumeFile = "resume.json";

/// The finished points of an earlier run, by identity.
using ResumeTable = std::map<std::string, ojson>;

/// What makes two points the same run: the canonical JSON text of their identity.
std::string point_identity(const RunPoint& p, bool verify, EngineKind engine);
/// The resume file's text for these finished outcomes.
std::string resume_text(const Experiment& ex, const std::vector<RunOutcome>& finished, EngineKind engine);
/// Reads `path` (a resume file); InputError naming the file and place when it is not one.
ResumeTable read_resume(const std::string& path);
/// The outcome of `p` stored under its identity, re-judged against its prediction; nullopt when
/// the table has none or the stored run failed (it runs again). InputError when the stored
/// outcome is malformed.
std::optional<RunOutcome> resumed_outcome(const ResumeTable& t, const RunPoint& p, bool verify, EngineKind engine,
                                          const std::string& path);

}  // namespace cubesim
