// Samples as the history rings keep them: the same values, lossless, in a fraction of the
// memory.
//
// PackedFastSample: each std::optional<double> of a FastSample takes 16 bytes (8 of value, 8 of
// flag and padding); here the values are plain doubles beside one presence mask. The node service
// keeps 10 min at 100 ms and 1 h at 1 s of them per GPU: 272 against 144 bytes a sample is 11 MiB
// less resident memory for 8 GPUs.
//
// PackedSlowSample: a SlowSample is 368 bytes and, on an NVLink node, a list of 104-byte link
// samples (18 on an H100: 2.2 KB a sample); the service keeps 600 per GPU, 10.6 MB for 8 GPUs.
// Packed, the readings are one byte string: counters as variable-length integers (an error
// counter that stays 0 is one byte), whole numbers likewise, other doubles as their 8 bytes:
// about 450 bytes a sample on that node.
#pragma once

#include <array>
#include <cstdint>
#include <tuple>
#include <vector>

#include "telemetry/field_table.h"
#include "telemetry/sample.h"

namespace gpuclk::telemetry {

class PackedFastSample {
 public:
  PackedFastSample() = default;
  explicit PackedFastSample(const FastSample& sample);

  // The sample as it was packed, every value bit for bit.
  FastSample unpack() const;

  TimePoint time{};  // the RingBuffer orders by it

 private:
  static constexpr std::size_t kValues = std::tuple_size_v<decltype(fields::kFast)>;
  static constexpr unsigned kClockReasonsBit = kValues, kPstateBit = kValues + 1;
  static_assert(kValues + 2 <= 32, "the presence mask holds every reading");

  std::array<double, kValues> values_{};  // the readings of fields::kFast, in its order
  std::uint64_t clock_reasons_ = 0;
  std::uint32_t present_ = 0;  // bit i: value i (then clock reasons, P-state) was read
  std::int32_t pstate_ = 0;
};

class PackedSlowSample {
 public:
  PackedSlowSample() = default;
  explicit PackedSlowSample(const SlowSample& sample);

  // The sample as it was packed, every value bit for bit.
  SlowSample unpack() const;

  // Bytes the packed readings take (beside this object's own).
  std::size_t packed_size() const { return bytes_.size(); }

  TimePoint time{};  // the RingBuffer orders by it

 private:
  std::vector<std::uint8_t> bytes_;  // everything but `time`, packed_sample.cpp's encoding
};

}  // namespace gpuclk::telemetry
