// libFuzzer harness: the machine-file loader (machines/machine_loader.cpp) as `--machine FILE`
// and an inline "machine" reach it. A machine that loads must survive its own round trip
// (machine_to_json, loaded again, is the same machine), and runs a small broadcast correctly.
#include "app/config.hpp"
#include "machines/machine_loader.hpp"
#include "sim/input_error.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace cubesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const ResolvedMachine rm = resolve_machine(parse_json_text(text, "m.json"), "m.json", "");
    if (!rm.default_topology.is_null()) (void)parse_topology(rm.default_topology, "m.json", "/topology");
    const ojson j = machine_to_json(rm.machine);
    if (machine_to_json(machine_from_json(j, "round-trip", "", false)) != j) {
      std::fprintf(stderr, "a machine does not survive its round trip: %s\n", j.dump().c_str());
      std::abort();
    }
    // The machine inline in a config: a small broadcast on the 2-cube, checked like any run.
    ojson cfg = {{"schema", "cubesim.config/1"},
                 {"machine", j},
                 {"topology", {{"kind", "hypercube"}, {"dim", 2}}},
                 {"algorithm", "broadcast.sbt"},
                 {"params", {{"M", 6}}}};
    const Experiment ex = parse_experiment(cfg.dump(), "m-config.json", fuzz::registry());
    for (const RunPoint& p : ex.runs) fuzz::check_outcome(run_point(p, *p.info, true, nullptr, fuzz::small_limits()));
  } catch (const InputError&) {
  }
  return 0;
}
