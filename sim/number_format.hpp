#pragma once
/// The one formatter of floating-point numbers that must read back exactly: "%.17g" round-trips
/// every double. Used by the SimGrid platform writer (sim/simgrid), the SimGrid TI export
/// (traces/) and the reports (app/); it sits in sim/ because sim/ includes nothing above it.
#include <cstdio>
#include <string>

namespace cubesim {

/// x with 17 significant digits ("%.17g"): parsing the text gives x back, bit for bit.
inline std::string exact_decimal(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

}  // namespace cubesim
