// run_command_line with Context::before_effect (what fuzz_argv relies on): a command is stopped
// at its first effect, after every option was checked; a pure command runs to its end.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/context.h"

namespace gpuclk::cli {
namespace {

struct Outcome {
  int code = -1;
  std::string stopped_at;  // empty when no effect was reached
  std::string out, err;
};

Outcome run(const std::vector<std::string>& args) {
  Outcome o;
  std::ostringstream out, err;
  auto* cout_buf = std::cout.rdbuf(out.rdbuf());
  auto* cerr_buf = std::cerr.rdbuf(err.rdbuf());
  Context ctx;
  ctx.before_effect = [](std::string_view what) { throw EffectStopped{std::string(what)}; };
  try {
    o.code = run_command_line(ctx, args);
  } catch (const EffectStopped& e) {
    o.stopped_at = e.what;
  }
  std::cout.rdbuf(cout_buf);
  std::cerr.rdbuf(cerr_buf);
  o.out = out.str();
  o.err = err.str();
  return o;
}

TEST(cli_command_line_test, a_change_stops_before_the_journal_and_nvml) {
  const auto o = run({"--sim", "set", "--power-limit", "300", "--state-dir", "/nonexistent/x"});
  EXPECT_EQ(o.stopped_at, "lock the journal");
  EXPECT_EQ(run({"--sim", "status", "--direct"}).stopped_at, "load NVML");
  EXPECT_EQ(run({"status"}).stopped_at, "connect to the service");
  EXPECT_EQ(run({"serve", "--listen", "off"}).stopped_at, "run gpuclk-serve");
  EXPECT_EQ(run({"stat", "--json", "/nonexistent/x.json", "--", "true"}).stopped_at,
            "write --json FILE");
  EXPECT_EQ(run({"fleet", "--prometheus", "http://127.0.0.1:1"}).stopped_at, "ask Prometheus");
  EXPECT_EQ(run({"manpages", "/nonexistent/man1"}).stopped_at, "write /nonexistent/man1");
}

TEST(cli_command_line_test, bad_options_are_refused_before_any_effect) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"-i", "", "set", "--power-limit", "600"},
        {"set", "--power-limit", "nan"},
        {"fleet", "--prometheus", "ftp://x"},
        {"govern", "--report", "/dev/zero"},
        {"stauts"},
        {"completion", "fish"}}) {
    const auto o = run(args);
    EXPECT_EQ(o.stopped_at, "") << args.front();
    EXPECT_EQ(o.code, 2) << args.front();
  }
}

TEST(cli_command_line_test, pure_commands_run_to_their_end) {
  auto o = run({"occupancy", "--arch", "sm_90", "--threads", "256", "--regs", "64"});
  EXPECT_EQ(o.stopped_at, "");
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("sm_90"), std::string::npos);
  o = run({"doctor", "--explain", "power_capped"});
  EXPECT_EQ(o.stopped_at, "");
  EXPECT_EQ(o.code, 0);
  EXPECT_EQ(run({"--version"}).code, 0);
}

// The hidden generators (cmd_completion.cpp) print what they read from the whole command line:
// every command and option, the hidden ones left out.
TEST(cli_command_line_test, completions_come_from_the_command_line) {
  auto o = run({"completion", "bash"});
  EXPECT_EQ(o.stopped_at, "");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("complete -o default -F _gpuclk gpuclk"), std::string::npos);
  EXPECT_NE(o.out.find("'bench') echo 'gemm mem fma compare p2p nccl' ;;"), std::string::npos);
  EXPECT_NE(o.out.find("--power-limit"), std::string::npos);
  EXPECT_EQ(o.out.find("manpages"), std::string::npos);  // hidden
  o = run({"completion", "zsh"});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("#compdef gpuclk\n", 0), 0u);
  EXPECT_NE(o.out.find("_gpuclk__bench__gemm() {"), std::string::npos);
  EXPECT_NE(o.out.find("'--power-limit=[watts, or default]:text:_files'"), std::string::npos);
  // `gpuclk completion` is not listed by --help.
  o = run({"--help"});
  EXPECT_EQ(o.out.find("completion"), std::string::npos);
}

// Every man page's EXAMPLES that run gpuclk are command lines that parse: each reaches its first
// effect (or runs to its end), none is refused as a bad argument.
TEST(cli_command_line_test, the_man_pages_examples_parse) {
  char dir[] = "/tmp/gpuclk-manpages.XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  Context writer;
  ASSERT_EQ(run_command_line(writer, {"manpages", dir}), 0);
  std::size_t examples = 0;
  for (const auto& page : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(page.path());
    bool in_examples = false;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(".SH ", 0) == 0) in_examples = line == ".SH EXAMPLES";
      if (!in_examples || line.rfind("\\fBgpuclk", 0) != 0) continue;
      std::string text = line.substr(3, line.size() - 6);  // \fB … \fR
      for (std::size_t at; (at = text.find("\\-")) != std::string::npos;) text.erase(at, 1);
      std::istringstream words(text);
      std::vector<std::string> args;
      for (std::string w; words >> w;) args.push_back(w);
      args.erase(args.begin());  // "gpuclk"
      const auto o = run(args);
      EXPECT_NE(o.code, 2) << page.path().filename() << ": " << text << ": " << o.err;
      ++examples;
    }
  }
  std::filesystem::remove_all(dir);
  EXPECT_GE(examples, 25u);
}

}  // namespace
}  // namespace gpuclk::cli
