#pragma once
/// Awaitable operations of a simulated process (sim/node.hpp makes them): one at a time
/// (`co_await op`) or several at once (`co_await all_of(a, b, ...)`, an exchange).
#include <cstdint>
#include <vector>

#include "sim/buffer.hpp"
#include "sim/kernel/backend.hpp"
#include "sim/kernel/op_state.hpp"

namespace cubesim {

/// One awaitable operation; also combinable with all_of(op, op, ...). An Op awaited alone keeps
/// its Waiter in the awaiter (Op::Single, in the awaiting frame); one in an all_of shares the
/// group's, so a vector of Ops for an exchange carries no Waiter each (328 -> 224 bytes an Op).
class [[nodiscard]] Op {
 public:
  friend class Node;
  Op(detail::Backend* e, detail::OpState st) : engine_(e), st_(std::move(st)) {}
  Op(Op&&) = default;
  Op(const Op&) = delete;
  Op& operator=(const Op&) = delete;

  struct Single {
    Op* op;
    detail::Waiter waiter;
    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> h);
    Buffer await_resume();
  };
  Single operator co_await() & noexcept { return Single{this, {}}; }
  Single operator co_await() && noexcept { return Single{this, {}}; }
  /// The received data, after the op has completed inside an all_of.
  Buffer take() { return std::move(st_.buffer); }

 private:
  friend class OpGroup;
  detail::Backend* engine_;
  detail::OpState st_;
};

/// all_of(a, b, ...) or all_of(vector<Op>&): starts every operation at once; resumes when all
/// have completed. Results stay in the Op objects (Op::take()).
class [[nodiscard]] OpGroup {
 public:
  OpGroup(detail::Backend* e, std::vector<Op*> ops) : engine_(e), ops_(std::move(ops)) {}
  /// The ops of a vector, in place (no list of pointers allocated).
  OpGroup(Op* first, std::size_t count) : engine_(nullptr), first_(first), count_(count) {}
  bool await_ready() const noexcept { return size() == 0; }
  bool await_suspend(std::coroutine_handle<> h);
  void await_resume();

 private:
  [[nodiscard]] std::size_t size() const { return first_ != nullptr ? count_ : ops_.size(); }
  [[nodiscard]] Op& at(std::size_t i) const { return first_ != nullptr ? first_[i] : *ops_[i]; }
  detail::Backend* engine_;
  std::vector<Op*> ops_;
  Op* first_ = nullptr;
  std::size_t count_ = 0;
  detail::Waiter waiter_;
};

template <class... Ops>
OpGroup all_of(Op& first, Ops&... rest) {
  return OpGroup(nullptr, std::vector<Op*>{&first, &rest...});
}
OpGroup all_of(std::vector<Op>& ops);

}  // namespace cubesim
