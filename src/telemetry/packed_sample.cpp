#include "telemetry/packed_sample.h"

#include <utility>

namespace gpuclk::telemetry {
namespace {

// Every member of a FastSample is a row of fields::kFast, its clock reasons or its P-state.
static_assert(sizeof(FastSample) ==
                  sizeof(TimePoint) +
                      std::tuple_size_v<decltype(fields::kFast)> * sizeof(std::optional<double>) +
                      sizeof(std::optional<gpu::ClockReasons>) + sizeof(std::optional<int>),
              "a FastSample member PackedFastSample does not carry: give it a row in "
              "fields::kFast, or pack it here");

// f(row, i) for the rows of fields::kFast, i their position.
template <class F>
void for_each_fast_row(F&& f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) { (f(std::get<I>(fields::kFast), I), ...); }
  (std::make_index_sequence<std::tuple_size_v<decltype(fields::kFast)>>{});
}

}  // namespace

PackedFastSample::PackedFastSample(const FastSample& sample) : time(sample.time) {
  for_each_fast_row([&](const auto& row, std::size_t i) {
    if (const auto& reading = sample.*row.member) {
      values_[i] = reading->value();
      present_ |= 1U << i;
    }
  });
  if (sample.clock_reasons) {
    clock_reasons_ = sample.clock_reasons->bits();
    present_ |= 1U << kClockReasonsBit;
  }
  if (sample.pstate) {
    pstate_ = *sample.pstate;
    present_ |= 1U << kPstateBit;
  }
}

FastSample PackedFastSample::unpack() const {
  FastSample sample;
  sample.time = time;
  for_each_fast_row([&](const auto& row, std::size_t i) {
    using Quantity = typename std::decay_t<decltype(row)>::quantity_type;
    if (present_ & (1U << i)) sample.*row.member = Quantity(values_[i]);
  });
  if (present_ & (1U << kClockReasonsBit)) sample.clock_reasons = gpu::ClockReasons(clock_reasons_);
  if (present_ & (1U << kPstateBit)) sample.pstate = pstate_;
  return sample;
}

}  // namespace gpuclk::telemetry
