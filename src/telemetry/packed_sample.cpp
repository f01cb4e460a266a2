#include "telemetry/packed_sample.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <utility>

#include "telemetry/field_table.h"

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

// --- PackedSlowSample ---------------------------------------------------------------------
//
// The byte string: a varint mask of the members present (SlowBit), then each present member in
// that order; the GPM window start as the distance back from `time`; the NVLink list (a count,
// then per link its number, one byte of flags and its counters); the processes (when read) and
// the process utilization samples. Integers are LEB128 varints (signed ones zigzagged); a double
// is a varint of twice its value when it is a whole number below 2^53 (counters, clocks, bytes),
// else 1 and its 8 bytes, so every double comes back bit for bit (-0, NaN and fractions included).

namespace {

static_assert(sizeof(SlowSample) == 2 * sizeof(TimePoint) + 5 * sizeof(std::optional<double>) +
                                        sizeof(std::optional<GpmActivity>) +
                                        3 * sizeof(std::optional<std::uint64_t>) +
                                        2 * sizeof(std::optional<std::chrono::nanoseconds>) +
                                        sizeof(std::vector<NvLinkSample>) + alignof(std::uint64_t) +
                                        sizeof(std::optional<std::vector<ProcessSample>>) +
                                        sizeof(std::vector<gpu::ProcessUtilization>),
              "a SlowSample member PackedSlowSample does not carry: pack it here");
static_assert(sizeof(GpmActivity) == 8 * sizeof(std::optional<double>),
              "a GpmActivity member PackedSlowSample does not carry: pack it here");
// The link's number and `active` share its first 8 bytes; every counter is a row.
static_assert(sizeof(NvLinkSample) ==
                  alignof(std::uint64_t) +
                      std::size(fields::kNvLink) * sizeof(std::optional<std::uint64_t>),
              "an NvLinkSample counter without a row in field_table.h's kNvLink");
// A link's flags byte: bit 0 and 1 its state, one bit per counter after them.
static_assert(std::size(fields::kNvLink) <= 6, "more NVLink counters than a flags byte holds");

enum SlowBit : unsigned {
  kEnergy,
  kPcieRx,
  kPcieTx,
  kGpm,
  kEccCorrected,
  kEccUncorrected,
  kPcieReplay,
  kPowerViolation,
  kThermalViolation,
  kNvLinkErrorsFresh,
  kProcesses,
  kNvLinkDataFresh,
  kNvLinkRxRate,
  kNvLinkTxRate,
};

constexpr std::uint64_t bit(unsigned b) { return std::uint64_t{1} << b; }

class Writer {
 public:
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      bytes_.push_back(static_cast<std::uint8_t>(v | 0x80));
      v >>= 7;
    }
    bytes_.push_back(static_cast<std::uint8_t>(v));
  }
  void signed_varint(std::int64_t v) {
    varint((static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
  }
  void byte(std::uint8_t b) { bytes_.push_back(b); }
  void number(double v) {
    if (std::isfinite(v) && !std::signbit(v) && v < 0x1p53 && v == std::floor(v)) {
      varint(static_cast<std::uint64_t>(v) << 1);
      return;
    }
    varint(1);
    const auto raw = std::bit_cast<std::uint64_t>(v);
    for (unsigned i = 0; i < 8; ++i) byte(static_cast<std::uint8_t>(raw >> (8 * i)));
  }
  // The bytes, in a buffer of their size (the writer's grew in steps).
  std::vector<std::uint8_t> take() { return {bytes_.begin(), bytes_.end()}; }

 private:
  std::vector<std::uint8_t> bytes_;
};

class Reader {
 public:
  explicit Reader(const std::vector<std::uint8_t>& bytes) : bytes_(bytes) {}
  std::uint8_t byte() {
    if (pos_ >= bytes_.size()) throw std::logic_error("PackedSlowSample: truncated");
    return bytes_[pos_++];
  }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
      const std::uint8_t b = byte();
      v |= std::uint64_t{b & 0x7FU} << shift;
      if (!(b & 0x80)) return v;
    }
  }
  std::int64_t signed_varint() {
    const std::uint64_t z = varint();
    return static_cast<std::int64_t>((z >> 1) ^ (~(z & 1) + 1));
  }
  double number() {
    const std::uint64_t code = varint();
    if (code != 1) return static_cast<double>(code >> 1);
    std::uint64_t raw = 0;
    for (unsigned i = 0; i < 8; ++i) raw |= std::uint64_t{byte()} << (8 * i);
    return std::bit_cast<double>(raw);
  }

 private:
  const std::vector<std::uint8_t>& bytes_;
  std::size_t pos_ = 0;
};

// The GPM busy fractions in one order, for both directions.
template <class A, class F>
void for_each_gpm(A& gpm, F&& f) {
  for (auto* member : {&gpm.graphics, &gpm.sm, &gpm.sm_occupancy, &gpm.tensor, &gpm.dram, &gpm.fp64,
                       &gpm.fp32, &gpm.fp16})
    f(*member);
}

// A link's counters in the table's order (field_table.h), for both directions.
template <class L, class F>
void for_each_nvlink_counter(L& link, F&& f) {
  for (const auto& row : fields::kNvLink) f(link.*row.member);
}

}  // namespace

PackedSlowSample::PackedSlowSample(const SlowSample& s) : time(s.time) {
  std::uint64_t mask = 0;
  auto mark = [&](bool present, unsigned b) {
    if (present) mask |= bit(b);
  };
  mark(s.energy.has_value(), kEnergy);
  mark(s.pcie_rx.has_value(), kPcieRx);
  mark(s.pcie_tx.has_value(), kPcieTx);
  mark(s.gpm.has_value(), kGpm);
  mark(s.ecc_corrected.has_value(), kEccCorrected);
  mark(s.ecc_uncorrected.has_value(), kEccUncorrected);
  mark(s.pcie_replay.has_value(), kPcieReplay);
  mark(s.power_violation.has_value(), kPowerViolation);
  mark(s.thermal_violation.has_value(), kThermalViolation);
  mark(s.nvlink_errors_fresh, kNvLinkErrorsFresh);
  mark(s.processes.has_value(), kProcesses);
  mark(s.nvlink_data_fresh, kNvLinkDataFresh);
  mark(s.nvlink_rx_rate.has_value(), kNvLinkRxRate);
  mark(s.nvlink_tx_rate.has_value(), kNvLinkTxRate);

  Writer w;
  w.varint(mask);
  if (s.energy) w.number(s.energy->value());
  if (s.pcie_rx) w.number(s.pcie_rx->value());
  if (s.pcie_tx) w.number(s.pcie_tx->value());
  if (s.gpm) {
    std::uint8_t present = 0;
    unsigned i = 0;
    for_each_gpm(*s.gpm, [&](const auto& r) {
      if (r) present |= std::uint8_t(1U << i);
      ++i;
    });
    w.byte(present);
    for_each_gpm(*s.gpm, [&](const auto& r) {
      if (r) w.number(r->value());
    });
  }
  // Unsigned, so any two time points come back (the difference wraps, and unwraps).
  const auto ticks = [](TimePoint t) {
    return static_cast<std::uint64_t>(t.time_since_epoch().count());
  };
  w.signed_varint(static_cast<std::int64_t>(ticks(s.time) - ticks(s.gpm_window_start)));
  if (s.ecc_corrected) w.varint(*s.ecc_corrected);
  if (s.ecc_uncorrected) w.varint(*s.ecc_uncorrected);
  if (s.pcie_replay) w.varint(*s.pcie_replay);
  if (s.power_violation) w.signed_varint(s.power_violation->count());
  if (s.thermal_violation) w.signed_varint(s.thermal_violation->count());
  if (s.nvlink_rx_rate) w.number(s.nvlink_rx_rate->value());
  if (s.nvlink_tx_rate) w.number(s.nvlink_tx_rate->value());

  w.varint(s.nvlinks.size());
  for (const NvLinkSample& link : s.nvlinks) {
    w.varint(link.link);
    std::uint8_t flags = 0;
    if (link.active) flags = *link.active ? 3 : 1;  // bit 0: read, bit 1: its value
    unsigned i = 2;
    for_each_nvlink_counter(link, [&](const auto& c) {
      if (c) flags |= std::uint8_t(1U << i);
      ++i;
    });
    w.byte(flags);
    for_each_nvlink_counter(link, [&](const auto& c) {
      if (c) w.varint(*c);
    });
  }
  if (s.processes) {
    w.varint(s.processes->size());
    for (const ProcessSample& p : *s.processes) {
      w.varint((std::uint64_t{p.pid} << 1) | (p.memory ? 1U : 0U));
      if (p.memory) w.number(p.memory->value());
    }
  }
  w.varint(s.process_utilization.size());
  for (const gpu::ProcessUtilization& u : s.process_utilization) {
    w.varint(u.pid);
    w.varint(u.time_us);
    w.number(u.sm.value());
    w.number(u.memory.value());
  }
  bytes_ = w.take();
}

SlowSample PackedSlowSample::unpack() const {
  SlowSample s;
  s.time = time;
  if (bytes_.empty()) return s;  // a default-constructed PackedSlowSample
  Reader r(bytes_);
  const std::uint64_t mask = r.varint();
  const auto has = [&](unsigned b) { return (mask & bit(b)) != 0; };
  if (has(kEnergy)) s.energy = Joules(r.number());
  if (has(kPcieRx)) s.pcie_rx = BytesPerSecond(r.number());
  if (has(kPcieTx)) s.pcie_tx = BytesPerSecond(r.number());
  if (has(kGpm)) {
    s.gpm.emplace();
    const std::uint8_t present = r.byte();
    unsigned i = 0;
    for_each_gpm(*s.gpm, [&](auto& v) {
      if (present & (1U << i++)) v = Ratio(r.number());
    });
  }
  const auto back = static_cast<std::uint64_t>(r.signed_varint());
  s.gpm_window_start = TimePoint(Duration(static_cast<Duration::rep>(
      static_cast<std::uint64_t>(time.time_since_epoch().count()) - back)));
  if (has(kEccCorrected)) s.ecc_corrected = r.varint();
  if (has(kEccUncorrected)) s.ecc_uncorrected = r.varint();
  if (has(kPcieReplay)) s.pcie_replay = r.varint();
  if (has(kPowerViolation)) s.power_violation = std::chrono::nanoseconds(r.signed_varint());
  if (has(kThermalViolation)) s.thermal_violation = std::chrono::nanoseconds(r.signed_varint());
  if (has(kNvLinkRxRate)) s.nvlink_rx_rate = BytesPerSecond(r.number());
  if (has(kNvLinkTxRate)) s.nvlink_tx_rate = BytesPerSecond(r.number());
  s.nvlink_errors_fresh = has(kNvLinkErrorsFresh);
  s.nvlink_data_fresh = has(kNvLinkDataFresh);

  s.nvlinks.resize(r.varint());
  for (NvLinkSample& link : s.nvlinks) {
    link.link = static_cast<unsigned>(r.varint());
    const std::uint8_t flags = r.byte();
    if (flags & 1U) link.active = (flags & 2U) != 0;
    unsigned i = 2;
    for_each_nvlink_counter(link, [&](auto& c) {
      if (flags & (1U << i++)) c = r.varint();
    });
  }
  if (has(kProcesses)) {
    s.processes.emplace(r.varint());
    for (ProcessSample& p : *s.processes) {
      const std::uint64_t code = r.varint();
      p.pid = static_cast<unsigned>(code >> 1);
      if (code & 1U) p.memory = Bytes(r.number());
    }
  }
  s.process_utilization.resize(r.varint());
  for (gpu::ProcessUtilization& u : s.process_utilization) {
    u.pid = static_cast<unsigned>(r.varint());
    u.time_us = r.varint();
    u.sm = Ratio(r.number());
    u.memory = Ratio(r.number());
  }
  return s;
}

}  // namespace gpuclk::telemetry
