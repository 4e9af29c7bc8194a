#pragma once
/// SimGrid/SMPI time-independent traces, both ways (docs/traces.md; format checked against
/// SimGrid 3.32, shared/SIMGRID.md).
///
/// Export: one action file per rank ("<rank> init", "send|isend|recv|irecv <peer> <tag> <bytes>",
/// "wait <src> <dst> <tag>", "waitall", "compute <flops>", "sleep <seconds>", "<rank> finalize")
/// plus the index file that lists them, a platform file (one host per node, one split-duplex
/// link per edge, full routing along cubesim's dimension-order routes), a host file, and the
/// smpirun command line that replays them with SimGrid's own smpireplaymain.
///
/// Import: an index file (one path per line: one line for a file shared by all ranks, or one per
/// rank) or a single action file, into a cubesim trace whose non-blocking actions become
/// requests; sends to non-neighbours take cubesim's routed paths at replay.
#include <cstdint>
#include <string>

#include "sim/machine.hpp"
#include "traces/ti_trace.hpp"

namespace cubesim::trace {

struct SimgridExport {
  std::string index;     ///< the index file's name inside the folder
  std::string platform;  ///< platform.xml
  std::string hostfile;  ///< hostfile.txt
  std::string command;   ///< the smpirun command line, to run inside the folder
};

/// Writes the trace of a run on `machine` into `dir` (created). Throws InputError when the trace
/// cannot be expressed (concurrent strands) or SimGrid cannot model the platform
/// (sim/simgrid/platform.hpp: a mesh of more than 1024 nodes, t_c = 0). The platform is that of
/// `cubesim export-platform` with links of latency tau + tau_msg: each TI action is a message.
SimgridExport export_simgrid(const Trace& t, const Machine& machine, const std::string& dir);

/// The SimGrid options that make one uncontended transfer take latency + bytes/bandwidth.
std::string simgrid_exact_flags();

/// Reads SimGrid TI actions. Sizes in bytes become elements of `element_bytes` (rounded up).
/// The result has no topology yet (nodes = ranks); the caller sets it. Throws InputError naming
/// the file and line.
Trace import_simgrid(const std::string& path, int element_bytes);

}  // namespace cubesim::trace
