#include "serve/socket_server.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <list>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "serve/protocol.h"
#include "util/error.h"
#include "util/thread_name.h"

namespace gpuclk::serve {
namespace {

// A stream's first line not ready yet (it waits for its fields' first read): asked again after.
constexpr auto kStreamRetry = std::chrono::milliseconds(5);
// The most one pass of the poll loop spends on stream lines before it answers requests.
constexpr auto kStreamBudget = std::chrono::milliseconds(20);

sockaddr_un address_of(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path))
    throw bad_argument(fmt::format("socket path too long ({} bytes, at most {}): {}", path.size(),
                                   sizeof(addr.sun_path) - 1, path));
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

bool something_answers(const sockaddr_un& addr) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

using Clock = std::chrono::steady_clock;

struct Connection {
  int fd = -1;
  Peer peer;
  std::string in, out;
  bool close_after_write = false;
  Clock::time_point last_active;              // a request came in, or an answer went out
  Clock::time_point progress;                 // `out` was empty, or shrank
  std::uint64_t skipped = 0;                  // stream lines skipped since the last one written
  std::unique_ptr<Stream> stream;             // the answer being streamed, if any
  std::chrono::steady_clock::time_point due;  // when its next line is
};

// A connection that cannot be served: one error line, then closed.
void refuse(int fd, const std::string& why) {
  auto line = error_response(why, static_cast<int>(ExitCode::other)).dump();
  line += '\n';
  [[maybe_unused]] auto n = ::send(fd, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::close(fd);
}

// Answers the complete request lines in c.in in order, until one starts a stream: the rest wait
// for its end.
void serve_lines(Connection& c, const SocketServer::Handler& handler, Clock::time_point now) {
  std::size_t start = 0, nl;
  // Past its backlog a client's further requests wait until it has read what it was sent.
  while (!c.stream && c.out.size() < SocketServer::kClientBacklog &&
         (nl = c.in.find('\n', start)) != std::string::npos) {
    std::string_view line(c.in.data() + start, nl - start);
    if (line.size() > kMaxRequestBytes) {  // it came in one read with its newline
      c.out += error_response(fmt::format("request longer than {} bytes", kMaxRequestBytes),
                              static_cast<int>(ExitCode::bad_argument))
                   .dump();
      c.out += '\n';
      c.in.clear();
      c.close_after_write = true;
      return;
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) {
      auto reply = handler(line, c.peer);
      if (reply.stream) {
        c.stream = std::move(reply.stream);
        c.due = now;
      } else {
        if (reply.text) {
          c.out += *reply.text;
        } else {
          c.out += reply.response.dump();
        }
        c.out += '\n';
      }
    }
    start = nl + 1;
  }
  c.in.erase(0, start);
}

// Writes the stream's line when it is due; the end of the stream lets waiting requests in. A
// reader kStreamBacklog behind misses lines (not the last), and the next line it gets counts
// them: {"...", "skipped_lines": N}. A stream that can skips them without building them.
void step_stream(Connection& c, const SocketServer::Handler& handler, Clock::time_point now) {
  if (!c.stream || c.close_after_write || now < c.due) return;
  bool last = false;
  std::optional<std::string> line;
  const bool behind = c.out.size() >= SocketServer::kStreamBacklog;
  if (!behind || !c.stream->skip_line()) {
    line = c.stream->next(last);
    if (!line) {
      c.due = now + kStreamRetry;
      return;
    }
  }
  if (!line || (behind && !last)) {
    ++c.skipped;
  } else {
    if (c.skipped > 0 && !line->empty() && line->back() == '}') {
      line->pop_back();
      *line += fmt::format(",\"skipped_lines\":{}}}", c.skipped);
      c.skipped = 0;
    }
    c.out += *line;
    c.out += '\n';
  }
  if (last) {
    c.stream.reset();
    serve_lines(c, handler, now);
    return;
  }
  // On a fixed schedule from the first line; a line that cannot be kept is skipped.
  const auto interval =
      std::max<std::chrono::nanoseconds>(c.stream->interval(), std::chrono::milliseconds(1));
  do c.due += interval;
  while (c.due <= now);
}

// The loop's phase 1, streams: the due lines of every stream, for at most kStreamBudget; the next
// pass starts where this one stopped (`start`), so that the requests of other clients are answered
// between passes however many streams there are and however slow the machine.
void step_streams(std::list<Connection>& clients, std::size_t& start,
                  const SocketServer::Handler& handler, Clock::time_point now) {
  const auto n = clients.size();
  if (n == 0) return;
  start %= n;
  auto it = std::next(clients.begin(), static_cast<std::ptrdiff_t>(start));
  const auto until = Clock::now() + kStreamBudget;
  for (std::size_t k = 1; k <= n; ++k) {
    step_stream(*it, handler, now);
    if (++it == clients.end()) it = clients.begin();
    if (Clock::now() >= until) {
      start += k;
      return;
    }
  }
}

}  // namespace

SocketServer::SocketServer(std::string path, Handler handler)
    : path_(std::move(path)), handler_(std::move(handler)) {
  auto addr = address_of(path_);
  std::error_code ec;
  auto dir = std::filesystem::path(path_).parent_path();
  if (!dir.empty() && !std::filesystem::exists(dir)) {
    std::filesystem::create_directories(dir, ec);
    if (!ec) ::chmod(dir.c_str(), 0755);
  }
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      throw Error(ExitCode::bad_argument,
                  fmt::format("{} exists and is not a socket; not replacing it", path_));
    if (something_answers(addr))
      throw Error(ExitCode::other, fmt::format("a service already answers on {}", path_),
                  "stop it first, or give this one another --socket");
    ::unlink(path_.c_str());  // stale: left by a service that died
  }
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0)
    throw Error(ExitCode::other, fmt::format("socket(): {}", std::strerror(errno)));
  const auto old_mask = ::umask(0111);  // srw-rw-rw-: reading is for every local user
  int rc = ::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  int bind_errno = errno;
  ::umask(old_mask);
  if (rc != 0 || ::listen(listen_fd_, 256) != 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
    throw Error(bind_errno == EACCES ? ExitCode::no_permission : ExitCode::other,
                fmt::format("cannot listen on {}: {}", path_, std::strerror(bind_errno)),
                "run as root for /run/gpuclk, or give --socket PATH in a folder you own");
  }
  if (::pipe2(wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0)
    throw Error(ExitCode::other, fmt::format("pipe(): {}", std::strerror(errno)));
  reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
}

SocketServer::~SocketServer() {
  stop();
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    ::unlink(path_.c_str());
  }
  for (int fd : wake_pipe_)
    if (fd >= 0) ::close(fd);
  if (reserve_fd_ >= 0) ::close(reserve_fd_);
}

void SocketServer::start() {
  running_ = true;
  thread_ = std::thread([this] {
    util::name_this_thread("gpuclk-socket");
    loop();
  });
}

void SocketServer::stop() {
  if (!running_.exchange(false)) return;
  char c = 1;
  [[maybe_unused]] auto n = ::write(wake_pipe_[1], &c, 1);
  if (thread_.joinable()) thread_.join();
  ::close(listen_fd_);
  listen_fd_ = -1;
  ::unlink(path_.c_str());
}

void SocketServer::wake() {
  char c = 0;
  [[maybe_unused]] auto n = ::write(wake_pipe_[1], &c, 1);
}

namespace {

// The loop's phase 1, poll: what to wait for on a client. Past its backlog a client is not read
// (its requests wait in the kernel's buffer); nor is one with a stream (or a deferred answer)
// running and a request behind it, so a client that pipelines thousands is slowed, not dropped.
short events_of(const Connection& c) {
  short events = c.out.empty() ? POLLIN : static_cast<short>(POLLIN | POLLOUT);
  if (c.out.size() >= SocketServer::kClientBacklog) events = POLLOUT;
  if (c.stream && c.in.find('\n') != std::string::npos)
    events = static_cast<short>(events & ~POLLIN);
  if (c.close_after_write) events = POLLOUT;
  return events;
}

// Until the next stream line that is due, else a second.
std::chrono::milliseconds poll_timeout(const std::list<Connection>& clients) {
  auto timeout = std::chrono::milliseconds(1000);
  const auto before = Clock::now();
  for (const auto& c : clients) {
    if (!c.stream) continue;
    auto wait = std::chrono::ceil<std::chrono::milliseconds>(c.due - before);
    timeout = std::clamp(wait, std::chrono::milliseconds(0), timeout);
  }
  return timeout;
}

// Who is at the other end of `fd` (SO_PEERCRED, SO_PEERGROUPS).
Peer peer_of(int fd) {
  Peer peer;
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
    peer = {cred.pid, cred.uid, cred.gid, {}};
  return peer;
}

void add_groups(int fd, Peer& peer) {
  std::vector<gid_t> groups(64);
  auto len = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
  int got = ::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len);
  if (got != 0 && errno == ERANGE) {
    groups.resize(len / sizeof(gid_t));
    got = ::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len);
  }
  if (got == 0) peer.groups.assign(groups.begin(), groups.begin() + len / sizeof(gid_t));
}

// The loop's phase 2, accept: every waiting connection, refused (one error line) past the caps on
// clients, or when no descriptor is left (`reserve_fd` makes room to say so).
void accept_clients(int listen_fd, int& reserve_fd, std::list<Connection>& clients,
                    Clock::time_point now) {
  while (true) {
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE) && reserve_fd >= 0) {
      // Out of descriptors: the waiting connection would keep poll() returning at once.
      // The reserved one makes room to take it and say why.
      ::close(reserve_fd);
      fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) refuse(fd, "the service has no file descriptor left for another client");
      reserve_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      break;
    }
    if (fd < 0) break;
    Connection c;
    c.fd = fd;
    c.last_active = c.progress = now;
    c.peer = peer_of(fd);
    if (clients.size() >= SocketServer::kMaxClients) {
      refuse(fd, fmt::format("too many clients ({} connected)", clients.size()));
      continue;
    }
    if (c.peer.uid != 0) {
      const auto mine = static_cast<std::size_t>(
          std::count_if(clients.begin(), clients.end(),
                        [&](const Connection& x) { return x.peer.uid == c.peer.uid; }));
      if (mine >= SocketServer::kMaxClientsPerUid) {
        refuse(fd, fmt::format("too many connections from uid {} ({} open, at most {})", c.peer.uid,
                               mine, SocketServer::kMaxClientsPerUid));
        continue;
      }
    }
    add_groups(fd, c.peer);
    clients.push_back(std::move(c));
  }
}

// What came in on `c`: its complete requests answered; an unfinished one past kMaxRequestBytes
// answered with an error, then the connection closes. False when the peer is gone.
bool read_requests(Connection& c, const SocketServer::Handler& handler, Clock::time_point now,
                   std::span<char> buffer) {
  auto n = ::recv(c.fd, buffer.data(), buffer.size(), 0);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return false;
  if (n < 0) return true;
  c.last_active = now;
  c.in.append(buffer.data(), static_cast<std::size_t>(n));
  serve_lines(c, handler, now);
  const auto last_newline = c.in.rfind('\n');
  const auto unfinished =
      last_newline == std::string::npos ? c.in.size() : c.in.size() - last_newline - 1;
  if (!c.close_after_write && unfinished > kMaxRequestBytes) {
    c.out += error_response(fmt::format("request longer than {} bytes", kMaxRequestBytes),
                            static_cast<int>(ExitCode::bad_argument))
                 .dump();
    c.out += '\n';
    c.in.clear();
    c.stream.reset();
    c.close_after_write = true;
  }
  return true;
}

// The loop's phase 3, read and write one client (`revents`: what poll() said of it). True when it
// is to be dropped: gone, done, idle, or not reading what it was sent.
bool serve_client(Connection& c, short revents, const SocketServer::Handler& handler,
                  Clock::time_point now, std::span<char> buffer) {
  bool drop = false;
  if ((revents & POLLIN) && !c.close_after_write) {
    drop = !read_requests(c, handler, now, buffer);
  } else if (revents & (POLLHUP | POLLERR)) {
    drop = !(revents & POLLOUT) || c.out.empty();
  }
  if (!drop && !c.out.empty()) {
    auto n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      c.out.erase(0, static_cast<std::size_t>(n));
      c.last_active = c.progress = now;
      // Requests that waited for the backlog to drain.
      if (!c.stream && !c.close_after_write) serve_lines(c, handler, now);
    } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
      drop = true;
    }
  }
  if (c.out.empty()) c.progress = now;
  if (c.close_after_write && c.out.empty()) drop = true;
  // Idle (nothing asked, nothing streaming), or not reading what it was sent.
  if (c.out.empty() && !c.stream && now - c.last_active > SocketServer::kIdleTimeout) drop = true;
  if (!c.out.empty() && now - c.progress > SocketServer::kIdleTimeout) drop = true;
  return drop;
}

// The loop's phase 4, shed: every client's queue together stays under kTotalBacklog; the ones
// furthest behind go first (into `dead`).
void shed_backlog(std::list<Connection>& clients, std::vector<Connection*>& dead) {
  std::size_t total = 0;
  for (const auto& c : clients) total += c.out.size();
  while (total > SocketServer::kTotalBacklog) {
    Connection* largest = nullptr;
    for (auto& c : clients) {
      if (std::find(dead.begin(), dead.end(), &c) != dead.end()) continue;
      if (!largest || c.out.size() > largest->out.size()) largest = &c;
    }
    if (!largest) break;
    total -= largest->out.size();
    dead.push_back(largest);
  }
}

}  // namespace

void SocketServer::loop() {
  std::list<Connection> clients;
  std::vector<pollfd> fds;
  std::vector<Connection*> owners;
  std::vector<char> buffer(std::size_t{64} * 1024);
  std::size_t stream_start = 0;  // where the next pass over the streams begins
  while (running_) {
    fds.clear();
    owners.clear();
    fds.push_back({wake_pipe_[0], POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    for (auto& c : clients) {
      fds.push_back({c.fd, events_of(c), 0});
      owners.push_back(&c);
    }
    const auto timeout = poll_timeout(clients);
    if (::poll(fds.data(), fds.size(), static_cast<int>(timeout.count())) < 0 && errno != EINTR)
      break;
    if (!running_) break;
    if (fds[0].revents & POLLIN) {
      char drain[64];
      while (::read(wake_pipe_[0], drain, sizeof drain) > 0) {
      }
    }
    const auto now = Clock::now();
    step_streams(clients, stream_start, handler_, now);
    if (fds[1].revents & POLLIN) accept_clients(listen_fd_, reserve_fd_, clients, now);
    std::vector<Connection*> dead;
    for (std::size_t i = 0; i < owners.size(); ++i) {
      if (serve_client(*owners[i], fds[i + 2].revents, handler_, now, buffer))
        dead.push_back(owners[i]);
    }
    shed_backlog(clients, dead);
    for (auto* c : dead) {
      ::close(c->fd);
      clients.remove_if([c](const Connection& x) { return &x == c; });
    }
  }
  for (auto& c : clients) ::close(c.fd);
}

}  // namespace gpuclk::serve
