#include "occupancy/cuobjdump.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "util/error.h"
#include "util/file.h"
#include "util/parse.h"

extern char** environ;

namespace gpuclk::occupancy {
namespace {

bool is_executable_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

struct Output {
  int exit_status = -1;
  std::string text;  // stdout and stderr together
};

// An external tool is bounded like any input: it may run this long and print this much (a real
// dump of a large binary is a few MB and takes seconds), then it is killed and gpuclk says so.
constexpr auto kToolTimeout = std::chrono::seconds(120);
constexpr std::size_t kToolOutputMax = file::kLogMax;

std::chrono::milliseconds tool_timeout() {
  // Tests shorten it (GPUCLK_TOOL_TIMEOUT_MS); never lengthened past the default.
  if (const char* text = std::getenv("GPUCLK_TOOL_TIMEOUT_MS")) {
    if (auto ms = parse::try_unsigned(text, 1, 120'000)) return std::chrono::milliseconds(*ms);
  }
  return kToolTimeout;
}

// posix_spawn rather than popen: the path goes to the program as one argument, never through a
// shell, so file names with spaces or quotes need no escaping.
Output run(const std::string& program, const std::vector<std::string>& arguments) {
  int pipe_ends[2];
  if (::pipe(pipe_ends) != 0) {
    throw Error(ExitCode::other, fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_ends[0]);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  pid_t child = 0;
  const int spawned = posix_spawn(&child, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_ends[1]);
  Output output;
  if (spawned != 0) {
    ::close(pipe_ends[0]);
    throw Error(ExitCode::other, fmt::format("cannot run {}: {}", program, std::strerror(spawned)));
  }
  const auto limit = tool_timeout();
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::string stopped;  // why the tool was killed; empty when it ended by itself
  char buffer[65536];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      stopped = fmt::format("it ran longer than {} s", static_cast<double>(limit.count()) / 1000.0);
      break;
    }
    pollfd in{pipe_ends[0], POLLIN, 0};
    const int ready = ::poll(&in, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t got = ::read(pipe_ends[0], buffer, sizeof buffer);
    if (got > 0) {
      if (output.text.size() + std::size_t(got) > kToolOutputMax) {
        stopped = fmt::format("it printed more than {} MiB", kToolOutputMax >> 20);
        break;
      }
      output.text.append(buffer, std::size_t(got));
    } else if (got == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(pipe_ends[0]);
  if (!stopped.empty()) ::kill(child, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!stopped.empty()) {
    throw Error(ExitCode::other, fmt::format("{} was stopped: {}", program, stopped),
                "is the file a CUDA binary? a dump of a real one is a few MB and takes seconds");
  }
  output.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

void require_readable_file(const std::string& path, const char* what) {
  file::require_regular(path, what);
}

std::string last_line(const std::string& text) {
  std::string_view rest(text);
  while (!rest.empty() && (rest.back() == '\n' || rest.back() == ' ')) rest.remove_suffix(1);
  const auto start = rest.rfind('\n');
  return std::string(start == std::string_view::npos ? rest : rest.substr(start + 1));
}

}  // namespace

std::optional<std::string> find_cuobjdump() {
  if (const char* chosen = std::getenv("GPUCLK_CUOBJDUMP"); chosen && *chosen) {
    if (is_executable_file(chosen)) return std::string(chosen);
    return std::nullopt;  // a wrong explicit choice is not silently replaced by another
  }
  std::vector<std::string> directories;
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest(path);
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      directories.emplace_back(rest.substr(0, colon));
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  if (const char* cuda_home = std::getenv("CUDA_HOME"); cuda_home && *cuda_home) {
    directories.push_back(std::string(cuda_home) + "/bin");
  }
  directories.emplace_back("/usr/local/cuda/bin");
  for (const std::string& directory : directories) {
    if (directory.empty()) continue;
    const std::string candidate = directory + "/cuobjdump";
    if (is_executable_file(candidate)) return candidate;
  }
  return std::nullopt;
}

std::vector<KernelResources> read_binary_kernels(const std::string& path) {
  require_readable_file(path, "binary");
  const std::optional<std::string> cuobjdump = find_cuobjdump();
  if (!cuobjdump) {
    const char* chosen = std::getenv("GPUCLK_CUOBJDUMP");
    throw Error(
        ExitCode::not_supported,
        chosen && *chosen
            ? fmt::format("GPUCLK_CUOBJDUMP={} is not an executable file", chosen)
            : std::string("cuobjdump not found (looked in GPUCLK_CUOBJDUMP, PATH, $CUDA_HOME/bin, "
                          "/usr/local/cuda/bin): it is needed to read kernels from binaries"),
        "install cuobjdump (apt install cuda-cuobjdump-13-0, or pip install "
        "nvidia-cuda-cuobjdump) and put it on PATH or in GPUCLK_CUOBJDUMP; or build with "
        "nvcc -Xptxas -v … 2> build.log and run gpuclk occupancy --ptxas-log build.log");
  }
  const Output output = run(*cuobjdump, {"--dump-resource-usage", path});
  if (output.exit_status != 0) {
    throw bad_argument(fmt::format("cuobjdump cannot read {}: {}", parse::quote(path),
                                   parse::quote(last_line(output.text), 200)),
                       "give an executable, shared library, cubin or fatbin with CUDA device code");
  }
  std::vector<KernelResources> kernels = parse_cuobjdump_resource_usage(output.text);
  if (kernels.empty()) {
    throw bad_argument(fmt::format("{} has no CUDA kernels with machine code (SASS); it may hold "
                                   "only PTX, which the driver compiles at load time",
                                   path),
                       "compile with -arch=sm_XX (or -gencode …,code=sm_XX) to embed SASS");
  }
  return kernels;
}

std::vector<KernelResources> read_ptxas_log(const std::string& path) {
  std::vector<KernelResources> kernels =
      parse_ptxas_log(file::read_bounded(path, "ptxas log", file::kLogMax));
  if (kernels.empty()) {
    throw bad_argument(
        fmt::format("{} has no \"Compiling entry function\" line of ptxas -v", parse::quote(path)),
        "capture it with nvcc -Xptxas -v … 2> build.log (or --resource-usage)");
  }
  return kernels;
}

}  // namespace gpuclk::occupancy
