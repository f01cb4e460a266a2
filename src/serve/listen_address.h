// The HTTP side's --listen value, checked before the service starts anything: "PORT",
// "IPV4:PORT" (dotted decimal, four parts) or "[IPV6]:PORT", port 0-65535 (0: any free port).
#pragma once

#include <string>

namespace gpuclk::serve {

struct ListenAddress {
  std::string host;  // "" for every address; an IPv6 one without its brackets
  unsigned port = 0;
  bool ipv6 = false;

  // As civetweb takes it ("127.0.0.1:9400", "[::1]:9400", "9400").
  std::string text() const;
};

// Throws Error (exit 2) naming the value and the part that is wrong: "999.1.1.1" is not an
// address (no octet wraps), "127.1" and "0x7f.0.0.1" are not dotted decimal, 99999 is no port.
ListenAddress parse_listen_address(const std::string& text);

// Whether a TCP socket can be bound there now (SO_REUSEADDR, as civetweb binds). Throws Error
// (exit 255) with the system's reason ("Address already in use") when it cannot.
void check_can_listen(const ListenAddress& address);

}  // namespace gpuclk::serve
