#pragma once
/// A message payload: a count of elements and, in data mode, their values. In timing-only mode
/// (large runs) a Buffer carries only its size, and the same algorithm code runs unchanged.
#include <cstdint>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

namespace cubesim {

using Element = double;  ///< exact for integers below 2^53, which is what the checks encode

class Buffer {
 public:
  Buffer() = default;
  /// A buffer of n elements with no values (timing-only mode).
  static Buffer sized(std::int64_t n) {
    Buffer b;
    b.set(n, false);
    return b;
  }
  static Buffer of(std::vector<Element> v) {
    Buffer b;
    b.set(static_cast<std::int64_t>(v.size()), true);
    b.data_ = std::move(v);
    return b;
  }
  /// n elements, filled by f(i) in data mode, or sized only otherwise.
  template <class F>
  static Buffer make(std::int64_t n, bool data, F&& f) {
    if (!data) return sized(n);
    std::vector<Element> v;  // reserved, not zeroed: each element is written once
    v.reserve(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) v.push_back(f(i));
    return of(std::move(v));
  }

  [[nodiscard]] std::int64_t size() const { return static_cast<std::int64_t>(bits_ & ~kHasData); }
  [[nodiscard]] bool has_data() const { return (bits_ & kHasData) != 0; }
  [[nodiscard]] std::span<const Element> values() const { return data_; }
  [[nodiscard]] std::span<Element> values() { return data_; }

  /// Elements [offset, offset + n).
  [[nodiscard]] Buffer slice(std::int64_t offset, std::int64_t n) const {
    if (offset < 0 || n < 0 || offset + n > size()) throw std::out_of_range("Buffer::slice out of range");
    if (!has_data()) return sized(n);
    return of(std::vector<Element>(data_.begin() + offset, data_.begin() + offset + n));
  }
  /// Appends `other` (both must be in the same mode, or this one empty).
  void append(const Buffer& other) {
    bool data = has_data();
    if (size() == 0 && !data) data = other.has_data();
    if (data != other.has_data() && other.size() > 0)
      throw std::logic_error("Buffer::append mixes data and timing-only buffers");
    set(size() + other.size(), data);
    if (data) data_.insert(data_.end(), other.data_.begin(), other.data_.end());
  }
  /// Overwrites elements [offset, offset + other.size()) with `other`.
  void write(std::int64_t offset, const Buffer& other) {
    if (offset < 0 || offset + other.size() > size()) throw std::out_of_range("Buffer::write out of range");
    if (has_data() && other.has_data()) std::copy(other.data_.begin(), other.data_.end(), data_.begin() + offset);
  }

 private:
  /// Whether it holds values, in the top bit of the size: a Buffer of 32 bytes, not 40 (an
  /// OpState holds one, and a step form holds 2n OpStates a node).
  static constexpr std::uint64_t kHasData = std::uint64_t{1} << 63;
  void set(std::int64_t n, bool data) {
    if (n < 0) throw std::invalid_argument("a buffer of a negative size");
    bits_ = static_cast<std::uint64_t>(n) | (data ? kHasData : 0);
  }
  std::vector<Element> data_;
  std::uint64_t bits_ = 0;
};
static_assert(sizeof(Buffer) <= sizeof(std::vector<Element>) + 8, "a Buffer is its vector and one word");

}  // namespace cubesim
