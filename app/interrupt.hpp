#pragma once
/// SIGINT and SIGTERM during a run (docs/reliability.md "Interrupted runs"): the first one asks
/// the run to stop at the next check (EngineOptions::stop, between points and within 4,096
/// events); the run then keeps what it finished in a partial report. A second one kills the
/// process as the default handler would.
#include <atomic>
#include <string>

namespace cubesim {

/// Installs the handlers (once; later calls do nothing).
void install_stop_handlers();
/// 0, or the number of the signal that asked the run to stop.
const std::atomic<int>& stop_signal();
/// "SIGINT", "SIGTERM", or "signal N".
std::string signal_name(int signal);

}  // namespace cubesim
