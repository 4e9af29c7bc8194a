// libFuzzer harness: the config parser and validator (app/config.cpp), then the memory check
// and the prediction of every point, as `cubesim run` does before it runs; small points run.
#include "app/config.hpp"
#include "sim/input_error.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace cubesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const Experiment ex = parse_experiment(text, "fuzz.json", fuzz::registry());
    check_memory(ex);
    int ran = 0;
    for (std::size_t i = 0; i < ex.runs.size() && i < 64; ++i) {
      const RunPoint& p = ex.runs[i];
      (void)p.info->predict(p.setup);
      if (ran < 2 && fuzz::small(p.setup)) {
        ++ran;
        fuzz::check_outcome(run_point(p, *p.info, ex.verify, nullptr, fuzz::small_limits()));
      }
    }
  } catch (const InputError&) {
  }
  return 0;
}
