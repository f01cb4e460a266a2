#include "serve/slurm_job.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "util/parse.h"

extern char** environ;

namespace gpuclk::serve {
namespace {

constexpr std::size_t kMaxOutput = 1u << 20;
constexpr auto kTimeout = std::chrono::seconds(5);

// "0-1,3" → {0, 1, 3}; nullopt when malformed.
std::optional<std::set<unsigned>> index_list(const std::string& text) {
  std::set<unsigned> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const auto part = text.substr(start, comma - start);
    const auto dash = part.find('-');
    const auto lo = parse::try_unsigned(part.substr(0, dash), 0, 4095);
    const auto hi =
        dash == std::string::npos ? lo : parse::try_unsigned(part.substr(dash + 1), 0, 4095);
    if (!lo || !hi || *hi < *lo) return std::nullopt;
    for (auto i = *lo; i <= *hi; ++i) out.insert(static_cast<unsigned>(i));
    start = comma + 1;
  }
  return out;
}

// The value of "KEY=" in a one-line scontrol output's tokens.
std::vector<std::string> tokens(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

std::string short_host() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return {};
  std::string h(name);
  return h.substr(0, h.find('.'));
}

// Runs scontrol; its standard output, or nullopt with `problem`.
std::optional<std::string> run_scontrol(const std::string& job, std::string& problem) {
  int pipe_ends[2];
  if (::pipe2(pipe_ends, O_CLOEXEC) != 0) {
    problem = fmt::format("pipe(): {}", std::strerror(errno));
    return std::nullopt;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> args = {"scontrol", "show", "job", "-d", "--oneliner", job};
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, "scontrol", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_ends[1]);
  if (rc != 0) {
    ::close(pipe_ends[0]);
    problem = fmt::format("cannot run scontrol: {}", std::strerror(rc));
    return std::nullopt;
  }
  std::string out;
  const auto until = std::chrono::steady_clock::now() + kTimeout;
  bool timed_out = false;
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{pipe_ends[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const auto n = ::read(pipe_ends[0], buffer, sizeof buffer);
    if (n <= 0) break;
    if (out.size() < kMaxOutput) out.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(pipe_ends[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (timed_out) {
    problem = "scontrol did not answer within 5 s";
    return std::nullopt;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    problem = fmt::format("scontrol show job {} failed", job);
    return std::nullopt;
  }
  return out;
}

}  // namespace

std::optional<std::string> job_of_cgroup(const std::string& text) {
  for (std::size_t at = text.find("/job_"); at != std::string::npos;
       at = text.find("/job_", at + 1)) {
    std::size_t end = at + 5;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    if (end > at + 5 && (end == text.size() || text[end] == '/' || text[end] == '\n'))
      return text.substr(at + 5, end - at - 5);
  }
  return std::nullopt;
}

bool hostlist_has(const std::string& list, const std::string& host) {
  // Top-level items are separated by commas outside brackets.
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size() && list[i] == '[') ++depth;
    if (i < list.size() && list[i] == ']') --depth;
    if (i < list.size() && (list[i] != ',' || depth > 0)) continue;
    const auto item = list.substr(start, i - start);
    start = i + 1;
    const auto open = item.find('[');
    if (open == std::string::npos) {
      if (item == host) return true;
      continue;
    }
    const auto close = item.find(']', open);
    if (close == std::string::npos) continue;
    const auto prefix = item.substr(0, open), suffix = item.substr(close + 1);
    if (host.size() <= prefix.size() + suffix.size() ||
        host.compare(0, prefix.size(), prefix) != 0 ||
        host.compare(host.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const auto digits = host.substr(prefix.size(), host.size() - prefix.size() - suffix.size());
    const auto n = parse::try_unsigned(digits);
    if (!n) continue;
    // Each range keeps its width ("node[01-03]"): compare as numbers and, if padded, as text.
    const auto ranges = item.substr(open + 1, close - open - 1);
    std::size_t r = 0;
    while (r <= ranges.size()) {
      auto comma = ranges.find(',', r);
      if (comma == std::string::npos) comma = ranges.size();
      const auto part = ranges.substr(r, comma - r);
      r = comma + 1;
      const auto dash = part.find('-');
      const auto lo_text = part.substr(0, dash);
      const auto lo = parse::try_unsigned(lo_text);
      const auto hi = dash == std::string::npos ? lo : parse::try_unsigned(part.substr(dash + 1));
      if (!lo || !hi || *n < *lo || *n > *hi) continue;
      if (lo_text.size() > 1 && lo_text[0] == '0' && digits.size() != lo_text.size()) continue;
      return true;
    }
  }
  return false;
}

JobGpus gpus_of_scontrol(const std::string& job, const std::string& output, unsigned uid,
                         const std::string& host) {
  JobGpus out;
  out.job = job;
  std::optional<unsigned> owner;
  std::string state;
  std::string nodes;
  std::optional<std::set<unsigned>> gpus;
  bool on_this_node = false;
  for (const auto& t : tokens(output)) {
    if (t.rfind("UserId=", 0) == 0) {
      const auto open = t.find('('), close = t.find(')');
      if (open != std::string::npos && close != std::string::npos && close > open)
        if (auto v = parse::try_unsigned(t.substr(open + 1, close - open - 1), 0, 0xFFFFFFFEu))
          owner = static_cast<unsigned>(*v);
    } else if (t.rfind("JobState=", 0) == 0) {
      state = t.substr(9);
    } else if (t.rfind("Nodes=", 0) == 0) {
      nodes = t.substr(6);
    } else if (t.rfind("GRES=", 0) == 0 && hostlist_has(nodes, host)) {
      on_this_node = true;
      // "GRES=gpu:2(IDX:0-1)", "gpu:h100:2(S:0-1)(IDX:0,2)": the GPUs' IDX only.
      for (auto at = t.find("gpu"); at != std::string::npos; at = t.find("gpu", at + 1)) {
        const auto idx = t.find("IDX:", at);
        if (idx == std::string::npos) break;
        const auto end = t.find(')', idx);
        auto list = index_list(
            t.substr(idx + 4, end == std::string::npos ? std::string::npos : end - idx - 4));
        if (!list) {
          out.problem = fmt::format("cannot read the GPUs of job {}: {}", job, parse::quote(t));
          return out;
        }
        if (!gpus) gpus.emplace();
        gpus->insert(list->begin(), list->end());
        at = idx;
      }
    }
  }
  if (!owner || *owner != uid) {
    out.problem = fmt::format("Slurm job {} is not yours", job);
  } else if (state != "RUNNING") {
    out.problem = fmt::format("Slurm job {} is {}, not running", job, state.empty() ? "?" : state);
  } else if (!on_this_node || !gpus) {
    out.problem = fmt::format("Slurm job {} has no GPUs on this node ({})", job, host);
  } else {
    out.gpus = gpus;
  }
  return out;
}

JobGpus job_gpus_of(pid_t pid, unsigned uid) {
  JobGpus out;
  std::ifstream in(fmt::format("/proc/{}/cgroup", pid));
  std::stringstream text;
  text << in.rdbuf();
  const auto job = job_of_cgroup(text.str());
  if (!job) {
    out.problem = fmt::format("the requesting process (pid {}) runs in no Slurm job", pid);
    return out;
  }
  out.job = *job;
  const auto output = run_scontrol(*job, out.problem);
  if (!output) return out;
  return gpus_of_scontrol(*job, *output, uid, short_host());
}

}  // namespace gpuclk::serve
