#pragma once
/// Step programs (docs/lockstep.md): an algorithm's process as a fixed number of steps in which
/// every node posts a group of sends to and receives from its neighbours at once and waits for
/// them all. The lockstep simulator (sim/lockstep.hpp) times them; the process stays the
/// reference, which moves the data.
#include <cstdint>
#include <vector>

#include "sim/topology.hpp"

namespace cubesim {

/// One operation of a step.
///  - send: `elements` on `port` with `tag`;
///  - recv: on `port` with `tag` (its size is the message's);
///  - compute: `elements` flops (Node::compute: t_a a flop and t_call), once the strand's sends
///    and receives of the step have completed;
///  - join: strands 1.. end and strand 0 goes on when the last of them has (an all_of of Tasks).
/// A node's process is strand 0; an operation of strand k > 0 forks strand k from strand 0 if it
/// is not running (matmul::both's two Tasks are strands 1 and 2), and strand 0 posts nothing until
/// a join. In a step each strand's sends and receives form one group (posted in this order, all
/// awaited) and its computes follow them.
struct StepOp {
  enum class Kind : std::uint8_t { recv, send, compute, join };
  Kind kind = Kind::recv;
  std::uint8_t strand = 0;
  int port = 0;
  int tag = 0;
  std::int64_t elements = 0;  ///< a send's elements, a compute's flops
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
  /// Whether the program computes: the simulator then keeps wider chains (flops and overheads).
  [[nodiscard]] virtual bool wide() const { return false; }
  /// The strands a node runs at most, strand 0 included (1 to kMaxStrands): the simulator keeps a
  /// state a strand, and wide chains where there is more than one.
  [[nodiscard]] virtual int strands() const { return 1; }
  static constexpr int kMaxStrands = 4;
  /// A hint before step(x, ...) is asked for, some time ahead: a program with a record a node asks
  /// the cache for it (ask). It changes nothing.
  virtual void prefetch(NodeId /*x*/) const {}
  /// The first step at or after s (s < steps()) in which node x may post something: every step
  /// from s up to it posts nothing, and a simulator may skip them (an empty step costs nothing: the
  /// process awaits nothing). At most steps(); s by default. tests/test_lockstep_one_port.cpp
  /// checks every override against step().
  [[nodiscard]] virtual std::int64_t next_step(NodeId /*x*/, std::int64_t s) const { return s; }
  /// How many steps from s on (0 < s < steps()) repeat step s - 1: for every node, each of steps
  /// s, s + 1, ..., s + k - 1 posts exactly what step s - 1 posts. 0 by default (no promise). The
  /// all-port simulator then adds such steps without timing them where it can show that timing
  /// them gives the same (docs/lockstep.md "Repeated steps"). tests/test_lockstep.cpp checks every
  /// override against step().
  [[nodiscard]] virtual std::int64_t repeats(std::int64_t /*s*/) const { return 0; }
  /// Whether every node posts in step s exactly what node 0 posts (step(x, s) is step(0, s) for
  /// every x): the Gray-code exchanges, the doubling exchanges, the tree collectives' step form.
  /// On a hypercube each translation x -> x XOR a keeps ports, so such a step takes a machine
  /// whose nodes are all in one state, and its links port by port, to such a machine again; the
  /// all-port simulator then times node 0 alone (docs/lockstep.md "Uniform steps"). false by
  /// default (no promise). tests/test_lockstep.cpp checks every override against step().
  [[nodiscard]] virtual bool uniform(std::int64_t /*s*/) const { return false; }

 protected:
  /// Asks the cache for the line at `p`. (The empty asm keeps GCC from deleting the hint in a
  /// function that only reads memory: sim/kernel/prefetch.hpp.)
  static void ask(const void* p) {
    __builtin_prefetch(p);
    asm volatile("" : : "r"(p));
  }
};

}  // namespace cubesim
