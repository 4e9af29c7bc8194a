#include "app/version.hpp"

#include "generated/revision.hpp"

namespace cubesim {

std::string version_text() { return std::string("cubesim 0.1.0 (git ") + CUBESIM_GIT_REVISION + ")"; }

}  // namespace cubesim
