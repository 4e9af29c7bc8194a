// libFuzzer harness: the native trace reader (traces/ti_trace.cpp) through `cubesim replay`'s
// path (app/replay.cpp: header, machine, topology, memory check), then the replay of small ones.
#include "tests/fuzz/fuzz_common.hpp"

using namespace cubesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::put("t.trace", std::string(reinterpret_cast<const char*>(data), size));
  fuzz::replay("cubesim", "recorded", path);
  return 0;
}
