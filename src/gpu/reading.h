// A value read from a GPU: present, not supported by this GPU/driver, or an error (with the NVML
// code). "Not supported" is data, not a failure: tables print N/A, JSON null, Prometheus omits it.
#pragma once

#include <optional>
#include <stdexcept>
#include <utility>

namespace gpuclk::gpu {

enum class ReadStatus { ok, not_supported, error };

template <class T>
class Reading {
 public:
  Reading() : status_(ReadStatus::not_supported) {}
  Reading(T value)
      : status_(ReadStatus::ok), value_(std::move(value)) {}  // NOLINT: implicit by design

  static Reading not_supported() { return Reading(ReadStatus::not_supported, 0); }
  static Reading error(int nvml_code) { return Reading(ReadStatus::error, nvml_code); }

  bool ok() const { return status_ == ReadStatus::ok; }
  explicit operator bool() const { return ok(); }
  ReadStatus status() const { return status_; }
  int error_code() const { return error_code_; }  // NVML return code when status() == error

  const T& value() const {
    if (!ok()) throw std::logic_error("Reading::value() on a missing reading");
    return *value_;
  }
  const T& operator*() const { return value(); }
  const T* operator->() const { return &value(); }
  T value_or(T fallback) const { return ok() ? *value_ : fallback; }
  std::optional<T> optional() const { return value_; }

  // Applies f to the value, keeping a missing reading missing.
  template <class F>
  auto map(F&& f) const -> Reading<decltype(f(std::declval<const T&>()))> {
    using U = decltype(f(std::declval<const T&>()));
    if (ok()) return Reading<U>(f(*value_));
    if (status_ == ReadStatus::error) return Reading<U>::error(error_code_);
    return Reading<U>::not_supported();
  }

 private:
  Reading(ReadStatus s, int code) : status_(s), error_code_(code) {}
  ReadStatus status_;
  int error_code_ = 0;
  std::optional<T> value_;
};

}  // namespace gpuclk::gpu
