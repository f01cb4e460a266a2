// Delegation's grants as others see them: on disk (delegated.json beside the journal), saved
// after every change and recovered when the worker starts, so that a service that crashed or
// restarted still puts back what its sessions were granted (live sessions are watched again,
// ended ones put back); and on /metrics (requests by verdict, who holds which GPU).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "control/journal.h"
#include "control/journal_store.h"
#include "serve/delegate.h"
#include "serve/delegate_session.h"

namespace gpuclk::serve {

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
      const bool alive = hold.session > 0 && session::started_at(hold.session) == hold.started &&
                         (!hold.leads_session || ::getsid(hold.session) == hold.session);
      const int pidfd = alive ? session::pidfd_open(hold.session) : -1;
      const HoldKey key{hold.session, hold.uid};
      if (pidfd >= 0 && session::started_at(hold.session) == hold.started) {
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

}  // namespace gpuclk::serve
