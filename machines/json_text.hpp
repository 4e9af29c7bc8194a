#pragma once
/// JSON text in, with every failure an InputError that names the file, the line and the column:
/// syntax errors, nesting deeper than kMaxJsonDepth (refused before the parser recurses: a config
/// 100 000 levels deep once crashed the copy of the parsed value) and numbers beyond the range of
/// a double (1e400), which the JSON library reports without a position.
/// Configs, machine files, suites, goldens and trace headers all come in through here.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace cubesim {

using ojson = nlohmann::ordered_json;

/// The deepest nesting of arrays and objects accepted. Configs need 5; the margin is for
/// machine objects inside configs and for whatever other tools write.
inline constexpr int kMaxJsonDepth = 64;

/// Parses `text` from `file`. For JSON inside a larger file (a trace's header line), `first_line`
/// and `first_column` place its first character, so that errors point into that file.
/// Throws InputError.
ojson parse_json(std::string_view text, const std::string& file, std::size_t first_line = 1,
                 std::size_t first_column = 1);

}  // namespace cubesim
