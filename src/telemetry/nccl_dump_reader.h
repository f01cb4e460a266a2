// The NCCL Inspector's dump directories of a node, read as they grow: under a root (what the
// service is given, `gpuclk serve --nccl-inspector-dir`), the files `<host>-pid<pid>.log` of the
// root itself and of each directory one level below it (one per job: the Slurm prolog sets
// NCCL_INSPECTOR_DUMP_DIR=<root>/<jobid>). Each file is read from where the last poll stopped; a
// line the plugin is still writing is left for the next poll. Memory is bounded: at most
// `max_read_bytes` of a file per poll, `max_files` files, a line longer than `max_line_bytes`
// skipped (an error); a file whose process is gone and that stopped growing is forgotten (its
// size kept, so it is never read twice).
//
// Not thread-safe: one thread polls.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "telemetry/nccl_inspector.h"

namespace gpuclk::telemetry::nccl {

struct DumpReaderOptions {
  std::size_t max_files = 1024;            // files followed at once; more are errors
  std::size_t max_read_bytes = 4 << 20;    // per file and poll
  std::size_t max_line_bytes = 1 << 20;    // a longer line is skipped
  std::chrono::seconds forget_after{600};  // idle this long with its process gone
};

// New records of one dump directory (the root, or a job's directory below it).
struct DumpBatch {
  std::string directory;
  std::vector<InspectorRecord> records;
};

class DumpReader {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;
  explicit DumpReader(std::string root, DumpReaderOptions options = {});

  // Reads what the files gained since the last poll, by directory (in name order). Problems
  // (unreadable directories or files, lines that are not records) are counted, never thrown.
  // `alive(pid)`: whether the file's process still runs; a file idle for forget_after whose
  // process is not alive is forgotten.
  std::vector<DumpBatch> poll(SteadyTime now, const std::function<bool(unsigned)>& alive);

  const std::string& root() const { return root_; }
  std::size_t files() const { return files_.size(); }  // followed now
  std::uint64_t errors() const { return errors_; }     // since the start
  std::uint64_t records() const { return records_; }   // since the start
  // The last few problems ("FILE:LINE: what"), newest last (at most 8).
  const std::vector<std::string>& last_problems() const { return problems_; }
  // The directories with a file followed now (a directory none is left in: its job is gone).
  std::set<std::string> directories() const;

 private:
  struct File {
    std::string directory;
    unsigned pid = 0;
    std::uint64_t offset = 0;
    std::size_t line = 1;  // the number of the line at `offset`
    SteadyTime grew{};
  };
  std::vector<std::string> list_files();
  void read_file(const std::string& path, File& file, SteadyTime now, DumpBatch& batch);
  void problem(std::string text);

  std::string root_;
  DumpReaderOptions options_;
  std::map<std::string, File> files_;  // by path
  struct Done {
    std::uint64_t offset = 0, size = 0;
  };
  std::map<std::string, Done> done_;  // forgotten files, by path
  std::uint64_t errors_ = 0, records_ = 0;
  std::vector<std::string> problems_;
};

}  // namespace gpuclk::telemetry::nccl
