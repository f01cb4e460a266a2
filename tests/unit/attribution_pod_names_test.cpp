// attribution/pod_names.h: the join of the kubelet's pod-resources answer with the pod UIDs and
// GPUs of the service's processes (one pod per GPU, time-slicing, elimination, MIG, other
// resources), and PodNamer's asking: when it asks, what a failure does, and that names reach the
// attribution.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "attribution/pod_names.h"
#include "util/error.h"

namespace gpuclk::attribution {
namespace {

using namespace std::chrono_literals;
using Running = std::map<std::string, std::set<std::size_t>>;

const std::vector<std::string> kGpus = {"GPU-aaaa", "GPU-bbbb", "GPU-cccc"};

host::PodResources pod(std::string ns, std::string name,
                       std::vector<std::pair<std::string, std::vector<std::string>>> containers,
                       std::string resource = "nvidia.com/gpu") {
  host::PodResources p;
  p.pod_namespace = std::move(ns);
  p.name = std::move(name);
  for (auto& [c, ids] : containers) {
    host::ContainerResources cr;
    cr.name = c;
    cr.devices.push_back({resource, ids});
    p.containers.push_back(std::move(cr));
  }
  return p;
}

TEST(attribution_pod_names_test, a_gpu_held_by_one_pod_names_the_uid_on_it) {
  const std::vector<host::PodResources> listed = {
      pod("ml", "train-0", {{"trainer", {"GPU-aaaa", "GPU-bbbb"}}}),
      pod("web", "idle", {{"app", {}}})};
  const auto j = join_pod_names(listed, kGpus, Running{{"uid-1", {0, 1}}});
  ASSERT_TRUE(j.named.contains("uid-1"));
  EXPECT_EQ(j.named.at("uid-1"), (PodName{"ml", "train-0", "trainer"}));
  // Per GPU, whether or not a process runs; GPU 2 is nobody's.
  ASSERT_EQ(j.gpus.size(), 3u);
  EXPECT_EQ(j.gpus[0], (PodName{"ml", "train-0", "trainer"}));
  EXPECT_EQ(j.gpus[1], (PodName{"ml", "train-0", "trainer"}));
  EXPECT_FALSE(j.gpus[2].has_value());
}

TEST(attribution_pod_names_test,
     time_sliced_gpus_stay_unnamed_unless_another_gpu_tells_them_apart) {
  // Replicas of GPU 0 in two pods: the UID on GPU 0 alone cannot be told.
  const std::vector<host::PodResources> listed = {pod("ml", "a", {{"c", {"GPU-aaaa::0"}}}),
                                                  pod("ml", "b", {{"c", {"GPU-aaaa::1"}}})};
  auto j = join_pod_names(listed, kGpus, Running{{"uid-1", {0}}});
  EXPECT_FALSE(j.named.contains("uid-1"));
  EXPECT_EQ(j.unnamed.at("uid-1"), "its GPUs are shared by 2 pods (ml/a, ml/b)");
  EXPECT_FALSE(j.gpus[0].has_value());  // dcgm-exporter's labels: none for a shared GPU

  // Pod a also holds GPU 1: the UID on GPUs 0 and 1 is a, so the other UID on GPU 0 is b.
  const std::vector<host::PodResources> more = {
      pod("ml", "a", {{"c", {"GPU-aaaa::0", "GPU-bbbb"}}}),
      pod("ml", "b", {{"c", {"GPU-aaaa::1"}}})};
  j = join_pod_names(more, kGpus, Running{{"uid-1", {0, 1}}, {"uid-2", {0}}});
  EXPECT_EQ(j.named.at("uid-1").name, "a");
  EXPECT_EQ(j.named.at("uid-2").name, "b");
}

TEST(attribution_pod_names_test, two_uids_on_one_pods_gpu_are_neither_named) {
  // A pod UID without a device of the plugin (NVIDIA_VISIBLE_DEVICES=all) on pod a's GPU.
  const std::vector<host::PodResources> listed = {pod("ml", "a", {{"c", {"GPU-aaaa"}}})};
  const auto j = join_pod_names(listed, kGpus, Running{{"uid-1", {0}}, {"uid-2", {0}}});
  EXPECT_TRUE(j.named.empty());
  EXPECT_EQ(j.unnamed.at("uid-1"), "pod ml/a holds its GPUs, and other pod UIDs run there too");
}

TEST(attribution_pod_names_test, replicas_in_one_pods_containers_name_the_pod_not_the_container) {
  const std::vector<host::PodResources> listed = {
      pod("ml", "a", {{"one", {"GPU-aaaa::0"}}, {"two", {"GPU-aaaa::1"}}})};
  const auto j = join_pod_names(listed, kGpus, Running{{"uid-1", {0}}});
  EXPECT_EQ(j.named.at("uid-1"), (PodName{"ml", "a", ""}));
  EXPECT_FALSE(j.gpus[0].has_value());
}

TEST(attribution_pod_names_test, mig_devices_other_resources_and_unknown_gpus_name_nothing) {
  const std::vector<host::PodResources> listed = {
      pod("ml", "mig", {{"c", {"MIG-0123"}}}, "nvidia.com/mig-1g.10gb"),
      pod("ml", "nic", {{"c", {"GPU-aaaa"}}}, "example.com/nic"),
      pod("ml", "elsewhere", {{"c", {"GPU-ffff"}}}),
      pod("ml", "shared", {{"c", {"GPU-bbbb::4"}}}, "nvidia.com/gpu.shared")};
  const auto j = join_pod_names(listed, kGpus, Running{{"uid-1", {0}}, {"uid-2", {1}}});
  EXPECT_FALSE(j.named.contains("uid-1"));
  EXPECT_EQ(j.unnamed.at("uid-1"), "no pod of the kubelet's answer holds its GPUs");
  EXPECT_EQ(j.named.at("uid-2").name, "shared");  // the renamed time-sliced resource counts
  EXPECT_FALSE(j.gpus[0].has_value());
}

TEST(attribution_pod_names_test, a_uid_on_gpus_of_different_pods_is_unnamed) {
  const std::vector<host::PodResources> listed = {pod("ml", "a", {{"c", {"GPU-aaaa"}}}),
                                                  pod("ml", "b", {{"c", {"GPU-bbbb"}}})};
  const auto j = join_pod_names(listed, kGpus, Running{{"uid-1", {0, 1}}});
  EXPECT_FALSE(j.named.contains("uid-1"));
}

// The attribution with one process (pid 12) of pod "uid-1" on GPU 0.
struct PodOnGpu {
  Attribution attribution{
      {0, 1, 2}, [](unsigned pid) {
        ProcessIdentity id;
        if (pid == 12) id.owner = host::Owner{host::OwnerKind::kubernetes_pod, "uid-1", "bob"};
        return id;
      }};
  PodOnGpu() {
    telemetry::SlowSample a, b;
    a.time = telemetry::TimePoint(1s);
    b.time = telemetry::TimePoint(2s);
    a.energy = units::Joules(0);
    b.energy = units::Joules(100);
    telemetry::ProcessSample p;
    p.pid = 12;
    a.processes = std::vector<telemetry::ProcessSample>{p};
    b.processes = a.processes;
    attribution.add(0, a, b, {});
  }
};

struct Socket {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("gpuclk-podnames-" + std::to_string(::getpid()));
  Socket() { std::ofstream(path.string()) << ""; }
  ~Socket() { std::filesystem::remove(path); }
};

TEST(attribution_pod_names_test, the_namer_asks_when_due_and_names_the_attributions_pod) {
  PodOnGpu node;
  Socket socket;
  int asks = 0;
  std::vector<std::string> log;
  PodNamer namer(
      socket.path.string(),
      [&] {
        ++asks;
        return std::vector<host::PodResources>{pod("ml", "train-0", {{"trainer", {"GPU-aaaa"}}})};
      },
      kGpus, [&](const std::string& line) { log.push_back(line); });
  const auto t0 = std::chrono::steady_clock::time_point(100s);
  EXPECT_TRUE(namer.refresh(node.attribution.view(), node.attribution, t0));
  EXPECT_EQ(asks, 1);
  const auto v = node.attribution.view();
  ASSERT_EQ(v.owners.size(), 1u);
  EXPECT_EQ(v.owners[0].owner.pod_name, "train-0");
  EXPECT_EQ(v.owners[0].owner.pod_namespace, "ml");
  EXPECT_EQ(v.owners[0].owner.container_name, "trainer");
  EXPECT_EQ(v.processes.at(0).owner.pod_name, "train-0");
  EXPECT_EQ(host::describe(v.processes.at(0).owner), "pod ml/train-0");
  EXPECT_EQ(namer.gpus().at(0), (PodName{"ml", "train-0", "trainer"}));
  // Not again before kPodResourcesEvery (every UID is settled), then again.
  EXPECT_FALSE(namer.refresh(node.attribution.view(), node.attribution, t0 + 10s));
  EXPECT_TRUE(namer.refresh(node.attribution.view(), node.attribution, t0 + kPodResourcesEvery));
  EXPECT_EQ(asks, 2);
  EXPECT_EQ(namer.asks(), 2u);
  EXPECT_TRUE(log.empty());
}

TEST(attribution_pod_names_test, a_new_uid_is_asked_about_at_the_retry_interval) {
  PodOnGpu node;
  Socket socket;
  int asks = 0;
  PodNamer namer(
      socket.path.string(), [&] { return ++asks, std::vector<host::PodResources>{}; }, kGpus,
      nullptr);
  const auto t0 = std::chrono::steady_clock::time_point(100s);
  // The first ask before any process: the UID appears afterwards.
  const Attribution empty({0, 1, 2}, [](unsigned) { return ProcessIdentity{}; });
  EXPECT_TRUE(namer.refresh(empty.view(), node.attribution, t0));
  EXPECT_FALSE(namer.refresh(node.attribution.view(), node.attribution, t0 + 1s));
  EXPECT_TRUE(namer.refresh(node.attribution.view(), node.attribution, t0 + kPodResourcesRetry));
  EXPECT_EQ(asks, 2);
}

TEST(attribution_pod_names_test, a_failure_is_said_once_and_pods_keep_their_uids) {
  PodOnGpu node;
  Socket socket;
  bool fails = true;
  std::vector<std::string> log;
  PodNamer namer(
      socket.path.string(),
      [&] {
        if (fails) throw Error(ExitCode::other, "gRPC status 14 (UNAVAILABLE): down");
        return std::vector<host::PodResources>{pod("ml", "train-0", {{"trainer", {"GPU-aaaa"}}})};
      },
      kGpus, [&](const std::string& line) { log.push_back(line); });
  auto t = std::chrono::steady_clock::time_point(100s);
  namer.refresh(node.attribution.view(), node.attribution, t);
  namer.refresh(node.attribution.view(), node.attribution, t += kPodResourcesEvery);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("gRPC status 14 (UNAVAILABLE): down"), std::string::npos) << log[0];
  EXPECT_EQ(node.attribution.view().owners.at(0).owner.pod_name, "");
  fails = false;
  namer.refresh(node.attribution.view(), node.attribution, t += kPodResourcesEvery);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_NE(log[1].find("answers again"), std::string::npos) << log[1];
  EXPECT_EQ(node.attribution.view().owners.at(0).owner.pod_name, "train-0");
}

TEST(attribution_pod_names_test, without_the_socket_the_kubelet_is_never_asked) {
  PodOnGpu node;
  int asks = 0;
  std::vector<std::string> log;
  PodNamer namer(
      "/nonexistent/kubelet.sock", [&] { return ++asks, std::vector<host::PodResources>{}; }, kGpus,
      [&](const std::string& line) { log.push_back(line); });
  auto t = std::chrono::steady_clock::time_point(100s);
  namer.refresh(node.attribution.view(), node.attribution, t);
  namer.refresh(node.attribution.view(), node.attribution, t += kPodResourcesEvery);
  EXPECT_EQ(asks, 0);
  ASSERT_EQ(log.size(), 1u);  // said once, as a pod needs a name
  EXPECT_NE(log[0].find("no kubelet pod-resources socket at /nonexistent/kubelet.sock"),
            std::string::npos);
}

TEST(attribution_pod_names_test, a_name_once_given_stays) {
  PodOnGpu node;
  node.attribution.name_pods({{"uid-1", PodName{"ml", "train-0", "c"}}});
  node.attribution.name_pods({{"uid-1", PodName{"ml", "other", "c"}}});
  EXPECT_EQ(node.attribution.view().owners.at(0).owner.pod_name, "train-0");
}

}  // namespace
}  // namespace gpuclk::attribution
