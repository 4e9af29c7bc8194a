#pragma once
/// Machine presets (machines/presets/*.json, embedded in the binary at build time) and inline
/// machines, parsed strictly into a resolved Machine (sim/machine.hpp).
///
/// A machine object: "schema" ("cubesim.machine/1", presets only), "name", "description",
/// optional "default_topology", and the machine keys of machines/machine_keys.hpp, the one table
/// that says how each is parsed, bounded, required and written. In a preset every parameter is {"value": ..., "source":
/// "..."}; inline machines may give bare values, and need only the keys the table marks Need::always.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/machine.hpp"

namespace cubesim {

using ojson = nlohmann::ordered_json;

struct PresetText {
  const char* name;
  const char* json;
};
/// Generated at build time from machines/presets/*.json.
const std::vector<PresetText>& preset_texts();

std::vector<std::string> preset_names();
/// The preset's JSON, or nullopt when there is no such preset.
std::optional<ojson> preset_json(const std::string& name);

/// Parses a machine object. `file` and `pointer` say where it is, for errors (InputError).
Machine machine_from_json(const ojson& j, const std::string& file, const std::string& pointer, bool preset);
/// The resolved machine as an inline machine object (times in picoseconds, sources kept) that
/// machine_from_json reads back to the same Machine.
ojson machine_to_json(const Machine& m);
/// Applies machine_overrides: every key of machines/machine_keys.hpp marked overridable.
void apply_overrides(Machine& m, const ojson& overrides, const std::string& file, const std::string& pointer);

}  // namespace cubesim
