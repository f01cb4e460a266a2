#include "serve/delegate_session.h"

#include <fmt/format.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "host/child_process.h"
#include "util/parse.h"

namespace gpuclk::serve::session {

std::string Anchor::text() const {
  return fmt::format("{} {}", session ? "session" : "process", pid);
}

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

bool still_anchors(const Anchor& anchor, int requester) {
  if (anchor.session) return ::getsid(anchor.pid) == anchor.pid;
  return anchor.pid != requester && host::descends_from(requester, anchor.pid);
}

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

int pidfd_open(int pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

std::optional<unsigned> owner_of(pid_t pid) {
  struct stat st {};
  if (::stat(fmt::format("/proc/{}", pid).c_str(), &st) != 0) return std::nullopt;
  return st.st_uid;
}

std::string command_of(int pid) {
  std::ifstream in(fmt::format("/proc/{}/comm", pid));
  std::string name;
  return std::getline(in, name) && !name.empty() ? name : "?";
}

std::string user_name(unsigned uid) {
  passwd pw{}, *out = nullptr;
  std::vector<char> buf(16384);
  if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &out) != 0 || !out) return {};
  return out->pw_name;
}

}  // namespace gpuclk::serve::session
