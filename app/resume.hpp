#pragma once
/// Interrupted runs and --resume (docs/reliability.md "Interrupted runs"). A run stopped by
/// SIGINT or SIGTERM writes a partial report of the points it finished and, beside it,
/// resume.json: each finished point's identity (algorithm, swept values, machine, topology,
/// parameters, mode, engine, verification) and its outcome, exact. `cubesim run --resume` reuses
/// the outcome of every point whose identity it finds there and runs the rest; the report it
/// writes is the one an uninterrupted run writes (bit for bit with --reproducible).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "app/runner.hpp"

namespace cubesim {

inline constexpr const char* kResumeFile = "resume.json";
/// The journal of a run with --out (docs/reliability.md "Killed runs"): OUT/.cubesim-journal, a
/// header line and then one line per finished point (`{"identity": ..., "outcome": ...}`, as in
/// resume.json), appended and synced to disk as each point finishes, in the order they finish.
/// What a SIGKILL leaves of it is read by --resume; a torn last line is ignored. A run that
/// commits its report removes it.
inline constexpr const char* kJournalFile = ".cubesim-journal";

/// The finished points of an earlier run, by identity.
using ResumeTable = std::map<std::string, ojson>;

/// Which sweep, run by which binary, a resume, shard or journal file holds points of.
struct SweepStamp {
  std::string binary;  ///< version_text() of the binary that ran the points
  std::string sweep;   ///< sweep_hash() of the whole sweep (every point, not a shard's only)
  std::string shard;   ///< "I/K" when a shard's; empty otherwise
};

/// What makes two points the same run: the canonical JSON text of their identity.
std::string point_identity(const RunPoint& p, bool verify, EngineKind engine);
/// A hash (16 hex digits, FNV-1a of the points' identities in order) of the resolved sweep: two
/// configs (with their --engine, --machine, --set) that give the same points give the same hash.
std::string sweep_hash(const Experiment& ex, EngineKind engine);
/// The resume file's text for these finished outcomes (the stamp's fields, where given, first).
std::string resume_text(const Experiment& ex, const std::vector<RunOutcome>& finished, EngineKind engine,
                        const SweepStamp& stamp = {});
/// Reads `path` (a resume file); InputError naming the file and place when it is not one.
ResumeTable read_resume(const std::string& path);
/// The stamp of a resume or shard file (fields it lacks are empty). InputError as read_resume.
SweepStamp read_resume_stamp(const std::string& path);

/// The journal's first line (with its newline).
std::string journal_header(const Experiment& ex, const SweepStamp& stamp);
/// The journal line of one finished point (with its newline).
std::string journal_line(const Experiment& ex, const RunOutcome& finished, EngineKind engine);
/// What a journal holds.
struct Journal {
  ResumeTable table;           ///< the finished points, a later line for a point replacing an earlier
  std::uintmax_t keep = 0;     ///< the bytes of its whole lines: where the next line goes
  std::uintmax_t dropped = 0;  ///< the bytes after them (a torn last line): cut when it is reopened
  bool valid = false;          ///< it has a whole header line: append to it (else: start it again)
  std::string binary;          ///< the binary its header names (version_text of the run that began it)
};
/// Reads the journal `path`. A torn or unreadable line ends it (the rest is dropped); a first line
/// that is not a journal header is an InputError naming the file.
Journal read_journal(const std::string& path);
/// The outcome of `p` stored under its identity, re-judged against its prediction; nullopt when
/// the table has none or the stored run failed (it runs again). InputError when the stored
/// outcome is malformed.
std::optional<RunOutcome> resumed_outcome(const ResumeTable& t, const RunPoint& p, bool verify, EngineKind engine,
                                          const std::string& path);

}  // namespace cubesim
