#include "host/process.h"

#include <pwd.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>

namespace gpuclk::host {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

std::string user_name(unsigned uid) {
  passwd entry{};
  passwd* found = nullptr;
  char buffer[4096];
  if (getpwuid_r(uid, &entry, buffer, sizeof buffer, &found) == 0 && found != nullptr)
    return found->pw_name;
  return std::to_string(uid);
}

std::optional<ProcessInfo> read_process(unsigned pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  // stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses, so the fields
  // are counted after the last ')'. utime and stime are fields 14 and 15, in clock ticks.
  const auto stat = read_all(dir + "/stat");
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  ProcessInfo p;
  p.pid = pid;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  double utime = 0, stime = 0, start = 0;
  for (int n = 3; n <= 22 && fields >> field; ++n) {
    if (n == 14) utime = std::stod(field);
    if (n == 15) stime = std::stod(field);
    if (n == 22) start = std::stod(field);  // starttime: clock ticks after boot
  }
  double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  if (ticks <= 0) ticks = 100.0;
  p.cpu_time = std::chrono::duration<double>((utime + stime) / ticks);
  std::istringstream uptime(read_all("/proc/uptime"));
  if (double up = 0; uptime >> up && up * ticks >= start)
    p.age = std::chrono::duration<double>(up - start / ticks);

  auto command = read_all(dir + "/cmdline");
  while (!command.empty() && command.back() == '\0') command.pop_back();
  for (auto& c : command)
    if (c == '\0') c = ' ';
  if (command.empty())
    command = "[" + stat.substr(stat.find('(') + 1, close - stat.find('(') - 1) + "]";
  p.command = command;

  std::istringstream status(read_all(dir + "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Uid:", 0) == 0) {
      p.user = user_name(static_cast<unsigned>(std::stoul(line.substr(4))));
      break;
    }
  }
  return p;
}

}  // namespace gpuclk::host
