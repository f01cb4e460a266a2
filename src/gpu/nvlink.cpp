// Device's NVLink reads: the links' static facts (probed once) and their state and counters (the
// sampler's slow tier). NVML answers per link, so a GPU without NVLink costs one call, once.
#include <fmt/format.h>

#include <climits>

#include "gpu/device.h"
#include "gpu/selection.h"
#include "nvml/api.h"

namespace gpuclk::gpu {
namespace {

using nvml::Api;

template <class T>
Reading<T> reading(nvmlReturn_t rc, T value) {
  if (rc == NVML_SUCCESS) return value;
  if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND)
    return Reading<T>::not_supported();
  return Reading<T>::error(rc);
}

// NVML's nvmlNvlinkVersion_t as nvidia-smi prints it.
std::string version_text(unsigned v) {
  switch (v) {
    case NVML_NVLINK_VERSION_1_0:
      return "1.0";
    case NVML_NVLINK_VERSION_2_0:
      return "2.0";
    case NVML_NVLINK_VERSION_2_2:
      return "2.2";
    case NVML_NVLINK_VERSION_3_0:
      return "3.0";
    case NVML_NVLINK_VERSION_3_1:
      return "3.1";
    case NVML_NVLINK_VERSION_4_0:
      return "4.0";
    case NVML_NVLINK_VERSION_5_0:
      return "5.0";
    default:
      return fmt::format("({})", v);
  }
}

NvLinkRemote remote_of(nvmlIntNvLinkDeviceType_t type) {
  switch (type) {
    case NVML_NVLINK_DEVICE_TYPE_GPU:
      return NvLinkRemote::gpu;
    case NVML_NVLINK_DEVICE_TYPE_SWITCH:
      return NvLinkRemote::nvswitch;
    case NVML_NVLINK_DEVICE_TYPE_IBMNPU:
      return NvLinkRemote::other;
    default:
      return NvLinkRemote::unknown;
  }
}

// An unsigned field value (every NVLink field is a count or MB/s).
nvmlReturn_t field_number(const nvmlFieldValue_t& fv, unsigned long long& out) {
  if (fv.nvmlReturn != NVML_SUCCESS) return fv.nvmlReturn;
  switch (fv.valueType) {
    case NVML_VALUE_TYPE_UNSIGNED_INT:
      out = fv.value.uiVal;
      return NVML_SUCCESS;
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      out = fv.value.ulVal;
      return NVML_SUCCESS;
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      out = fv.value.ullVal;
      return NVML_SUCCESS;
    default:
      return NVML_ERROR_UNKNOWN;
  }
}

constexpr nvmlNvLinkErrorCounter_t kErrorCounters[kNvLinkErrorKinds] = {
    NVML_NVLINK_ERROR_DL_REPLAY, NVML_NVLINK_ERROR_DL_RECOVERY, NVML_NVLINK_ERROR_DL_CRC_FLIT,
    NVML_NVLINK_ERROR_DL_ECC_DATA};

}  // namespace

void Device::probe_nvlinks() const {
  if (!handle_ || identity_.unavailable_code != 0) {
    nvlinks_.links = Reading<std::vector<NvLinkFacts>>::error(
        identity_.unavailable_code ? identity_.unavailable_code : int(NVML_ERROR_UNKNOWN));
    return;
  }
  std::vector<NvLinkFacts> links;
  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    nvmlEnableState_t active = NVML_FEATURE_DISABLED;
    const auto rc = Api::call(api_.nvmlDeviceGetNvLinkState, handle_, link, &active);
    if (rc != NVML_SUCCESS) {
      // The first link answers NOT_SUPPORTED on a GPU without NVLink; a link past the GPU's
      // count answers INVALID_ARGUMENT (or NOT_SUPPORTED): the links end there.
      if (link == 0 && rc != NVML_ERROR_INVALID_ARGUMENT) nvlinks_.links = reading(rc, links);
      if (link == 0) return;
      break;
    }
    NvLinkFacts f;
    f.link = link;
    f.active = active == NVML_FEATURE_ENABLED;
    unsigned version = 0;
    f.version = reading(Api::call(api_.nvmlDeviceGetNvLinkVersion, handle_, link, &version), 0u)
                    .map([&](unsigned) { return version_text(version); });
    nvmlPciInfo_t remote{};
    const auto remote_rc =
        Api::call(api_.nvmlDeviceGetNvLinkRemotePciInfo_v2, handle_, link, &remote);
    f.remote_bus_id = reading(remote_rc, std::string()).map([&](const std::string&) {
      return normalize_bus_id(remote.busId);
    });
    nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
    if (Api::call(api_.nvmlDeviceGetNvLinkRemoteDeviceType, handle_, link, &type) == NVML_SUCCESS)
      f.remote = remote_of(type);
    links.push_back(std::move(f));
  }
  // Speeds in one call: each link's (NVML_FI_DEV_NVLINK_GET_SPEED, scopeId = link), else the
  // common speed of the active links (older drivers).
  std::vector<nvmlFieldValue_t> fields(links.size() + 1);
  for (std::size_t k = 0; k < links.size(); ++k) {
    fields[k].fieldId = NVML_FI_DEV_NVLINK_GET_SPEED;
    fields[k].scopeId = links[k].link;
  }
  fields.back().fieldId = NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON;
  const auto rc =
      Api::call(api_.nvmlDeviceGetFieldValues, handle_, int(fields.size()), fields.data());
  unsigned long long common = 0;
  const auto common_rc = rc == NVML_SUCCESS ? field_number(fields.back(), common) : rc;
  for (std::size_t k = 0; k < links.size(); ++k) {
    unsigned long long mbps = 0;
    auto link_rc = rc == NVML_SUCCESS ? field_number(fields[k], mbps) : rc;
    // A link that is down reads 0 MB/s; the common speed says what it runs at when up.
    if (link_rc != NVML_SUCCESS || mbps == 0) {
      link_rc = common_rc;
      mbps = common;
    }
    links[k].gigabytes_per_s = reading(link_rc, double(mbps) / 1000.0);
  }
  nvlinks_.links = std::move(links);
}

std::vector<NvLinkCounters> Device::nvlink_counters(NvLinkRead what) const {
  const bool with_errors = has(what, NvLinkRead::errors);
  std::vector<NvLinkCounters> out;
  const auto& probed = nvlinks().links;
  if (!probed || probed->empty()) return out;
  // Data counters of every link in one field-value read: TX then RX per link.
  std::vector<nvmlFieldValue_t> fields(probed->size() * 2);
  for (std::size_t k = 0; k < probed->size(); ++k) {
    fields[2 * k].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
    fields[2 * k + 1].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
    fields[2 * k].scopeId = fields[2 * k + 1].scopeId = (*probed)[k].link;
  }
  // Counters the driver does not keep are not asked for again (probed once, as every getter).
  const auto remember = [&](int field, nvmlReturn_t rc) {
    if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND)
      unsupported_[std::size_t(field)].store(true, std::memory_order_relaxed);
    return rc;
  };
  const auto unsupported = [&](int field) {
    return unsupported_[std::size_t(field)].load(std::memory_order_relaxed);
  };
  nvmlReturn_t data_rc = NVML_ERROR_NOT_SUPPORTED;
  if (has(what, NvLinkRead::data) && !unsupported(kNvLinkData)) {
    data_rc = Api::call(api_.nvmlDeviceGetFieldValues, handle_, int(fields.size()), fields.data());
    if (data_rc == NVML_SUCCESS && fields[0].nvmlReturn == NVML_ERROR_NOT_SUPPORTED)
      data_rc = NVML_ERROR_NOT_SUPPORTED;  // the driver lacks the fields (each entry says so)
    remember(kNvLinkData, data_rc);
  }
  for (std::size_t k = 0; k < probed->size(); ++k) {
    NvLinkCounters c;
    c.link = (*probed)[k].link;
    nvmlEnableState_t active = NVML_FEATURE_DISABLED;
    c.active = reading(Api::call(api_.nvmlDeviceGetNvLinkState, handle_, c.link, &active), false)
                   .map([&](bool) { return active == NVML_FEATURE_ENABLED; });
    c.errors_read = with_errors;
    for (std::size_t e = 0; e < kNvLinkErrorKinds; ++e) {
      const int field = kNvLinkError + int(e);
      if (!with_errors || unsupported(field)) {
        c.errors[e] = Reading<std::uint64_t>::not_supported();
        continue;
      }
      unsigned long long n = 0;
      const auto rc = remember(field, Api::call(api_.nvmlDeviceGetNvLinkErrorCounter, handle_,
                                                c.link, kErrorCounters[e], &n));
      c.errors[e] = reading(rc, std::uint64_t(n));
    }
    for (int dir = 0; dir < 2; ++dir) {
      unsigned long long kib = 0;
      const auto rc = data_rc == NVML_SUCCESS ? field_number(fields[2 * k + dir], kib) : data_rc;
      (dir == 0 ? c.tx_bytes : c.rx_bytes) = reading(rc, std::uint64_t(kib) * 1024);
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace gpuclk::gpu
