#include "host/pod_resources.h"

#include <fmt/format.h>

#include <cstdint>

#include "util/error.h"

namespace gpuclk::host {
namespace {

enum WireType : unsigned {
  varint = 0,
  fixed64 = 1,
  delimited = 2,
  group_start = 3,
  group_end = 4,
  fixed32 = 5
};

[[noreturn]] void malformed(std::string_view what) {
  throw Error(ExitCode::other, fmt::format("malformed pod-resources answer: {}", what));
}

// A cursor over one message's bytes.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool done() const { return at_ == bytes_.size(); }

  std::uint64_t read_varint() {
    std::uint64_t value = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (done()) malformed("truncated varint");
      const auto byte = static_cast<std::uint8_t>(bytes_[at_++]);
      value |= std::uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80u) == 0) return value;
    }
    malformed("varint longer than 10 bytes");
  }

  std::string_view read_bytes(std::size_t n) {
    if (n > bytes_.size() - at_) malformed("truncated field");
    const auto out = bytes_.substr(at_, n);
    at_ += n;
    return out;
  }

  std::string_view read_delimited() { return read_bytes(read_varint_size()); }

  // A field's key: its number and wire type.
  std::pair<std::uint64_t, unsigned> read_key() {
    const auto key = read_varint();
    const auto number = key >> 3;
    if (number == 0) malformed("field number 0");
    return {number, static_cast<unsigned>(key & 7u)};
  }

  // Skips the value of a field of wire type `type` (and number `number`, for groups).
  void skip(std::uint64_t number, unsigned type, int depth = 0) {
    switch (type) {
      case varint:
        read_varint();
        return;
      case fixed64:
        read_bytes(8);
        return;
      case delimited:
        read_delimited();
        return;
      case fixed32:
        read_bytes(4);
        return;
      case group_start: {
        if (depth >= 32) malformed("groups nested too deep");
        for (;;) {
          if (done()) malformed("truncated group");
          const auto [n, t] = read_key();
          if (t == group_end) {
            if (n != number) malformed("mismatched end of group");
            return;
          }
          skip(n, t, depth + 1);
        }
      }
      default:
        malformed(type == group_end ? "end of group without its start"
                                    : fmt::format("wire type {}", type));
    }
  }

 private:
  std::size_t read_varint_size() {
    const auto n = read_varint();
    if (n > bytes_.size() - at_) malformed("truncated field");
    return static_cast<std::size_t>(n);
  }

  std::string_view bytes_;
  std::size_t at_ = 0;
};

std::string_view expect_delimited(Reader& r, unsigned type, std::string_view field) {
  if (type != delimited) malformed(fmt::format("{} is not length-delimited", field));
  return r.read_delimited();
}

std::string text(Reader& r, unsigned type, std::string_view field) {
  const auto bytes = expect_delimited(r, type, field);
  if (bytes.size() > kPodResourcesMaxString)
    malformed(fmt::format("{} longer than {} bytes", field, kPodResourcesMaxString));
  return std::string(bytes);
}

struct Budget {
  std::size_t devices = 0;
};

ContainerDevices decode_devices(std::string_view bytes, Budget& budget) {
  ContainerDevices d;
  Reader r(bytes);
  while (!r.done()) {
    const auto [number, type] = r.read_key();
    if (number == 1) {
      d.resource_name = text(r, type, "resource_name");
    } else if (number == 2) {
      if (++budget.devices > kPodResourcesMaxDevices)
        malformed(fmt::format("more than {} device ids", kPodResourcesMaxDevices));
      d.device_ids.push_back(text(r, type, "device_ids"));
    } else {
      r.skip(number, type);
    }
  }
  return d;
}

ContainerResources decode_container(std::string_view bytes, Budget& budget) {
  ContainerResources c;
  Reader r(bytes);
  while (!r.done()) {
    const auto [number, type] = r.read_key();
    if (number == 1) {
      c.name = text(r, type, "container name");
    } else if (number == 2) {
      c.devices.push_back(decode_devices(expect_delimited(r, type, "devices"), budget));
    } else {
      r.skip(number, type);
    }
  }
  return c;
}

PodResources decode_pod(std::string_view bytes, Budget& budget) {
  PodResources p;
  Reader r(bytes);
  while (!r.done()) {
    const auto [number, type] = r.read_key();
    if (number == 1) {
      p.name = text(r, type, "pod name");
    } else if (number == 2) {
      p.pod_namespace = text(r, type, "namespace");
    } else if (number == 3) {
      if (p.containers.size() >= kPodResourcesMaxContainers)
        malformed(fmt::format("a pod with more than {} containers", kPodResourcesMaxContainers));
      p.containers.push_back(decode_container(expect_delimited(r, type, "containers"), budget));
    } else {
      r.skip(number, type);
    }
  }
  return p;
}

}  // namespace

std::vector<PodResources> decode_list_pod_resources(std::string_view message) {
  if (message.size() > kPodResourcesMaxBytes)
    malformed(fmt::format("{} bytes, more than {}", message.size(), kPodResourcesMaxBytes));
  std::vector<PodResources> pods;
  Budget budget;
  Reader r(message);
  while (!r.done()) {
    const auto [number, type] = r.read_key();
    if (number == 1) {
      if (pods.size() >= kPodResourcesMaxPods)
        malformed(fmt::format("more than {} pods", kPodResourcesMaxPods));
      pods.push_back(decode_pod(expect_delimited(r, type, "pod_resources"), budget));
    } else {
      r.skip(number, type);
    }
  }
  return pods;
}

std::string_view device_base(std::string_view device_id) {
  const auto at = device_id.find("::");
  return at == std::string_view::npos ? device_id : device_id.substr(0, at);
}

}  // namespace gpuclk::host
