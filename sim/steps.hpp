#pragma once
/// Step programs (docs/lockstep.md): an algorithm's process as a fixed number of steps in which
/// every node posts a group of sends to and receives from its neighbours at once and waits for
/// them all. The lockstep simulator (sim/lockstep.hpp) times them; the process stays the
/// reference, which moves the data.
#include <cstdint>
#include <vector>

#include "sim/topology.hpp"

namespace cubesim {

/// One operation of a step: a send of `elements` on `port` with `tag`, or a receive on `port`
/// with `tag` (its size is the message's).
struct StepOp {
  bool send = false;
  int port = 0;
  int tag = 0;
  std::int64_t elements = 0;
};

/// What a node does, step by step. Written beside the algorithm's process (the reference, which
/// moves data); the two must post the same operations in the same order.
class StepProgram {
 public:
  virtual ~StepProgram() = default;
  [[nodiscard]] virtual std::int64_t steps() const = 0;
  /// Appends node x's operations of step s (0-based) to `ops`, in the order its process posts
  /// them.
  virtual void step(NodeId x, std::int64_t s, std::vector<StepOp>& ops) const = 0;
  /// The elements node x holds at the end (its result in timing mode, which the check sizes).
  [[nodiscard]] virtual std::int64_t result_elements(NodeId x) const = 0;
};

}  // namespace cubesim
