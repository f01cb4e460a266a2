// gpu::LimitsCache: what it keeps comes back equal; every file it should not trust is ignored.
#include "gpu/limits_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

namespace gpuclk::gpu {
namespace {

namespace fs = std::filesystem;
const std::string kUuid = "GPU-cba78776-3017-caf5-5d64-a73aee97faac";

ClockLimits h100_limits() {
  ClockLimits l;
  l.max_clock = {Megahertz(1980), Megahertz(1980), Megahertz(2619), Megahertz(1545)};
  l.max_boost_clock = {Megahertz(1980), Megahertz(1980), Reading<Megahertz>::not_supported(),
                       Reading<Megahertz>::not_supported()};
  l.default_app_clock = {Megahertz(1755), Reading<Megahertz>::not_supported(), Megahertz(2619),
                         Reading<Megahertz>::not_supported()};
  l.supported_clocks = std::vector<SupportedClocks>{
      {Megahertz(2619), {Megahertz(1980), Megahertz(1965)}}, {Megahertz(1593), {Megahertz(1410)}}};
  return l;
}

class LimitsCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpuclk-limits-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    dir_ = root_ / "cache";
  }
  void TearDown() override { fs::remove_all(root_); }

  nlohmann::json stored() {
    std::ifstream in(LimitsCache(dir_, "580.159.04").path_of(kUuid));
    return nlohmann::json::parse(in);
  }
  void rewrite(const nlohmann::json& j) {
    const auto path = LimitsCache(dir_, "580.159.04").path_of(kUuid);
    std::ofstream(path, std::ios::trunc) << j.dump();
  }

  fs::path root_, dir_;
};

bool same(const Reading<Megahertz>& a, const Reading<Megahertz>& b) {
  return a.status() == b.status() && (!a || a->value() == b->value());
}

TEST_F(LimitsCacheTest, what_is_stored_comes_back_equal_in_a_private_directory) {
  const LimitsCache cache(dir_, "580.159.04");
  EXPECT_FALSE(cache.load(kUuid)) << "nothing stored yet";
  const auto limits = h100_limits();
  cache.store(kUuid, limits);
  struct stat st {};
  ASSERT_EQ(::stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(cache.path_of(kUuid).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  const auto back = cache.load(kUuid);
  ASSERT_TRUE(back);
  for (int d = 0; d < 4; ++d) {
    EXPECT_TRUE(same(back->max_clock[d], limits.max_clock[d])) << d;
    EXPECT_TRUE(same(back->max_boost_clock[d], limits.max_boost_clock[d])) << d;
    EXPECT_TRUE(same(back->default_app_clock[d], limits.default_app_clock[d])) << d;
  }
  ASSERT_TRUE(back->supported_clocks);
  ASSERT_EQ(back->supported_clocks->size(), 2u);
  EXPECT_EQ((*back->supported_clocks)[0].memory.value(), 2619);
  EXPECT_EQ((*back->supported_clocks)[0].graphics.size(), 2u);
  EXPECT_EQ((*back->supported_clocks)[1].graphics[0].value(), 1410);
}

TEST_F(LimitsCacheTest, a_missing_parent_is_made_searchable_the_cache_itself_private) {
  const auto parent = root_ / "run-gpuclk";
  const LimitsCache cache(parent / "limits", "580.159.04");
  cache.store(kUuid, h100_limits());
  struct stat st {};
  ASSERT_EQ(::stat(parent.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u) << "the socket's folder: every user connects through it";
  ASSERT_EQ(::stat((parent / "limits").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_TRUE(cache.load(kUuid));
}

TEST_F(LimitsCacheTest, another_driver_or_gpu_is_not_answered) {
  LimitsCache(dir_, "580.159.04").store(kUuid, h100_limits());
  EXPECT_FALSE(LimitsCache(dir_, "590.10").load(kUuid));
  EXPECT_TRUE(LimitsCache(dir_, "580.159.04").load(kUuid));
  // A file renamed to another GPU's name still names its own GPU inside.
  const LimitsCache cache(dir_, "580.159.04");
  const std::string other = "GPU-00000000-0000-0000-0000-000000000000";
  fs::copy_file(cache.path_of(kUuid), cache.path_of(other));
  EXPECT_FALSE(cache.load(other));
}

TEST_F(LimitsCacheTest, a_reading_that_failed_is_not_stored) {
  auto limits = h100_limits();
  limits.max_clock[1] = Reading<Megahertz>::error(15);  // GPU lost mid-probe
  const LimitsCache cache(dir_, "580.159.04");
  cache.store(kUuid, limits);
  EXPECT_FALSE(fs::exists(cache.path_of(kUuid)));
  EXPECT_FALSE(cache.load(kUuid));
}

TEST_F(LimitsCacheTest, damaged_or_implausible_files_are_ignored) {
  const LimitsCache cache(dir_, "580.159.04");
  cache.store(kUuid, h100_limits());
  const auto good = stored();
  for (const auto& [what, change] :
       std::vector<std::pair<std::string, std::function<void(nlohmann::json&)>>>{
           {"a clock of 0", [](auto& j) { j["max"][1] = 0; }},
           {"a negative clock", [](auto& j) { j["boost"][0] = -1980; }},
           {"an absurd clock", [](auto& j) { j["max"][0] = 1e12; }},
           {"a clock as text", [](auto& j) { j["max"][0] = "1980"; }},
           {"three domains", [](auto& j) { j["max"].erase(3); }},
           {"no supported list", [](auto& j) { j.erase("supported"); }},
           {"a memory clock without graphics",
            [](auto& j) { j["supported"][0].erase("graphics"); }},
           {"another format", [](auto& j) { j["format"] = 2; }},
           {"an array",
            [](auto& j) {
              j = nlohmann::json::array({1, 2});
            }},
       }) {
    auto j = good;
    change(j);
    rewrite(j);
    EXPECT_FALSE(cache.load(kUuid)) << what;
  }
  std::ofstream(cache.path_of(kUuid), std::ios::trunc) << "{\"format\": 1, \"max\": [1980";
  EXPECT_FALSE(cache.load(kUuid)) << "truncated";
  std::ofstream(cache.path_of(kUuid), std::ios::trunc) << std::string(300 * 1024, ' ');
  EXPECT_FALSE(cache.load(kUuid)) << "over 256 KiB";
  rewrite(good);
  EXPECT_TRUE(cache.load(kUuid)) << "the good file again";
}

TEST_F(LimitsCacheTest, files_others_could_write_are_not_trusted) {
  const LimitsCache cache(dir_, "580.159.04");
  cache.store(kUuid, h100_limits());
  ASSERT_TRUE(cache.load(kUuid));
  ASSERT_EQ(::chmod(cache.path_of(kUuid).c_str(), 0620), 0);
  EXPECT_FALSE(cache.load(kUuid)) << "group-writable file";
  ASSERT_EQ(::chmod(cache.path_of(kUuid).c_str(), 0600), 0);
  ASSERT_EQ(::chmod(dir_.c_str(), 0777), 0);
  EXPECT_FALSE(cache.load(kUuid)) << "world-writable directory";
  cache.store(kUuid, h100_limits());  // nor is one written there
  ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);

  // A link in place of the file is not followed.
  const auto target = root_ / "elsewhere.json";
  fs::rename(cache.path_of(kUuid), target);
  fs::create_symlink(target, cache.path_of(kUuid));
  EXPECT_FALSE(cache.load(kUuid));
}

TEST_F(LimitsCacheTest, names_that_are_not_uuids_are_neither_stored_nor_read) {
  const LimitsCache cache(dir_, "580.159.04");
  for (const std::string& bad :
       std::vector<std::string>{"", "../../etc/passwd", "GPU-1/x", std::string(200, 'a')}) {
    cache.store(bad, h100_limits());
    EXPECT_FALSE(cache.load(bad)) << bad;
  }
  EXPECT_FALSE(fs::exists(dir_)) << "nothing was written";
}

TEST_F(LimitsCacheTest, the_default_place_follows_the_environment) {
  const char* saved = std::getenv("GPUCLK_LIMITS_CACHE");
  const std::string keep = saved ? saved : "";
  const char* saved_xdg = std::getenv("XDG_RUNTIME_DIR");
  const std::string keep_xdg = saved_xdg ? saved_xdg : "";
  ::setenv("GPUCLK_LIMITS_CACHE", "off", 1);
  EXPECT_TRUE(LimitsCache::default_dir(false).empty());
  ::setenv("GPUCLK_LIMITS_CACHE", dir_.c_str(), 1);
  EXPECT_EQ(LimitsCache::default_dir(true), dir_) << "named: used even on the simulator";
  ::unsetenv("GPUCLK_LIMITS_CACHE");
  EXPECT_TRUE(LimitsCache::default_dir(true).empty()) << "the simulator: off unless named";
  ::setenv("XDG_RUNTIME_DIR", root_.c_str(), 1);
  EXPECT_EQ(LimitsCache::default_dir(false), root_ / "gpuclk");
  ::unsetenv("XDG_RUNTIME_DIR");
  if (::geteuid() == 0) {
    // Below the service's socket folder, which every user must be able to search.
    EXPECT_EQ(LimitsCache::default_dir(false), fs::path("/run/gpuclk/limits"));
  }
  if (saved) ::setenv("GPUCLK_LIMITS_CACHE", keep.c_str(), 1);
  if (saved_xdg) ::setenv("XDG_RUNTIME_DIR", keep_xdg.c_str(), 1);
  if (!saved_xdg) ::unsetenv("XDG_RUNTIME_DIR");
}

}  // namespace
}  // namespace gpuclk::gpu
