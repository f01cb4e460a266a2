#include "telemetry/nccl_dump_reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <limits>
#include <set>

namespace gpuclk::telemetry::nccl {
namespace {

namespace fs = std::filesystem;

unsigned pid_of(const std::string& name) {
  const auto at = name.rfind("-pid");
  return unsigned(std::strtoul(name.c_str() + at + 4, nullptr, 10));
}

}  // namespace

DumpReader::DumpReader(std::string root, DumpReaderOptions options)
    : root_(std::move(root)), options_(options) {}

void DumpReader::problem(std::string text) {
  ++errors_;
  problems_.push_back(std::move(text));
  if (problems_.size() > 8) problems_.erase(problems_.begin());
}

// The Inspector's files of the root and of its subdirectories (one level), sorted.
std::vector<std::string> DumpReader::list_files() {
  std::vector<std::string> out;
  std::vector<fs::path> directories{root_};
  std::error_code ec;
  for (fs::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code kind;
    if (it->is_directory(kind)) directories.push_back(it->path());
  }
  if (ec) {
    problem(fmt::format("{}: {}", root_, ec.message()));
    return out;
  }
  for (const auto& directory : directories) {
    for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code kind;
      if (it->is_regular_file(kind) && is_inspector_file_name(it->path().filename().string()))
        out.push_back(it->path().string());
    }
    // A job's directory removed while listed (its epilog): nothing to count.
    if (ec && ec != std::errc::no_such_file_or_directory)
      problem(fmt::format("{}: {}", directory.string(), ec.message()));
    ec.clear();
  }
  std::sort(out.begin(), out.end());
  return out;
}

void DumpReader::read_file(const std::string& path, File& file, SteadyTime now, DumpBatch& batch) {
  // A job's directory is its user's: a link or a FIFO planted there is neither followed (the
  // service reads as root) nor waited on.
  constexpr auto kRefused = std::numeric_limits<std::uint64_t>::max();
  if (file.offset == kRefused) return;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 && errno == ENOENT) return;  // removed since listed
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (fd >= 0) ::close(fd);
    problem(
        fmt::format("{}: {}", path,
                    fd < 0 && errno == ELOOP ? "a symbolic link, not read" : "not a regular file"));
    file.offset = kRefused;  // not tried again
    return;
  }
  if (file.offset >= std::uint64_t(st.st_size)) {
    ::close(fd);
    return;
  }
  std::string text(std::min<std::uint64_t>(options_.max_read_bytes, st.st_size - file.offset),
                   '\0');
  const auto got = ::pread(fd, text.data(), text.size(), off_t(file.offset));
  ::close(fd);
  text.resize(got > 0 ? std::size_t(got) : 0);
  if (text.empty()) return;
  file.grew = now;
  auto parsed = parse_inspector_text(text, path, file.line);
  if (parsed.consumed == 0 &&
      text.size() >= std::min(options_.max_read_bytes, options_.max_line_bytes)) {
    // No newline in all that: a line too long to keep, skipped up to its end.
    const auto newline = text.find('\n');
    problem(fmt::format("{}:{}: a line longer than {} bytes, skipped", path, file.line,
                        options_.max_line_bytes));
    file.offset += newline == std::string::npos ? text.size() : newline + 1;
    if (newline != std::string::npos) ++file.line;
    return;
  }
  file.offset += parsed.consumed;
  file.line += std::size_t(std::count(text.begin(), text.begin() + long(parsed.consumed), '\n'));
  for (const auto& p : parsed.problems)
    problem(fmt::format("{}:{}: {}", p.source, p.line, p.message));
  records_ += parsed.records.size();
  batch.records.insert(batch.records.end(), std::make_move_iterator(parsed.records.begin()),
                       std::make_move_iterator(parsed.records.end()));
}

std::vector<DumpBatch> DumpReader::poll(SteadyTime now,
                                        const std::function<bool(unsigned)>& alive) {
  const auto paths = list_files();
  // Files gone from the disk are forgotten with their sizes.
  for (auto it = done_.begin(); it != done_.end();) {
    std::error_code ec;
    it = fs::exists(it->first, ec) ? std::next(it) : done_.erase(it);
  }
  std::map<std::string, DumpBatch> batches;
  std::set<std::string> present(paths.begin(), paths.end());
  for (auto it = files_.begin(); it != files_.end();) {
    it = present.contains(it->first) ? std::next(it) : files_.erase(it);
  }
  for (const auto& path : paths) {
    auto found = files_.find(path);
    if (found == files_.end()) {
      if (files_.size() >= options_.max_files) {
        if (!done_.contains(path))
          problem(fmt::format("{}: more than {} files, not read", path, options_.max_files));
        continue;
      }
      const auto size = done_.find(path);
      const fs::path p(path);
      File f{p.parent_path().string(), pid_of(p.filename().string()),
             size == done_.end() ? 0 : size->second.offset, 1, now};
      // A forgotten file that did not grow stays forgotten (its line numbers restart).
      std::error_code ec;
      if (size != done_.end() && fs::file_size(p, ec) <= size->second.size) continue;
      if (size != done_.end()) done_.erase(size);
      found = files_.emplace(path, f).first;
    }
    auto& batch = batches[found->second.directory];
    batch.directory = found->second.directory;
    read_file(path, found->second, now, batch);
  }
  // Idle files of processes that are gone: forgotten, their sizes kept.
  for (auto it = files_.begin(); it != files_.end();) {
    if (now - it->second.grew >= options_.forget_after && !alive(it->second.pid)) {
      std::error_code ec;
      const auto size = fs::file_size(it->first, ec);
      done_[it->first] = {it->second.offset, ec ? it->second.offset : size};
      it = files_.erase(it);
    } else {
      ++it;
    }
  }
  std::vector<DumpBatch> out;
  for (auto& [directory, batch] : batches) {
    if (!batch.records.empty()) out.push_back(std::move(batch));
  }
  return out;
}

std::set<std::string> DumpReader::directories() const {
  std::set<std::string> out;
  for (const auto& [path, file] : files_) out.insert(file.directory);
  return out;
}

}  // namespace gpuclk::telemetry::nccl
