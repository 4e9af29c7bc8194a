// libFuzzer harness: the native trace reader (traces/ti_trace.cpp) through `cubesim replay`'s
// path (app/replay.cpp: header, machine, topology, memory check), then the replay of small ones.
#include "app/replay.hpp"
#include "sim/input_error.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace cubesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::put("t.trace", std::string(reinterpret_cast<const char*>(data), size));
  try {
    trace::ReplayOptions opt;
    opt.format = "cubesim";
    trace::ReplayResult r = trace::prepare_replay(path, opt);
    if (r.setup.topology.size() <= 64) {
      trace::run_replay(r, fuzz::registry(), nullptr, fuzz::small_limits());
      (void)trace::replay_report(r, true).dump();
    }
  } catch (const InputError&) {
  }
  return 0;
}
