// Where the journal lives and how it is read and written: <state dir>/journal.json, replaced
// atomically (temporary file, fsync, rename, fsync of the directory), and <state dir>/lock, an
// flock that serializes gpuclk processes from reading the journal to their last write.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "control/journal.h"
#include "util/error.h"

namespace gpuclk::control {

// The boot this host runs (/proc/sys/kernel/random/boot_id); empty when unreadable.
std::string current_boot_id();

// A wait for the journal's lock that was given up (JournalStore::GiveUp): nothing was written.
class LockWaitStopped : public Error {
 public:
  LockWaitStopped(long holder_pid, const std::string& message)
      : Error(ExitCode::other, message,
              "nothing was written; `gpuclk journal` shows what that process set"),
        holder_pid_(holder_pid) {}
  long holder_pid() const { return holder_pid_; }

 private:
  long holder_pid_;
};

class JournalStore {
 public:
  explicit JournalStore(std::filesystem::path state_dir);

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path file() const { return dir_ / "journal.json"; }

  // Held from before the journal is read until after the last write; released by the
  // destructor (and by the kernel if the process dies).
  class Lock {
   public:
    Lock(Lock&& other) noexcept;
    Lock& operator=(Lock&&) = delete;
    Lock(const Lock&) = delete;
    ~Lock();

   private:
    friend class JournalStore;
    explicit Lock(int fd) : fd_(fd) {}
    int fd_ = -1;
  };

  // Asked every 50 ms while another gpuclk holds the lock, with how long this one has waited:
  // true ends the wait (LockWaitStopped). A service that is stopping must not wait forever for
  // a writer that never finishes.
  using GiveUp = std::function<bool(std::chrono::steady_clock::duration waited)>;

  // Creates the state directory if needed and takes the lock, calling `waiting` (with the
  // holder's pid when known) before waiting for another gpuclk. Throws Error: exit 4 when the
  // directory or lock cannot be created for lack of permission, 255 otherwise; LockWaitStopped
  // when `give_up` ended the wait.
  Lock lock(const std::function<void(long holder_pid)>& waiting = {},
            const GiveUp& give_up = {}) const;

  // Whether another process holds the lock now (asked without waiting; false when the lock
  // cannot be opened: the writer's own lock() says why).
  bool locked_by_another() const;

  // The journal (empty when there is none). Throws Error (exit 255) for an unreadable or corrupt
  // file, naming it and what to do.
  Journal load() const;
  // What is wrong with a journal that exists and can be read but not used (truncated, edited,
  // not gpuclk's): the message and what to do; nullopt for a good one, none, or one this user
  // may not read. A reader that falls back to no journal says this once.
  std::optional<std::string> damage() const;
  // Like load(), but nullopt instead of throwing (status views that must not fail).
  std::optional<Journal> try_load() const;
  // Replaces the file `name` in the state directory with `bytes`, atomically and durably (a
  // temporary file, fsync, rename, fsync of the folder), as the journal is saved. Throws Error
  // (4 or 255).
  void write_atomically(const std::string& name, const std::string& bytes) const;
  // Replaces the journal atomically and durably. Throws Error (4 or 255).
  void save(Journal journal) const;
  // Moves the journal aside as journal.json.<suffix> (a stale journal from an earlier boot).
  std::filesystem::path archive(const std::string& suffix) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace gpuclk::control
