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
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/machine.hpp"
#include "traces/ti_trace.hpp"

namespace cubesim::trace {

/// One file of an export: its path inside the export's folder, and its text.
struct TextFile {
  std::string name;
  std::string text;
};

struct SimgridExport {
  std::string index;            ///< the index file's name inside the folder
  std::string platform;         ///< platform.xml
  std::string hostfile;         ///< hostfile.txt
  std::string command;          ///< the smpirun command line, to run inside the folder
  std::vector<TextFile> files;  ///< every file, the rank files under ranks/ first; the caller writes them
};

/// The SimGrid files of the trace of a run on `machine`. Throws InputError when the trace
/// cannot be expressed (concurrent strands) or SimGrid cannot model the platform
/// (sim/simgrid/platform.hpp: a mesh of more than 1024 nodes, t_c = 0). The platform is that of
/// `cubesim export-platform` with links of latency tau + tau_msg: each TI action is a message.
SimgridExport export_simgrid(const Trace& t, const Machine& machine);

/// The SimGrid options that make one uncontended transfer take latency + bytes/bandwidth.
std::string simgrid_exact_flags();

/// Gives the text of a file, or nothing when there is no such file.
using ReadText = std::function<std::optional<std::string>(const std::string& path)>;

/// Reads SimGrid TI actions from `path` (an index or an action file; the files an index names
/// are read through `read`, relative to the working folder or else to the index). Sizes in bytes
/// become elements of `element_bytes` (rounded up). The result has no topology yet (nodes =
/// ranks); the caller sets it. Throws InputError naming the file and line.
Trace import_simgrid(const std::string& path, int element_bytes, const ReadText& read);

}  // namespace cubesim::trace
