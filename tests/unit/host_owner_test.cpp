// host::owner_of over fixture /proc trees (a temporary directory as the proc root): Slurm jobs
// from cgroup v1 and v2 and from the environment, Kubernetes pods (cgroupfs and systemd
// drivers), docker/containerd/podman containers, and a plain process's session.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "host/owner.h"

namespace gpuclk::host {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;

class HostOwnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpuclk-proc-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }

  // A process `pid` in session 812 (process group 900), uid 0, with this cgroup file and
  // environment (NUL-separated).
  void process(unsigned pid, const std::string& cgroup, const std::string& environ = {}) {
    const auto dir = root_ / std::to_string(pid);
    fs::create_directories(dir);
    std::ofstream(dir / "stat") << pid << " (python3 (x) y) S 1 900 812 0 -1 4194560 0 0 0 0\n";
    std::ofstream(dir / "status") << "Name:\tpython3\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n";
    std::ofstream(dir / "cgroup") << cgroup;
    std::ofstream(dir / "environ", std::ios::binary) << environ;
  }
  std::optional<Owner> owner(unsigned pid) { return owner_of(pid, root_); }

  fs::path root_;
};

TEST_F(HostOwnerTest, slurm_job_from_a_cgroup_v1_hierarchy) {
  process(41000,
          "12:pids:/slurm/uid_1000/job_1234/step_0/task_0\n"
          "11:memory:/slurm/uid_1000/job_1234/step_0/task_0\n"
          "4:cpuset:/slurm/uid_1000/job_1234/step_0\n"
          "1:name=systemd:/system.slice/slurmd.service\n");
  const auto o = owner(41000);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->kind, OwnerKind::slurm_job);
  EXPECT_EQ(o->id, "1234");
  EXPECT_EQ(o->user, "root");
  EXPECT_EQ(owner_key(*o), "slurm:1234");
  EXPECT_EQ(describe(*o), "Slurm job 1234");
}

TEST_F(HostOwnerTest, slurm_job_from_a_cgroup_v2_path) {
  process(41001, "0::/system.slice/slurmstepd.scope/job_77/step_0/user/task_0\n");
  const auto o = owner(41001);
  ASSERT_TRUE(o);
  EXPECT_EQ(owner_key(*o), "slurm:77");
}

TEST_F(HostOwnerTest, slurm_job_from_the_environment_without_a_slurm_cgroup) {
  process(41002, "0::/user.slice/user-1000.slice/session-3.scope\n",
          "HOME=/home/a\0SLURM_JOB_IDX=1\0SLURM_JOB_ID=4242\0"s);
  const auto o = owner(41002);
  ASSERT_TRUE(o);
  EXPECT_EQ(owner_key(*o), "slurm:4242");
}

TEST_F(HostOwnerTest, a_job_directory_outside_slurm_is_not_a_slurm_job) {
  process(41003, "0::/user.slice/job_5/session-3.scope\n");
  EXPECT_EQ(owner_key(*owner(41003)), "session:812");
}

TEST_F(HostOwnerTest, kubernetes_pod_with_the_cgroupfs_driver) {
  process(41010,
          "0::/kubepods/burstable/pod6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9/"
          "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n");
  const auto o = owner(41010);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->kind, OwnerKind::kubernetes_pod);
  EXPECT_EQ(o->id, "6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9");
}

TEST_F(HostOwnerTest, kubernetes_pod_with_the_systemd_driver) {
  process(
      41011,
      "0::/kubepods.slice/kubepods-besteffort.slice/"
      "kubepods-besteffort-pod6f1e2d3c_4b5a_4978_8695_a4b3c2d1e0f9.slice/"
      "cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope\n");
  EXPECT_EQ(owner_key(*owner(41011)), "pod:6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9");
}

TEST_F(HostOwnerTest, containers_of_docker_containerd_and_podman) {
  const std::string id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  process(41020, "0::/system.slice/docker-" + id + ".scope\n");
  process(41021, "11:memory:/docker/" + id + "\n");
  process(41022, "0::/system.slice/cri-containerd-" + id + ".scope\n");
  process(41023, "0::/machine.slice/libpod-" + id + ".scope/container\n");
  for (unsigned pid : {41020u, 41021u, 41022u, 41023u}) {
    const auto o = owner(pid);
    ASSERT_TRUE(o) << pid;
    EXPECT_EQ(owner_key(*o), "container:" + id) << pid;
  }
  EXPECT_EQ(describe(*owner(41020)), "container 0123456789ab");
}

TEST_F(HostOwnerTest, a_plain_process_is_its_sessions) {
  process(41030, "0::/user.slice/user-1000.slice/session-3.scope\n");
  const auto o = owner(41030);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->kind, OwnerKind::session);
  EXPECT_EQ(o->id, "812");  // field 6 of stat, counted after the command's last ')'
  EXPECT_EQ(describe(*o), "session 812");
}

TEST_F(HostOwnerTest, a_process_that_is_not_there_has_no_owner) { EXPECT_FALSE(owner(49999)); }

TEST(host_owner, this_process_has_an_owner_in_the_real_proc) {
  const auto o = owner_of(static_cast<unsigned>(::getpid()));
  ASSERT_TRUE(o);
  EXPECT_FALSE(o->id.empty());
}

TEST(host_owner, keys_parse_back) {
  for (const std::string key : {"slurm:1234", "pod:6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9",
                                "container:abc", "session:9", "process:43000"}) {
    const auto o = parse_owner_key(key);
    ASSERT_TRUE(o) << key;
    EXPECT_EQ(owner_key(*o), key);
  }
  EXPECT_FALSE(parse_owner_key("job:1"));
  EXPECT_FALSE(parse_owner_key("slurm:"));
  EXPECT_FALSE(parse_owner_key("1234"));
}

}  // namespace
}  // namespace gpuclk::host
