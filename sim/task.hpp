#pragma once
/// Task<T>: a lazily started C++20 coroutine with symmetric transfer. A simulated process is a
/// free coroutine `Task<> f(Node& self, Params p)`; it awaits engine operations (sim/node.hpp),
/// other Tasks, and `all_of(...)` of several Tasks that then run concurrently in simulated time.
/// An exception thrown inside a Task propagates to whoever awaits it, and out of the top-level
/// process to the engine, which ends the run with that error (STYLE.md habit 9).
#include <coroutine>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

namespace cubesim {

namespace detail {
/// Concurrent strands of one process (a strand is the main coroutine or one child of an all_of
/// of Tasks). Only a recording engine hands out strand ids (traces replay forks faithfully);
/// otherwise every strand is 0 and this costs one pointer test per all_of.
class StrandHooks {
 public:
  /// Strand `parent` forks `count` children; returns the id of the first (ids are consecutive).
  virtual int fork(int parent, int count) = 0;

 protected:
  ~StrandHooks() = default;
};
inline thread_local int current_strand = 0;
inline thread_local StrandHooks* strand_hooks = nullptr;

/// Shared by the children of one all_of: the last child to finish resumes the parent.
struct JoinState {
  int remaining = 0;
  int parent_strand = 0;
  std::coroutine_handle<> parent;
  std::exception_ptr error;
};

struct PromiseBase {
  std::coroutine_handle<> continuation;
  JoinState* join = nullptr;
  std::exception_ptr error;

  std::suspend_always initial_suspend() noexcept { return {}; }
  struct FinalAwaiter {
    bool await_ready() noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
      PromiseBase& p = h.promise();
      if (p.join != nullptr) {
        if (p.error && !p.join->error) p.join->error = p.error;
        if (--p.join->remaining == 0) {
          current_strand = p.join->parent_strand;
          return p.join->parent;
        }
        return std::noop_coroutine();
      }
      if (p.continuation) return p.continuation;
      return std::noop_coroutine();
    }
    void await_resume() noexcept {}
  };
  FinalAwaiter final_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept { error = std::current_exception(); }
};
}  // namespace detail

template <class T = void>
class [[nodiscard]] Task {
 public:
  struct promise_type : detail::PromiseBase {
    std::optional<T> value;
    Task get_return_object() { return Task(std::coroutine_handle<promise_type>::from_promise(*this)); }
    template <class U>
    void return_value(U&& v) { value.emplace(std::forward<U>(v)); }
  };
  using Handle = std::coroutine_handle<promise_type>;

  Task() = default;
  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept { if (this != &o) { destroy(); h_ = std::exchange(o.h_, {}); } return *this; }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { destroy(); }

  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> caller) noexcept {
    h_.promise().continuation = caller;
    return h_;
  }
  T await_resume() {
    if (h_.promise().error) std::rethrow_exception(h_.promise().error);
    return std::move(*h_.promise().value);
  }
  [[nodiscard]] Handle handle() const { return h_; }

 private:
  explicit Task(Handle h) : h_(h) {}
  void destroy() { if (h_) { h_.destroy(); h_ = {}; } }
  Handle h_;
};

template <>
class [[nodiscard]] Task<void> {
 public:
  struct promise_type : detail::PromiseBase {
    Task get_return_object() { return Task(std::coroutine_handle<promise_type>::from_promise(*this)); }
    void return_void() noexcept {}
  };
  using Handle = std::coroutine_handle<promise_type>;

  Task() = default;
  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept { if (this != &o) { destroy(); h_ = std::exchange(o.h_, {}); } return *this; }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { destroy(); }

  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> caller) noexcept {
    h_.promise().continuation = caller;
    return h_;
  }
  void await_resume() {
    if (h_.promise().error) std::rethrow_exception(h_.promise().error);
  }
  [[nodiscard]] Handle handle() const { return h_; }
  [[nodiscard]] bool done() const { return !h_ || h_.done(); }
  [[nodiscard]] std::exception_ptr error() const { return h_ ? h_.promise().error : nullptr; }

 private:
  explicit Task(Handle h) : h_(h) {}
  void destroy() { if (h_) { h_.destroy(); h_ = {}; } }
  Handle h_;
};

/// Runs the tasks concurrently; resumes when all have finished. The first exception is rethrown.
class AllOfTasks {
 public:
  explicit AllOfTasks(std::vector<Task<>> tasks) : tasks_(std::move(tasks)) {}
  bool await_ready() const noexcept { return tasks_.empty(); }
  bool await_suspend(std::coroutine_handle<> parent) {
    join_.parent = parent;
    join_.remaining = static_cast<int>(tasks_.size()) + 1;  // +1 held while starting them
    const int strand = detail::current_strand;
    join_.parent_strand = strand;
    const int first = detail::strand_hooks != nullptr
                          ? detail::strand_hooks->fork(strand, static_cast<int>(tasks_.size()))
                          : strand;
    int i = 0;
    for (Task<>& t : tasks_) {
      t.handle().promise().join = &join_;
      detail::current_strand = detail::strand_hooks != nullptr ? first + i++ : strand;
      t.handle().resume();
    }
    detail::current_strand = strand;
    return --join_.remaining != 0;  // all finished synchronously: do not suspend
  }
  void await_resume() {
    if (join_.error) std::rethrow_exception(join_.error);
  }

 private:
  std::vector<Task<>> tasks_;
  detail::JoinState join_;
};

inline AllOfTasks all_of(std::vector<Task<>> tasks) { return AllOfTasks(std::move(tasks)); }

}  // namespace cubesim
