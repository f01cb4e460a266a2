// A client of the service's socket (protocol.h): what read commands use when a service runs.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "util/error.h"

namespace gpuclk::serve {

class Client {
 public:
  // Connects to `path`; nullptr when nothing answers there (no socket, connection refused).
  static std::unique_ptr<Client> connect(const std::string& path);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends one request (its "v" is filled in) and returns the response. Throws Error: the
  // service's own error (its message and exit code), or exit 255 when the connection fails.
  nlohmann::json request(nlohmann::json request);
  // A request answered by several lines (`stream`): send() it, then read_line() each line.
  void send(nlohmann::json request);
  // The next response line, waiting at most `wait`; nullopt when none came in that time.
  // Throws as request() does: the service's error line, or the connection failing or closing.
  std::optional<nlohmann::json> read_line(std::chrono::milliseconds wait);
  const std::string& path() const { return path_; }

 private:
  Client(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  Error failure(const char* what) const;
  // Writes `line` whole; false when the service had closed the connection (EPIPE, ECONNRESET),
  // throws failure() for any other error.
  bool write_line(const std::string& line);
  nlohmann::json take_line(std::size_t newline);
  int fd_;
  std::string path_;
  std::string pending_;  // bytes after the last response line
};

}  // namespace gpuclk::serve
