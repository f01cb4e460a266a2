#include "control/delegation.h"

#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

// Debian's libtomlplusplus-dev 3.3 ships toml.h; upstream's single header is toml.hpp.
#if __has_include(<toml++/toml.hpp>)
#include <toml++/toml.hpp>
#else
#include <toml++/toml.h>
#endif

#include "util/file.h"
#include "util/parse.h"

namespace gpuclk::control {
namespace {

const char* const kRuleKeys =
    "name, users, groups, gpus, settings, power_limit_min_w, power_limit_max_w, "
    "locked_gpu_clocks_min_mhz, locked_gpu_clocks_max_mhz, locked_memory_clocks_min_mhz, "
    "locked_memory_clocks_max_mhz, application_clocks_min_mhz, application_clocks_max_mhz, "
    "application_memory_clocks_min_mhz, application_memory_clocks_max_mhz";

std::string where(const std::string& source, const toml::node& node) {
  const auto& src = node.source();
  return src.begin.line ? fmt::format("{}:{}", source, src.begin.line) : source;
}

// A number written bare or quoted, as text for the checked parsers.
std::optional<std::string> number_text(const toml::node& node) {
  if (node.is_string()) return *node.value<std::string>();
  if (node.is_integer()) return std::to_string(*node.value<long long>());
  if (node.is_floating_point()) return fmt::format("{}", *node.value<double>());
  return std::nullopt;
}

unsigned mhz_of(const toml::node& node, const std::string& key, const std::string& source) {
  const auto text = number_text(node);
  const auto v = text ? parse::try_unsigned(*text, 1, kMaxMhz) : std::nullopt;
  if (!v) {
    throw bad_argument(fmt::format("{}: {} must be a whole number of MHz from 1 to {}, not '{}'",
                                   where(source, node), key, kMaxMhz,
                                   parse::quote(text.value_or("(not a number)"))));
  }
  return static_cast<unsigned>(*v);
}

units::Milliwatts watts_of(const toml::node& node, const std::string& key,
                           const std::string& source) {
  const auto text = number_text(node);
  const auto v = text ? parse::try_fixed(*text, 3, kMaxMilliwatts) : std::nullopt;
  if (!v || *v == 0) {
    throw bad_argument(
        fmt::format("{}: {} must be watts above 0 (at most three decimals), not '{}'",
                    where(source, node), key, parse::quote(text.value_or("(not a number)"))));
  }
  return units::Milliwatts(*v);
}

// users = ["alice", 1001] / groups = ["gpu"]: names resolved now, ids taken as they are.
std::set<unsigned> ids_of(const toml::node& node, const std::string& key, const std::string& source,
                          const std::function<std::optional<unsigned>(const std::string&)>& lookup,
                          const char* kind) {
  if (!node.is_array())
    throw bad_argument(
        fmt::format("{}: {} must be a list of {} names or ids", where(source, node), key, kind));
  std::set<unsigned> out;
  for (const auto& item : *node.as_array()) {
    if (item.is_integer()) {
      const auto v = *item.value<long long>();
      if (v < 0 || v > 0xFFFFFFFELL)
        throw bad_argument(
            fmt::format("{}: {} id {} is out of range", where(source, item), kind, v));
      out.insert(static_cast<unsigned>(v));
    } else if (item.is_string()) {
      const auto name = *item.value<std::string>();
      auto id = lookup ? lookup(name) : std::nullopt;
      if (!id)
        throw bad_argument(
            fmt::format("{}: no {} named '{}'", where(source, item), kind, parse::quote(name)),
            "give an existing name, or the numeric id");
      out.insert(*id);
    } else {
      throw bad_argument(fmt::format("{}: {} must list names (strings) or ids (integers)",
                                     where(source, item), key));
    }
  }
  return out;
}

void gpus_of(const toml::node& node, const std::string& source, DelegationRule& rule) {
  const auto text = node.is_string()    ? *node.value<std::string>()
                    : node.is_integer() ? std::to_string(*node.value<long long>())
                                        : std::string();
  if (text.empty())
    throw bad_argument(
        fmt::format("{}: gpus must be \"all\" or GPU indexes (\"0,1\")", where(source, node)));
  if (text == "all") {
    rule.all_gpus = true;
    return;
  }
  if (text == "job") {
    rule.job_gpus = true;
    return;
  }
  std::size_t start = 0;
  bool any = false;
  while (start <= text.size() && !text.empty()) {
    auto comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const auto part = text.substr(start, comma - start);
    const auto v = parse::try_unsigned(part, 0, 1023);
    if (!v)
      throw bad_argument(fmt::format("{}: gpus must be \"all\" or GPU indexes (\"0,1\"), not '{}'",
                                     where(source, node), parse::quote(text)));
    rule.gpus.insert(static_cast<unsigned>(*v));
    any = true;
    start = comma + 1;
  }
  if (!any)
    throw bad_argument(fmt::format("{}: gpus is empty", where(source, node)),
                       "write gpus = \"all\", or GPU indexes (\"0,1\")");
}

void settings_of(const toml::node& node, const std::string& source, DelegationRule& rule) {
  if (!node.is_array())
    throw bad_argument(
        fmt::format("{}: settings must be a list of setting names", where(source, node)));
  for (const auto& item : *node.as_array()) {
    const auto name = item.value<std::string>();
    const auto s = name && item.is_string() ? setting_by_key(*name) : std::nullopt;
    if (!s)
      throw bad_argument(fmt::format("{}: unknown setting '{}'", where(source, item),
                                     parse::quote(name.value_or("(not a string)"))),
                         "settings: persistence_mode, application_clocks, locked_gpu_clocks, "
                         "locked_memory_clocks, power_limit");
    rule.settings.insert(*s);
  }
}

DelegationRule rule_of(const toml::table& table, const std::string& source, std::size_t n,
                       const toml::node& at, const NameLookup& names) {
  DelegationRule r;
  bool gpus = false, settings = false;
  for (const auto& [k, node] : table) {
    const std::string key(k.str());
    if (key == "name") {
      if (!node.is_string())
        throw bad_argument(fmt::format("{}: name must be a string", where(source, node)));
      r.name = *node.value<std::string>();
    } else if (key == "users") {
      r.uids = ids_of(node, key, source, names.user, "user");
    } else if (key == "groups") {
      r.gids = ids_of(node, key, source, names.group, "group");
    } else if (key == "gpus") {
      gpus_of(node, source, r);
      gpus = true;
    } else if (key == "settings") {
      settings_of(node, source, r);
      settings = true;
    } else if (key == "power_limit_min_w") {
      r.power_min = watts_of(node, key, source);
    } else if (key == "power_limit_max_w") {
      r.power_max = watts_of(node, key, source);
    } else if (key == "locked_gpu_clocks_min_mhz") {
      r.locked_gpu.min_mhz = mhz_of(node, key, source);
    } else if (key == "locked_gpu_clocks_max_mhz") {
      r.locked_gpu.max_mhz = mhz_of(node, key, source);
    } else if (key == "locked_memory_clocks_min_mhz") {
      r.locked_memory.min_mhz = mhz_of(node, key, source);
    } else if (key == "locked_memory_clocks_max_mhz") {
      r.locked_memory.max_mhz = mhz_of(node, key, source);
    } else if (key == "application_clocks_min_mhz") {
      r.application_graphics.min_mhz = mhz_of(node, key, source);
    } else if (key == "application_clocks_max_mhz") {
      r.application_graphics.max_mhz = mhz_of(node, key, source);
    } else if (key == "application_memory_clocks_min_mhz") {
      r.application_memory.min_mhz = mhz_of(node, key, source);
    } else if (key == "application_memory_clocks_max_mhz") {
      r.application_memory.max_mhz = mhz_of(node, key, source);
    } else {
      throw bad_argument(
          fmt::format("{}: unknown key '{}' in a [[rule]]", where(source, node), parse::quote(key)),
          std::string("a rule's keys: ") + kRuleKeys);
    }
  }
  const auto here = where(source, at);
  if (r.name.empty()) r.name = fmt::format("rule {} ({})", n, here);
  if (r.uids.empty() && r.gids.empty())
    throw bad_argument(fmt::format("{}: rule '{}' names no users or groups", here, r.name));
  if (!gpus)
    throw bad_argument(fmt::format("{}: rule '{}' has no gpus", here, r.name),
                       "write gpus = \"all\", or GPU indexes (\"0,1\")");
  if (!settings || r.settings.empty())
    throw bad_argument(fmt::format("{}: rule '{}' allows no settings", here, r.name),
                       "write settings = [\"power_limit\", \"locked_gpu_clocks\", ...]");
  auto ordered = [&](const auto& lo, const auto& hi, const char* what) {
    if (lo && hi && *lo > *hi)
      throw bad_argument(
          fmt::format("{}: rule '{}': {} minimum above its maximum", here, r.name, what));
  };
  ordered(r.power_min, r.power_max, "power_limit");
  ordered(r.locked_gpu.min_mhz, r.locked_gpu.max_mhz, "locked_gpu_clocks");
  ordered(r.locked_memory.min_mhz, r.locked_memory.max_mhz, "locked_memory_clocks");
  ordered(r.application_graphics.min_mhz, r.application_graphics.max_mhz, "application_clocks");
  ordered(r.application_memory.min_mhz, r.application_memory.max_mhz, "application_memory_clocks");
  return r;
}

std::optional<unsigned> lookup_user(const std::string& name) {
  passwd pw{}, *out = nullptr;
  std::vector<char> buf(16384);
  if (::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &out) != 0 || !out)
    return std::nullopt;
  return out->pw_uid;
}

std::optional<unsigned> lookup_group(const std::string& name) {
  group gr{}, *out = nullptr;
  std::vector<char> buf(65536);
  if (::getgrnam_r(name.c_str(), &gr, buf.data(), buf.size(), &out) != 0 || !out)
    return std::nullopt;
  return out->gr_gid;
}

// One path's ownership and mode: what a user other than root (or the service's own user) could
// change is refused.
void check_owner_and_mode(const std::filesystem::path& path, uid_t euid, const char* what,
                          const std::string& policy) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw bad_argument(fmt::format("cannot read the policy {}: {}: {}", what, path.string(),
                                   std::strerror(errno)));
  const auto fix = fmt::format("chown root:root {0} && chmod go-w {0}", path.string());
  if (st.st_uid != 0 && st.st_uid != euid)
    throw bad_argument(fmt::format("the policy {} {} is owned by uid {}, not root: refusing {}",
                                   what, path.string(), st.st_uid, policy),
                       fix);
  if (st.st_mode & S_IWOTH) {
    // /tmp and the like: a sticky folder still lets anyone add files, so it is refused too.
    throw bad_argument(
        fmt::format("the policy {} {} is world-writable: refusing {}", what, path.string(), policy),
        fix);
  }
  if ((st.st_mode & S_IWGRP) && st.st_gid != 0)
    throw bad_argument(fmt::format("the policy {} {} is writable by group {}: refusing {}", what,
                                   path.string(), st.st_gid, policy),
                       fix);
}

std::string describe_mhz(unsigned v) { return fmt::format("{} MHz", v); }

// Why `lock` breaks `bounds`, or "" when it keeps them.
std::string lock_problem(const ClockLock& lock, const ClockBounds& bounds, std::string_view what) {
  if (!lock.locked) return {};
  for (const auto* end : {&lock.min, &lock.max}) {
    if (end->kind == ClockBound::Kind::tdp) continue;
    if (end->kind == ClockBound::Kind::unlimited) {
      if ((end == &lock.max && bounds.max_mhz) || (end == &lock.min && bounds.min_mhz))
        return fmt::format("{} 'unlimited' is outside the bounds {}", what,
                           bounds.max_mhz ? "max " + describe_mhz(*bounds.max_mhz)
                                          : "min " + describe_mhz(*bounds.min_mhz));
      continue;
    }
    if (bounds.max_mhz && end->mhz > *bounds.max_mhz)
      return fmt::format("{} {} is above the maximum {}", what, describe_mhz(end->mhz),
                         describe_mhz(*bounds.max_mhz));
    if (bounds.min_mhz && end->mhz < *bounds.min_mhz)
      return fmt::format("{} {} is below the minimum {}", what, describe_mhz(end->mhz),
                         describe_mhz(*bounds.min_mhz));
  }
  return {};
}

std::string clock_problem(unsigned mhz, const ClockBounds& bounds, std::string_view what) {
  if (bounds.max_mhz && mhz > *bounds.max_mhz)
    return fmt::format("{} {} is above the maximum {}", what, describe_mhz(mhz),
                       describe_mhz(*bounds.max_mhz));
  if (bounds.min_mhz && mhz < *bounds.min_mhz)
    return fmt::format("{} {} is below the minimum {}", what, describe_mhz(mhz),
                       describe_mhz(*bounds.min_mhz));
  return {};
}

// Why `rule` refuses `t`, or "" when it allows it.
std::string refusal(const DelegationRule& rule, const Identity& who, const DelegatedTarget& t) {
  if (rule.job_gpus) {
    if (!who.job_gpus)
      return who.job_problem.empty() ? "the request comes from no Slurm job" : who.job_problem;
    if (!who.job_gpus->count(t.gpu))
      return fmt::format("GPU {} is not among the GPUs of Slurm job {}", t.gpu, who.job);
  } else if (!rule.all_gpus && !rule.gpus.count(t.gpu)) {
    return fmt::format("GPU {} is not among its GPUs", t.gpu);
  }
  for (auto s : kWriteOrder) {
    if (!t.target.has(s)) continue;
    if (!rule.settings.count(s)) return fmt::format("it does not allow {}", label_of(s));
    std::string p;
    switch (s) {
      case Setting::persistence_mode:
        break;
      case Setting::application_clocks:
        p = clock_problem(t.target.application_clocks->graphics_mhz, rule.application_graphics,
                          "application SM clock");
        if (p.empty())
          p = clock_problem(t.target.application_clocks->memory_mhz, rule.application_memory,
                            "application memory clock");
        break;
      case Setting::locked_gpu_clocks:
        p = lock_problem(*t.target.locked_gpu_clocks, rule.locked_gpu, "locked GPU clock");
        break;
      case Setting::locked_memory_clocks:
        p = lock_problem(*t.target.locked_memory_clocks, rule.locked_memory, "locked memory clock");
        break;
      case Setting::power_limit: {
        const auto mw = *t.target.power_limit_mw;
        if (rule.power_max && mw > *rule.power_max)
          p = fmt::format("power limit {} is above the maximum {}", describe_watts(mw),
                          describe_watts(*rule.power_max));
        else if (rule.power_min && mw < *rule.power_min)
          p = fmt::format("power limit {} is below the minimum {}", describe_watts(mw),
                          describe_watts(*rule.power_min));
        break;
      }
    }
    if (!p.empty()) return fmt::format("on GPU {}: {}", t.gpu, p);
  }
  return {};
}

}  // namespace

NameLookup system_names() { return {lookup_user, lookup_group}; }

DelegationPolicy parse_delegation_policy(const std::string& text, const std::string& source,
                                         const NameLookup& names) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw bad_argument(fmt::format("{}:{}: {}", source, e.source().begin.line, e.description()));
  }
  DelegationPolicy p;
  p.source = source;
  for (const auto& [k, node] : root) {
    const std::string key(k.str());
    if (key == "version") {
      if (!node.is_integer() || node.value<long long>() != 1)
        throw bad_argument(fmt::format("{}: policy version must be 1", where(source, node)));
    } else if (key == "rule") {
      if (!node.is_array_of_tables())
        throw bad_argument(fmt::format("{}: rule must be [[rule]] tables", where(source, node)));
      for (const auto& item : *node.as_array())
        p.rules.push_back(rule_of(*item.as_table(), source, p.rules.size() + 1, item, names));
    } else {
      throw bad_argument(
          fmt::format("{}: unknown key '{}'", where(source, node), parse::quote(key)),
          "top-level keys: version, [[rule]]");
    }
  }
  std::set<std::string> seen;
  for (const auto& r : p.rules) {
    if (!seen.insert(r.name).second)
      throw bad_argument(fmt::format("{}: two rules are named '{}'", source, parse::quote(r.name)));
  }
  return p;
}

void check_policy_file(const std::filesystem::path& path, uid_t euid) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0)
    throw bad_argument(
        fmt::format("cannot read the policy {}: {}", path.string(), std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    throw bad_argument(fmt::format("the policy {} is not a regular file", path.string()));
  const auto name = path.string();
  check_owner_and_mode(path, euid, "file", name);
  auto dir = path.parent_path();
  if (dir.empty()) dir = ".";
  check_owner_and_mode(dir, euid, "folder", name);
}

DelegationPolicy load_delegation_policy(const std::filesystem::path& path) {
  check_policy_file(path, ::geteuid());
  return parse_delegation_policy(file::read_bounded(path.string(), "policy"), path.string(),
                                 system_names());
}

std::vector<const DelegationRule*> rules_for(const DelegationPolicy& policy, const Identity& who) {
  std::vector<const DelegationRule*> out;
  for (const auto& r : policy.rules) {
    bool named = r.uids.count(who.uid) || r.gids.count(who.gid);
    for (auto g : who.groups) named = named || r.gids.count(g);
    if (named) out.push_back(&r);
  }
  return out;
}

bool needs_job(const DelegationPolicy& policy, const Identity& who) {
  for (const auto* r : rules_for(policy, who))
    if (r->job_gpus) return true;
  return false;
}

Verdict check(const DelegationPolicy& policy, const Identity& who,
              const std::vector<DelegatedTarget>& targets) {
  const auto rules = rules_for(policy, who);
  if (rules.empty()) {
    return {false, "none",
            fmt::format("no rule of {} names user {} (uid {}) or its groups", policy.source,
                        who.user.empty() ? "?" : who.user, who.uid)};
  }
  for (const auto* r : rules) {
    bool all = true;
    for (const auto& t : targets) all = all && refusal(*r, who, t).empty();
    if (all) return {true, r->name, {}};
  }
  for (const auto& t : targets) {
    auto why = refusal(*rules.front(), who, t);
    if (!why.empty()) return {false, rules.front()->name, why};
  }
  return {false, rules.front()->name, "refused"};  // not reached: some target failed above
}

}  // namespace gpuclk::control
