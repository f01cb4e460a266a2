#include "serve/client.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>

#include "serve/protocol.h"
#include "util/error.h"

namespace gpuclk::serve {

namespace {

// A connected socket to `path`, or -1.
int open_socket(const std::string& path) {
  sockaddr_un addr{};
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) return -1;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  // A service that hangs must not hang the command: 10 s per read or write, and for the
  // connection itself (a Unix socket's connect waits while the service's backlog is full).
  timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

std::unique_ptr<Client> Client::connect(const std::string& path) {
  const int fd = open_socket(path);
  if (fd < 0) return nullptr;
  return std::unique_ptr<Client>(new Client(fd, path));
}

Client::~Client() { ::close(fd_); }

Error Client::failure(const char* what) const {
  return Error(ExitCode::other,
               fmt::format("the service on {} {}: {}", path_, what, std::strerror(errno)),
               "use --direct to read the GPUs without it");
}

bool Client::write_line(const std::string& line) {
  for (std::size_t sent = 0; sent < line.size();) {
    auto n = ::send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;  // a signal the command handles (sweep's SIGTERM)
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) return false;
    if (n <= 0) throw failure("did not take the request");
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

void Client::send(nlohmann::json request) {
  request["v"] = kProtocolVersion;
  if (!write_line(request.dump() + '\n')) throw failure("did not take the request");
}

nlohmann::json Client::take_line(std::size_t newline) {
  auto response = nlohmann::json::parse(pending_.substr(0, newline), nullptr, false);
  pending_.erase(0, newline + 1);
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

nlohmann::json Client::request(nlohmann::json request) {
  request["v"] = kProtocolVersion;
  const auto line = request.dump() + '\n';
  // The service closes a connection that asked nothing for 30 s (socket_server.h): a command
  // that waits longer between two requests (doctor's window, stat's command) connects again,
  // once, when the connection turns out closed before any of the answer came.
  for (int attempt = 0;; ++attempt) {
    bool closed = !write_line(line);
    std::size_t nl;
    char buffer[64 * 1024];
    while (!closed && (nl = pending_.find('\n')) == std::string::npos) {
      auto n = ::recv(fd_, buffer, sizeof buffer, 0);
      // A signal the command handles (sweep's SIGTERM) must not leave the answer unread: the
      // next request on this connection would take it for its own.
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 || (n < 0 && errno == ECONNRESET)) {
        if (!pending_.empty()) {
          errno = ECONNRESET;
          throw failure("did not answer");
        }
        closed = true;
        break;
      }
      if (n < 0) throw failure("did not answer");
      pending_.append(buffer, static_cast<std::size_t>(n));
    }
    if (!closed) return take_line(nl);
    const int fd = attempt == 0 ? open_socket(path_) : -1;
    if (fd < 0) {
      errno = ECONNRESET;
      throw failure("did not answer");
    }
    ::close(fd_);
    fd_ = fd;
  }
}

std::optional<nlohmann::json> Client::read_line(std::chrono::milliseconds wait) {
  const auto until = std::chrono::steady_clock::now() + wait;
  std::size_t nl;
  char buffer[64 * 1024];
  while ((nl = pending_.find('\n')) == std::string::npos) {
    // Rounded up: a wait of 0 ms for the last fraction of a millisecond would spin.
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::max<long long>(left.count(), 0)));
    if (ready < 0 && errno != EINTR) throw failure("did not answer");
    if (ready <= 0) {
      if (std::chrono::steady_clock::now() >= until) return std::nullopt;
      continue;
    }
    auto n = ::recv(fd_, buffer, sizeof buffer, 0);
    if (n == 0) errno = ECONNRESET;
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) throw failure("stopped streaming");
    pending_.append(buffer, static_cast<std::size_t>(n));
  }
  return take_line(nl);
}

// --- typed requests (messages.h) -----------------------------------------------------------------

template <class Decode>
auto Client::decoded(const char* what, const nlohmann::json& answer, Decode decode) const {
  try {
    return decode(answer);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(
        ExitCode::other,
        fmt::format("the service on {} sent a malformed {} answer: {}", path_, what, e.what()),
        "use --direct to read the GPUs without it");
  }
}

Hello Client::hello() { return decoded("hello", request(hello_request()), hello_from_json); }

StatusAnswer Client::status() {
  return decoded("status", request(status_request()), status_answer_from_json);
}

ClocksView Client::clocks_view() {
  return decoded("clocks view", request(view_request("clocks")), clocks_view_from_json);
}

InfoView Client::info_view() {
  return decoded("info view", request(view_request("info")), info_view_from_json);
}

TopoView Client::topo_view() {
  return decoded("topo view", request(view_request("topo")), topo_view_from_json);
}

QueryView Client::query_view() {
  return decoded("query view", request(view_request("query")), query_view_from_json);
}

TopView Client::top_view() {
  return decoded("top view", request(view_request("top")), top_view_from_json);
}

std::vector<HistoryGpu> Client::history(const HistoryRequest& r, telemetry::TimePoint now) {
  return decoded("history", request(history_request(r)),
                 [now](const nlohmann::json& a) { return history_from_json(a, now); });
}

std::vector<GpuSummary> Client::summary(const std::optional<std::vector<unsigned>>& gpus,
                                        double seconds, telemetry::TimePoint now) {
  return decoded("summary", request(summary_request(gpus, seconds)),
                 [now](const nlohmann::json& a) { return summaries_from_json(a, now); });
}

Snapshot Client::snapshot(const std::vector<unsigned>& gpus, bool read_counters,
                          telemetry::TimePoint now) {
  return decoded("snapshot", request(snapshot_request(gpus, read_counters)),
                 [now](const nlohmann::json& a) { return snapshot_from_json(a, now); });
}

ProcessesAnswer Client::processes(const std::optional<std::string>& owner) {
  return decoded("processes", request(processes_request(owner)), processes_from_json);
}

CollectivesAnswer Client::collectives(const std::optional<std::string>& owner) {
  try {
    return decoded("collectives", request(collectives_request(owner)), collectives_from_json);
  } catch (const Error& e) {
    // An older gpuclk serve reads no NCCL files: nothing to show, as where it reads none.
    if (std::string_view(e.what()).find("unknown request") != std::string_view::npos) return {};
    throw;
  }
}

ChangeAnswer Client::set(const SetRequest& r) {
  return decoded("set", request(set_request(r)), change_answer_from_json);
}

ChangeAnswer Client::restore(const std::optional<std::vector<unsigned>>& gpus) {
  return decoded("restore", request(restore_request(gpus)), change_answer_from_json);
}

void Client::open_stream(const StreamRequest& r) { send(stream_request(r)); }

std::optional<StreamLine> Client::next_line(std::chrono::milliseconds wait) {
  auto line = read_line(wait);
  if (!line) return std::nullopt;
  return decoded("stream", *line, stream_line_from_json);
}

}  // namespace gpuclk::serve
