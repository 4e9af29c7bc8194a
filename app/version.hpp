#pragma once
/// The binary's version line, "cubesim 0.1.0 (git REV)" (`cubesim --version`), for the files
/// that must name the binary that wrote them (shard.json: `cubesim merge` refuses another's).
/// Only app/version.cpp sees the generated revision header, so a new revision recompiles that
/// one file.
#include <string>

namespace cubesim {

/// "cubesim 0.1.0 (git REV)": REV from `git describe --always --dirty` at build time.
std::string version_text();

}  // namespace cubesim
