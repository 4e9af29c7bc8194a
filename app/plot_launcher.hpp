#pragma once
/// `cubesim plot` and `cubesim figures`: the plots are drawn by app/plot/cubesim_plot.py with
/// matplotlib (Debian's python3-matplotlib); this runs that script with the remaining arguments
/// and passes its exit code on (0, 1 a run failed, 2 bad input). docs/figures.md.
#include <string>
#include <vector>

namespace cubesim {

/// Where the plotting script is: $CUBESIM_PLOT_SCRIPT, else app/plot/cubesim_plot.py beside the
/// build folder of this executable (BIN/../app/plot), else in the source tree it was built from.
/// Empty when none exists.
std::string find_plot_script();

/// Replaces this process with `python3 SCRIPT TOOL ARGS...` (python: $CUBESIM_PYTHON, else
/// /usr/bin/python3 where python3-matplotlib lives, else python3 on the PATH), with CUBESIM_BIN
/// set to this executable so that `figures` runs the same cubesim. Returns only on failure,
/// after one line on stderr: 2.
int exec_plot_tool(const std::string& tool, const std::vector<std::string>& args);

}  // namespace cubesim
