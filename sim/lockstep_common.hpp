#pragma once
/// What the lockstep simulators share (sim/lockstep.cpp, sim/lockstep_one_port.cpp): the chains
/// they keep (the parts of a PathCounts a step program adds to), a program's port error and its
/// next step, checked.
#include <cstdint>
#include <string>

#include "sim/critical_path.hpp"
#include "sim/errors.hpp"
#include "sim/steps.hpp"
#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace cubesim::detail {

/// The part of a chain (PathCounts) a step program adds to: start-ups, message start-ups and
/// element transfers. Its flops, copies, delays, routing and overheads stay 0 (no computation, no
/// node software, store-and-forward), so 24 bytes stand for the 64 of a PathCounts.
struct Chain {
  std::int64_t startups = 0, msg_startups = 0, element_transfers = 0;
  bool operator==(const Chain&) const = default;
  [[nodiscard]] PathCounts counts() const {
    PathCounts p;
    p.startups = startups;
    p.msg_startups = msg_startups;
    p.element_transfers = element_transfers;
    return p;
  }
};

/// A program that computes (wide()): the flops and the kernel calls' overheads (t_call) too.
struct WideChain : Chain {
  std::int64_t flops = 0;
  Time overheads;
  bool operator==(const WideChain&) const = default;
  [[nodiscard]] PathCounts counts() const {
    PathCounts p = Chain::counts();
    p.flops = flops;
    p.overheads = overheads;
    return p;
  }
};

/// a - b, term by term (what a repeated step adds to a chain: sim/lockstep.cpp).
inline Chain difference(const Chain& a, const Chain& b) {
  return Chain{a.startups - b.startups, a.msg_startups - b.msg_startups, a.element_transfers - b.element_transfers};
}
inline WideChain difference(const WideChain& a, const WideChain& b) {
  WideChain d;
  static_cast<Chain&>(d) = difference(static_cast<const Chain&>(a), static_cast<const Chain&>(b));
  d.flops = a.flops - b.flops;
  d.overheads = a.overheads - b.overheads;
  return d;
}
/// a += j d, term by term.
inline void add_times(Chain& a, const Chain& d, std::int64_t j) {
  a.startups += j * d.startups;
  a.msg_startups += j * d.msg_startups;
  a.element_transfers += j * d.element_transfers;
}
inline void add_times(WideChain& a, const WideChain& d, std::int64_t j) {
  add_times(static_cast<Chain&>(a), static_cast<const Chain&>(d), j);
  a.flops += j * d.flops;
  a.overheads += d.overheads * j;
}

/// A step program's operation on a port without a link: the program's error.
[[noreturn]] inline void no_link(NodeId x, std::int64_t s, int port) {
  throw SimulationError("node " + std::to_string(x) + " step " + std::to_string(s) + ": port " + std::to_string(port) +
                        " has no link");
}

/// StepProgram::next_step(x, s), which both simulators follow to skip empty steps: at s or after
/// it and at most `steps`, or the program's error.
inline std::int64_t next_step(const StepProgram& program, NodeId x, std::int64_t s, std::int64_t steps) {
  const std::int64_t next = program.next_step(x, s);
  if (next < s || next > steps)
    throw SimulationError("node " + std::to_string(x) + " step " + std::to_string(s) + ": the program's next step " +
                          std::to_string(next) + " is out of order");
  return next;
}

}  // namespace cubesim::detail
