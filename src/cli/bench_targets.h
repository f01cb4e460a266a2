// What the bench commands share: the selected GPUs with a bench-specific word when there is no
// driver, and each selected GPU's CUDA ordinal (matched by bus id, then UUID; cmd_bench.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <vector>

#include "bench/measure.h"
#include "cli/context.h"

namespace gpuclk::cli {

std::vector<gpu::Device*> selected_gpus(Context& ctx);
std::vector<bench::Target> cuda_targets(const std::vector<gpu::Device*>& devices);

// `gpuclk bench p2p` (cmd_bench_p2p.cpp), a subcommand of `bench`.
void add_bench_p2p_command(CLI::App* bench, Context& ctx);
// `gpuclk bench nccl` (cmd_bench_nccl.cpp), a subcommand of `bench`.
void add_bench_nccl_command(CLI::App* bench, Context& ctx);

}  // namespace gpuclk::cli
