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
    b.size_ = n;
    return b;
  }
  static Buffer of(std::vector<Element> v) {
    Buffer b;
    b.size_ = static_cast<std::int64_t>(v.size());
    b.data_ = std::move(v);
    b.has_data_ = true;
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

  [[nodiscard]] std::int64_t size() const { return size_; }
  [[nodiscard]] bool has_data() const { return has_data_; }
  [[nodiscard]] std::span<const Element> values() const { return data_; }
  [[nodiscard]] std::span<Element> values() { return data_; }

  /// Elements [offset, offset + n).
  [[nodiscard]] Buffer slice(std::int64_t offset, std::int64_t n) const {
    if (offset < 0 || n < 0 || offset + n > size_) throw std::out_of_range("Buffer::slice out of range");
    if (!has_data_) return sized(n);
    return of(std::vector<Element>(data_.begin() + offset, data_.begin() + offset + n));
  }
  /// Appends `other` (both must be in the same mode, or this one empty).
  void append(const Buffer& other) {
    if (size_ == 0 && !has_data_) has_data_ = other.has_data_;
    if (has_data_ != other.has_data_ && other.size_ > 0)
      throw std::logic_error("Buffer::append mixes data and timing-only buffers");
    size_ += other.size_;
    if (has_data_) data_.insert(data_.end(), other.data_.begin(), other.data_.end());
  }
  /// Overwrites elements [offset, offset + other.size()) with `other`.
  void write(std::int64_t offset, const Buffer& other) {
    if (offset < 0 || offset + other.size_ > size_) throw std::out_of_range("Buffer::write out of range");
    if (has_data_ && other.has_data_) std::copy(other.data_.begin(), other.data_.end(), data_.begin() + offset);
  }

 private:
  std::int64_t size_ = 0;
  std::vector<Element> data_;
  bool has_data_ = false;
};

}  // namespace cubesim
