// What the sampler reads, in two tiers by cost (docs/calibration.md: a getter ~0.3 µs in C; the
// energy counter 3.2 ms, PCIe throughput 20 ms per direction, a GPM sample 0.57 ms).
// Fast fields are read every tick on one thread; slow fields on each GPU's own thread and cadence,
// so a slow read never delays a fast sample.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace gpuclk::telemetry {

enum class Field : std::uint8_t {
  // Fast tier: a few µs per GPU in all.
  sm_clock,
  memory_clock,
  power,  // and the memory's share where the board reports it
  gpu_temperature,
  memory_temperature,
  utilization,  // GPU and memory busy (one NVML call)
  clock_reasons,
  memory_used,
  pstate,
  bar1_used,
  protected_memory_used,  // confidential computing (dmon "ccpm")
  media_utilization,      // encoder, decoder, JPEG, optical flow (4 calls)
  // Slow tier: milliseconds per GPU.
  energy,           // total energy counter
  pcie_throughput,  // 2 × 20 ms on an H100: opt-in
  gpm,              // SM / tensor / DRAM activity over the window between two reads
  ecc_errors,       // volatile corrected / uncorrected counts
  pcie_replay,
  violation_time,  // time held down by the power and thermal policies
  nvlink,          // per link: up or down, DL error counters, data sent and received
  processes,       // compute processes and the driver's per-process utilization samples
  // With nvlink: the links' data counters on every slow read (one field-value call, ~260 µs on
  // an H200); without it they are read with the DL error counters, at their pace.
  nvlink_throughput,
  count
};

constexpr bool is_slow(Field f) { return f >= Field::energy; }

// Short stable name ("sm_clock"); used in messages and docs.
std::string_view field_name(Field f);

// A set of fields; a value type (copyable, no allocation).
class FieldSet {
 public:
  constexpr FieldSet() = default;
  constexpr FieldSet(std::initializer_list<Field> fields) {
    for (Field f : fields) add(f);
  }
  constexpr bool has(Field f) const { return (bits_ >> unsigned(f)) & 1U; }
  constexpr FieldSet& add(Field f) {
    bits_ |= std::uint32_t{1} << unsigned(f);
    return *this;
  }
  constexpr FieldSet& remove(Field f) {
    bits_ &= ~(std::uint32_t{1} << unsigned(f));
    return *this;
  }
  constexpr FieldSet operator|(FieldSet o) const { return FieldSet(bits_ | o.bits_); }
  constexpr FieldSet operator&(FieldSet o) const { return FieldSet(bits_ & o.bits_); }
  constexpr bool operator==(const FieldSet&) const = default;
  constexpr bool empty() const { return bits_ == 0; }
  constexpr FieldSet fast() const { return FieldSet(bits_ & ~kSlowMask); }
  constexpr FieldSet slow() const { return FieldSet(bits_ & kSlowMask); }

  // Everything except the costly PCIe throughput: what `stat` and summaries want.
  static constexpr FieldSet standard() {
    return FieldSet{Field::sm_clock,
                    Field::memory_clock,
                    Field::power,
                    Field::gpu_temperature,
                    Field::memory_temperature,
                    Field::utilization,
                    Field::clock_reasons,
                    Field::memory_used,
                    Field::pstate,
                    Field::energy,
                    Field::gpm,
                    Field::ecc_errors,
                    Field::violation_time};
  }
  static constexpr FieldSet all() {
    return FieldSet((std::uint32_t{1} << unsigned(Field::count)) - 1);
  }

 private:
  constexpr explicit FieldSet(std::uint32_t bits) : bits_(bits) {}
  static constexpr std::uint32_t kSlowMask = ((std::uint32_t{1} << unsigned(Field::count)) - 1) &
                                             ~((std::uint32_t{1} << unsigned(Field::energy)) - 1);
  std::uint32_t bits_ = 0;
};

}  // namespace gpuclk::telemetry
