// What an Xid (the driver's error code, `dmesg`: "NVRM: Xid (PCI:...): 79, ...") means for the
// xid_errors rule: its severity, a short name, the likely cause and the fix. From NVIDIA's Xid
// catalog (docs.nvidia.com/deploy/xid-errors): codes that mean the GPU needs a reset or that
// data may be corrupt are critical; any other Xid (mostly an application's fault) is a warning.
#pragma once

#include <cstdint>
#include <string_view>

#include "rules/finding.h"

namespace gpuclk::rules {

enum class XidClass {
  bus,       // the GPU fell off the bus
  memory,    // ECC / row remapping: data may be corrupt
  nvlink,    // an NVLink error
  firmware,  // GSP or an internal micro-controller stopped
  other,     // anything else: mostly an application's fault (13, 31, 43, 45)
};

struct XidInfo {
  XidClass cls = XidClass::other;
  Severity severity = Severity::warning;
  std::string_view name;  // "fallen off the bus"; "" when the code is not in our table
};

XidInfo xid_info(std::uint64_t xid);

}  // namespace gpuclk::rules
