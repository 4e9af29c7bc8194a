#include "sim/machine.hpp"

#include <string>

namespace cubesim {

std::string PortModel::name() const {
  switch (kind) {
    case PortKind::one:
      return "one";
    case PortKind::all:
      return "all";
    case PortKind::k:
      return std::to_string(k);
  }
  return "?";
}

std::string switching_name(Switching s) { return s == Switching::pipelined ? "pipelined" : "store_and_forward"; }

}  // namespace cubesim
