#include "app/trace_files.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <sstream>

#include "app/io.hpp"
#include "sim/input_error.hpp"
#include "traces/goal.hpp"
#include "traces/simgrid_ti.hpp"

namespace cubesim::trace {

namespace fs = std::filesystem;

TraceFormats parse_trace_formats(const std::string& list) {
  TraceFormats f;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item == "cubesim" || item == "native")
      f.cubesim = true;
    else if (item == "chrome")
      f.chrome = true;
    else if (item == "simgrid")
      f.simgrid = true;
    else if (item == "goal")
      f.goal = true;
    else
      throw InputError(
          "", "--trace",
          "unknown trace format \"" + item + "\" (known: cubesim, chrome, simgrid, goal; comma-separated)");
  }
  if (!f.any()) throw InputError("", "--trace", "name at least one format: cubesim, chrome, simgrid, goal");
  return f;
}

void parse_trace_nodes(const std::string& range, ChromeOptions& opt) {
  const auto fail = [&]() {
    throw InputError("", "--trace-nodes", "expected a node or a range A-B, got \"" + range + "\"");
  };
  try {
    const auto dash = range.find('-');
    std::size_t used = 0;
    if (dash == std::string::npos) {
      opt.first_node = opt.last_node = static_cast<NodeId>(std::stoll(range, &used));
      if (used != range.size()) fail();
    } else {
      const std::string a = range.substr(0, dash), b = range.substr(dash + 1);
      opt.first_node = static_cast<NodeId>(std::stoll(a, &used));
      if (used != a.size()) fail();
      opt.last_node = static_cast<NodeId>(std::stoll(b, &used));
      if (used != b.size()) fail();
    }
  } catch (const InputError&) {
    throw;
  } catch (const std::exception&) {
    fail();
  }
  if (opt.first_node < 0 || opt.last_node < opt.first_node) fail();
}

TraceSession::TraceSession(const TraceFormats& f, const Topology& topology) : f_(f), topology_(topology) {
  if (f_.cubesim || f_.simgrid || f_.goal) {
    recorder_ = std::make_unique<Recorder>(topology_.size());
    fan_.add(recorder_.get());
  }
  if (f_.chrome) {
    chrome_ = std::make_unique<ChromeRecorder>(topology_, f_.chrome_options);
    fan_.add(chrome_.get());
  }
}

EngineObserver* TraceSession::observer() { return fan_.empty() ? nullptr : &fan_; }

std::vector<std::string> TraceSession::write(const std::string& dir, const std::string& stem, ojson header,
                                             const Machine& machine) {
  std::vector<std::string> written;
  fs::create_directories(dir);
  const fs::path base = fs::path(dir) / stem;
  if (recorder_) {
    Trace t;
    t.header = std::move(header);
    t.topology = topology_;
    t.packet_elements = t.header.value("packet_elements", std::int64_t{1});
    t.packet_explicit = t.header.value("packet_elements_explicit", false);
    t.nodes = recorder_->take();
    if (f_.cubesim) {
      const std::string p = base.string() + ".trace";
      write_file_atomic(p, write_text(t));
      written.push_back(p);
    }
    if (f_.simgrid) {
      const std::string p = base.string() + ".simgrid";
      for (const TextFile& f : export_simgrid(t, machine).files) {
        const fs::path file = fs::path(p) / f.name;
        fs::create_directories(file.parent_path());
        write_file_atomic(file.string(), f.text);
      }
      written.push_back(p);
    }
    if (f_.goal) {
      const std::string p = base.string() + ".goal";
      write_file_atomic(p, export_goal(t, machine));
      written.push_back(p);
    }
  }
  if (chrome_) {
    if (auto log = spdlog::get("cubesim"); log && chrome_->dropped() > 0)
      log->warn("chrome trace {}: kept the first {} events, dropped {} (use --trace-nodes or --trace-max-events)", stem,
                chrome_->kept(), chrome_->dropped());
    ojson meta = {{"generator", "cubesim"},
                  {"topology", topology_.describe()},
                  {"machine", machine.name},
                  {"time_unit", "ts and dur in microseconds with picosecond resolution"}};
    const std::string p = base.string() + ".chrome.json";
    write_file_atomic(p, chrome_->json(meta.dump()));
    written.push_back(p);
  }
  return written;
}

}  // namespace cubesim::trace
