#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "control/delegation.h"
#include "util/error.h"

namespace gpuclk::control {
namespace {

NameLookup fake_names() {
  return {[](const std::string& n) -> std::optional<unsigned> {
            if (n == "alice") return 1001u;
            if (n == "bob") return 1002u;
            return std::nullopt;
          },
          [](const std::string& n) -> std::optional<unsigned> {
            if (n == "gpu") return 500u;
            return std::nullopt;
          }};
}

const char* const kPolicy = R"(
version = 1
[[rule]]
name = "ml"
users = ["alice", 1003]
gpus = "0,1"
settings = ["power_limit", "locked_gpu_clocks"]
power_limit_min_w = 300
power_limit_max_w = 650.5
locked_gpu_clocks_max_mhz = 1755
[[rule]]
groups = ["gpu"]
gpus = "all"
settings = ["application_clocks"]
application_clocks_max_mhz = 1980
)";

DelegatedTarget power(unsigned gpu, std::uint64_t mw) {
  DelegatedTarget t{gpu, {}};
  t.target.power_limit_mw = units::Milliwatts(mw);
  return t;
}

DelegatedTarget lock(unsigned gpu, ClockBound lo, ClockBound hi) {
  DelegatedTarget t{gpu, {}};
  t.target.locked_gpu_clocks = ClockLock::range(lo, hi);
  return t;
}

int code_of(const std::string& text) {
  try {
    parse_delegation_policy(text, "p.toml", fake_names());
  } catch (const Error& e) {
    return static_cast<int>(e.code());
  }
  return 0;
}

std::string message_of(const std::string& text) {
  try {
    parse_delegation_policy(text, "p.toml", fake_names());
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

TEST(control_delegation_test, parses_rules_names_and_bounds) {
  const auto p = parse_delegation_policy(kPolicy, "p.toml", fake_names());
  ASSERT_EQ(p.rules.size(), 2u);
  EXPECT_EQ(p.rules[0].name, "ml");
  EXPECT_EQ(p.rules[0].uids, (std::set<unsigned>{1001, 1003}));
  EXPECT_EQ(p.rules[0].gpus, (std::set<unsigned>{0, 1}));
  EXPECT_FALSE(p.rules[0].all_gpus);
  EXPECT_EQ(*p.rules[0].power_max, units::Milliwatts(650500));
  EXPECT_EQ(*p.rules[0].locked_gpu.max_mhz, 1755u);
  EXPECT_EQ(p.rules[1].name, "rule 2 (p.toml:11)");
  EXPECT_EQ(p.rules[1].gids, (std::set<unsigned>{500}));
  EXPECT_TRUE(p.rules[1].all_gpus);
}

TEST(control_delegation_test, grants_within_the_bounds_only) {
  const auto p = parse_delegation_policy(kPolicy, "p.toml", fake_names());
  const Identity alice{1001, 1001, {}, "alice"};
  auto v = check(p, alice, {power(0, 600000), power(1, 300000)});
  EXPECT_TRUE(v.granted);
  EXPECT_EQ(v.rule, "ml");

  v = check(p, alice, {power(0, 700000)});
  EXPECT_FALSE(v.granted);
  EXPECT_EQ(v.rule, "ml");
  EXPECT_NE(v.reason.find("above the maximum 650.500 W"), std::string::npos) << v.reason;
  EXPECT_FALSE(check(p, alice, {power(0, 299999)}).granted);

  v = check(p, alice, {power(2, 600000)});
  EXPECT_FALSE(v.granted);
  EXPECT_NE(v.reason.find("GPU 2 is not among its GPUs"), std::string::npos) << v.reason;

  DelegatedTarget persistence{0, {}};
  persistence.target.persistence_mode = true;
  v = check(p, alice, {persistence});
  EXPECT_FALSE(v.granted);
  EXPECT_NE(v.reason.find("does not allow persistence"), std::string::npos) << v.reason;
}

TEST(control_delegation_test, clock_locks_keep_their_bounds) {
  const auto p = parse_delegation_policy(kPolicy, "p.toml", fake_names());
  const Identity alice{1001, 1001, {}, "alice"};
  using B = ClockBound;
  EXPECT_TRUE(check(p, alice, {lock(0, B::megahertz(1410), B::megahertz(1755))}).granted);
  EXPECT_FALSE(check(p, alice, {lock(0, B::megahertz(1410), B::megahertz(1770))}).granted);
  EXPECT_TRUE(check(p, alice, {lock(0, B::tdp(), B::tdp())}).granted);
  EXPECT_FALSE(check(p, alice, {lock(0, B::tdp(), B::unlimited())}).granted);
}

TEST(control_delegation_test, users_match_by_uid_or_group) {
  const auto p = parse_delegation_policy(kPolicy, "p.toml", fake_names());
  DelegatedTarget app{3, {}};
  app.target.application_clocks = ApplicationClocks{2619, 1980};
  // Supplementary group 500 names the second rule, on every GPU.
  auto v = check(p, Identity{2000, 2000, {7, 500}, "carol"}, {app});
  EXPECT_TRUE(v.granted);
  EXPECT_EQ(v.rule, "rule 2 (p.toml:11)");
  app.target.application_clocks = ApplicationClocks{2619, 1995};
  EXPECT_FALSE(check(p, Identity{2000, 500, {}, "carol"}, {app}).granted);
  // Nobody's rule: refused, the rule "none".
  v = check(p, Identity{65534, 65534, {}, "nobody"}, {power(0, 600000)});
  EXPECT_FALSE(v.granted);
  EXPECT_EQ(v.rule, "none");
  EXPECT_NE(v.reason.find("names user nobody (uid 65534)"), std::string::npos) << v.reason;
  // A user in two rules gets the one that allows the request.
  const Identity both{1001, 500, {}, "alice"};
  EXPECT_EQ(check(p, both, {app}).rule, "ml");  // refused by the first rule naming her
  app.target.application_clocks = ApplicationClocks{2619, 1980};
  EXPECT_EQ(check(p, both, {app}).rule, "rule 2 (p.toml:11)");
}

TEST(control_delegation_test, job_rules_take_the_gpus_of_the_requesters_slurm_job) {
  const auto p = parse_delegation_policy(
      "[[rule]]\nname = \"jobs\"\ngroups = [500]\ngpus = \"job\"\nsettings = [\"power_limit\"]\n",
      "p.toml", fake_names());
  ASSERT_TRUE(p.rules[0].job_gpus);
  Identity who{1001, 500, {}, "alice"};
  EXPECT_TRUE(needs_job(p, who));
  EXPECT_FALSE(needs_job(p, Identity{1001, 1001, {}, "alice"}));
  auto v = check(p, who, {power(1, 600000)});
  EXPECT_FALSE(v.granted);
  EXPECT_EQ(v.reason, "the request comes from no Slurm job");
  who.job_problem = "scontrol: no such job";
  EXPECT_EQ(check(p, who, {power(1, 600000)}).reason, "scontrol: no such job");
  who.job_gpus = std::set<unsigned>{1, 3};
  who.job = "42";
  EXPECT_TRUE(check(p, who, {power(1, 600000), power(3, 600000)}).granted);
  v = check(p, who, {power(2, 600000)});
  EXPECT_FALSE(v.granted);
  EXPECT_EQ(v.reason, "GPU 2 is not among the GPUs of Slurm job 42");
}

TEST(control_delegation_test, malformed_policies_name_the_line_and_key) {
  EXPECT_EQ(code_of("[[rule]]\nusers = [\"alice\"]\ngpus = \"all\"\nsettings = [\"power\"]\n"), 2);
  EXPECT_NE(message_of("[[rule]]\nusers = [\"alice\"]\ngpus = \"all\"\nsettings = [\"power\"]\n")
                .find("p.toml:4: unknown setting 'power'"),
            std::string::npos);
  EXPECT_NE(message_of("[[rule]]\nusers = [\"mallory\"]\n").find("p.toml:2: no user named"),
            std::string::npos);
  EXPECT_NE(message_of("[[rule]]\nusers = [1]\ngpus = \"all\"\nsettings = [\"power_limit\"]\n"
                       "power_limit_max_w = -5\n")
                .find("p.toml:5: power_limit_max_w must be watts"),
            std::string::npos);
  EXPECT_NE(message_of("[[rule]]\nusers = [1]\ngpus = \"all\"\nsettings = [\"power_limit\"]\n"
                       "power_limit_max_w = nan\n")
                .find("power_limit_max_w"),
            std::string::npos);
  EXPECT_NE(message_of("[[rule]]\nusers = [1]\ngpus = \"0,x\"\nsettings = [\"power_limit\"]\n")
                .find("p.toml:3: gpus must be"),
            std::string::npos);
  EXPECT_NE(message_of("[[rule]]\nusers = [1]\ngpus = \"all\"\nsettings = [\"power_limit\"]\n"
                       "locked_gpu_clocks_max_mhz = 99999999999\n")
                .find("p.toml:5: locked_gpu_clocks_max_mhz"),
            std::string::npos);
  EXPECT_NE(message_of("[[rule]]\nusers = [1]\ngpus = \"all\"\nsetting = [\"power_limit\"]\n")
                .find("p.toml:4: unknown key 'setting'"),
            std::string::npos);
  EXPECT_NE(message_of("[[rule]]\ngpus = \"all\"\nsettings = [\"power_limit\"]\n")
                .find("names no users or groups"),
            std::string::npos);
  EXPECT_NE(message_of("[[rule]]\nusers = [1]\ngpus = \"all\"\nsettings = [\"power_limit\"]\n"
                       "power_limit_min_w = 500\npower_limit_max_w = 400\n")
                .find("minimum above its maximum"),
            std::string::npos);
  EXPECT_NE(message_of("version = 2\n").find("version must be 1"), std::string::npos);
  EXPECT_NE(message_of("[[rule]\n").find("p.toml:1"), std::string::npos);
  EXPECT_EQ(code_of("version = 1\n"), 0);  // no rule: nobody may change anything
}

TEST(control_delegation_test, refuses_a_policy_others_could_change) {
  namespace fs = std::filesystem;
  char tmpl[] = "/tmp/gpuclk-policy-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  const auto file = dir / "policy.toml";
  std::ofstream(file) << "version = 1\n";
  ::chmod(dir.c_str(), 0755);
  ::chmod(file.c_str(), 0644);
  auto code = [&] {
    try {
      check_policy_file(file, ::geteuid());
    } catch (const Error& e) {
      return static_cast<int>(e.code());
    }
    return 0;
  };
  EXPECT_EQ(code(), 0);
  ::chmod(file.c_str(), 0646);
  EXPECT_EQ(code(), 2);  // world-writable
  ::chmod(file.c_str(), 0644);
  ::chmod(dir.c_str(), 0777);
  EXPECT_EQ(code(), 2);  // its folder world-writable
  ::chmod(dir.c_str(), 0755);
  EXPECT_THROW(check_policy_file(dir / "missing.toml", ::geteuid()), Error);
  EXPECT_THROW(check_policy_file(dir, ::geteuid()), Error);  // not a regular file
  // Owned by someone else than root and the service's user.
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(file.c_str(), 65534, 65534), 0);
    EXPECT_EQ(code(), 2);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpuclk::control
