#pragma once
/// Failures of a run (STYLE.md habit 9): a simulated process that threw, an engine invariant that
/// broke, or processes that wait for messages that never come. Bad user input is InputError
/// (sim/input_error.hpp).
#include <stdexcept>

namespace cubesim {

/// A failure inside a simulated process, or an engine invariant that broke.
class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Processes wait for messages that never come. what() names the blocked nodes.
class DeadlockError : public SimulationError {
 public:
  using SimulationError::SimulationError;
};

}  // namespace cubesim
