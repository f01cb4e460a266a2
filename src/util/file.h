// Bounded reading of every file gpuclk takes as input (profiles, scenarios, journals, ptxas logs,
// bench reports, batch CSV). A path must name a regular file — /dev/zero, a FIFO, a directory or
// a terminal is refused at once, never read — and the whole file must fit under a size cap, so
// no input can make gpuclk read forever or grow without bound. Where a stream is meant (a batch
// read from stdin with "-"), LineReader bounds each line and the caller bounds the line count.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace gpuclk::file {

// Caps: far above any real input of the kind, far below what would hurt.
inline constexpr std::uint64_t kConfigMax = 4ull << 20;  // profiles, scenarios, journals, reports
inline constexpr std::uint64_t kLogMax = 256ull << 20;   // ptxas logs, cuobjdump output

// The whole of regular file `path`. Throws Error (exit 2, `what` names the input: "profile",
// "ptxas log", …) when it cannot be opened, is not a regular file, or is larger than `max_bytes`.
std::string read_bounded(const std::string& path, std::string_view what,
                         std::uint64_t max_bytes = kConfigMax);

// Throws Error (exit 2) unless `path` is a regular file.
// For inputs handed to another component by path (the simulator's scenario).
void require_regular(const std::string& path, std::string_view what);

// Lines of a regular file, or of stdin for "-": each at most `max_line` bytes (a longer one
// throws exit 2 naming the line number), read through a fixed buffer.
class LineReader {
 public:
  LineReader(const std::string& path, std::string_view what, std::size_t max_line = 1 << 16);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line without its '\n' (and '\r'); false at the end.
  bool next(std::string& line);
  std::size_t line_number() const { return number_; }

 private:
  std::FILE* in_ = nullptr;
  bool owned_ = false;
  std::string what_, path_;
  std::size_t max_line_;
  std::size_t number_ = 0;
};

}  // namespace gpuclk::file
