// The socket server's streams (the `stream` request's transport): lines come on their schedule
// from the poll thread, requests sent meanwhile wait for the stream's end, a client that goes is
// dropped with its stream and one that stops reading is thinned, while the others are served.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "serve/socket_server.h"

namespace gpuclk::serve {
namespace {

using namespace std::chrono_literals;

// How the test's streams behave beyond their lines: what building a line costs (a sleep: the
// service's lines cost their samples' JSON), whether a line may be skipped unbuilt, and how many
// lines were built and skipped (for every stream of the server).
struct StreamCosts {
  std::chrono::milliseconds build{0};
  bool skippable = false;
  std::atomic<int> built{0}, skipped{0};
};

// Lines "tick N" (padded to `size` bytes), `count` of them (0: for ever); counts itself alive.
// With `json`, each line is {"tick":N,"pad":"..."}, as the service's stream lines are objects.
class CountingStream final : public Stream {
 public:
  CountingStream(std::atomic<int>& alive, std::chrono::nanoseconds interval, int count,
                 std::size_t size, bool json, StreamCosts& costs)
      : alive_(alive), interval_(interval), count_(count), size_(size), json_(json), costs_(costs) {
    ++alive_;
  }
  ~CountingStream() override { --alive_; }
  std::chrono::nanoseconds interval() const override { return interval_; }
  bool skip_line() override {
    if (!costs_.skippable || sent_ == 0 || (count_ && sent_ + 1 >= count_)) return false;
    ++sent_;
    ++costs_.skipped;
    return true;
  }
  std::optional<std::string> next(bool& last) override {
    std::this_thread::sleep_for(costs_.build);
    ++costs_.built;
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
  StreamCosts& costs_;
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
  StreamCosts costs;
  std::unique_ptr<SocketServer> server;

  Server() {
    char dir[] = "/tmp/gpuclk-socket-test.XXXXXX";
    path = std::string(::mkdtemp(dir)) + "/s.sock";
    server = std::make_unique<SocketServer>(path, [this](std::string_view line, const Peer&) {
      if (line == "stream")
        return Reply{json(), std::make_unique<CountingStream>(alive, interval, count, size,
                                                              json_lines, costs)};
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

// The thinning below, for a stream that can skip a line without building it, then one that
// cannot (the server builds the line and drops it).
void not_read_is_thinned(bool skippable) {
  Server s;
  s.costs.skippable = skippable;
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
  if (skippable) {
    EXPECT_GE(s.costs.skipped.load(), skipped_seen);
    EXPECT_LT(s.costs.built.load(), previous) << "the skipped lines were built";
  } else {
    EXPECT_EQ(s.costs.skipped.load(), 0);
  }
}

TEST(serve_socket, a_stream_that_is_not_read_is_thinned_and_told_the_others_go_on) {
  not_read_is_thinned(false);
}

TEST(serve_socket, a_stream_that_can_skip_its_lines_does_not_build_those_its_reader_misses) {
  not_read_is_thinned(true);
}

// 100 streams whose lines take 10 ms each to build, due every millisecond: one pass over them all
// is a second. Another client's request is answered between passes of at most kStreamBudget
// (20 ms), not after a whole one: a service with many streams still answers `gpuclk status`.
TEST(serve_socket, requests_are_answered_between_passes_over_many_slow_streams) {
  Server s;
  s.count = 0;
  s.interval = 1ms;
  s.costs.build = 10ms;
  std::vector<std::unique_ptr<Connection>> streams;
  for (int i = 0; i < 100; ++i) {
    streams.push_back(std::make_unique<Connection>(s.path));
    streams.back()->send("stream\n");
  }
  std::this_thread::sleep_for(200ms);
  Connection other(s.path);
  auto worst = std::chrono::steady_clock::duration::zero();
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    other.send("ping\n");
    EXPECT_EQ(other.line(), R"({"echo":"ping"})");
    worst = std::max(worst, std::chrono::steady_clock::now() - start);
  }
  EXPECT_LT(worst, 500ms) << "a request waited "
                          << std::chrono::duration_cast<std::chrono::milliseconds>(worst).count()
                          << " ms behind the streams";
  EXPECT_GE(s.costs.built.load(), 20);  // the streams were served too (100 lines a second)
}

}  // namespace
}  // namespace gpuclk::serve
