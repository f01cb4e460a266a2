#include "occupancy/cuobjdump.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "util/error.h"

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
  char buffer[65536];
  for (;;) {
    const ssize_t got = ::read(pipe_ends[0], buffer, sizeof buffer);
    if (got > 0) {
      output.text.append(buffer, std::size_t(got));
    } else if (got == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(pipe_ends[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  output.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

void require_readable_file(const std::string& path, const char* what) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode) ||
      ::access(path.c_str(), R_OK) != 0) {
    throw bad_argument(fmt::format("{} {} is not a readable file", what, path));
  }
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
    throw bad_argument(fmt::format("cuobjdump cannot read {}: {}", path, last_line(output.text)),
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
  require_readable_file(path, "ptxas log");
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  std::vector<KernelResources> kernels = parse_ptxas_log(text.str());
  if (kernels.empty()) {
    throw bad_argument(fmt::format("{} has no \"Compiling entry function\" line of ptxas -v", path),
                       "capture it with nvcc -Xptxas -v … 2> build.log (or --resource-usage)");
  }
  return kernels;
}

}  // namespace gpuclk::occupancy
