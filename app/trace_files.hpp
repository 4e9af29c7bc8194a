#pragma once
/// The traces one run writes (`--trace cubesim,chrome,simgrid,goal`): the recorders to attach to the
/// engine, and the files they become under `<out>/traces/`.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "traces/chrome_trace.hpp"
#include "traces/ti_trace.hpp"

namespace cubesim::trace {

struct TraceFormats {
  bool cubesim = false;  ///< native time-independent trace: <stem>.trace
  bool chrome = false;   ///< timeline: <stem>.chrome.json
  bool simgrid = false;  ///< SimGrid TI actions + platform: <stem>.simgrid/
  bool goal = false;     ///< GOAL schedule (LogGOPSim's text format): <stem>.goal
  ChromeOptions chrome_options;
  [[nodiscard]] bool any() const { return cubesim || chrome || simgrid || goal; }
};

/// "cubesim,chrome" -> formats. Throws InputError (pointer "--trace").
TraceFormats parse_trace_formats(const std::string& list);
/// "A-B" or "A" -> chrome node range. Throws InputError (pointer "--trace-nodes").
void parse_trace_nodes(const std::string& range, ChromeOptions& opt);

class TraceSession {
 public:
  TraceSession(const TraceFormats& f, const Topology& topology);
  /// Attach to the engine before it runs (null when no format asks for anything).
  EngineObserver* observer();
  /// Writes the files; returns their paths. `header` is the native trace header.
  std::vector<std::string> write(const std::string& dir, const std::string& stem, ojson header, const Machine& machine);

 private:
  TraceFormats f_;
  Topology topology_;
  std::unique_ptr<Recorder> recorder_;
  std::unique_ptr<ChromeRecorder> chrome_;
  ObserverFan fan_;
};

}  // namespace cubesim::trace
