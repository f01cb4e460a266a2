// The socket server's streams (the `stream` request's transport): lines come on their schedule
// from the poll thread, requests sent meanwhile wait for the stream's end, a client that goes is
// dropped with its stream and one that stops reading is thinned, while the others are served.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "serve/socket_server.h"

namespace gpuclk::serve {
namespace {

using namespace std::chrono_literals;

// Lines "tick N" (padded to `size` bytes), `count` of them (0: for ever); counts itself alive.
// With `json`, each line is {"tick":N,"pad":"..."}, as the service's stream lines are objects.
class CountingStream final : public Stream {
 public:
  CountingStream(std::atomic<int>& alive, std::chrono::nanoseconds interval, int count,
                 std::size_t size, bool json = false)
      : alive_(alive), interval_(interval), count_(count), size_(size), json_(json) {
    ++alive_;
  }
  ~CountingStream() override { --alive_; }
  std::chrono::nanoseconds interval() const override { return interval_; }
  std::optional<std::string> next(bool& last) override {
    ++sent_;
    last = count_ && sent_ >= count_;
    if (json_)
      return R"({"tick":)" + std::to_string(sent_) + R"(,"pad":")" + std::string(size_, '.') +
             R"("})";
    auto line = "tick " + std::to_string(sent_);
    if (line.size() < size_) line.append(size_ - line.size(), '.');
    return line;
  }

 private:
  std::atomic<int>& alive_;
  std::chrono::nanoseconds interval_;
  int count_, sent_ = 0;
  std::size_t size_;
  bool json_;
};

class Connection {
 public:
  explicit Connection(const std::string& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, path.c_str());
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  }
  ~Connection() { close(); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  void send(const std::string& text) {
    ASSERT_EQ(::send(fd_, text.data(), text.size(), MSG_NOSIGNAL), ssize_t(text.size()));
  }
  // The next line (without its newline); "" on timeout or when the server closed.
  std::string line(std::chrono::milliseconds wait = 3000ms) {
    const auto until = std::chrono::steady_clock::now() + wait;
    std::size_t nl;
    while ((nl = buffer_.find('\n')) == std::string::npos) {
      if (std::chrono::steady_clock::now() >= until) return "";
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 10) <= 0) continue;
      char chunk[65536];
      auto n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) return "";
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
    auto out = buffer_.substr(0, nl);
    buffer_.erase(0, nl + 1);
    return out;
  }
  // Whether the server closed the connection within `wait` (reading and dropping what comes).
  bool closed_by_server(std::chrono::milliseconds wait) {
    const auto until = std::chrono::steady_clock::now() + wait;
    char chunk[65536];
    while (std::chrono::steady_clock::now() < until) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 10) <= 0) continue;
      auto n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) return true;
    }
    return false;
  }

 private:
  int fd_ = -1;
  std::string buffer_;
};

struct Server {
  std::string path;
  std::atomic<int> alive{0};
  std::chrono::nanoseconds interval = 20ms;
  int count = 3;
  std::size_t size = 0;
  bool json_lines = false;
  std::unique_ptr<SocketServer> server;

  Server() {
    char dir[] = "/tmp/gpuclk-socket-test.XXXXXX";
    path = std::string(::mkdtemp(dir)) + "/s.sock";
    server = std::make_unique<SocketServer>(path, [this](std::string_view line, const Peer&) {
      if (line == "stream")
        return Reply{json(),
                     std::make_unique<CountingStream>(alive, interval, count, size, json_lines)};
      return Reply{json{{"echo", std::string(line)}}, nullptr};
    });
    server->start();
  }
  ~Server() {
    server.reset();
    std::remove(path.c_str());
    ::rmdir(path.substr(0, path.rfind('/')).c_str());
  }
};

TEST(serve_socket, a_stream_sends_its_lines_on_schedule_then_serves_waiting_requests) {
  Server s;
  Connection c(s.path);
  const auto t0 = std::chrono::steady_clock::now();
  c.send("stream\nafter\n");  // "after" waits for the stream's end
  EXPECT_EQ(c.line(), "tick 1");
  EXPECT_EQ(c.line(), "tick 2");
  EXPECT_EQ(c.line(), "tick 3");
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 40ms);  // two intervals after the first
  EXPECT_EQ(c.line(), R"({"echo":"after"})");
  EXPECT_EQ(s.alive.load(), 0);  // the stream ended with its last line
}

TEST(serve_socket, a_client_that_goes_mid_stream_is_dropped_with_its_stream) {
  Server s;
  s.count = 0;  // until the client goes
  Connection a(s.path), b(s.path);
  a.send("stream\n");
  EXPECT_EQ(a.line(), "tick 1");
  EXPECT_EQ(s.alive.load(), 1);
  a.close();
  for (int i = 0; i < 200 && s.alive.load() > 0; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(s.alive.load(), 0);
  b.send("still there\n");
  EXPECT_EQ(b.line(), R"({"echo":"still there"})");
}

TEST(serve_socket, a_stream_that_is_not_read_is_thinned_and_told_the_others_go_on) {
  Server s;
  s.count = 0;
  s.interval = 1ms;
  s.size = 64 << 10;  // 64 KiB lines at 1 kHz: 64 MiB/s if nothing held them back
  s.json_lines = true;
  Connection slow(s.path), other(s.path);
  slow.send("stream\n");
  // It reads nothing for half a second (32 MiB of lines); meanwhile another client is answered.
  std::this_thread::sleep_for(20ms);
  other.send("ping\n");
  EXPECT_EQ(other.line(), R"({"echo":"ping"})");
  std::this_thread::sleep_for(500ms);
  // What it then reads: the backlog (at most kStreamBacklog and the kernel's buffer), then a
  // line that counts the lines skipped meanwhile, and the ticks jump by as many.
  int previous = 0, skipped_seen = 0;
  for (int i = 0; i < 400 && skipped_seen == 0; ++i) {
    const auto line = slow.line();
    ASSERT_FALSE(line.empty()) << "the stream ended";
    const auto j = json::parse(line);
    const int tick = j.at("tick").get<int>();
    if (j.contains("skipped_lines")) {
      skipped_seen = j.at("skipped_lines").get<int>();
      EXPECT_EQ(tick - previous - 1, skipped_seen);
    } else if (previous > 0) {
      EXPECT_EQ(tick, previous + 1);
    }
    previous = tick;
  }
  EXPECT_GT(skipped_seen, 100) << "a reader 500 ms behind at 1 kHz was not thinned";
  other.send("pong\n");
  EXPECT_EQ(other.line(), R"({"echo":"pong"})");
  EXPECT_EQ(s.alive.load(), 1);  // thinned, not dropped
}

}  // namespace
}  // namespace gpuclk::serve
