# Writes generated/revision.hpp with the git revision the build comes from (`cubesim --version`).
# Run at every build (CMakeLists.txt, target cubesim_revision); the header is rewritten only when
# the revision changed, so an unchanged checkout recompiles nothing.
execute_process(COMMAND git -C "${SRC}" describe --always --dirty --abbrev=12
                OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR rev STREQUAL "")
  set(rev "unknown: not built from a git checkout")
endif()
file(WRITE "${OUT}.tmp" "#pragma once\n#define CUBESIM_GIT_REVISION \"${rev}\"\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
file(REMOVE "${OUT}.tmp")
