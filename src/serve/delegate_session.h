// The processes a delegated grant is tied to (delegate.h): who asked, the session (or ancestor)
// whose exit ends the grant, and the facts from /proc that say a pid is still the same process.
// Linux only; every function reads /proc or asks the kernel now (nothing is cached).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace gpuclk::serve::session {

// The process whose exit ends a grant: the requester's session leader. Where the session began
// outside the service's PID namespace, getsid() says 0 (a container entered without a terminal,
// a CI runner): then the oldest ancestor of the requester the service can see, below the
// namespace's init — the process that entered the namespace, or the one its init started; the
// nearest thing to a session leader there. Not the parent: that is often a subshell that exits
// with the request (`out=$(gpuclk set …)`). Not the process group: a shell with job control makes
// `gpuclk set` its own group's leader.
struct Anchor {
  int pid = -1;
  bool session = true;       // else the oldest visible ancestor
  std::string text() const;  // "session 4242", "process 4242"
};

// nullopt: the requester is gone.
std::optional<Anchor> anchor_of(int requester);

// True while `anchor` is still the process it was when found (its pid not reused): the
// session's leader leads it; the ancestor is still above the waiting requester.
bool still_anchors(const Anchor& anchor, int requester);

// When `pid` started, in clock ticks since boot (/proc/PID/stat's 22nd field); 0 when it is
// gone. With the pid, it names one process for good: a pid reused later has a later start.
unsigned long long started_at(int pid);

// A pidfd for `pid`; -1 with errno when it cannot be opened.
int pidfd_open(int pid);

// The uid that owns process `pid` (/proc/PID's owner); nullopt when it is gone.
std::optional<unsigned> owner_of(pid_t pid);

// The command name of `pid` (/proc/PID/comm), or "?".
std::string command_of(int pid);

// The login name of `uid`; empty when it has none.
std::string user_name(unsigned uid);

}  // namespace gpuclk::serve::session
