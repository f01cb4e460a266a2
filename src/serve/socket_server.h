// The service's Unix-socket server: one poll() thread for every client. Requests are lines
// (at most kMaxRequestBytes); each gets one response line from the handler, or a stream of
// lines (Stream) that a timer in the poll loop writes when each is due; while it streams, the
// connection's further requests wait. A line too long, a client that sends nothing for
// `idle_timeout` (a stream's reader counts as active), or one that stops reading its responses
// (more than 64 MiB queued) is dropped with its stream; the others are not affected.
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
  static constexpr std::chrono::seconds kIdleTimeout{300};

 private:
  void loop();

  std::string path_;
  Handler handler_;
  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};
  std::atomic<bool> running_{false};
  std::thread thread_;
};

}  // namespace gpuclk::serve
