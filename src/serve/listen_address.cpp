#include "serve/listen_address.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/error.h"
#include "util/parse.h"

namespace gpuclk::serve {
namespace {

constexpr const char* kListenHint =
    "give PORT, IPV4:PORT or [IPV6]:PORT, e.g. 127.0.0.1:9400, 0.0.0.0:9400, [::1]:9400 "
    "(port 0: any free port); off: no HTTP";

Error bad_listen(const std::string& text, const std::string& why) {
  return bad_argument(fmt::format("bad --listen '{}': {}", parse::quote(text), why), kListenHint);
}

}  // namespace

std::string ListenAddress::text() const {
  if (host.empty()) return std::to_string(port);
  return ipv6 ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

ListenAddress parse_listen_address(const std::string& text) {
  ListenAddress a;
  std::string port = text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      throw bad_listen(text, "an IPv6 address is written [ADDRESS]:PORT");
    a.host = text.substr(1, close - 1);
    a.ipv6 = true;
    port = text.substr(close + 2);
    in6_addr v6{};
    if (inet_pton(AF_INET6, a.host.c_str(), &v6) != 1)
      throw bad_listen(text, fmt::format("'{}' is not an IPv6 address", parse::quote(a.host)));
  } else if (const auto colon = text.rfind(':'); colon != std::string::npos) {
    a.host = text.substr(0, colon);
    port = text.substr(colon + 1);
    in_addr v4{};
    // inet_pton takes dotted decimal with four parts only: no octet above 255 wraps, and the
    // shorthands inet_aton would take ("127.1", "0x7f.0.0.1") are refused.
    if (inet_pton(AF_INET, a.host.c_str(), &v4) != 1)
      throw bad_listen(text, fmt::format("'{}' is not an IPv4 address in dotted decimal (four "
                                         "numbers 0-255)",
                                         parse::quote(a.host)));
  }
  const auto number = parse::try_unsigned(port, 0, 65535);
  if (!number)
    throw bad_listen(text, fmt::format("'{}' is not a port (0-65535)", parse::quote(port)));
  a.port = static_cast<unsigned>(*number);
  return a;
}

void check_can_listen(const ListenAddress& address) {
  const int family = address.ipv6 ? AF_INET6 : AF_INET;
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;  // no socket to try with: civetweb says what it finds
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  int rc = 0;
  if (address.ipv6) {
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons(static_cast<std::uint16_t>(address.port));
    inet_pton(AF_INET6, address.host.c_str(), &sa.sin6_addr);
    rc = ::bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa);
  } else {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<std::uint16_t>(address.port));
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    if (!address.host.empty()) inet_pton(AF_INET, address.host.c_str(), &sa.sin_addr);
    rc = ::bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa);
  }
  const int error = errno;
  ::close(fd);
  if (rc != 0) {
    throw Error(ExitCode::other,
                fmt::format("cannot listen on {}: {}", address.text(), std::strerror(error)),
                error == EADDRINUSE ? "another program (an exporter?) has that port: give --listen "
                                      "ADDRESS:OTHER_PORT"
                                    : "give an address of this host (--listen ADDRESS:PORT)");
  }
}

}  // namespace gpuclk::serve
