#pragma once
/// A step program given step by step and node by node, for the lockstep simulators' tests
/// (tests/test_lockstep.cpp, tests/test_lockstep_one_port.cpp).
#include <utility>
#include <vector>

#include "sim/steps.hpp"

namespace cubesim::test {

/// ops[s][x]: node x's operations in step s. `wide`: it computes; `strands`: at most that many.
class ListedProgram final : public StepProgram {
 public:
  explicit ListedProgram(std::vector<std::vector<std::vector<StepOp>>> ops, bool wide = false, int strands = 1)
      : ops_(std::move(ops)), wide_(wide), strands_(strands) {}
  [[nodiscard]] bool wide() const override { return wide_; }
  [[nodiscard]] int strands() const override { return strands_; }
  [[nodiscard]] std::int64_t steps() const override { return static_cast<std::int64_t>(ops_.size()); }
  void step(NodeId x, std::int64_t s, std::vector<StepOp>& out) const override {
    const auto& v = ops_[static_cast<std::size_t>(s)][static_cast<std::size_t>(x)];
    out.insert(out.end(), v.begin(), v.end());
  }
  [[nodiscard]] std::int64_t result_elements(NodeId /*x*/) const override { return 0; }

 private:
  std::vector<std::vector<std::vector<StepOp>>> ops_;
  bool wide_;
  int strands_;
};

}  // namespace cubesim::test
