// Names the calling thread (Linux: 15 characters at most, the rest cut), so that `top -H`,
// /proc/PID/task/*/comm and perf/serve_cost.sh's per-thread CPU say which loop a thread runs.
#pragma once

#include <pthread.h>

#include <string>
#include <string_view>

namespace gpuclk::util {

inline void name_this_thread(std::string_view name) {
  const std::string cut(name.substr(0, 15));
  pthread_setname_np(pthread_self(), cut.c_str());  // best effort: a name changes no behaviour
}

}  // namespace gpuclk::util
