#pragma once
#include "algorithms/registry.hpp"
#include "sim/engine.hpp"

namespace cubesim::test {

/// A machine with easy numbers: tau = 1000 ps, t_c = 10 ps, t_a = 3 ps, t_copy = 7 ps.
inline Machine simple_machine(PortModel ports = {PortKind::one, 1}, std::int64_t bm = 1 << 20) {
  Machine m;
  m.name = "test";
  m.tau = Time::ps(1000);
  m.t_c = Time::ps(10);
  m.t_a = Time::ps(3);
  m.t_copy = Time::ps(7);
  m.packet_elements = bm;
  m.ports = ports;
  return m;
}

}  // namespace cubesim::test
