// The terminal while top runs: an ncurses session (alternate screen, no echo, keypad) that the
// destructor ends, whatever the way out (return, exception, SIGINT, SIGTERM), so the shell gets
// its terminal back as it was. Also the drawing primitives the screen uses: clipped text, bars,
// graphs — in colour unless NO_COLOR is set, with Unicode blocks where the locale is UTF-8.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>
#include <vector>

namespace gpuclk::tui {

enum class Tone : short { plain = 0, good = 1, warn = 2, bad = 3, accent = 4 };

// A key from the terminal; resize when the window changed size (SIGWINCH), none on timeout.
struct Key {
  enum Kind { none, resize, character, up, down, left, right, page_up, page_down } kind = none;
  int ch = 0;  // for character
};

class Terminal {
 public:
  // Starts the session; throws Error (exit 2) when stdin or stdout is not a terminal.
  Terminal();
  ~Terminal();
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  int rows() const;
  int columns() const;
  bool color() const { return color_; }
  bool unicode() const { return unicode_; }

  // Waits at most `wait` for a key. Returns early (none) when SIGINT or SIGTERM arrived.
  Key key(std::chrono::milliseconds wait);
  // True once SIGINT or SIGTERM arrived (the loop ends, the destructor restores the terminal).
  static bool stop_requested();
  static int stop_signal();  // the signal that asked to stop (0: none)

  void begin_frame();  // erases the screen buffer
  void end_frame();    // shows it

  // Text at (y, x), cut at `width` columns (and the screen's edge); UTF-8 counted by code point.
  void text(int y, int x, std::string_view s, int width = -1, Tone tone = Tone::plain,
            bool bold = false, bool reverse = false);
  // A bar of `width` cells filled to `fraction` (0..1), with a mark at `mark` (0..1).
  void bar(int y, int x, int width, double fraction, std::optional<double> mark, Tone tone);
  // A graph `height` rows tall, one column per value (fraction 0..1 of the height; nullopt:
  // no data), bottom row at y + height - 1.
  void graph(int y, int x, int height, const std::vector<std::optional<double>>& columns,
             Tone tone);
  void hline(int y, int x, int width);
  // A box with a border, cleared inside.
  void box(int y, int x, int height, int width);

 private:
  bool color_ = false;
  bool unicode_ = false;
};

}  // namespace gpuclk::tui
