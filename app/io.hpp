#pragma once
/// File input and output for the application: whole-file reads, atomic writes, JSON with line
/// and column in its syntax errors. Formats (traces/, machines/) work on text; only the
/// application touches files.
#include <string>

#include <nlohmann/json.hpp>

namespace cubesim {

using ojson = nlohmann::ordered_json;

/// Reads a whole file. Throws InputError ("cannot read the file").
std::string read_text_file(const std::string& path);
/// Writes `content` to `path` atomically: a temporary file in the same folder, then a rename.
void write_file_atomic(const std::string& path, const std::string& content);
/// Parses JSON text; a syntax error is an InputError naming `file`, the line and the column.
ojson parse_json_text(const std::string& text, const std::string& file);
/// Reads and parses a JSON file. Throws InputError.
ojson read_json_file(const std::string& path);

}  // namespace cubesim
