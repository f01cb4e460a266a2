#include "serve/delegate.h"

#include <fmt/format.h>
#include <poll.h>
#include <pwd.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "control/journal.h"
#include "control/journal_store.h"
#include "host/child_process.h"
#include "serve/protocol.h"
#include "serve/slurm_job.h"
#include "util/error.h"
#include "util/parse.h"
#include "util/text.h"
#include "util/thread_name.h"

namespace gpuclk::serve {

// One answer on its way: written by the worker, read by the socket's poll thread.
struct Delegation::Pending {
  std::mutex mutex;
  std::optional<std::string> line;
};

namespace {

// The one line of a `set`/`restore` answer, when the worker has it.
class PendingStream : public Stream {
 public:
  explicit PendingStream(std::shared_ptr<void> owner, std::mutex& mutex,
                         std::optional<std::string>& line)
      : owner_(std::move(owner)), mutex_(mutex), line_(line) {}
  std::chrono::nanoseconds interval() const override { return std::chrono::milliseconds(1); }
  std::optional<std::string> next(bool& last) override {
    std::lock_guard lock(mutex_);
    if (!line_) return std::nullopt;
    last = true;
    return *line_;
  }

 private:
  std::shared_ptr<void> owner_;  // keeps the Pending alive
  std::mutex& mutex_;
  std::optional<std::string>& line_;
};

// A refusal: an Error with the rule that refused, for the log and the answer.
struct Refusal {
  ExitCode code = ExitCode::no_permission;
  std::string rule, message, hint;
};

std::string user_name(unsigned uid) {
  passwd pw{}, *out = nullptr;
  std::vector<char> buf(16384);
  if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &out) != 0 || !out) return {};
  return out->pw_name;
}

std::string who_text(const control::Identity& who) {
  return who.user.empty() ? fmt::format("uid {}", who.uid)
                          : fmt::format("uid {} ({})", who.uid, who.user);
}

control::Request request_of(const json& settings) {
  return control::request_from_json(settings.dump(), "settings");
}

bool flag(const json& request, const char* key) {
  if (!request.contains(key)) return false;
  if (!request.at(key).is_boolean())
    throw bad_argument(fmt::format("{} must be true or false", key));
  return request.at(key).get<bool>();
}

// What was asked, for the log: "set power_limit=600 gpus=[0,1]". The settings as text their
// parsers read back (the typed values gpuclk sends read as a person would type them); raw where
// they do not parse.
std::string asked_text(const json& request) {
  std::string out = request.value("request", std::string("?"));
  if (request.contains("settings") && request.at("settings").is_object()) {
    std::string settings;
    try {
      settings = control::asked_text(request_of(request.at("settings")));
    } catch (const std::exception&) {
      for (const auto& [k, v] : request.at("settings").items())
        settings += fmt::format("{}{}={}", settings.empty() ? "" : " ", parse::quote(k, 40),
                                parse::quote(v.is_string() ? v.get<std::string>() : v.dump(), 40));
    }
    if (!settings.empty()) out += " " + settings;
  }
  if (request.contains("gpus")) out += " gpus=" + parse::quote(request.at("gpus").dump(), 60);
  return out;
}

json refusal_response(const Refusal& r) {
  auto j = error_response(r.message, static_cast<int>(r.code));
  if (!r.hint.empty()) j["hint"] = r.hint;
  j["rule"] = r.rule;
  return j;
}

std::optional<unsigned> owner_of(pid_t pid) {
  struct stat st {};
  if (::stat(fmt::format("/proc/{}", pid).c_str(), &st) != 0) return std::nullopt;
  return st.st_uid;
}

// A pidfd for `pid`; -1 with errno when it cannot be opened.
int pidfd_open(int pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

// The process whose exit ends a grant: the requester's session leader. Where the session began
// outside the service's PID namespace, getsid() says 0 (a container entered without a terminal,
// a CI runner): then the oldest ancestor of the requester the service can see, below the
// namespace's init — the process that entered the namespace, or the one its init started; the
// nearest thing to a session leader there. Not the parent: that is often a subshell that exits
// with the request (`out=$(gpuclk set …)`). Not the process group: a shell with job control makes
// `gpuclk set` its own group's leader.
struct Anchor {
  int pid = -1;
  bool session = true;  // else the oldest visible ancestor
  std::string text() const { return fmt::format("{} {}", session ? "session" : "process", pid); }
};

// nullopt: the requester is gone.
std::optional<Anchor> anchor_of(int requester) {
  if (requester <= 0) return std::nullopt;
  const int sid = ::getsid(requester);
  if (sid < 0) return std::nullopt;
  if (sid > 0) return Anchor{sid, true};
  int pid = requester;
  for (int depth = 0; depth < 128; ++depth) {
    const auto parent = host::parent_of(pid);
    if (!parent) return pid == requester ? std::nullopt : std::optional(Anchor{pid, false});
    if (*parent <= 1) break;
    pid = *parent;
  }
  return Anchor{pid, false};
}

// True while `anchor` is still the process it was when found (its pid not reused): the
// session's leader leads it; the ancestor is still above the waiting requester.
bool still_anchors(const Anchor& anchor, int requester) {
  if (anchor.session) return ::getsid(anchor.pid) == anchor.pid;
  return anchor.pid != requester && host::descends_from(requester, anchor.pid);
}

// When `pid` started, in clock ticks since boot (/proc/PID/stat's 22nd field); 0 when it is
// gone. With the pid, it names one process for good: a pid reused later has a later start.
unsigned long long started_at(int pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string text;
  if (!std::getline(in, text)) return 0;
  const auto close = text.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) return parse::try_unsigned(field, 1, ~0ULL).value_or(0);
  }
  return 0;
}

// Whether an answer line's report wrote a GPU setting (a change, or a rollback's undo).
bool wrote_settings(const std::string& line) {
  if (line.find("\"report\"") == std::string::npos) return false;
  const auto answer = json::parse(line, nullptr, false);
  if (answer.is_discarded() || !answer.value("ok", false)) return false;
  for (const auto& s : answer["report"].value("settings", json::array())) {
    const auto result = s.value("result", std::string());
    if (result == "changed" || result == "rolled back" || result == "ROLLBACK FAILED") return true;
  }
  return false;
}

// The command name of `pid` (/proc/PID/comm), or "?".
std::string command_of(int pid) {
  std::ifstream in(fmt::format("/proc/{}/comm", pid));
  std::string name;
  return std::getline(in, name) && !name.empty() ? name : "?";
}

}  // namespace

Delegation::Delegation(control::DelegationPolicy policy, std::vector<gpu::DeviceKey> gpus,
                       DelegateBackend backend, std::set<control::Setting> reserved,
                       std::string reserved_by)
    : policy_(std::move(policy)),
      gpus_(std::move(gpus)),
      backend_(std::move(backend)),
      reserved_(std::move(reserved)),
      reserved_by_(std::move(reserved_by)),
      job_lookup_(job_gpus_of),
      process_owner_(owner_of) {
  event_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (event_fd_ < 0)
    throw Error(ExitCode::other, fmt::format("eventfd(): {}", std::strerror(errno)));
}

Delegation::~Delegation() {
  stop();
  if (event_fd_ >= 0) ::close(event_fd_);
}

void Delegation::start() {
  worker_ = std::thread([this] {
    util::name_this_thread("gpuclk-delegate");
    loop();
  });
}

void Delegation::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(event_fd_, &one, sizeof one);
  if (worker_.joinable()) worker_.join();
}

Reply Delegation::answer(const json& request, const Peer& peer) {
  auto pending = std::make_shared<Pending>();
  {
    std::lock_guard lock(mutex_);
    if (stopping_)
      return {error_response("the service is stopping", static_cast<int>(ExitCode::other)),
              nullptr};
    if (queue_.size() >= kMaxQueued) {
      log(fmt::format("uid {} pid {}: {}: refused: {} requests already queued", peer.uid, peer.pid,
                      asked_text(request), queue_.size()));
      return {error_response(
                  fmt::format("busy: {} delegated requests are queued; try again", queue_.size()),
                  static_cast<int>(ExitCode::other)),
              nullptr};
    }
    queue_.push_back({request, peer, pending});
  }
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(event_fd_, &one, sizeof one);
  return {json(), std::make_unique<PendingStream>(pending, pending->mutex, pending->line)};
}

void Delegation::log(const std::string& line) const {
  std::cerr << "gpuclk serve: delegated: " + line + "\n" << std::flush;
}

void Delegation::save_holds() {
  if (!backend_.save_holds) return;
  json holds = json::array();
  for (const auto& [key, hold] : holds_) {
    json gpus = json::array();
    for (const auto& [pos, gpu] : hold.gpus) {
      gpus.push_back({{"uuid", gpus_[pos].uuid},
                      {"index", gpus_[pos].index},
                      {"before", json::parse(control::settings_to_json(gpu.before))},
                      {"applied", json::parse(control::settings_to_json(gpu.applied))},
                      {"drop_from_journal", gpu.drop_from_journal}});
    }
    holds.push_back({{"uid", hold.uid},
                     {"user", hold.user},
                     {"session", hold.session},
                     {"leads_session", hold.leads_session},
                     {"started", hold.started},
                     {"anchor", hold.anchor},
                     {"gpus", gpus}});
  }
  const json file = {{"version", 1}, {"boot_id", control::current_boot_id()}, {"holds", holds}};
  try {
    backend_.save_holds(file.dump(1) + "\n");
  } catch (const std::exception& e) {
    log(
        fmt::format("cannot save the grants to {}: {}; if the service dies now, root's `gpuclk "
                    "restore` puts them back",
                    backend_.holds_file, e.what()));
  }
}

void Delegation::recover_holds() {
  if (!backend_.load_holds) return;
  json file;
  try {
    const auto text = backend_.load_holds();
    if (!text) return;
    file = json::parse(*text);
    if (file.value("version", 0) != 1) throw std::runtime_error("not version 1");
  } catch (const std::exception& e) {
    log(
        fmt::format("{} cannot be read ({}): the grants of the service that ran before are not "
                    "known; root's `gpuclk restore` returns the GPUs to their original settings",
                    backend_.holds_file, e.what()));
    return;
  }
  // A reboot reset the GPUs: those grants hold nothing any more (the journal is moved aside).
  const bool same_boot = file.value("boot_id", std::string()) == control::current_boot_id();
  for (const auto& h : file.value("holds", json::array())) {
    try {
      Hold hold;
      hold.uid = h.at("uid").get<unsigned>();
      hold.user = h.at("user").get<std::string>();
      hold.session = h.at("session").get<int>();
      hold.leads_session = h.at("leads_session").get<bool>();
      hold.started = h.at("started").get<unsigned long long>();
      hold.anchor = h.at("anchor").get<std::string>();
      for (const auto& g : h.at("gpus")) {
        const auto uuid = g.at("uuid").get<std::string>();
        const auto it = std::find_if(gpus_.begin(), gpus_.end(),
                                     [&](const gpu::DeviceKey& k) { return k.uuid == uuid; });
        if (it == gpus_.end()) {
          log(fmt::format("uid {}: GPU {} of an earlier grant is not on this node any more",
                          hold.uid, uuid));
          continue;
        }
        GpuHold gpu;
        gpu.before = control::settings_from_json(g.at("before").dump());
        gpu.applied = control::settings_from_json(g.at("applied").dump());
        gpu.drop_from_journal = g.at("drop_from_journal").get<bool>();
        hold.gpus[static_cast<std::size_t>(it - gpus_.begin())] = gpu;
      }
      if (hold.gpus.empty() || !same_boot) continue;
      // Still the same process (not a pid reused since), and still what the grant ends with.
      const bool alive = hold.session > 0 && started_at(hold.session) == hold.started &&
                         (!hold.leads_session || ::getsid(hold.session) == hold.session);
      const int pidfd = alive ? pidfd_open(hold.session) : -1;
      const HoldKey key{hold.session, hold.uid};
      if (pidfd >= 0 && started_at(hold.session) == hold.started) {
        hold.pidfd = pidfd;
        log(
            fmt::format("uid {}{} {}: the grant on {} GPU(s) from before the restart is kept "
                        "while its {} lasts",
                        hold.uid, hold.user.empty() ? "" : " (" + hold.user + ")", hold.anchor,
                        hold.gpus.size(), hold.leads_session ? "session" : "process"));
        holds_[key] = std::move(hold);
      } else {
        if (pidfd >= 0) ::close(pidfd);
        release(hold, {}, "it ended while the service was down");
      }
    } catch (const std::exception& e) {
      log(
          fmt::format("{}: a grant cannot be read ({}); root's `gpuclk restore` puts its GPUs "
                      "back",
                      backend_.holds_file, e.what()));
    }
  }
  save_holds();
  publish();
}

void Delegation::loop() {
  recover_holds();
  std::vector<pollfd> fds;
  std::vector<HoldKey> sessions;
  while (true) {
    fds.clear();
    sessions.clear();
    fds.push_back({event_fd_, POLLIN, 0});
    for (const auto& [key, hold] : holds_) {
      fds.push_back({hold.pidfd, POLLIN, 0});
      sessions.push_back(key);
    }
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) {
      // Not expected (the fds are ours); keep serving rather than strand queued requests.
      log(fmt::format("poll(): {}", std::strerror(errno)));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (fds[0].revents & POLLIN) {
      std::uint64_t count = 0;
      [[maybe_unused]] auto n = ::read(event_fd_, &count, sizeof count);
    }
    for (std::size_t i = 1; i < fds.size(); ++i)
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        session_ended(sessions[i - 1]);
        save_holds();
        if (changed_) changed_();
        publish();
      }
    std::deque<Job> jobs;
    bool stopping = false;
    {
      std::lock_guard lock(mutex_);
      jobs.swap(queue_);
      stopping = stopping_;
    }
    for (auto& job : jobs) {
      auto line =
          stopping
              ? error_response("the service is stopping", static_cast<int>(ExitCode::other)).dump()
              : run(job).dump();
      save_holds();
      if (changed_ && wrote_settings(line)) changed_();
      publish();
      {
        std::lock_guard lock(job.reply->mutex);
        job.reply->line = std::move(line);
      }
      if (wake_) wake_();
    }
    if (stopping) break;
  }
  // The service stops: nobody watches the sessions any more, so their settings go back now.
  for (auto& [key, hold] : holds_) {
    release(hold, {}, "the service stops");
    if (hold.pidfd >= 0) ::close(hold.pidfd);
  }
  holds_.clear();
  save_holds();
  publish();
}

void Delegation::count(bool granted) {
  std::lock_guard lock(published_mutex_);
  ++(granted ? granted_ : refused_);
}

void Delegation::publish() {
  std::vector<std::pair<std::size_t, unsigned>> held;
  for (const auto& [key, hold] : holds_)
    for (const auto& [pos, gpu] : hold.gpus) held.emplace_back(pos, hold.uid);
  std::lock_guard lock(published_mutex_);
  held_by_ = std::move(held);
}

std::vector<ExtraSeries> Delegation::series() const {
  std::lock_guard lock(published_mutex_);
  std::vector<ExtraSeries> out;
  for (const auto& [verdict, n] : {std::pair{"granted", granted_}, std::pair{"refused", refused_}})
    out.push_back({"gpuclk_delegated_requests_total",
                   "Delegated set/restore requests from users who are not root, by verdict",
                   true,
                   std::nullopt,
                   {{"verdict", verdict}},
                   static_cast<double>(n)});
  for (std::size_t pos = 0; pos < gpus_.size(); ++pos) {
    double held = 0;
    std::string uid;
    for (const auto& [p, u] : held_by_)
      if (p == pos) {
        held = 1;
        uid = std::to_string(u);
      }
    out.push_back({"gpuclk_delegated_held",
                   "1 while a user who is not root holds settings of the GPU through the service",
                   false,
                   pos,
                   {{"uid", uid}},
                   held});
  }
  return out;
}

json Delegation::run(const Job& job) {
  control::Identity who{job.peer.uid, job.peer.gid, job.peer.groups, user_name(job.peer.uid)};
  const auto prefix = fmt::format("{} pid {}", who_text(who), job.peer.pid);
  try {
    if (!job.request.is_object()) throw bad_argument("a request is a JSON object");
    if (job.request.value("v", kProtocolVersion) != kProtocolVersion)
      throw bad_argument("protocol version not spoken",
                         fmt::format("this service speaks version {}", kProtocolVersion));
    const auto what = job.request.value("request", std::string());
    auto response = what == "set" ? run_set(job.request, job.peer, who)
                                  : run_restore(job.request, job.peer, who);
    count(true);
    return response;
  } catch (const Refusal& r) {
    count(false);
    log(fmt::format("{}: {}: refused (rule '{}', exit {}): {}", prefix, asked_text(job.request),
                    r.rule, static_cast<int>(r.code), r.message));
    return refusal_response(r);
  } catch (const Error& e) {
    count(false);
    log(fmt::format("{}: {}: refused (exit {}): {}", prefix, asked_text(job.request),
                    static_cast<int>(e.code()), e.what()));
    auto r = error_response(e.what(), static_cast<int>(e.code()));
    if (!e.hint().empty()) r["hint"] = e.hint();
    return r;
  } catch (const std::exception& e) {
    count(false);
    log(fmt::format("{}: {}: refused (exit 2): bad request: {}", prefix, asked_text(job.request),
                    e.what()));
    return error_response(std::string("bad request: ") + e.what(),
                          static_cast<int>(ExitCode::bad_argument));
  }
}

std::vector<std::size_t> Delegation::positions(const json& request) const {
  std::vector<std::size_t> out;
  if (!request.contains("gpus")) {
    for (std::size_t i = 0; i < gpus_.size(); ++i) out.push_back(i);
    return out;
  }
  const auto& list = request.at("gpus");
  if (!list.is_array() || list.empty())
    throw bad_argument("gpus must be a list of GPU indexes (an empty list is never all)");
  std::set<std::size_t> seen;
  for (const auto& g : list) {
    std::size_t pos = gpus_.size();
    for (std::size_t i = 0; i < gpus_.size(); ++i)
      if (g.is_number_unsigned() && g.get<std::uint64_t>() == gpus_[i].index) pos = i;
    if (pos == gpus_.size())
      throw Error(ExitCode::gpu_not_found,
                  fmt::format("no GPU {} on this node ({})", parse::quote(g.dump(), 40),
                              text::counted(gpus_.size(), "GPU")));
    if (seen.insert(pos).second) out.push_back(pos);
  }
  return out;
}

json Delegation::run_set(const json& request, const Peer& peer, const control::Identity& who) {
  const auto settings = request_of(request.contains("settings") ? request.at("settings") : json());
  const bool snap = flag(request, "snap");
  const bool dry_run = flag(request, "dry_run");
  const bool settle = !request.contains("settle") || flag(request, "settle");
  const auto asked = positions(request);
  for (auto s : control::kWriteOrder) {
    if (settings.has(s) && reserved_.count(s))
      throw Refusal{
          ExitCode::no_permission, "service",
          fmt::format("{} is kept by the service itself ({})", control::label_of(s), reserved_by_),
          "ask the node's admin"};
  }
  if (control::rules_for(policy_, who).empty()) {
    const auto v = control::check(policy_, who, {});
    throw Refusal{ExitCode::no_permission, v.rule, "refused (rule 'none'): " + v.reason,
                  "ask the node's admin to add a [[rule]] for you to " + policy_.source};
  }
  // What the grant is tied to: the requesting process's session, while its leader lives.
  const auto anchor = anchor_of(peer.pid);
  if (!anchor)
    throw Refusal{ExitCode::no_permission,
                  "session",
                  fmt::format("the requesting process (pid {}) is gone", peer.pid),
                  {}};
  if (process_owner_ && process_owner_(peer.pid) != std::optional<unsigned>(peer.uid))
    throw Refusal{
        ExitCode::no_permission,
        "session",
        fmt::format("the requesting process (pid {}) is no longer uid {}'s", peer.pid, peer.uid),
        {}};
  const int session = anchor->pid;
  const HoldKey key{session, who.uid};
  for (auto pos : asked) {
    for (const auto& [other, hold] : holds_) {
      if (other == key || !hold.gpus.count(pos)) continue;
      throw Refusal{
          ExitCode::no_permission,
          "holder",
          fmt::format("GPU {} is held by {} (uid {}), {}: refused until that ends or its user "
                      "runs `gpuclk restore`",
                      gpus_[pos].index, hold.user.empty() ? "?" : hold.user, hold.uid, hold.anchor),
          {}};
    }
  }
  // Rules with gpus = "job": the GPUs of the Slurm job the requester runs in, as the service
  // can verify them (slurm_job.h).
  control::Identity asker = who;
  if (control::needs_job(policy_, who)) {
    auto job = job_lookup_(peer.pid, who.uid);
    asker.job = job.job;
    asker.job_gpus = job.gpus;
    asker.job_problem = job.problem;
  }
  auto checked = backend_.validate(asked, settings, snap);
  std::vector<control::DelegatedTarget> targets;
  for (std::size_t i = 0; i < asked.size(); ++i)
    targets.push_back({gpus_[asked[i]].index, checked.targets[i]});
  const auto verdict = control::check(policy_, asker, targets);
  if (!verdict.granted)
    throw Refusal{
        ExitCode::no_permission,
        verdict.rule,
        fmt::format("refused by rule '{}' of {}: {}", verdict.rule, policy_.source, verdict.reason),
        {}};

  Hold* hold = nullptr;
  int new_pidfd = -1;
  if (!dry_run) {
    if (auto it = holds_.find(key); it != holds_.end()) {
      hold = &it->second;
    } else {
      if (!anchor->session && session == peer.pid)
        throw Refusal{ExitCode::no_permission, "session",
                      fmt::format("the requesting process (pid {}) began its session outside "
                                  "the service's PID namespace and has no parent inside it: "
                                  "nothing would outlive the request, and a grant ends with its "
                                  "session",
                                  peer.pid),
                      "run gpuclk from a shell (`sh -c 'gpuclk set …; exec sleep infinity'` "
                      "in a container)"};
      new_pidfd = pidfd_open(session);
      // The anchor must still be the process found above (its pid not reused meanwhile).
      if (new_pidfd < 0 || !still_anchors(*anchor, peer.pid)) {
        const int err = errno;
        if (new_pidfd >= 0) ::close(new_pidfd);
        throw Refusal{
            ExitCode::no_permission, "session",
            fmt::format("the {} cannot be watched ({}): a grant ends with it", anchor->text(),
                        new_pidfd < 0 ? std::strerror(err)
                                      : (anchor->session ? "not a leader" : "not an ancestor")),
            "run gpuclk from a login shell or a job step (a session with a leader)"};
      }
    }
  }
  const auto command =
      fmt::format("set (delegated: {}, pid {}, {})", who_text(who), peer.pid, anchor->text());
  DelegateBackend::Applied applied;
  try {
    applied = backend_.apply(asked, checked.targets, command, dry_run, settle);
  } catch (...) {
    if (new_pidfd >= 0) ::close(new_pidfd);
    throw;
  }
  if (new_pidfd >= 0) {
    hold = &holds_[key];
    hold->uid = who.uid;
    hold->user = who.user;
    hold->session = session;
    hold->anchor = anchor->text();
    hold->leads_session = anchor->session;
    hold->started = started_at(session);
    hold->pidfd = new_pidfd;
  }
  if (hold) {
    for (std::size_t i = 0; i < asked.size(); ++i) {
      const auto& uuid = gpus_[asked[i]].uuid;
      bool written = false;
      for (const auto& s : applied.report.settings)
        written = written || (s.uuid == uuid && (s.outcome == control::Outcome::changed ||
                                                 s.outcome == control::Outcome::rollback_failed));
      if (!written) continue;
      auto [it, fresh] = hold->gpus.try_emplace(asked[i]);
      if (fresh) it->second.drop_from_journal = !applied.journaled[i];
      for (auto s : control::kWriteOrder) {  // the first value this session found goes back
        if (applied.before[i].has(s) && !it->second.before.has(s))
          it->second.before.copy_from(applied.before[i], s);
        if (checked.targets[i].has(s)) it->second.applied.copy_from(checked.targets[i], s);
      }
    }
    if (hold->gpus.empty()) {
      ::close(hold->pidfd);
      holds_.erase(key);
    }
  }
  auto report = applied.report;
  report.notes.insert(report.notes.begin(), checked.notes.begin(), checked.notes.end());
  log(fmt::format("{} pid {} {}: {}: granted by rule '{}'{}: {} setting(s) changed, exit {}",
                  who_text(who), peer.pid, anchor->text(), asked_text(request), verdict.rule,
                  dry_run ? " (dry run)" : "", report.count(control::Outcome::changed),
                  static_cast<int>(report.exit)));
  auto r = json{{"v", kProtocolVersion}, {"ok", true}};
  r["rule"] = verdict.rule;
  r["session"] = session;
  r["held_until"] = anchor->session
                        ? fmt::format("this session (leader pid {}) ends", session)
                        : fmt::format("process {} ({}) ends", session, command_of(session));
  r["journal"] = backend_.journal;
  r["report"] = to_json(report);
  return r;
}

json Delegation::run_restore(const json& request, const Peer& peer, const control::Identity& who) {
  std::set<std::size_t> only;
  if (request.contains("gpus"))
    for (auto p : positions(request)) only.insert(p);
  control::ChangeReport all;
  std::vector<HoldKey> emptied;
  for (auto& [key, hold] : holds_) {
    if (hold.uid != who.uid) continue;
    all.append(release(hold, only, fmt::format("gpuclk restore by pid {}", peer.pid)));
    if (hold.gpus.empty()) emptied.push_back(key);
  }
  for (const auto& s : emptied) {
    ::close(holds_[s].pidfd);
    holds_.erase(s);
  }
  log(fmt::format("{} pid {}: {}: {} setting(s) put back, exit {}", who_text(who), peer.pid,
                  asked_text(request), all.count(control::Outcome::changed),
                  static_cast<int>(all.exit)));
  auto r = json{{"v", kProtocolVersion}, {"ok", true}};
  r["rule"] = "owner";
  r["journal"] = backend_.journal;
  r["report"] = to_json(all);
  return r;
}

control::ChangeReport Delegation::release(Hold& hold, const std::set<std::size_t>& only,
                                          const std::string& why) {
  std::vector<DelegateBackend::PutBack> back;
  for (auto it = hold.gpus.begin(); it != hold.gpus.end();) {
    if (!only.empty() && !only.count(it->first)) {
      ++it;
      continue;
    }
    back.push_back(
        {it->first, it->second.before, it->second.applied, it->second.drop_from_journal});
    it = hold.gpus.erase(it);
  }
  if (back.empty()) return {};
  const auto command = fmt::format("restore (delegated: uid {}{}, {}: {})", hold.uid,
                                   hold.user.empty() ? "" : " " + hold.user, hold.anchor, why);
  control::ChangeReport report;
  try {
    report = backend_.put_back(back, command);
  } catch (const Error& e) {
    report.exit = e.code();
    report.error = e.what();
    report.hint = e.hint();
  } catch (const std::exception& e) {  // the worker must go on: the journal keeps the rest
    report.exit = ExitCode::other;
    report.error = e.what();
    report.hint = "run `gpuclk restore` as root (the journal keeps the original settings)";
  }
  std::string gpus;
  for (const auto& b : back)
    gpus += (gpus.empty() ? "" : ",") + std::to_string(gpus_[b.position].index);
  for (const auto& note : report.notes) log(fmt::format("uid {}: {}", hold.uid, note));
  log(fmt::format("uid {}{} {}: {}: GPUs {} put back: {} setting(s) written, exit {}{}", hold.uid,
                  hold.user.empty() ? "" : " (" + hold.user + ")", hold.anchor, why, gpus,
                  report.count(control::Outcome::changed), static_cast<int>(report.exit),
                  report.error.empty() ? "" : ": " + report.error));
  return report;
}

void Delegation::session_ended(const HoldKey& key) {
  auto it = holds_.find(key);
  if (it == holds_.end()) return;
  release(it->second, {},
          it->second.anchor.starts_with("session") ? "the session ended" : "the process ended");
  if (it->second.pidfd >= 0) ::close(it->second.pidfd);
  holds_.erase(it);
}

}  // namespace gpuclk::serve
