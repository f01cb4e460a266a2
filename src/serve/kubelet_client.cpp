#include "serve/kubelet_client.h"

#include <fmt/format.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string_view>

#include "util/error.h"

namespace gpuclk::serve {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr std::size_t kGrpcPrefix = 5;
constexpr std::size_t kMaxHeader = 1024;  // bytes kept of a header's value (grpc-message)

// One call's state, shared with nghttp2's callbacks.
struct Call {
  int fd = -1;
  std::int32_t stream = -1;
  std::string request;  // the one gRPC message sent: an empty ListPodResourcesRequest
  std::size_t request_sent = 0;
  std::string body;  // the answer's DATA
  bool too_big = false;
  std::string status, grpc_status, grpc_message;
  bool closed = false;
  std::uint32_t reset = 0;  // the stream's HTTP/2 error code when it closed
  std::string io_error;
};

Call& call_of(void* user) { return *static_cast<Call*>(user); }

ssize_t on_send(nghttp2_session*, const std::uint8_t* data, std::size_t length, int, void* user) {
  auto& c = call_of(user);
  const auto n = ::send(c.fd, data, length, MSG_NOSIGNAL);
  if (n >= 0) return n;
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return NGHTTP2_ERR_WOULDBLOCK;
  c.io_error = std::strerror(errno);
  return NGHTTP2_ERR_CALLBACK_FAILURE;
}

int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
              std::size_t name_length, const std::uint8_t* value, std::size_t value_length,
              std::uint8_t, void* user) {
  auto& c = call_of(user);
  if (frame->hd.type != NGHTTP2_HEADERS || frame->hd.stream_id != c.stream) return 0;
  const std::string_view n(reinterpret_cast<const char*>(name), name_length);
  const std::string_view v(reinterpret_cast<const char*>(value),
                           std::min(value_length, kMaxHeader));
  if (n == ":status") {
    c.status = v;
  } else if (n == "grpc-status") {
    c.grpc_status = v;
  } else if (n == "grpc-message") {
    c.grpc_message = v;
  }
  return 0;
}

int on_data(nghttp2_session* session, std::uint8_t, std::int32_t stream, const std::uint8_t* data,
            std::size_t length, void* user) {
  auto& c = call_of(user);
  if (stream != c.stream) return 0;
  if (c.body.size() + length > host::kPodResourcesMaxBytes + kGrpcPrefix) {
    c.too_big = true;
    nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, stream, NGHTTP2_CANCEL);
    return 0;
  }
  c.body.append(reinterpret_cast<const char*>(data), length);
  return 0;
}

int on_close(nghttp2_session*, std::int32_t stream, std::uint32_t error_code, void* user) {
  auto& c = call_of(user);
  if (stream == c.stream) {
    c.closed = true;
    c.reset = error_code;
  }
  return 0;
}

ssize_t read_request(nghttp2_session*, std::int32_t, std::uint8_t* buffer, std::size_t length,
                     std::uint32_t* flags, nghttp2_data_source*, void* user) {
  auto& c = call_of(user);
  const auto n = std::min(length, c.request.size() - c.request_sent);
  // A binary message, not a string: copied as bytes (no terminator).
  std::copy_n(reinterpret_cast<const std::uint8_t*>(c.request.data() + c.request_sent), n, buffer);
  c.request_sent += n;
  if (c.request_sent == c.request.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return static_cast<ssize_t>(n);
}

nghttp2_nv header(std::string_view name, std::string_view value) {
  return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), name.size(),
          value.size(), NGHTTP2_NV_FLAG_NONE};
}

// gRPC's grpc-message is percent-encoded.
std::string percent_decoded(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      const auto hex = std::string(text.substr(i + 1, 2));
      char* end = nullptr;
      const auto value = std::strtol(hex.c_str(), &end, 16);
      if (end == hex.c_str() + 2) {
        out += static_cast<char>(value);
        i += 2;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

// gRPC's status codes by number, for the message.
std::string_view grpc_code_name(std::string_view code) {
  static constexpr std::array<std::string_view, 17> kNames = {"OK",
                                                              "CANCELLED",
                                                              "UNKNOWN",
                                                              "INVALID_ARGUMENT",
                                                              "DEADLINE_EXCEEDED",
                                                              "NOT_FOUND",
                                                              "ALREADY_EXISTS",
                                                              "PERMISSION_DENIED",
                                                              "RESOURCE_EXHAUSTED",
                                                              "FAILED_PRECONDITION",
                                                              "ABORTED",
                                                              "OUT_OF_RANGE",
                                                              "UNIMPLEMENTED",
                                                              "INTERNAL",
                                                              "UNAVAILABLE",
                                                              "DATA_LOSS",
                                                              "UNAUTHENTICATED"};
  unsigned n = 0;
  for (const char ch : code) {
    if (ch < '0' || ch > '9' || n > 100) return "?";
    n = n * 10 + static_cast<unsigned>(ch - '0');
  }
  return code.empty() || n >= kNames.size() ? "?" : kNames[n];
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

struct SessionDeleter {
  void operator()(nghttp2_session* s) const { nghttp2_session_del(s); }
};
struct CallbacksDeleter {
  void operator()(nghttp2_session_callbacks* c) const { nghttp2_session_callbacks_del(c); }
};

int ms_until(SteadyClock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 60000));
}

void connect_to(int fd, const std::string& socket, SteadyClock::time_point deadline) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket.size() >= sizeof(address.sun_path))
    throw Error(ExitCode::other, "the path is too long for a Unix socket");
  std::memcpy(address.sun_path, socket.c_str(), socket.size() + 1);
  for (;;) {
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0) return;
    if (errno == EINTR) continue;
    if (errno == EAGAIN && ms_until(deadline) > 0) {  // the listen queue is full: a moment
      ::poll(nullptr, 0, std::min(20, ms_until(deadline)));
      continue;
    }
    if (errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, ms_until(deadline)) <= 0) throw Error(ExitCode::other, "connect timed out");
      int error = 0;
      socklen_t size = sizeof(error);
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size);
      if (error == 0) return;
      errno = error;
    }
    throw Error(ExitCode::other, fmt::format("cannot connect: {}", std::strerror(errno)));
  }
}

// Runs the HTTP/2 exchange until the call's stream closes, the connection ends or the deadline.
void exchange(nghttp2_session* session, Call& c, SteadyClock::time_point deadline) {
  std::array<std::uint8_t, 16384> buffer{};
  while (!c.closed) {
    if (const int rv = nghttp2_session_send(session); rv != 0)
      throw Error(ExitCode::other,
                  fmt::format("sending failed: {}",
                              c.io_error.empty() ? nghttp2_strerror(rv) : c.io_error));
    if (c.closed) break;
    if (!nghttp2_session_want_read(session) && !nghttp2_session_want_write(session))
      throw Error(ExitCode::other, "the connection ended before the answer");
    const int wait = ms_until(deadline);
    if (wait == 0) throw Error(ExitCode::other, "no answer in time");
    pollfd p{c.fd, static_cast<short>(POLLIN | (nghttp2_session_want_write(session) ? POLLOUT : 0)),
             0};
    const int ready = ::poll(&p, 1, wait);
    if (ready < 0 && errno != EINTR)
      throw Error(ExitCode::other, fmt::format("poll: {}", std::strerror(errno)));
    if (ready <= 0 || (p.revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    for (;;) {
      const auto n = ::recv(c.fd, buffer.data(), buffer.size(), 0);
      if (n == 0) {
        if (!c.closed) throw Error(ExitCode::other, "the kubelet closed the connection");
        break;
      }
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        throw Error(ExitCode::other, fmt::format("receiving failed: {}", std::strerror(errno)));
      }
      const auto used = nghttp2_session_mem_recv(session, buffer.data(), static_cast<size_t>(n));
      if (used < 0)
        throw Error(ExitCode::other, fmt::format("bad HTTP/2 from the kubelet: {}",
                                                 nghttp2_strerror(static_cast<int>(used))));
      if (c.closed) break;
    }
  }
}

// The answer's one gRPC message, after its status said OK.
std::string_view message_of(const Call& c) {
  if (c.body.size() < kGrpcPrefix) throw Error(ExitCode::other, "an answer without a message");
  const auto* b = reinterpret_cast<const std::uint8_t*>(c.body.data());
  if (b[0] != 0) throw Error(ExitCode::other, "a compressed answer (none was asked for)");
  const std::size_t length = (std::size_t{b[1]} << 24) | (std::size_t{b[2]} << 16) |
                             (std::size_t{b[3]} << 8) | std::size_t{b[4]};
  if (length > host::kPodResourcesMaxBytes)
    throw Error(ExitCode::other, fmt::format("an answer of {} bytes, more than the {} taken",
                                             length, host::kPodResourcesMaxBytes));
  if (c.body.size() != kGrpcPrefix + length)
    throw Error(ExitCode::other, c.body.size() < kGrpcPrefix + length
                                     ? "a truncated message"
                                     : "more than one message in a unary answer");
  return std::string_view(c.body).substr(kGrpcPrefix);
}

}  // namespace

std::vector<host::PodResources> list_pod_resources(const std::string& socket,
                                                   std::chrono::milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  Fd fd{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)};
  if (fd.fd < 0) throw Error(ExitCode::other, fmt::format("socket: {}", std::strerror(errno)));
  connect_to(fd.fd, socket, deadline);

  Call c;
  c.fd = fd.fd;
  c.request.assign(kGrpcPrefix, '\0');  // uncompressed, length 0: ListPodResourcesRequest{}
  nghttp2_session_callbacks* raw_callbacks = nullptr;
  if (nghttp2_session_callbacks_new(&raw_callbacks) != 0) throw std::bad_alloc();
  const std::unique_ptr<nghttp2_session_callbacks, CallbacksDeleter> callbacks(raw_callbacks);
  nghttp2_session_callbacks_set_send_callback(raw_callbacks, on_send);
  nghttp2_session_callbacks_set_on_header_callback(raw_callbacks, on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(raw_callbacks, on_data);
  nghttp2_session_callbacks_set_on_stream_close_callback(raw_callbacks, on_close);
  nghttp2_session* raw_session = nullptr;
  if (nghttp2_session_client_new(&raw_session, raw_callbacks, &c) != 0) throw std::bad_alloc();
  const std::unique_ptr<nghttp2_session, SessionDeleter> session(raw_session);

  // Windows as large as the largest answer taken, so a large answer needs no round trip.
  constexpr auto kWindow = static_cast<std::uint32_t>(host::kPodResourcesMaxBytes + kGrpcPrefix);
  const std::array<nghttp2_settings_entry, 2> settings{
      {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0}, {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kWindow}}};
  nghttp2_submit_settings(raw_session, NGHTTP2_FLAG_NONE, settings.data(), settings.size());
  nghttp2_session_set_local_window_size(raw_session, NGHTTP2_FLAG_NONE, 0,
                                        static_cast<std::int32_t>(kWindow));
  const auto grpc_timeout = fmt::format("{}m", timeout.count());
  const std::array<nghttp2_nv, 8> headers{header(":method", "POST"),
                                          header(":scheme", "http"),
                                          header(":authority", "localhost"),
                                          header(":path", "/v1.PodResourcesLister/List"),
                                          header("content-type", "application/grpc"),
                                          header("te", "trailers"),
                                          header("grpc-timeout", grpc_timeout),
                                          header("user-agent", "gpuclk")};
  nghttp2_data_provider body{};
  body.read_callback = read_request;
  c.stream =
      nghttp2_submit_request(raw_session, nullptr, headers.data(), headers.size(), &body, nullptr);
  if (c.stream < 0)
    throw Error(ExitCode::other,
                fmt::format("cannot send the request: {}", nghttp2_strerror(c.stream)));
  exchange(raw_session, c, deadline);

  if (c.too_big)
    throw Error(ExitCode::other, fmt::format("an answer larger than the {} bytes taken",
                                             host::kPodResourcesMaxBytes));
  if (!c.status.empty() && c.status != "200")
    throw Error(ExitCode::other, fmt::format("HTTP status {}", c.status));
  if (c.grpc_status.empty()) {
    if (c.reset != 0)
      throw Error(ExitCode::other,
                  fmt::format("the stream was reset ({})", nghttp2_http2_strerror(c.reset)));
    throw Error(ExitCode::other, "an answer without a gRPC status");
  }
  if (c.grpc_status != "0") {
    const auto text = percent_decoded(c.grpc_message);
    throw Error(ExitCode::other,
                fmt::format("gRPC status {} ({}){}{}", c.grpc_status, grpc_code_name(c.grpc_status),
                            text.empty() ? "" : ": ", text));
  }
  return host::decode_list_pod_resources(message_of(c));
}

}  // namespace gpuclk::serve
