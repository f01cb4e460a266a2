#include "gpu/selection.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace gpuclk::gpu {
namespace {

const std::vector<DeviceKey> kNode = {
    {0, "GPU-cba78776-3017-caf5-5d64-a73aee97faac", "00000000:00:06.0"},
    {1, "GPU-1b2c3d4e-0000-1111-2222-333344445555", "00000000:00:07.0"},
    {2, "GPU-1b2c9999-0000-1111-2222-333344445555", "00000000:1A:00.0"},
};

ExitCode code_of(std::string_view spec) {
  try {
    select_devices(spec, kNode);
  } catch (const Error& e) {
    return e.code();
  }
  return ExitCode::ok;
}

}  // namespace

// An empty selection is an error, never "all": `-i "$GPU"` with $GPU unset must not select every
// GPU (issue 17). Leaving -i out is what means all (cli::Context).
TEST(selection_test, empty_is_a_bad_argument) {
  EXPECT_EQ(code_of(""), ExitCode::bad_argument);
  EXPECT_EQ(code_of("  "), ExitCode::bad_argument);
  EXPECT_EQ(code_of(","), ExitCode::bad_argument);
}

// An index that overflows is refused, never wrapped to a GPU that exists.
TEST(selection_test, overflowing_index_is_a_bad_argument) {
  EXPECT_EQ(code_of("18446744073709551616"), ExitCode::bad_argument);
  EXPECT_EQ(code_of("4294967296"), ExitCode::bad_argument);
  EXPECT_EQ(code_of("4096"), ExitCode::bad_argument);
  EXPECT_EQ(code_of("4095"), ExitCode::gpu_not_found);
  EXPECT_EQ(code_of(std::string(100000, '0')), ExitCode::bad_argument);
}

TEST(selection_test, indexes_keep_the_given_order_without_duplicates) {
  EXPECT_EQ(select_devices("2,0,2", kNode), (std::vector<std::size_t>{2, 0}));
  EXPECT_EQ(select_devices(" 1 ", kNode), (std::vector<std::size_t>{1}));
}

TEST(selection_test, uuid_full_or_unique_prefix_case_insensitive) {
  EXPECT_EQ(select_devices("GPU-cba78776-3017-caf5-5d64-a73aee97faac", kNode),
            (std::vector<std::size_t>{0}));
  EXPECT_EQ(select_devices("gpu-CBA7", kNode), (std::vector<std::size_t>{0}));
  EXPECT_EQ(code_of("GPU-1b2c"), ExitCode::bad_argument);  // ambiguous
}

TEST(selection_test, bus_id_in_every_spelling) {
  EXPECT_EQ(select_devices("00000000:00:07.0", kNode), (std::vector<std::size_t>{1}));
  EXPECT_EQ(select_devices("0000:00:07.0", kNode), (std::vector<std::size_t>{1}));
  EXPECT_EQ(select_devices("1a:00.0", kNode), (std::vector<std::size_t>{2}));
  EXPECT_EQ(select_devices("0,00:07.0,GPU-1b2c9", kNode), (std::vector<std::size_t>{0, 1, 2}));
}

TEST(selection_test, unknown_gpu_is_exit_6_and_malformed_is_exit_2) {
  EXPECT_EQ(code_of("7"), ExitCode::gpu_not_found);
  EXPECT_EQ(code_of("GPU-deadbeef"), ExitCode::gpu_not_found);
  EXPECT_EQ(code_of("00:09.0"), ExitCode::gpu_not_found);
  EXPECT_EQ(code_of("0,,1"), ExitCode::bad_argument);
  EXPECT_EQ(code_of("gpu0"), ExitCode::bad_argument);
  EXPECT_EQ(code_of("-1"), ExitCode::bad_argument);
}

TEST(selection_test, normalize_bus_id_rejects_out_of_range_parts) {
  EXPECT_EQ(normalize_bus_id("0:6.0"), "00000000:00:06.0");
  EXPECT_EQ(normalize_bus_id("00:20.0"), "");  // device is 5 bits
  EXPECT_EQ(normalize_bus_id("00:06.8"), "");  // function is 3 bits
  EXPECT_EQ(normalize_bus_id("hello"), "");
}

}  // namespace gpuclk::gpu

namespace gpuclk::gpu {

// A malformed item's hint names the GPUs of this node (issue 32: `-i -1` suggested a bus id that
// was not there, and read as if only index 0 were valid); without a node, the forms only.
TEST(selection_test, malformed_item_hint_names_this_nodes_gpus) {
  const auto hint_of = [](std::string_view spec, const auto& present) {
    try {
      check_selection(spec, present);
    } catch (const Error& e) {
      return std::string(e.hint());
    }
    return std::string("accepted");
  };
  const auto node = [] { return std::optional(kNode); };
  const std::string hint = hint_of("-1", node);
  EXPECT_NE(hint.find("GPUs here: 0 (GPU-cba78776-3017-caf5-5d64-a73aee97faac, 00000000:00:06.0); "
                      "1 (GPU-1b2c3d4e"),
            std::string::npos)
      << hint;
  EXPECT_NE(hint.find("2 (GPU-1b2c9999-0000-1111-2222-333344445555, 00000000:1A:00.0)"),
            std::string::npos)
      << hint;
  EXPECT_EQ(hint_of("0,1", node), "accepted");
  // Out of range: the node's GPUs too.
  EXPECT_NE(hint_of("4096", node).find("GPUs here: 0 ("), std::string::npos);
  // No NVML to ask (it throws) or no node: the forms, and no made-up bus id.
  const auto none = []() -> std::optional<std::vector<DeviceKey>> {
    throw Error(ExitCode::nvml_not_found, "no NVIDIA driver found");
  };
  const std::string forms = hint_of("-1", none);
  EXPECT_NE(forms.find("give GPU indexes, UUIDs (GPU-"), std::string::npos) << forms;
  EXPECT_EQ(forms.find("00:06.0"), std::string::npos) << forms;
  EXPECT_EQ(hint_of("-1", std::function<std::optional<std::vector<DeviceKey>>()>{}), forms);
}

}  // namespace gpuclk::gpu
