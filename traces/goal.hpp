#pragma once
/// GOAL schedules, LogGOPSim's text format, both ways (docs/traces.md, "GOAL schedules").
///
/// A schedule is, per rank, a graph of operations with dependencies:
///   num_ranks 4
///   rank 0 {
///   l1: send 64b to 1 tag 0
///   l2: recv 64b from 1 tag 0
///   l3: calc 1500
///   l3 requires l2          // l3 starts when l2 has completed
///   l1 irequires l3         // l1 starts when l3 has started
///   }
/// Import: each rank's graph becomes a NodeTrace::dag (an operation starts the moment its
/// dependencies hold), sizes in bytes become elements of the replay machine (rounded up), and
/// `calc N` a local operation of N nanoseconds (LogGOPSim's time unit), or picoseconds where the
/// file says so with the comment line "// cubesim: calc in ps" before num_ranks (cubesim's export
/// does, to be exact to the picosecond).
/// Export: the trace a run recorded, one rank a process, the strands, requests and operations
/// awaited together written as the dependencies that order them; computations, copies and
/// delays become `calc` of their time on the recording machine, in picoseconds.
#include <string>

#include "sim/machine.hpp"
#include "traces/ti_trace.hpp"

namespace cubesim::trace {

/// The GOAL schedule of the trace of a run on `machine` (its t_a, t_call and t_copy time the
/// local operations).
std::string export_goal(const Trace& t, const Machine& machine);

/// True when `head` (the first bytes of a file) starts, after blank lines and comments, with
/// "num_ranks": a GOAL schedule.
bool looks_goal(const std::string& head);

/// Reads a GOAL schedule. The result has no topology yet (nodes = ranks); the caller sets it.
/// Throws InputError naming the file and line (or the byte where a cut file ends).
Trace import_goal(const std::string& text, const std::string& path, int element_bytes);

}  // namespace cubesim::trace
