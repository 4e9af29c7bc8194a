// libFuzzer harness: the SimGrid time-independent trace importer (traces/simgrid_ti.cpp) through
// `cubesim replay --machine ipsc-nx`. One part: an action file of every rank. Several parts
// (separated by a line "===="): an index file, then the files f1.txt, f2.txt, ... it may name.
#include "tests/fuzz/fuzz_common.hpp"

using namespace cubesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string> p = fuzz::parts(std::string(reinterpret_cast<const char*>(data), size));
  std::string path = fuzz::put("index.txt", p[0]);
  for (std::size_t i = 1; i < p.size(); ++i) fuzz::put("f" + std::to_string(i) + ".txt", p[i]);
  fuzz::replay("simgrid", "ipsc-nx", path);
  for (std::size_t i = 1; i < p.size(); ++i)
    std::filesystem::remove(fuzz::scratch() / ("f" + std::to_string(i) + ".txt"));
  return 0;
}
