// libFuzzer harness: the MEASURED.csv reader of `cubesim calibrate` (app/calibrate.cpp,
// parse_measured). Bad input is an InputError; a table that parses has a header with config and
// time, at least one row, and every row a time and a weight that are finite and above 0.
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "app/calibrate.hpp"
#include "sim/input_error.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace cubesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const MeasuredTable t = parse_measured(text, "m.csv", {"tau"});
    if (t.rows.empty()) std::abort();
    for (const MeasuredRow& r : t.rows)
      if (!(std::isfinite(r.time_s) && r.time_s > 0 && std::isfinite(r.weight) && r.weight > 0) || r.config.empty()) {
        std::fprintf(stderr, "line %d: a row with time %g, weight %g, config \"%s\"\n", r.line, r.time_s, r.weight,
                     r.config.c_str());
        std::abort();
      }
  } catch (const InputError&) {
  }
  return 0;
}
