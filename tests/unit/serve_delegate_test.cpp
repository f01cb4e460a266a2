// serve::Delegation with a fake writer: who holds what, what goes back when (a session's leader
// exiting, `restore`, the service stopping), and the refusals' codes and rules. The requesting
// "users" are forked children, each the leader of its own session (setsid), so a test can end a
// session by killing one.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "serve/delegate.h"
#include "serve/protocol.h"

namespace gpuclk::serve {
namespace {

using control::Setting;

// Four GPUs whose power limit the fake writer keeps (mW), 700 W at start.
struct FakeNode {
  std::mutex mutex;
  std::map<std::size_t, std::uint64_t> power{{0, 700000}, {1, 700000}, {2, 700000}, {3, 700000}};
  std::uint64_t at(std::size_t pos) {
    std::lock_guard lock(mutex);
    return power[pos];
  }

  DelegateBackend backend() {
    DelegateBackend b;
    b.journal = "/fake/journal.json";
    b.validate = [](const std::vector<std::size_t>& positions, const control::Request& r, bool) {
      DelegateBackend::Checked c;
      for (std::size_t i = 0; i < positions.size(); ++i) {
        control::Settings t;
        if (r.power_limit) t.power_limit_mw = r.power_limit->value;
        c.targets.push_back(t);
      }
      return c;
    };
    b.apply = [this](const std::vector<std::size_t>& positions,
                     const std::vector<control::Settings>& targets, const std::string&, bool,
                     bool) {
      std::lock_guard lock(mutex);
      DelegateBackend::Applied a;
      for (std::size_t i = 0; i < positions.size(); ++i) {
        control::Settings before;
        before.power_limit_mw = units::Milliwatts(power[positions[i]]);
        a.before.push_back(before);
        a.journaled.push_back(false);
        power[positions[i]] = targets[i].power_limit_mw->count();
        a.report.settings.push_back({static_cast<unsigned>(positions[i]),
                                     "GPU-" + std::to_string(positions[i]), Setting::power_limit,
                                     "", "", "", control::Outcome::changed, ""});
      }
      return a;
    };
    b.put_back = [this](const std::vector<DelegateBackend::PutBack>& back, const std::string&) {
      std::lock_guard lock(mutex);
      control::ChangeReport r;
      for (const auto& p : back) {
        power[p.position] = p.settings.power_limit_mw->count();
        r.settings.push_back({static_cast<unsigned>(p.position), "", Setting::power_limit, "", "",
                              "", control::Outcome::changed, ""});
      }
      return r;
    };
    return b;
  }
};

control::DelegationPolicy policy() {
  control::DelegationPolicy p;
  p.source = "policy.toml";
  control::DelegationRule alice;
  alice.name = "alice";
  alice.uids = {1001};
  alice.all_gpus = true;
  alice.settings = {Setting::power_limit};
  alice.power_max = units::Milliwatts(650000);
  control::DelegationRule bob = alice;
  bob.name = "bob";
  bob.uids = {1002};
  p.rules = {alice, bob};
  return p;
}

std::vector<gpu::DeviceKey> keys() {
  std::vector<gpu::DeviceKey> k;
  for (unsigned i = 0; i < 4; ++i) k.push_back({i, "GPU-" + std::to_string(i), ""});
  return k;
}

// A session of its own: a child that leads it and sleeps until killed.
struct Session {
  pid_t pid = -1;
  Session() {
    pid = ::fork();
    if (pid == 0) {
      ::setsid();
      ::pause();
      ::_exit(0);
    }
    // Wait until the child leads its session (setsid ran).
    for (int i = 0; i < 1000 && ::getsid(pid) != pid; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void end() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      pid = -1;
    }
  }
  ~Session() { end(); }
  Peer peer(unsigned uid) const { return {pid, uid, uid, {}}; }
};

json ask(Delegation& d, const json& request, const Peer& peer) {
  auto reply = d.answer(request, peer);
  if (!reply.stream) return reply.response;
  for (int i = 0; i < 5000; ++i) {
    bool last = false;
    if (auto line = reply.stream->next(last)) return json::parse(*line);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return json{{"timeout", true}};
}

json set_power(unsigned gpu, const char* watts) {
  return {{"v", 1}, {"request", "set"}, {"gpus", {gpu}}, {"settings", {{"power_limit", watts}}}};
}

bool eventually(const std::function<bool()>& condition) {
  for (int i = 0; i < 2000; ++i) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

TEST(serve_delegate, grants_refuses_and_names_the_holder) {
  FakeNode node;
  Delegation d(policy(), keys(), node.backend());
  d.set_process_owner({});
  d.start();
  Session a, b;
  auto r = ask(d, set_power(0, "600"), a.peer(1001));
  ASSERT_TRUE(r.value("ok", false)) << r.dump();
  EXPECT_EQ(r["rule"], "alice");
  EXPECT_EQ(r["session"], a.pid);
  EXPECT_EQ(node.at(0), 600000u);

  r = ask(d, set_power(0, "500"), b.peer(1002));  // bob, GPU 0: alice holds it
  EXPECT_EQ(r["code"], 4);
  EXPECT_EQ(r["rule"], "holder");
  EXPECT_NE(r["error"].get<std::string>().find("uid 1001"), std::string::npos) << r.dump();
  EXPECT_EQ(node.at(0), 600000u);

  r = ask(d, set_power(1, "700"), b.peer(1002));  // above bob's maximum
  EXPECT_EQ(r["code"], 4);
  EXPECT_EQ(r["rule"], "bob");
  r = ask(d, set_power(1, "600"), b.peer(4242));  // no rule names uid 4242
  EXPECT_EQ(r["code"], 4);
  EXPECT_EQ(r["rule"], "none");
  r = ask(d, set_power(1, "six hundred"), b.peer(1002));
  EXPECT_EQ(r["code"], 2);
  r = ask(d, set_power(9, "600"), b.peer(1002));
  EXPECT_EQ(r["code"], 6);
  EXPECT_EQ(node.at(1), 700000u);

  // Alice's restore frees GPU 0 (back to 700 W); then bob may have it.
  r = ask(d, {{"request", "restore"}}, a.peer(1001));
  ASSERT_TRUE(r.value("ok", false)) << r.dump();
  EXPECT_EQ(node.at(0), 700000u);
  r = ask(d, set_power(0, "500"), b.peer(1002));
  EXPECT_TRUE(r.value("ok", false)) << r.dump();
  EXPECT_EQ(node.at(0), 500000u);
  d.stop();  // the service stops: bob's grant goes back
  EXPECT_EQ(node.at(0), 700000u);
}

TEST(serve_delegate, the_session_ending_puts_its_gpus_back) {
  FakeNode node;
  Delegation d(policy(), keys(), node.backend());
  d.set_process_owner({});
  d.start();
  Session a;
  ASSERT_TRUE(ask(d, set_power(2, "600"), a.peer(1001)).value("ok", false));
  ASSERT_TRUE(ask(d, set_power(2, "550"), a.peer(1001)).value("ok", false));  // same session
  EXPECT_EQ(node.at(2), 550000u);
  a.end();
  // The first value the session found is the one that goes back.
  EXPECT_TRUE(eventually([&] { return node.at(2) == 700000u; })) << node.at(2);
}

TEST(serve_delegate, a_gone_requester_is_refused_and_a_full_queue_is_busy) {
  FakeNode node;
  Delegation d(policy(), keys(), node.backend());
  d.set_process_owner({});
  Session a;
  const auto peer = a.peer(1001);
  a.end();
  // Not started yet: requests queue up to the limit, then are refused at once.
  std::vector<Reply> replies;
  for (std::size_t i = 0; i < Delegation::kMaxQueued; ++i)
    replies.push_back(d.answer(set_power(0, "600"), peer));
  auto busy = d.answer(set_power(0, "600"), peer);
  ASSERT_FALSE(busy.stream);
  EXPECT_EQ(busy.response["code"], 255);
  d.start();
  bool last = false;
  std::optional<std::string> line;
  for (int i = 0; i < 5000 && !(line = replies.back().stream->next(last)); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(line);
  const auto r = json::parse(*line);
  EXPECT_EQ(r["code"], 4);
  EXPECT_EQ(r["rule"], "session");
  EXPECT_EQ(node.at(0), 700000u);
}

TEST(serve_delegate, slurm_jobs_come_from_the_cgroup_and_scontrol) {
  EXPECT_EQ(job_of_cgroup("6:freezer:/slurm/uid_1000/job_42/step_0\n4:memory:/\n"), "42");
  EXPECT_EQ(job_of_cgroup("0::/system.slice/slurmstepd.scope/job_7/step_batch/user/task_0\n"), "7");
  EXPECT_FALSE(job_of_cgroup("0::/user.slice/user-1000.slice/session-3.scope\n"));
  EXPECT_FALSE(job_of_cgroup("0::/x/job_abc/step_0\n"));
  EXPECT_FALSE(job_of_cgroup("0::/x/job_\n"));

  EXPECT_TRUE(hostlist_has("node1", "node1"));
  EXPECT_FALSE(hostlist_has("node1", "node10"));
  EXPECT_TRUE(hostlist_has("node[1-3,7]", "node2"));
  EXPECT_TRUE(hostlist_has("node[1-3,7]", "node7"));
  EXPECT_FALSE(hostlist_has("node[1-3,7]", "node5"));
  EXPECT_TRUE(hostlist_has("a1,b[2-4]", "b3"));
  EXPECT_TRUE(hostlist_has("node[01-03]", "node02"));
  EXPECT_FALSE(hostlist_has("node[01-03]", "node2"));

  const std::string line =
      "JobId=42 JobName=train UserId=alice(1001) GroupId=alice(1001) JobState=RUNNING "
      "NodeList=gpu[1-2] JOB_GRES=gpu:4 Nodes=gpu1 CPU_IDs=0-3 Mem=0 "
      "GRES=gpu:h100:2(S:0-1)(IDX:0,2) "
      "Nodes=gpu2 CPU_IDs=0-3 Mem=0 GRES=gpu:h100:2(IDX:1-2) MinCPUsNode=1\n";
  auto j = gpus_of_scontrol("42", line, 1001, "gpu2");
  ASSERT_TRUE(j.gpus) << j.problem;
  EXPECT_EQ(*j.gpus, (std::set<unsigned>{1, 2}));
  j = gpus_of_scontrol("42", line, 1001, "gpu1");
  ASSERT_TRUE(j.gpus) << j.problem;
  EXPECT_EQ(*j.gpus, (std::set<unsigned>{0, 2}));
  EXPECT_EQ(gpus_of_scontrol("42", line, 1002, "gpu1").problem, "Slurm job 42 is not yours");
  EXPECT_EQ(gpus_of_scontrol("42", line, 1001, "gpu3").problem,
            "Slurm job 42 has no GPUs on this node (gpu3)");
  auto pending = line;
  pending.replace(pending.find("RUNNING"), 7, "PENDING");
  EXPECT_EQ(gpus_of_scontrol("42", pending, 1001, "gpu1").problem,
            "Slurm job 42 is PENDING, not running");
  EXPECT_FALSE(gpus_of_scontrol("42",
                                "JobId=42 UserId=alice(1001) JobState=RUNNING Nodes=gpu1 "
                                "GRES=gpu:2(IDX:9-1)",
                                1001, "gpu1")
                   .gpus);
}

TEST(serve_delegate, a_job_rule_grants_the_jobs_gpus_only) {
  FakeNode node;
  auto p = policy();
  p.rules[0].all_gpus = false;
  p.rules[0].job_gpus = true;
  Delegation d(p, keys(), node.backend());
  d.set_process_owner({});  // the forked "users" run as the test's own uid
  d.set_job_lookup([](pid_t, unsigned uid) {
    JobGpus j;
    j.job = "42";
    if (uid == 1001) j.gpus = std::set<unsigned>{1, 3};
    return j;
  });
  d.start();
  Session a;
  auto r = ask(d, set_power(3, "600"), a.peer(1001));
  EXPECT_TRUE(r.value("ok", false)) << r.dump();
  r = ask(d, set_power(2, "600"), a.peer(1001));
  EXPECT_EQ(r["code"], 4);
  EXPECT_NE(r["error"].get<std::string>().find("GPU 2 is not among the GPUs of Slurm job 42"),
            std::string::npos)
      << r.dump();
  EXPECT_EQ(node.at(3), 600000u);
  EXPECT_EQ(node.at(2), 700000u);
}

}  // namespace
}  // namespace gpuclk::serve
