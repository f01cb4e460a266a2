// What a request to the service gets: one response line, or a stream of lines; and who sent it.
// The socket server (socket_server.h) reads requests, hands them to the node's router with their
// Peer, and writes the Reply: its line at once, or its Stream's lines as each comes due.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gpuclk::serve {

// Who sent a request (SO_PEERCRED).
struct Peer {
  int pid = -1;
  unsigned uid = 0, gid = 0;
  std::vector<unsigned> groups;  // supplementary (SO_PEERGROUPS)
};

// A request answered by one line per interval (`stream`) instead of one line. The socket
// server asks for each line on its poll thread when it is due (no thread per client);
// destroying the stream ends it (the client went, or the last line was sent).
class Stream {
 public:
  virtual ~Stream() = default;
  // Wall time between lines: the interval asked for, in the GPUs' time base, as wall time.
  virtual std::chrono::nanoseconds interval() const = 0;
  // The next line without its newline; nullopt when it is not ready yet (the first line waits
  // for one read of the fields it asked for: ask again in a few ms). `last`: the final line.
  virtual std::optional<std::string> next(bool& last) = 0;
  // Moves past the next line without building it, for a reader too far behind to be sent it
  // (socket_server.h); the line counts as sent. False when this line may not be skipped (the
  // first, the last of a counted stream, or one not ready): the caller calls next() instead.
  virtual bool skip_line() { return false; }
};

// What a request gets: one response line, or a stream of lines. `text`, when set, is the
// response already serialized (an answer shared by every client that asks the same thing of
// the same node state); `response` is then unused.
struct Reply {
  nlohmann::json response;
  std::unique_ptr<Stream> stream;
  std::shared_ptr<const std::string> text;
};

}  // namespace gpuclk::serve
