#include "serve/client.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "serve/protocol.h"
#include "util/error.h"

namespace gpuclk::serve {

std::unique_ptr<Client> Client::connect(const std::string& path) {
  sockaddr_un addr{};
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) return nullptr;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return nullptr;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return nullptr;
  }
  // A service that hangs must not hang the command: 10 s per read or write.
  timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  return std::unique_ptr<Client>(new Client(fd, path));
}

Client::~Client() { ::close(fd_); }

nlohmann::json Client::request(nlohmann::json request) {
  request["v"] = kProtocolVersion;
  auto line = request.dump() + '\n';
  auto fail = [this](const char* what) {
    return Error(ExitCode::other,
                 fmt::format("the service on {} {}: {}", path_, what, std::strerror(errno)),
                 "use --direct to read the GPUs without it");
  };
  for (std::size_t sent = 0; sent < line.size();) {
    auto n = ::send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) throw fail("did not take the request");
    sent += static_cast<std::size_t>(n);
  }
  std::size_t nl;
  char buffer[64 * 1024];
  while ((nl = pending_.find('\n')) == std::string::npos) {
    auto n = ::recv(fd_, buffer, sizeof buffer, 0);
    if (n == 0) errno = ECONNRESET;
    if (n <= 0) throw fail("did not answer");
    pending_.append(buffer, static_cast<std::size_t>(n));
  }
  auto response = nlohmann::json::parse(pending_.substr(0, nl), nullptr, false);
  pending_.erase(0, nl + 1);
  if (response.is_discarded() || !response.is_object())
    throw Error(ExitCode::other, fmt::format("the service on {} sent a malformed response", path_));
  if (!response.value("ok", false)) {
    auto code = response.value("code", static_cast<int>(ExitCode::other));
    throw Error(static_cast<ExitCode>(code),
                "service: " + response.value("error", std::string("unknown error")),
                response.value("hint", std::string()));
  }
  return response;
}

}  // namespace gpuclk::serve
