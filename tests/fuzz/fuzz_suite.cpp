// libFuzzer harness: the regression-suite reader (app/regress.cpp) and its golden file, as
// `cubesim regress SUITE` reads them: the input is the suite, then (after a line "====") the
// golden file. The folder holds two small configs the suite may name, a.json and b.json.
#include "app/regress.hpp"
#include "sim/input_error.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace cubesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool configs = [] {
    fuzz::put("a.json", R"({"schema": "cubesim.config/1", "machine": "ipsc-nx", "algorithm": "broadcast.sbt",
      "topology": {"kind": "hypercube", "dim": 2}, "params": {"M": 4}})");
    fuzz::put("b.json", R"({"schema": "cubesim.config/1", "machine": "ipsc-nx", "algorithm": "allgather.sbt",
      "topology": {"kind": "hypercube", "dim": 2}, "params": {"M": 2}, "sweep": {"params.M": [1, 2]}})");
    return true;
  }();
  (void)configs;
  const std::vector<std::string> p = fuzz::parts(std::string(reinterpret_cast<const char*>(data), size));
  const std::string suite = fuzz::put("suite.json", p[0]);
  std::filesystem::remove(fuzz::scratch() / "golden.json");
  if (p.size() > 1) fuzz::put("golden.json", p[1]);
  try {
    RegressOptions opt;
    opt.limits = fuzz::small_limits();
    (void)regress_json(run_regress(suite, fuzz::registry(), opt), opt).dump();
  } catch (const InputError&) {
  }
  return 0;
}
