// Delegated settings: `set` and `restore` requests from users who are not root, over the
// service's socket (docs/serve.md, "Delegated settings"). The user is who SO_PEERCRED says, never
// what the request says; the admin's policy (control/delegation.h) decides; the writes go
// through src/control with the journal (the backend, given by the command layer, which owns the
// journal session); each grant is tied to the requesting process's session and put back when
// that session's leader exits, when the user sends `restore`, or when the service stops.
//
// One worker thread does everything that touches a GPU or the holds: it takes requests from a
// bounded queue, and waits on the session leaders' pidfds (pidfd_open) at the same time. The
// socket's poll thread never blocks on it: a request gets a Stream whose one line is ready
// when the worker has answered (`wake` tells the poll thread). Every grant, refusal and put-back
// is one line in the service's log (stderr) with the uid, the request and the verdict.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "control/delegation.h"
#include "control/report.h"
#include "control/request.h"
#include "control/settings.h"
#include "gpu/selection.h"
#include "serve/delegate_session.h"
#include "serve/service.h"
#include "serve/slurm_job.h"

namespace gpuclk::serve {

// What the command layer does for the delegation: GPUs are service positions.
struct DelegateBackend {
  struct Checked {
    std::vector<control::Settings> targets;  // per position asked, exact (validate())
    std::vector<std::string> notes;
  };
  struct Applied {
    control::ChangeReport report;
    std::vector<control::Settings> before;  // per position: the targeted settings as they were
    std::vector<bool> journaled;            // the journal listed the GPU before this change
  };
  struct PutBack {
    std::size_t position = 0;
    control::Settings settings;  // write these back…
    // …where the GPU still has what the session set: a setting someone else changed since
    // (root's `gpuclk set`) is left as it is.
    control::Settings expected;
    bool drop_from_journal = false;  // the journal had no entry before: restore() it whole
  };
  // Checks the request against each GPU; throws Error (exit 2, 3) as `gpuclk set` does.
  std::function<Checked(const std::vector<std::size_t>&, const control::Request&, bool snap)>
      validate;
  // Applies journaled with `command` in the journal's history; throws Error when it cannot start.
  // `settle`: wait for written clocks to take effect before reading them back (a governor's
  // writes do not).
  std::function<Applied(const std::vector<std::size_t>&, const std::vector<control::Settings>&,
                        const std::string& command, bool dry_run, bool settle)>
      apply;
  std::function<control::ChangeReport(const std::vector<PutBack>&, const std::string& command)>
      put_back;
  std::string journal;  // the journal file, for the answers
  // The grants, kept beside the journal so that a service that crashed finds them when it starts
  // again (delegated.json in the state directory): save replaces the file atomically; load is
  // nullopt when there is none. Either may throw Error. Empty: grants live in memory only.
  std::function<void(const std::string& text)> save_holds;
  std::function<std::optional<std::string>()> load_holds;
  std::string holds_file;  // for messages
};

class Delegation {
 public:
  static constexpr std::size_t kMaxQueued = 64;

  // `gpus`: the service's GPUs by position. `reserved`: settings the service itself keeps
  // (--govern's clock lock, --profile's settings), refused to every user, `reserved_by` says who.
  Delegation(control::DelegationPolicy policy, std::vector<gpu::DeviceKey> gpus,
             DelegateBackend backend, std::set<control::Setting> reserved = {},
             std::string reserved_by = {});
  ~Delegation();
  Delegation(const Delegation&) = delete;
  Delegation& operator=(const Delegation&) = delete;

  // Called when an answer is ready (the socket server's wake()); set before start().
  void set_wake(std::function<void()> wake) { wake_ = std::move(wake); }
  // Called on the worker after a GPU's settings changed (a grant, a put-back) and before the
  // answer goes out: the service re-reads them (Service::settings_changed).
  void set_changed(std::function<void()> changed) { changed_ = std::move(changed); }
  // The uid that owns a process (/proc/PID's owner; tests replace it): a requester whose pid no
  // longer belongs to the uid that connected (it exited and the pid was reused) is refused.
  void set_process_owner(std::function<std::optional<unsigned>(pid_t)> owner) {
    process_owner_ = std::move(owner);
  }
  // How a requester's Slurm job GPUs are found (slurm_job.h's job_gpus_of; tests replace it).
  void set_job_lookup(std::function<JobGpus(pid_t, unsigned)> lookup) {
    job_lookup_ = std::move(lookup);
  }
  void start();
  // Puts back every GPU a session still holds, then stops the worker. Idempotent.
  void stop();

  // A `set` or `restore` request: its answer comes as a one-line Stream (or an error at once).
  Reply answer(const json& request, const Peer& peer);
  static bool handles(const std::string& request) {
    return request == "set" || request == "restore";
  }
  const std::string& policy_source() const { return policy_.source; }
  // For /metrics (any thread): requests granted and refused, and who holds which GPU.
  std::vector<ExtraSeries> series() const;

 private:
  struct Pending;
  struct Job {
    json request;
    Peer peer;
    std::shared_ptr<Pending> reply;
  };
  struct GpuHold {
    control::Settings before;   // what to write back
    control::Settings applied;  // what the session set last
    bool drop_from_journal = false;
  };
  struct Hold {  // one session's grants
    unsigned uid = 0;
    std::string user;
    int session = 0;            // the pid whose exit ends the grants (the session's leader, mostly)
    std::string anchor;         // that process, in words: "session 4242", "parent process 4242"
    bool leads_session = true;  // `session` leads its session (else: an ancestor)
    unsigned long long started = 0;  // its start time (/proc/PID/stat), against pid reuse
    int pidfd = -1;
    std::map<std::size_t, GpuHold> gpus;  // by position
  };

  using HoldKey = std::pair<int, unsigned>;  // Hold::session, uid

  void loop();
  json run(const Job& job);
  // A `set`, in phases (delegate.cpp): read, admit, decide, watch the session, apply and keep
  // the grant, answer.
  json run_set(const json& request, const Peer& peer, const control::Identity& who);
  session::Anchor admit(const control::Request& settings, const std::vector<std::size_t>& asked,
                        const Peer& peer, const control::Identity& who) const;
  control::Identity asker_of(const Peer& peer, const control::Identity& who) const;
  control::Verdict decide(const std::vector<std::size_t>& asked,
                          const DelegateBackend::Checked& checked,
                          const control::Identity& asker) const;
  int watch_session(const HoldKey& key, const session::Anchor& anchor, const Peer& peer) const;
  void keep_grant(const HoldKey& key, const session::Anchor& anchor, int new_pidfd,
                  const control::Identity& who, const std::vector<std::size_t>& asked,
                  const std::vector<control::Settings>& targets,
                  const DelegateBackend::Applied& applied);
  json run_restore(const json& request, const Peer& peer, const control::Identity& who);
  // Writes back the GPUs of `hold` (all, or these positions); drops them from it.
  control::ChangeReport release(Hold& hold, const std::set<std::size_t>& only,
                                const std::string& why);
  void session_ended(const HoldKey& key);
  // The holds to and from backend_'s file (delegate_holds.cpp): saved after every change,
  // recovered when the worker starts (live sessions watched again, ended ones put back).
  void save_holds();
  void recover_holds();
  std::vector<std::size_t> positions(const json& request) const;
  void log(const std::string& line) const;

  control::DelegationPolicy policy_;
  std::vector<gpu::DeviceKey> gpus_;
  DelegateBackend backend_;
  std::set<control::Setting> reserved_;
  std::string reserved_by_;
  std::function<void()> wake_;
  std::function<void()> changed_;
  std::function<JobGpus(pid_t, unsigned)> job_lookup_;
  std::function<std::optional<unsigned>(pid_t)> process_owner_;

  std::mutex mutex_;  // the queue and stopping_
  std::deque<Job> queue_;
  bool stopping_ = false;
  int event_fd_ = -1;  // wakes the worker: a job is queued, or stop
  std::thread worker_;

  std::map<HoldKey, Hold> holds_;  // the worker's only
  void publish();                  // copies who holds what for series()
  void count(bool granted);

  mutable std::mutex published_mutex_;
  std::uint64_t granted_ = 0, refused_ = 0;                // under published_mutex_
  std::vector<std::pair<std::size_t, unsigned>> held_by_;  // position, uid; under it too
};

}  // namespace gpuclk::serve
