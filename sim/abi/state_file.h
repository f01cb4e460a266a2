// The state file shared by every process using one scenario: read without a lock (writers
// replace it atomically by rename), read-modify-write under an exclusive flock on "<path>.lock".
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace gpuclk::sim::abi {

class StateFile {
 public:
  explicit StateFile(std::filesystem::path path);
  ~StateFile();
  StateFile(const StateFile&) = delete;
  StateFile& operator=(const StateFile&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // True when the file differs from what this process last read or wrote (another process wrote
  // it, or it was removed). Normally one load of a counter shared with the other processes
  // (<path>.gen, bumped by every write); a stat(2) when it moved, and every second regardless, in
  // case someone replaced the file by hand. `steady_now_ns`: the steady clock now, if the caller
  // has read it.
  bool changed(long long steady_now_ns);
  bool changed();
  // The whole file, or nullopt if it does not exist; remembers its identity for changed().
  std::optional<std::string> read();
  // Replaces the file atomically (write to a temporary, rename). Throws std::system_error.
  void write(const std::string& bytes);

  // Exclusive lock for a read-modify-write; released by the destructor.
  class Lock {
   public:
    explicit Lock(const std::filesystem::path& lock_path);
    ~Lock();
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;

   private:
    int fd_ = -1;
  };
  Lock lock() const { return Lock(path_.string() + ".lock"); }

 private:
  struct Identity {
    dev_t device = 0;
    ino_t inode = 0;
    long long mtime_ns = 0;
    long long size = -1;
    bool operator==(const Identity&) const = default;
  };
  static std::optional<Identity> identity_of(const std::filesystem::path& path);

  // Keeps the file we last read or wrote open, so its inode number cannot be reused by a later
  // file: (device, inode) then identifies a version even when mtime is too coarse to.
  void hold(int fd);

  std::filesystem::path path_;
  int held_fd_ = -1;
  std::atomic<std::uint64_t>* generation_ = nullptr;  // mmap of <path>.gen; null if unavailable
  std::uint64_t seen_generation_ = 0;
  long long last_stat_ns_ = 0;
  std::optional<Identity> seen_;  // nullopt: we saw no file
  bool seen_anything_ = false;
};

}  // namespace gpuclk::sim::abi
