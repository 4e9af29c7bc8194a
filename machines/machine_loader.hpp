#pragma once
/// Machine presets (machines/presets/*.json, embedded in the binary at build time) and inline
/// machines, parsed strictly into a resolved Machine (sim/machine.hpp).
///
/// A machine object: "schema" ("cubesim.machine/1", presets only), "name", "description",
/// optional "default_topology", "order" (presets only: the place in the catalogue), and the
/// machine keys of machines/machine_keys.hpp, the one table that says how each is parsed, bounded,
/// required and written. In a preset every parameter is {"value": ..., "source": "..."}; inline
/// machines may give bare values, and need only the keys the table marks Need::always.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
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

/// Every preset's name, in the catalogue order: by the preset's "order" (an integer; presets
/// without one come last), then by name. `cubesim list machines` and preset selectors use it.
std::vector<std::string> preset_names();
/// The preset's JSON, or nullopt when there is no such preset.
std::optional<ojson> preset_json(const std::string& name);

/// A preset selector names several presets at once, where a config names a machine (its top-level
/// "machine", or the value of "sweep": {"machine": ...}): "presets" is every preset, and
/// "presets:KEY=VALUE[,KEY=VALUE...]" every preset whose KEY (a machine key,
/// machines/machine_keys.hpp) equals VALUE, read as a preset's value would be, for every term;
/// e.g. "presets:kind=formula,switching=store_and_forward".
inline constexpr std::string_view kPresetSelector = "presets";
/// A string that is "presets" or begins with "presets:" (no preset may be named so).
bool is_preset_selector(const ojson& v);
/// The presets a selector names, in catalogue order. Throws InputError at `file` and `pointer`
/// for a malformed selector, an unknown key, a value the key's parser refuses, or no match.
std::vector<std::string> select_presets(const std::string& selector, const std::string& file,
                                        const std::string& pointer);

/// Parses a machine object. `file` and `pointer` say where it is, for errors (InputError).
Machine machine_from_json(const ojson& j, const std::string& file, const std::string& pointer, bool preset);
/// The resolved machine as an inline machine object (times in picoseconds, sources kept) that
/// machine_from_json reads back to the same Machine.
ojson machine_to_json(const Machine& m);
/// Applies machine_overrides: every key of machines/machine_keys.hpp marked overridable.
void apply_overrides(Machine& m, const ojson& overrides, const std::string& file, const std::string& pointer);

}  // namespace cubesim
