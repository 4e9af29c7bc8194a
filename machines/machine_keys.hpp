#pragma once
/// The machine's keys (sim/machine.hpp): one table, like algorithms/params.hpp's kParams for the
/// algorithms' parameters. It drives the loader (which keys a preset, an inline machine and
/// machine_overrides accept, how each value is parsed and bounded, and the "known: ..." lists of
/// the errors), the two ways a machine is written out (machine_to_json for trace headers and
/// resume files, and the report's "machine"), and `cubesim` checks configs/schema.json against it
/// (tests/test_config.cpp). A new machine key is a member of Machine, one row in
/// machines/machine_keys.cpp, and the model that reads it (docs/architecture.md).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sim/machine.hpp"

namespace cubesim {

using ojson = nlohmann::ordered_json;

/// What a key's value is, which fixes how it is parsed, written and echoed in a report.
enum class KeyKind {
  time,   ///< a number of seconds or a string with a unit (ps ns us ms s); report: KEY_s and KEY_ps
  count,  ///< an integer between lo and hi; report: KEY, the integer
  ports,  ///< "one", "all" or an integer k >= 1; report: KEY, "one", "all" or k as a string
  name,   ///< one of `names` (an enum, kept in that order); report: KEY, the name
  model,  ///< the name of a registered network model (sim/net/network.hpp); report: KEY, the name
};

/// Whether a machine must give a key.
enum class Need {
  optional,  ///< never: the default of sim/machine.hpp applies
  preset,    ///< every preset gives it (an inline machine may leave it out)
  always,    ///< every machine gives it, preset or inline
};

struct MachineKey {
  std::string_view key;  ///< in presets, inline machines, machine_overrides and trace headers
  std::string_view meaning;
  /// What the value counts, as written after it: "per element" (t_c 4 us per element),
  /// "elements" (packet_elements 256 elements); empty for names. `cubesim describe`, `cubesim list
  /// machines`, docs/reference.md and configs/schema.json's descriptions show it.
  std::string_view unit;
  Need need = Need::optional;
  bool overridable = true;                    ///< accepted in a config's machine_overrides
  std::int64_t lo = 0, hi = 0;                ///< count: the accepted range
  std::span<const std::string_view> names{};  ///< name: the accepted values, in the enum's order
  /// When machine_to_json writes the key (null: always). Keys that most machines leave at their
  /// default are left out there, so that trace headers and resume files of those machines stay
  /// as they were before the key existed.
  bool (*written)(const Machine&) = nullptr;
  // Filled by the table from the member pointer (machines/machine_keys.cpp):
  KeyKind kind = KeyKind::count;
  /// Sets the member from a bare value; returns what is wrong with the value, or nothing.
  std::optional<std::string> (*set)(const MachineKey&, Machine&, const ojson&) = nullptr;
  /// The member as a bare value that `set` reads back to the same member (times in ps).
  ojson (*get)(const MachineKey&, const Machine&) = nullptr;
  /// Writes the report's echo of the member into a report's "machine" (KeyKind says how).
  void (*report)(const MachineKey&, const Machine&, ojson&) = nullptr;
};

/// Every machine key, in the order errors list them and machine_to_json and reports write them.
std::span<const MachineKey> machine_keys();
/// The row of `key`, or null.
const MachineKey* find_machine_key(std::string_view key);
/// The keys of the rows that pass `pred`, joined by ", " (the "known: ..." lists of errors).
std::string machine_key_list(bool (*pred)(const MachineKey&));
/// configs/schema.json's "description" of a machine key: its meaning and unit.
std::string machine_key_description(const MachineKey& k);

}  // namespace cubesim
