// The service's Unix-socket server: one poll() thread for every client. Requests are lines
// (at most kMaxRequestBytes); each gets one response line from the handler, or a stream of
// lines (Stream) that a timer in the poll loop writes when each is due; while it streams, the
// connection's further requests wait.
//
// The socket is open to every local user, so no client, and no number of them, may take the
// service's memory or its other users' answers (docs/hardening.md, "The node service under
// faults"):
//   - a client's answers queue up to kClientBacklog; past it its further requests wait in the
//     kernel's socket buffer (it is slowed, not dropped);
//   - a stream whose reader falls kStreamBacklog behind is thinned: lines are skipped (not even
//     built, where the stream can: Stream::skip_line), and the next line written says how many
//     ("skipped_lines");
//   - one pass of the poll loop builds stream lines for at most 20 ms, the next pass going on
//     where it stopped: requests are answered between passes however many streams there are;
//   - every client's queued answers together stay under kTotalBacklog: past it, the clients
//     furthest behind are dropped until it holds;
//   - a uid holds at most kMaxClientsPerUid connections (root's are not capped), all uids
//     together kMaxClients; past either, the connection gets a one-line error and is closed;
//   - a client that sends nothing for kIdleTimeout, or whose answers make no progress for as
//     long (it stopped reading), is dropped;
//   - a line too long is answered with an error and the connection closed.
// When the process runs out of file descriptors, a reserved one lets it accept the waiting
// connection and refuse it, so accept() never spins.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include "serve/service.h"

namespace gpuclk::serve {

class SocketServer {
 public:
  // handler(line, peer) returns the response, or a stream. Called on the server thread.
  using Handler = std::function<Reply(std::string_view line, const Peer& peer)>;

  // Binds `path` (its folder is created, mode 0755; the socket is 0666: every local user may
  // read). Throws Error when the path is held by a service that answers, or cannot be bound.
  SocketServer(std::string path, Handler handler);
  ~SocketServer();
  SocketServer(const SocketServer&) = delete;
  SocketServer& operator=(const SocketServer&) = delete;

  void start();
  void stop();  // idempotent; closes every client and removes the socket file
  // Makes the poll thread look at the streams now (a deferred answer is ready); any thread.
  void wake();
  const std::string& path() const { return path_; }

  static constexpr std::size_t kMaxClients = 1024;
  static constexpr std::size_t kMaxClientsPerUid = 64;
  static constexpr std::chrono::seconds kIdleTimeout{30};
  static constexpr std::size_t kClientBacklog = std::size_t{1} << 20;
  static constexpr std::size_t kStreamBacklog = std::size_t{256} << 10;
  static constexpr std::size_t kTotalBacklog = std::size_t{64} << 20;

 private:
  void loop();

  std::string path_;
  Handler handler_;
  int listen_fd_ = -1;
  int reserve_fd_ = -1;  // closed to accept (and refuse) a connection when no fd is left
  int wake_pipe_[2] = {-1, -1};
  std::atomic<bool> running_{false};
  std::thread thread_;
};

}  // namespace gpuclk::serve
