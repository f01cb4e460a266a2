// libFuzzer target: gpuclk's whole command line, every command and option. The input is an
// argument vector (arguments separated by NUL bytes; at most 64 of at most 4096 bytes each, the
// rest dropped). run_command_line parses and validates it for real; Context::before_effect stops
// the command at the first point it would act on the world (load NVML, connect to the service,
// run or exec a process, write a file, lock the journal, sleep or watch: docs/hardening.md), so
// nothing happens to the machine. Pure commands (occupancy with --arch, doctor --explain, --help,
// bench compare of two files) run to the end. Output goes nowhere. Asserted: no crash or UB
// (ASan/UBSan), and the exit code is one README documents.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <streambuf>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/context.h"

namespace {

constexpr std::size_t kMaxArgs = 64;
constexpr std::size_t kMaxArgBytes = 4096;

// A stream buffer that takes every character and keeps none.
class NullBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return c == traits_type::eof() ? 0 : c; }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

// README: 0 ok, 2 bad argument, 3 not supported, 4 no permission, 6 GPU not found, 9 driver not
// loaded, 10/11 doctor and fleet findings, 12 NVML not found, 15 GPU lost, 16 partial, 255 other.
bool documented(int code) {
  switch (code) {
    case 0:
    case 2:
    case 3:
    case 4:
    case 6:
    case 9:
    case 10:
    case 11:
    case 12:
    case 15:
    case 16:
    case 255:
      return true;
    default:
      return false;
  }
}

std::vector<std::string> split_arguments(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args;
  std::string arg;
  for (std::size_t i = 0; i <= size && args.size() < kMaxArgs; ++i) {
    if (i == size || data[i] == '\0') {
      args.push_back(std::move(arg));
      arg.clear();
    } else if (arg.size() < kMaxArgBytes) {
      arg.push_back(static_cast<char>(data[i]));
    }
  }
  return args;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static NullBuffer null;
  static const int dev_null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  // fmt::print and printf write to stdout: fd 1 is /dev/null while the command runs (the replay
  // and libFuzzer print on stdout/stderr between inputs).
  std::fflush(stdout);
  const int saved_stdout = ::dup(STDOUT_FILENO);
  ::dup2(dev_null, STDOUT_FILENO);
  auto* const cout_buf = std::cout.rdbuf(&null);
  auto* const cerr_buf = std::cerr.rdbuf(&null);

  gpuclk::cli::Context ctx;
  ctx.before_effect = [](std::string_view what) {
    throw gpuclk::cli::EffectStopped{std::string(what)};
  };
  int code = 0;
  try {
    code = gpuclk::cli::run_command_line(ctx, split_arguments(data, size));
  } catch (const gpuclk::cli::EffectStopped&) {
    code = 0;  // everything before the first effect ran, and was fine
  }
  std::cout.clear();  // a command may leave the stream failed; the next input starts clean
  std::cerr.clear();
  std::cout.rdbuf(cout_buf);
  std::cerr.rdbuf(cerr_buf);
  std::fflush(stdout);
  ::dup2(saved_stdout, STDOUT_FILENO);
  ::close(saved_stdout);
  if (!documented(code)) __builtin_trap();  // an exit code README does not list
  return 0;
}
