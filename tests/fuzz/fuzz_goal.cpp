// libFuzzer harness: the GOAL schedule importer (traces/goal.cpp) through
// `cubesim replay --format goal --machine ipsc-nx`: one input, one schedule. Small schedules that
// import replay too (the dependency-graph replay in traces/ti_trace.cpp).
#include "tests/fuzz/fuzz_common.hpp"

using namespace cubesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::replay("goal", "ipsc-nx", fuzz::put("s.goal", std::string(reinterpret_cast<const char*>(data), size)));
  return 0;
}
