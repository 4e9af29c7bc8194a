#pragma once
/// Awaitable operations of a simulated process (sim/node.hpp makes them): one at a time
/// (`co_await op`) or several at once (`co_await all_of(a, b, ...)`, an exchange).
#include <array>
#include <cstdint>
#include <vector>

#include "sim/buffer.hpp"
#include "sim/kernel/backend.hpp"
#include "sim/kernel/op_state.hpp"

namespace cubesim {

/// One awaitable operation; also combinable with all_of(op, op, ...). An Op awaited alone keeps
/// its Waiter in the awaiter (Op::Single, in the awaiting frame); one in an all_of shares the
/// group's, so a vector of Ops for an exchange carries no Waiter each (328 -> 224 bytes an Op; 128 since the
/// OpState left a timed op's chain to the engine, 96 since it shares fields between kinds of op).
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
  /// The most ops all_of(a, b, ...) names one by one; more go in a vector<Op>.
  static constexpr std::size_t kMaxListed = 4;
  /// Ops named one by one, by address, held in the group itself: a pairwise exchange
  /// (all_of(send, recv)) allocated a list of two pointers a step before (2 % of a one-port
  /// nESBT broadcast on 2^16 nodes, in malloc and free).
  template <class... Ops>
  explicit OpGroup(Op& first, Ops&... rest) : count_(1 + sizeof...(Ops)), listed_{&first, &rest...} {
    static_assert(1 + sizeof...(Ops) <= kMaxListed, "all_of(a, b, ...) names at most 4 ops; put more in a vector<Op>");
  }
  /// The ops of a vector, in place (no list of pointers allocated).
  OpGroup(Op* first, std::size_t count) : first_(first), count_(count) {}
  bool await_ready() const noexcept { return count_ == 0; }
  bool await_suspend(std::coroutine_handle<> h);
  void await_resume();

 private:
  [[nodiscard]] std::size_t size() const { return count_; }
  [[nodiscard]] Op& at(std::size_t i) const { return first_ != nullptr ? first_[i] : *listed_[i]; }
  detail::Backend* engine_ = nullptr;
  Op* first_ = nullptr;
  std::size_t count_ = 0;
  std::array<Op*, kMaxListed> listed_{};
  detail::Waiter waiter_;
};

template <class... Ops>
OpGroup all_of(Op& first, Ops&... rest) {
  return OpGroup(first, rest...);
}
OpGroup all_of(std::vector<Op>& ops);

}  // namespace cubesim
