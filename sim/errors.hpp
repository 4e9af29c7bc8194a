#pragma once
/// Failures of a run (STYLE.md habit 9): a simulated process that threw, an engine invariant that
/// broke, or processes that wait for messages that never come. Bad user input is InputError
/// (sim/input_error.hpp).
#include <stdexcept>
#include <string>

namespace cubesim {

/// A failure inside a simulated process, or an engine invariant that broke.
class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An engine invariant: checked in every build type (STYLE.md habit 9), a SimulationError when
/// it breaks.
inline void check_invariant(bool ok, const char* what) {
  if (!ok) throw SimulationError(std::string("engine invariant broken: ") + what);
}

/// Processes wait for messages that never come. what() names the blocked nodes.
class DeadlockError : public SimulationError {
 public:
  using SimulationError::SimulationError;
};

/// A run spent a budget of EngineOptions (more events than max_events, or more resident memory
/// than max_resident_bytes): a livelock, a process that never ends, or a run too large for the
/// machine. what() names the processes still running and what each waits for.
class BudgetError : public SimulationError {
 public:
  enum class Budget { events, memory };
  BudgetError(Budget b, const std::string& what) : SimulationError(what), budget_(b) {}
  [[nodiscard]] Budget budget() const { return budget_; }

 private:
  Budget budget_;
};

/// The run was asked to stop (EngineOptions::stop was set, by a signal handler): not a failure of
/// the run, which has no result. signal() is what was stored there (SIGINT, SIGTERM).
class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal) : std::runtime_error("interrupted"), signal_(signal) {}
  [[nodiscard]] int signal() const { return signal_; }

 private:
  int signal_;
};

}  // namespace cubesim
