#pragma once
/// A non-blocking operation (MPI_Isend/Irecv): Node::start begins it, the process runs on and
/// awaits the Request later. Every Request must be awaited before it is destroyed.
#include <cstdint>
#include <memory>

#include "sim/buffer.hpp"
#include "sim/kernel/backend.hpp"
#include "sim/kernel/op_state.hpp"

namespace cubesim {

/// An operation started by Node::start and awaited later (co_await request).
class [[nodiscard]] Request {
 public:
  Request() = default;
  bool await_ready();
  bool await_suspend(std::coroutine_handle<> h);
  Buffer await_resume();
  /// True once the operation has completed (it may not have been awaited yet).
  [[nodiscard]] bool done() const { return s_ && s_->waiter.remaining == 0; }

 private:
  friend class Node;
  struct State {
    /// Field by field (make_unique would otherwise zero all of it first; see detail::Waiter).
    State() noexcept {}  // NOLINT(modernize-use-equals-default)
    detail::Backend* engine = nullptr;
    detail::OpState op;
    detail::Waiter waiter;
    std::int64_t id = 0;
    bool suspended = false;
  };
  std::unique_ptr<State> s_;
};

}  // namespace cubesim
