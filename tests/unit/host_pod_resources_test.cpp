// The pod-resources answer's protobuf decoder (host/pod_resources.h): messages built here byte by
// byte as protobuf's wire format lays them out.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "host/pod_resources.h"
#include "util/error.h"

namespace gpuclk::host {
namespace {

std::string varint(std::uint64_t v) {
  std::string out;
  do {
    auto byte = static_cast<char>(v & 0x7f);
    v >>= 7;
    if (v) byte = static_cast<char>(byte | 0x80);
    out += byte;
  } while (v);
  return out;
}
std::string key(unsigned number, unsigned type) { return varint((number << 3) | type); }
std::string field(unsigned number, const std::string& bytes) {
  return key(number, 2) + varint(bytes.size()) + bytes;
}

std::string devices(const std::string& resource, std::initializer_list<std::string> ids) {
  std::string m = field(1, resource);
  for (const auto& id : ids) m += field(2, id);
  return m;
}
std::string container(const std::string& name, const std::string& devs) {
  return field(1, name) + field(2, devs);
}
std::string pod(const std::string& name, const std::string& ns, const std::string& containers) {
  return field(1, name) + field(2, ns) + containers;
}

TEST(host_pod_resources_test, reads_pods_containers_and_devices) {
  const auto msg =
      field(1, pod("train-0", "ml",
                   field(3, container("trainer", devices("nvidia.com/gpu", {"GPU-aa", "GPU-bb"}))) +
                       field(3, field(1, "sidecar")))) +
      field(1, pod("web", "default", ""));
  const auto pods = decode_list_pod_resources(msg);
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(pods[0].name, "train-0");
  EXPECT_EQ(pods[0].pod_namespace, "ml");
  ASSERT_EQ(pods[0].containers.size(), 2u);
  EXPECT_EQ(pods[0].containers[0].name, "trainer");
  ASSERT_EQ(pods[0].containers[0].devices.size(), 1u);
  EXPECT_EQ(pods[0].containers[0].devices[0].resource_name, "nvidia.com/gpu");
  EXPECT_EQ(pods[0].containers[0].devices[0].device_ids,
            (std::vector<std::string>{"GPU-aa", "GPU-bb"}));
  EXPECT_TRUE(pods[0].containers[1].devices.empty());
  EXPECT_EQ(pods[1].name, "web");
  EXPECT_TRUE(pods[1].containers.empty());
}

TEST(host_pod_resources_test, an_empty_answer_is_no_pods) {
  EXPECT_TRUE(decode_list_pod_resources("").empty());
}

TEST(host_pod_resources_test, skips_unknown_fields_of_every_wire_type) {
  // Unknown fields everywhere: varint, fixed64, length-delimited, a group (with a field inside)
  // and fixed32; also v1's cpu_ids (3, packed) and memory (4) of ContainerResources and
  // ContainerDevices' topology (3).
  const std::string unknown = key(9, 0) + varint(300) + key(10, 1) + std::string(8, '\x01') +
                              field(11, "xyz") + key(12, 3) + key(1, 0) + varint(5) + key(12, 4) +
                              key(13, 5) + std::string(4, '\x02');
  const auto devs = devices("nvidia.com/gpu", {"GPU-aa"}) + field(3, field(1, "numa")) + unknown;
  const auto cont = container("c", devs) + field(3, varint(1) + varint(2)) + unknown;
  const auto msg = unknown + field(1, pod("p", "ns", field(3, cont) + unknown)) + unknown;
  const auto pods = decode_list_pod_resources(msg);
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].name, "p");
  ASSERT_EQ(pods[0].containers.size(), 1u);
  ASSERT_EQ(pods[0].containers[0].devices.size(), 1u);
  EXPECT_EQ(pods[0].containers[0].devices[0].device_ids, std::vector<std::string>{"GPU-aa"});
}

TEST(host_pod_resources_test, refuses_truncated_input) {
  const auto msg = field(1, pod("train-0", "ml", field(3, container("c", devices("r", {"G"})))));
  // Every proper prefix that cuts a field is refused; none reads past the end.
  for (std::size_t n = 1; n < msg.size(); ++n) {
    EXPECT_THROW(decode_list_pod_resources(msg.substr(0, n)), Error) << n << " bytes";
  }
  EXPECT_THROW(decode_list_pod_resources("\x0a"), Error);  // a key, no length
  EXPECT_THROW(decode_list_pod_resources("\x0a\x05"
                                         "ab"),
               Error);                                                 // length past the end
  EXPECT_THROW(decode_list_pod_resources(key(9, 0) + "\x80"), Error);  // a varint cut short
  EXPECT_THROW(decode_list_pod_resources(key(9, 1) + "1234"), Error);  // fixed64 cut short
  EXPECT_THROW(decode_list_pod_resources(key(9, 3) + key(1, 0) + "\x01"), Error);  // open group
}

TEST(host_pod_resources_test, refuses_malformed_fields) {
  EXPECT_THROW(decode_list_pod_resources(key(1, 0) + varint(3)), Error);  // pods not delimited
  EXPECT_THROW(decode_list_pod_resources(field(1, key(1, 5) + "abcd")), Error);  // name fixed32
  EXPECT_THROW(decode_list_pod_resources(key(9, 6)), Error);                     // wire type 6
  EXPECT_THROW(decode_list_pod_resources(key(9, 4)), Error);                     // stray group end
  EXPECT_THROW(decode_list_pod_resources(key(9, 3) + key(8, 4)), Error);         // wrong group end
  EXPECT_THROW(decode_list_pod_resources(std::string(1, '\x02') + "\x00"), Error);      // field 0
  EXPECT_THROW(decode_list_pod_resources(key(9, 0) + std::string(11, '\xff')), Error);  // varint
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += key(9, 3);
  EXPECT_THROW(decode_list_pod_resources(deep), Error);  // groups nested without end
}

TEST(host_pod_resources_test, refuses_what_is_beyond_the_bounds) {
  EXPECT_THROW(decode_list_pod_resources(std::string(kPodResourcesMaxBytes + 1, '\0')), Error);
  EXPECT_THROW(decode_list_pod_resources(
                   field(1, pod(std::string(kPodResourcesMaxString + 1, 'x'), "ns", ""))),
               Error);
  std::string pods;
  for (std::size_t i = 0; i <= kPodResourcesMaxPods; ++i) pods += field(1, "");
  EXPECT_THROW(decode_list_pod_resources(pods), Error);
  std::string containers;
  for (std::size_t i = 0; i <= kPodResourcesMaxContainers; ++i) containers += field(3, "");
  EXPECT_THROW(decode_list_pod_resources(field(1, containers)), Error);
  // A length larger than anything left, encoded in 10 bytes.
  EXPECT_THROW(decode_list_pod_resources(key(1, 2) + varint(~std::uint64_t{0})), Error);
}

TEST(host_pod_resources_test, device_base_drops_the_replica_suffix) {
  EXPECT_EQ(device_base("GPU-8c1e::3"), "GPU-8c1e");
  EXPECT_EQ(device_base("GPU-8c1e"), "GPU-8c1e");
  EXPECT_EQ(device_base("MIG-1234"), "MIG-1234");
}

}  // namespace
}  // namespace gpuclk::host
