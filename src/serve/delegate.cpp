#include "serve/delegate.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>

#include "control/journal.h"
#include "serve/delegate_session.h"
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
      process_owner_(session::owner_of) {
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

json Delegation::run(const Job& job) {
  control::Identity who{job.peer.uid, job.peer.gid, job.peer.groups,
                        session::user_name(job.peer.uid)};
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

// run_set's phase 2, admit: refusals that need no value checked (a setting the service keeps, no
// rule for this user, a requester gone or no longer theirs, a GPU another session holds), and
// what the grant would be tied to.
session::Anchor Delegation::admit(const control::Request& settings,
                                  const std::vector<std::size_t>& asked, const Peer& peer,
                                  const control::Identity& who) const {
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
  const auto anchor = session::anchor_of(peer.pid);
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
  const HoldKey key{anchor->pid, who.uid};
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
  return *anchor;
}

// Who the policy judges: the requester, with the GPUs of the Slurm job it runs in where a rule
// says gpus = "job" (as the service can verify them: slurm_job.h).
control::Identity Delegation::asker_of(const Peer& peer, const control::Identity& who) const {
  control::Identity asker = who;
  if (control::needs_job(policy_, who)) {
    auto job = job_lookup_(peer.pid, who.uid);
    asker.job = job.job;
    asker.job_gpus = job.gpus;
    asker.job_problem = job.problem;
  }
  return asker;
}

// run_set's phase 3, decide: the policy's verdict on the exact targets.
control::Verdict Delegation::decide(const std::vector<std::size_t>& asked,
                                    const DelegateBackend::Checked& checked,
                                    const control::Identity& asker) const {
  std::vector<control::DelegatedTarget> targets;
  for (std::size_t i = 0; i < asked.size(); ++i)
    targets.push_back({gpus_[asked[i]].index, checked.targets[i]});
  auto verdict = control::check(policy_, asker, targets);
  if (!verdict.granted)
    throw Refusal{
        ExitCode::no_permission,
        verdict.rule,
        fmt::format("refused by rule '{}' of {}: {}", verdict.rule, policy_.source, verdict.reason),
        {}};
  return verdict;
}

// run_set's phase 4, watch: a session that holds nothing yet gets a pidfd on its anchor (returned;
// -1 where the session already holds GPUs), refused where nothing would outlive the request or
// the anchor cannot be watched.
int Delegation::watch_session(const HoldKey& key, const session::Anchor& anchor,
                              const Peer& peer) const {
  if (holds_.count(key)) return -1;
  if (!anchor.session && anchor.pid == peer.pid)
    throw Refusal{ExitCode::no_permission, "session",
                  fmt::format("the requesting process (pid {}) began its session outside "
                              "the service's PID namespace and has no parent inside it: "
                              "nothing would outlive the request, and a grant ends with its "
                              "session",
                              peer.pid),
                  "run gpuclk from a shell (`sh -c 'gpuclk set …; exec sleep infinity'` "
                  "in a container)"};
  const int pidfd = session::pidfd_open(anchor.pid);
  // The anchor must still be the process found above (its pid not reused meanwhile).
  if (pidfd < 0 || !session::still_anchors(anchor, peer.pid)) {
    const int err = errno;
    if (pidfd >= 0) ::close(pidfd);
    throw Refusal{ExitCode::no_permission, "session",
                  fmt::format("the {} cannot be watched ({}): a grant ends with it", anchor.text(),
                              pidfd < 0 ? std::strerror(err)
                                        : (anchor.session ? "not a leader" : "not an ancestor")),
                  "run gpuclk from a login shell or a job step (a session with a leader)"};
  }
  return pidfd;
}

// run_set's phase 5, after the writes: the session's hold (a new one on `new_pidfd`) keeps, per GPU
// written, the first value this session found (what goes back) and what it set last.
void Delegation::keep_grant(const HoldKey& key, const session::Anchor& anchor, int new_pidfd,
                            const control::Identity& who, const std::vector<std::size_t>& asked,
                            const std::vector<control::Settings>& targets,
                            const DelegateBackend::Applied& applied) {
  Hold& h = holds_[key];
  if (new_pidfd >= 0) {
    h.uid = who.uid;
    h.user = who.user;
    h.session = anchor.pid;
    h.anchor = anchor.text();
    h.leads_session = anchor.session;
    h.started = session::started_at(anchor.pid);
    h.pidfd = new_pidfd;
  }
  for (std::size_t i = 0; i < asked.size(); ++i) {
    const auto& uuid = gpus_[asked[i]].uuid;
    bool written = false;
    for (const auto& s : applied.report.settings)
      written = written || (s.uuid == uuid && (s.outcome == control::Outcome::changed ||
                                               s.outcome == control::Outcome::rollback_failed));
    if (!written) continue;
    auto [it, fresh] = h.gpus.try_emplace(asked[i]);
    if (fresh) it->second.drop_from_journal = !applied.journaled[i];
    for (auto s : control::kWriteOrder) {  // the first value this session found goes back
      if (applied.before[i].has(s) && !it->second.before.has(s))
        it->second.before.copy_from(applied.before[i], s);
      if (targets[i].has(s)) it->second.applied.copy_from(targets[i], s);
    }
  }
  if (h.gpus.empty()) {
    ::close(h.pidfd);
    holds_.erase(key);
  }
}

json Delegation::run_set(const json& request, const Peer& peer, const control::Identity& who) {
  // Phase 1, read: what to write, where, and how.
  const auto settings = request_of(request.contains("settings") ? request.at("settings") : json());
  const bool snap = flag(request, "snap");
  const bool dry_run = flag(request, "dry_run");
  const bool settle = !request.contains("settle") || flag(request, "settle");
  const auto asked = positions(request);
  // Phases 2 and 3: admit the requester, check the values on each GPU, the policy's verdict.
  const auto anchor = admit(settings, asked, peer, who);
  const HoldKey key{anchor.pid, who.uid};
  const auto asker = asker_of(peer, who);
  auto checked = backend_.validate(asked, settings, snap);
  const auto verdict = decide(asked, checked, asker);
  // Phase 4, watch the session a grant would end with (nothing to watch in a dry run).
  const int new_pidfd = dry_run ? -1 : watch_session(key, anchor, peer);
  // Phase 5, apply, journaled; then hold what was written for the session.
  const auto command =
      fmt::format("set (delegated: {}, pid {}, {})", who_text(who), peer.pid, anchor.text());
  DelegateBackend::Applied applied;
  try {
    applied = backend_.apply(asked, checked.targets, command, dry_run, settle);
  } catch (...) {
    if (new_pidfd >= 0) ::close(new_pidfd);
    throw;
  }
  if (!dry_run) keep_grant(key, anchor, new_pidfd, who, asked, checked.targets, applied);
  // Phase 6, answer: the log's line and the reply.
  auto report = applied.report;
  report.notes.insert(report.notes.begin(), checked.notes.begin(), checked.notes.end());
  log(fmt::format("{} pid {} {}: {}: granted by rule '{}'{}: {} setting(s) changed, exit {}",
                  who_text(who), peer.pid, anchor.text(), asked_text(request), verdict.rule,
                  dry_run ? " (dry run)" : "", report.count(control::Outcome::changed),
                  static_cast<int>(report.exit)));
  auto r = json{{"v", kProtocolVersion}, {"ok", true}};
  r["rule"] = verdict.rule;
  r["session"] = anchor.pid;
  r["held_until"] = anchor.session ? fmt::format("this session (leader pid {}) ends", anchor.pid)
                                   : fmt::format("process {} ({}) ends", anchor.pid,
                                                 session::command_of(anchor.pid));
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
