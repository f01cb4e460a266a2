// The points of a sweep: parsed from A:B:STEP or a comma-separated list, then checked against
// each GPU (SM clocks must be supported ones, power limits inside the card's range). Errors are
// gpuclk::Error with exit 2 naming the value and what would be valid.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpu/device.h"
#include "gpu/units.h"

namespace gpuclk::sweep {

enum class Axis { sm_clock, power_limit };

// "requested_sm_mhz" / "requested_power_limit_w" (JSON keys), "MHz" / "W".
std::string_view key_of(Axis axis);
std::string_view unit_of(Axis axis);

// "810:1980:90" (A to B inclusive in steps of STEP; B is included only when a step lands on
// it; A > B counts down) or "1980,1410,990". Throws Error (2) naming `option` and the form.
std::vector<double> parse_points(std::string_view text, std::string_view option);

struct CheckedPoints {
  std::vector<double> values;      // to run, in the given order, duplicates removed
  std::vector<std::string> notes;  // "snapped 1000 → 1005 MHz"
};

// SM clocks against the supported ones (any order). `snap`: round each to the nearest supported
// clock (with a note) instead of refusing. Throws Error (2) naming the first bad value, its
// nearest supported neighbours and the supported range and step.
CheckedPoints check_sm_clocks(const std::vector<double>& values,
                              const std::vector<units::Megahertz>& supported, bool snap,
                              unsigned gpu);
// Power limits (W) against the card's [min, max]. `snap` clamps into range instead.
CheckedPoints check_power_limits(const std::vector<double>& values, units::Watts min,
                                 units::Watts max, bool snap, unsigned gpu);

// The points against every GPU of the sweep: SM clocks against each GPU's supported clocks at its
// highest memory clock, power limits against its range. `values`: the first GPU's (they agree,
// or a GPU's check threw); notes from every GPU. Throws Error: exit 2 for a point a GPU cannot
// take (without `snap`), exit 3 for a power sweep on a GPU that reports no range.
CheckedPoints check_points(Axis axis, const std::vector<double>& values,
                           const std::vector<gpu::Device*>& gpus, bool snap);

}  // namespace gpuclk::sweep
