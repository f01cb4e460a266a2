// tui::reasons_in_words: the clock event reasons as top prints them.
#include <gtest/gtest.h>

#include "gpu/clock_reasons.h"
#include "tui/screen.h"

namespace gpuclk::tui {
namespace {

using gpu::ClockReasons;

TEST(tui_screen, reasons_in_words_most_telling_first) {
  EXPECT_EQ(reasons_in_words(0), "");
  EXPECT_EQ(reasons_in_words(ClockReasons::sw_power_cap), "power cap");
  EXPECT_EQ(reasons_in_words(ClockReasons::gpu_idle | ClockReasons::sw_thermal_slowdown),
            "SW thermal, idle");
  EXPECT_EQ(reasons_in_words(ClockReasons::hw_slowdown | 0x100000), "HW slowdown, other");
}

}  // namespace
}  // namespace gpuclk::tui
