// A fixed-capacity ring of time-ordered items: push overwrites the oldest once full.
// Not synchronized: the sampler guards each ring with its own mutex.
// T needs a `time` member (Clock::TimePoint), pushed in non-decreasing order.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "util/clock.h"

namespace gpuclk::telemetry {

template <class T>
class RingBuffer {
 public:
  explicit RingBuffer(std::size_t capacity) : items_(std::max<std::size_t>(capacity, 1)) {}

  std::size_t capacity() const { return items_.size(); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Items ever pushed, including those overwritten.
  std::size_t pushed() const { return pushed_; }

  void push(T item) {
    items_[(first_ + size_) % items_.size()] = std::move(item);
    if (size_ < items_.size())
      ++size_;
    else
      first_ = (first_ + 1) % items_.size();
    ++pushed_;
  }

  // i-th oldest item held, 0 <= i < size().
  const T& at(std::size_t i) const { return items_[(first_ + i) % items_.size()]; }
  const T& back() const { return at(size_ - 1); }
  std::optional<T> latest(std::size_t from_end = 0) const {
    if (from_end >= size_) return std::nullopt;
    return at(size_ - 1 - from_end);
  }

  // Items with from <= time <= to, oldest first.
  std::vector<T> between(Clock::TimePoint from, Clock::TimePoint to) const {
    return between(from, to, [](const T& item) { return item; });
  }
  // The same items, each as convert(item) gives it (a ring of packed samples unpacks them).
  template <class Convert>
  auto between(Clock::TimePoint from, Clock::TimePoint to, Convert convert) const {
    std::vector<std::decay_t<decltype(convert(std::declval<const T&>()))>> out;
    std::size_t i = lower_bound(from);
    for (; i < size_ && at(i).time <= to; ++i) out.push_back(convert(at(i)));
    return out;
  }

 private:
  // First index whose time is >= t (binary search over the logical order).
  std::size_t lower_bound(Clock::TimePoint t) const {
    std::size_t lo = 0, hi = size_;
    while (lo < hi) {
      std::size_t mid = lo + (hi - lo) / 2;
      if (at(mid).time < t)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }

  std::vector<T> items_;
  std::size_t first_ = 0;
  std::size_t size_ = 0;
  std::size_t pushed_ = 0;
};

}  // namespace gpuclk::telemetry
