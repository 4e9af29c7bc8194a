// libFuzzer harness: the native trace reader (traces/ti_trace.cpp) through `cubesim replay`'s
// path (app/replay.cpp: header, machine, topology, memory check), then the replay of small ones.
// A mutation rarely keeps the end line's counts right (cubesim.trace/2), so an input that starts
// like a trace is also tried with the end line that makes it whole: the reader behind it stays
// reachable.
#include "tests/fuzz/fuzz_common.hpp"
#include "traces/ti_trace.hpp"

using namespace cubesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::replay("cubesim", "recorded", fuzz::put("t.trace", text));
  if (text.starts_with(trace::kSchema))
    fuzz::replay("cubesim", "recorded", fuzz::put("t.trace", trace::with_end_line(text)));
  return 0;
}
