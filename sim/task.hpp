#pragma once
/// Task<T>: a lazily started C++20 coroutine with symmetric transfer. A simulated process is a
/// free coroutine `Task<> f(Node& self, Params p)`; it awaits engine operations (sim/node.hpp),
/// other Tasks, and `all_of(...)` of several Tasks that then run concurrently in simulated time.
/// An exception thrown inside a Task propagates to whoever awaits it, and out of the top-level
/// process to the engine, which ends the run with that error (STYLE.md habit 9).
#include <coroutine>
#include <cstdint>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace cubesim {

namespace detail {
/// Concurrent strands of one process (a strand is the main coroutine or one child of an all_of
/// of Tasks). Only a recording engine hands out strand ids, so that traces replay forks
/// faithfully; it sets itself as the hooks of each top-level process, and every Task passes them
/// on to the Tasks it awaits or runs in an all_of. Without hooks (not recording) every strand is
/// 0 and this costs one pointer test per all_of. No global state: the hooks travel in the
/// coroutine frames, the current strand lives in the engine.
class StrandHooks {
 public:
  /// The strand running now.
  [[nodiscard]] virtual int current_strand() const = 0;
  /// The running strand forks `count` children; returns the id of the first (ids are consecutive).
  virtual int fork(int count) = 0;
  /// Strand `strand` of the running process runs from now on.
  virtual void enter(int strand) = 0;

 protected:
  ~StrandHooks() = default;
};

/// Shared by the children of one all_of: the last child to finish resumes the parent.
struct JoinState {
  int remaining = 0;
  int parent_strand = 0;
  StrandHooks* hooks = nullptr;
  std::coroutine_handle<> parent;
  std::exception_ptr error;
};

struct PromiseBase {
  std::coroutine_handle<> continuation;
  JoinState* join = nullptr;
  std::exception_ptr error;
  StrandHooks* hooks = nullptr;  ///< a recording engine's, or null
  /// A top-level process's: the engine's count of processes ended, one more when this one ends,
  /// so that the engine learns it without reading the process's frame after every resume (that
  /// read missed the cache on every resume of a large run: 4.5 % of a step form on 2^16 nodes).
  /// Only the cycle engine sets it; the SimGrid backend leaves it null and asks done().
  std::uint64_t* ended = nullptr;

  std::suspend_always initial_suspend() noexcept { return {}; }
  struct FinalAwaiter {
    bool await_ready() noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
      PromiseBase& p = h.promise();
      if (p.ended != nullptr) ++*p.ended;
      if (p.join != nullptr) {
        if (p.error && !p.join->error) p.join->error = p.error;
        if (--p.join->remaining == 0) {
          if (p.join->hooks != nullptr) p.join->hooks->enter(p.join->parent_strand);
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

/// The strand hooks of an awaiting coroutine: a Task's, or none for any other coroutine.
template <class P>
StrandHooks* hooks_of(std::coroutine_handle<P> h) noexcept {
  if constexpr (std::is_base_of_v<PromiseBase, P>)
    return h.promise().hooks;
  else
    return nullptr;
}
}  // namespace detail

template <class T = void>
class [[nodiscard]] Task {
 public:
  struct promise_type : detail::PromiseBase {
    std::optional<T> value;
    Task get_return_object() { return Task(std::coroutine_handle<promise_type>::from_promise(*this)); }
    template <class U>
    void return_value(U&& v) {
      value.emplace(std::forward<U>(v));
    }
  };
  using Handle = std::coroutine_handle<promise_type>;

  Task() = default;
  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { destroy(); }

  bool await_ready() const noexcept { return false; }
  template <class P>
  std::coroutine_handle<> await_suspend(std::coroutine_handle<P> caller) noexcept {
    h_.promise().continuation = caller;
    h_.promise().hooks = detail::hooks_of(caller);
    return h_;
  }
  T await_resume() {
    if (h_.promise().error) std::rethrow_exception(h_.promise().error);
    return std::move(*h_.promise().value);
  }
  [[nodiscard]] Handle handle() const { return h_; }
  /// The value of a Task that has finished inside an all_of (rethrows its error).
  T result() {
    if (h_.promise().error) std::rethrow_exception(h_.promise().error);
    return std::move(*h_.promise().value);
  }

 private:
  explicit Task(Handle h) : h_(h) {}
  void destroy() {
    if (h_) {
      h_.destroy();
      h_ = {};
    }
  }
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
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { destroy(); }

  bool await_ready() const noexcept { return false; }
  template <class P>
  std::coroutine_handle<> await_suspend(std::coroutine_handle<P> caller) noexcept {
    h_.promise().continuation = caller;
    h_.promise().hooks = detail::hooks_of(caller);
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
  void destroy() {
    if (h_) {
      h_.destroy();
      h_ = {};
    }
  }
  Handle h_;
};

/// Runs the tasks concurrently; resumes when all have finished. The first exception is rethrown.
/// Owns the tasks (all_of(vector<Task<>>)), or borrows the caller's (all_of(vector<Task<T>>&),
/// whose values the caller then takes with Task::result(): no frame of its own per task).
template <class Tasks>
class AllOfTasksOf {
 public:
  explicit AllOfTasksOf(Tasks tasks) : tasks_(std::forward<Tasks>(tasks)) {}
  bool await_ready() const noexcept { return tasks_.empty(); }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> parent) {
    join_.parent = parent;
    join_.remaining = static_cast<int>(tasks_.size()) + 1;  // +1 held while starting them
    detail::StrandHooks* hooks = detail::hooks_of(parent);
    join_.hooks = hooks;
    join_.parent_strand = hooks != nullptr ? hooks->current_strand() : 0;
    const int first = hooks != nullptr ? hooks->fork(static_cast<int>(tasks_.size())) : 0;
    int i = 0;
    for (auto& t : tasks_) {
      t.handle().promise().join = &join_;
      t.handle().promise().hooks = hooks;
      if (hooks != nullptr) hooks->enter(first + i++);
      t.handle().resume();
    }
    if (hooks != nullptr) hooks->enter(join_.parent_strand);
    return --join_.remaining != 0;  // all finished synchronously: do not suspend
  }
  void await_resume() {
    if (join_.error) std::rethrow_exception(join_.error);
  }

 private:
  Tasks tasks_;
  detail::JoinState join_;
};
using AllOfTasks = AllOfTasksOf<std::vector<Task<>>>;

inline AllOfTasks all_of(std::vector<Task<>> tasks) { return AllOfTasks(std::move(tasks)); }
/// all_of over the caller's Tasks of a value (borrowed: take each value with Task::result()).
template <class T>
using AllOfTaskRefs = AllOfTasksOf<std::vector<Task<T>>&>;
template <class T>
AllOfTaskRefs<T> all_of(std::vector<Task<T>>& tasks) {
  static_assert(!std::is_void_v<T>, "all_of(std::move(tasks)) for Tasks without a value");
  return AllOfTaskRefs<T>(tasks);
}

}  // namespace cubesim
