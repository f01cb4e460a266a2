// Drives the real NCCL Inspector plugin (libnccl-profiler-inspector.so, built from NCCL's
// plugins/profiler/inspector) through NCCL's profiler interface v5, as NCCL would: one process
// per rank, each an init() per communicator, then per operation the host event (start, stop),
// and per kernel channel its start (GPU start time), its stop state (GPU stop time) and its stop.
// The plugin then writes its JSON lines with its own code, so the files are exactly what it
// writes. Only NCCL and the GPU are played: the operations, their GPU times and the host times at
// which they happen (real sleeps, so the host timestamps are real too).
//
// The plugin asks CUDA for the current device and its UUID when a communicator is created; this
// program answers cudaGetDevice (exported with -rdynamic, found before libcudart's) and
// fake_libcuda.so answers the driver calls, so it runs on a machine without a GPU.
//
// Build and run: tests/data/nccl_inspector/recorder/record.sh (README.md beside the recordings).
//
// Usage: inspector_recorder PLUGIN.so --ranks N --steps K --op AllReduce --mib M --busbw GBS
//        [--ops-per-step J] [--compute-ms C] [--late-rank R --late-ms D] [--comm-name NAME]
//        [--comm-hash HEX] [--channels CH] [--p2p-mib M] [--jitter-us U] [--first-device D]
//        [--teardown-ms T]
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

// --- Our own declarations of NCCL's profiler interface v5 (the part the plugin reads). --------
namespace abi {
enum : std::uint64_t { kColl = 1 << 1, kP2p = 1 << 2, kKernelCh = 1 << 6 };
enum : int { kKernelChStop = 22 };
using Logger = void (*)(int level, unsigned long flags, const char* file, int line, const char* fmt,
                        ...);
struct EventDescr {
  std::uint64_t type;
  void* parent;
  int rank;
  union {
    struct {
      std::uint64_t sequence;
      const char* func;
      const void* send;
      void* recv;
      std::size_t count;
      int root;
      const char* datatype;
      std::uint8_t channels;
      std::uint8_t warps;
      const char* algo;
      const char* proto;
      void* parent_group;
    } coll;
    struct {
      const char* func;
      void* buffer;
      const char* datatype;
      std::size_t count;
      int peer;
      std::uint8_t channels;
      void* parent_group;
    } p2p;
    struct {
      std::uint8_t channel;
      std::uint64_t gpu_timer_ns;
    } kernel;
  };
};
union StateArgs {
  struct {
    std::uint64_t gpu_timer_ns;
  } kernel;
};
struct Profiler {
  const char* name;
  int (*init)(void** context, std::uint64_t comm_id, int* mask, const char* comm_name, int nodes,
              int ranks, int rank, Logger log);
  int (*start)(void* context, void** handle, EventDescr* descr);
  int (*stop)(void* handle);
  int (*record)(void* handle, int state, StateArgs* args);
  int (*finalize)(void* context);
};
}  // namespace abi

// --- CUDA runtime calls the plugin makes, answered here. --------------------------------------
static int g_device = 0;
extern "C" int cudaGetDevice(int* device) {
  *device = g_device;
  return 0;
}
extern "C" const char* cudaGetErrorString(int) { return "no error"; }

namespace {

struct Scenario {
  int ranks = 2, steps = 20, ops_per_step = 2, channels = 4, late_rank = -1, first_device = 0;
  double mib = 25, busbw_gbs = 300, compute_ms = 40, late_ms = 0, p2p_mib = 0, jitter_us = 20;
  // An application does something after its last collective before it destroys the
  // communicator; the plugin drops what its dump thread has not written by then.
  double teardown_ms = 5;
  std::string op = "AllReduce", comm_name;
  std::uint64_t comm_hash = 0x5eed0c0ffee1ULL;
};

void quiet_log(int, unsigned long, const char*, int, const char*, ...) {}

std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::uint64_t(ts.tv_sec) * 1000000000ULL + std::uint64_t(ts.tv_nsec);
}

void sleep_until_ns(std::uint64_t t) {
  timespec ts{time_t(t / 1000000000ULL), long(t % 1000000000ULL)};
  while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

// nccl-tests' bus factor for the operations recorded here; the plugin computes its own.
double bus_factor(const std::string& op, int n) {
  if (op == "AllReduce") return 2.0 * (n - 1) / n;
  if (op == "AllGather" || op == "ReduceScatter") return double(n - 1) / n;
  return 1;
}

// Where the ranks meet: each publishes when it arrived at each operation (host ns, shared
// memory mapped before the fork), and waits for the others, as a collective's kernels wait for
// each other's data. So the GPU times given to the plugin match the host times it reads itself,
// however late the OS wakes a rank up.
class Meeting {
 public:
  Meeting(int ranks, int operations)
      : ranks_(ranks),
        size_(std::size_t(ranks) * std::size_t(operations) * sizeof(std::uint64_t)),
        slots_(static_cast<std::uint64_t*>(
            mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0))) {}
  bool ok() const { return slots_ != MAP_FAILED; }
  // Publishes `rank`'s arrival at `operation`, then returns the last arrival of all ranks.
  std::uint64_t meet(int operation, int rank, std::uint64_t arrived) {
    volatile std::uint64_t* row = slots_ + std::size_t(operation) * std::size_t(ranks_);
    row[rank] = arrived;
    __sync_synchronize();
    for (;;) {
      std::uint64_t last = 0;
      bool all = true;
      for (int r = 0; r < ranks_; ++r) {
        all = all && row[r] != 0;
        if (row[r] > last) last = row[r];
      }
      if (all) return last;
      usleep(20);
    }
  }

 private:
  int ranks_;
  std::size_t size_;
  std::uint64_t* slots_;
};

// When `rank` means to arrive at an operation planned at `base`: a little jitter, and for the
// late rank (`late`: the first operation of a step) late_ms more: its step started late.
std::uint64_t planned_arrival(const Scenario& s, int rank, std::uint64_t base, std::mt19937_64& rng,
                              bool late) {
  std::normal_distribution<double> jitter(0, s.jitter_us * 1e3);
  double t = double(base) + std::fabs(jitter(rng));
  if (late && rank == s.late_rank) t += s.late_ms * 1e6;
  return std::uint64_t(t);
}

// How long the data takes to move once every rank is there, ns.
std::uint64_t transfer_ns(const Scenario& s, double bytes, bool point_to_point) {
  const double factor = point_to_point ? 1 : bus_factor(s.op, s.ranks);
  const double algbw = s.busbw_gbs * 1e9 / (factor > 0 ? factor : 1);
  const bool per_rank = !point_to_point && (s.op == "AllGather" || s.op == "ReduceScatter");
  return std::uint64_t((per_rank ? bytes * s.ranks : bytes) / algbw * 1e9);
}

// The events NCCL raises for one operation on one rank, at the times it would raise them:
// the host call when the rank gets there, its kernel channels starting, then (once every rank
// has arrived and the data has moved) stopping. Returns when the operation ended.
std::uint64_t play(const abi::Profiler& prof, void* context, abi::EventDescr op_descr, int channels,
                   std::uint64_t planned, Meeting& meeting, int operation, std::uint64_t transfer) {
  sleep_until_ns(planned);
  const std::uint64_t arrive = now_ns();
  void* op = nullptr;
  prof.start(context, &op, &op_descr);  // the host call (coll_start_ts)
  prof.stop(op);                        // enqueued (coll_stop_ts)
  std::vector<void*> kernels(std::size_t(channels), nullptr);
  for (int c = 0; op && c < channels; ++c) {
    abi::EventDescr k{};
    k.type = abi::kKernelCh;
    k.parent = op;
    k.rank = op_descr.rank;
    k.kernel.channel = std::uint8_t(c);
    k.kernel.gpu_timer_ns = arrive + std::uint64_t(c) * 300;
    prof.start(context, &kernels[std::size_t(c)], &k);
  }
  const std::uint64_t end = meeting.meet(operation, op_descr.rank, arrive) + transfer;
  sleep_until_ns(end);
  for (int c = 0; op && c < channels; ++c) {
    abi::StateArgs args{};
    args.kernel.gpu_timer_ns = end - std::uint64_t(channels - c) * 200;
    prof.record(kernels[std::size_t(c)], abi::kKernelChStop, &args);
    prof.stop(kernels[std::size_t(c)]);
  }
  return end;
}

abi::EventDescr collective(const Scenario& s, int rank, std::uint64_t sequence, double bytes) {
  abi::EventDescr d{};
  d.type = abi::kColl;
  d.rank = rank;
  d.coll.sequence = sequence;
  d.coll.func = s.op.c_str();
  d.coll.count = std::size_t(bytes / 4);
  d.coll.datatype = "ncclFloat32";
  d.coll.channels = std::uint8_t(s.channels);
  d.coll.warps = 16;
  d.coll.algo = "RING";
  d.coll.proto = "SIMPLE";
  return d;
}

abi::EventDescr point_to_point(const Scenario& s, int rank, bool send, double bytes) {
  abi::EventDescr d{};
  d.type = abi::kP2p;
  d.rank = rank;
  d.p2p.func = send ? "Send" : "Recv";
  d.p2p.datatype = "ncclFloat32";
  d.p2p.count = std::size_t(bytes / 4);
  d.p2p.peer = send ? (rank + 1) % s.ranks : (rank + s.ranks - 1) % s.ranks;
  d.p2p.channels = 2;
  return d;
}

// One rank's run. Every rank plans the same operations from the same seed and meets the others
// at each (Meeting), so all agree on when each operation ended.
int run_rank(const abi::Profiler& prof, const Scenario& s, int rank, std::uint64_t start,
             Meeting& meeting) {
  g_device = s.first_device + rank;
  void* context = nullptr;
  int mask = 0;
  const char* name = s.comm_name.empty() ? nullptr : s.comm_name.c_str();
  prof.init(&context, s.comm_hash, &mask, name, 1, s.ranks, rank, quiet_log);
  if (!context) {
    std::fprintf(stderr, "rank %d: the plugin created no communicator (NCCL_INSPECTOR_ENABLE?)\n",
                 rank);
    return 1;
  }
  std::mt19937_64 rng(42);
  const double bytes = s.mib * 1048576.0, p2p_bytes = s.p2p_mib * 1048576.0;
  std::uint64_t t = start, sequence = 0;
  int operation = 0;
  for (int step = 0; step < s.steps; ++step) {
    t += std::uint64_t(s.compute_ms * 1e6);
    for (int j = 0; j < s.ops_per_step; ++j) {
      const std::uint64_t planned = planned_arrival(s, rank, t, rng, j == 0);
      t = play(prof, context, collective(s, rank, ++sequence, bytes), s.channels, planned, meeting,
               operation++, transfer_ns(s, bytes, false)) +
          50000;
    }
    if (p2p_bytes > 0) {
      const std::uint64_t planned = planned_arrival(s, rank, t, rng, false);
      t = play(prof, context, point_to_point(s, rank, rank % 2 == 0, p2p_bytes), 2, planned,
               meeting, operation++, transfer_ns(s, p2p_bytes, true)) +
          50000;
    }
  }
  sleep_until_ns(now_ns() + std::uint64_t(s.teardown_ms * 1e6));
  prof.finalize(context);
  return 0;
}

bool parse(int argc, char** argv, Scenario& s) {
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--ranks")
      s.ranks = std::atoi(value.c_str());
    else if (key == "--steps")
      s.steps = std::atoi(value.c_str());
    else if (key == "--ops-per-step")
      s.ops_per_step = std::atoi(value.c_str());
    else if (key == "--channels")
      s.channels = std::atoi(value.c_str());
    else if (key == "--late-rank")
      s.late_rank = std::atoi(value.c_str());
    else if (key == "--first-device")
      s.first_device = std::atoi(value.c_str());
    else if (key == "--mib")
      s.mib = std::atof(value.c_str());
    else if (key == "--busbw")
      s.busbw_gbs = std::atof(value.c_str());
    else if (key == "--compute-ms")
      s.compute_ms = std::atof(value.c_str());
    else if (key == "--late-ms")
      s.late_ms = std::atof(value.c_str());
    else if (key == "--p2p-mib")
      s.p2p_mib = std::atof(value.c_str());
    else if (key == "--jitter-us")
      s.jitter_us = std::atof(value.c_str());
    else if (key == "--teardown-ms")
      s.teardown_ms = std::atof(value.c_str());
    else if (key == "--op")
      s.op = value;
    else if (key == "--comm-name")
      s.comm_name = value;
    else if (key == "--comm-hash")
      s.comm_hash = std::strtoull(value.c_str(), nullptr, 16);
    else {
      std::fprintf(stderr, "unknown option %s\n", key.c_str());
      return false;
    }
  }
  return s.ranks >= 1 && s.channels >= 1 && s.channels <= 64;
}

}  // namespace

int main(int argc, char** argv) {
  Scenario s;
  if (argc < 2 || !parse(argc, argv, s)) {
    std::fprintf(stderr, "usage: %s PLUGIN.so --ranks N --steps K --op NAME --mib M ...\n",
                 argv[0]);
    return 2;
  }
  void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!plugin) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  auto* prof = static_cast<abi::Profiler*>(dlsym(plugin, "ncclProfiler_v5"));
  if (!prof) {
    std::fprintf(stderr, "%s exports no ncclProfiler_v5\n", argv[1]);
    return 1;
  }
  Meeting meeting(s.ranks, s.steps * (s.ops_per_step + 1));
  if (!meeting.ok()) {
    std::perror("mmap");
    return 1;
  }
  const std::uint64_t start = now_ns() + 200000000ULL;  // every rank starts together
  std::vector<pid_t> children;
  for (int rank = 0; rank < s.ranks; ++rank) {
    const pid_t pid = fork();
    if (pid == 0) _exit(run_rank(*prof, s, rank, start, meeting));
    children.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  return failed == 0 ? 0 : 1;
}
