#include "tui/terminal.h"

#define NCURSES_NOMACROS
#include <curses.h>
#include <langinfo.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <clocale>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>

#include "util/error.h"

namespace gpuclk::tui {
namespace {

std::atomic<int> g_stop_signal{0};

extern "C" void on_stop_signal(int sig) { g_stop_signal.store(sig); }

// Our handlers are installed before initscr(), so ncurses leaves SIGINT and SIGTERM to us (it
// takes only signals still at their default): the loop notices the flag and returns, and the
// destructor's endwin() restores the terminal. No SA_RESTART: a signal ends the wait for a key.
void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
}

// Bytes of the UTF-8 code point that starts with `c`.
std::size_t utf8_length(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c >> 5) == 0x6) return 2;
  if ((c >> 4) == 0xe) return 3;
  if ((c >> 3) == 0x1e) return 4;
  return 1;
}

attr_t attributes(bool color, Tone tone, bool bold, bool reverse) {
  attr_t a = A_NORMAL;
  if (color && tone != Tone::plain) a |= static_cast<attr_t>(COLOR_PAIR(static_cast<short>(tone)));
  if (bold) a |= A_BOLD;
  if (reverse) a |= A_REVERSE;
  return a;
}

}  // namespace

Terminal::Terminal() {
  if (isatty(STDIN_FILENO) == 0 || isatty(STDOUT_FILENO) == 0)
    throw bad_argument("gpuclk top needs a terminal (stdin and stdout)",
                       "for a stream use gpuclk dmon; for one look, gpuclk status");
  std::setlocale(LC_ALL, "");
  unicode_ = std::strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
  install_stop_handlers();
  if (initscr() == nullptr) throw Error(ExitCode::other, "cannot start the terminal (ncurses)");
  cbreak();
  noecho();
  nonl();
  keypad(stdscr, TRUE);
  curs_set(0);
  const char* no_color = std::getenv("NO_COLOR");  // https://no-color.org: set and not empty
  color_ = (no_color == nullptr || *no_color == '\0') && has_colors();
  if (color_) {
    start_color();
    use_default_colors();
    init_pair(static_cast<short>(Tone::good), COLOR_GREEN, -1);
    init_pair(static_cast<short>(Tone::warn), COLOR_YELLOW, -1);
    init_pair(static_cast<short>(Tone::bad), COLOR_RED, -1);
    init_pair(static_cast<short>(Tone::accent), COLOR_CYAN, -1);
  }
}

Terminal::~Terminal() { endwin(); }

int Terminal::rows() const { return LINES; }
int Terminal::columns() const { return COLS; }

bool Terminal::stop_requested() { return g_stop_signal.load() != 0; }
int Terminal::stop_signal() { return g_stop_signal.load(); }

Key Terminal::key(std::chrono::milliseconds wait) {
  if (stop_requested()) return {};
  wtimeout(stdscr, static_cast<int>(std::max<long long>(0, wait.count())));
  const int c = wgetch(stdscr);
  switch (c) {
    case ERR:
      return {};
    case KEY_RESIZE:
      return {Key::resize};
    case KEY_UP:
      return {Key::up};
    case KEY_DOWN:
      return {Key::down};
    case KEY_LEFT:
      return {Key::left};
    case KEY_RIGHT:
      return {Key::right};
    case KEY_PPAGE:
      return {Key::page_up};
    case KEY_NPAGE:
      return {Key::page_down};
    default:
      return {Key::character, c};
  }
}

void Terminal::begin_frame() { werase(stdscr); }
void Terminal::end_frame() {
  wnoutrefresh(stdscr);
  doupdate();
}

void Terminal::text(int y, int x, std::string_view s, int width, Tone tone, bool bold,
                    bool reverse) {
  if (y < 0 || y >= LINES || x >= COLS) return;
  std::string ascii;
  if (!unicode_ && std::any_of(s.begin(), s.end(), [](char c) { return (c & 0x80) != 0; })) {
    // Not a UTF-8 terminal: dots and dashes become '-', any other non-ASCII character '?'.
    for (std::size_t i = 0; i < s.size();) {
      const auto n = utf8_length(static_cast<unsigned char>(s[i]));
      const auto cp = s.substr(i, n);
      if (n == 1)
        ascii += s[i];
      else
        ascii += (cp == "·" || cp == "–" || cp == "—" || cp == "─") ? '-' : '?';
      i += n;
    }
    s = ascii;
  }
  int room = COLS - x;
  if (width >= 0) room = std::min(room, width);
  std::size_t bytes = 0;
  int cells = 0;
  while (bytes < s.size() && cells < room) {
    bytes += utf8_length(static_cast<unsigned char>(s[bytes]));
    ++cells;
  }
  bytes = std::min(bytes, s.size());
  const attr_t a = attributes(color_, tone, bold, reverse);
  wattron(stdscr, a);
  mvwaddnstr(stdscr, y, x, s.data(), static_cast<int>(bytes));
  wattroff(stdscr, a);
}

void Terminal::bar(int y, int x, int width, double fraction, std::optional<double> mark,
                   Tone tone) {
  if (width < 3) return;
  const int inner = width - 2;
  fraction = std::clamp(fraction, 0.0, 1.0);
  text(y, x, "[");
  text(y, x + width - 1, "]");
  // Whole cells, and on a UTF-8 terminal the last one in eighths.
  const double cells = fraction * inner;
  const int full = static_cast<int>(cells);
  const int mark_at =
      mark ? std::clamp(static_cast<int>(std::lround(*mark * inner)) - 1, 0, inner - 1) : -1;
  static const char* const eighths[] = {" ", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  for (int i = 0; i < inner; ++i) {
    std::string cell;
    Tone t = tone;
    if (i < full) {
      cell = unicode_ ? "█" : "#";
    } else if (i == full && unicode_ && static_cast<int>((cells - full) * 8) > 0) {
      cell = eighths[std::clamp(static_cast<int>((cells - full) * 8), 1, 7)];
    } else {
      cell = unicode_ ? "·" : ".";
      t = Tone::plain;
    }
    if (i == mark_at) {
      cell = unicode_ ? "┃" : "|";
      t = Tone::accent;
    }
    text(y, x + 1 + i, cell, 1, t, i == mark_at);
  }
}

void Terminal::graph(int y, int x, int height, const std::vector<std::optional<double>>& columns,
                     Tone tone) {
  if (height < 1) return;
  static const char* const blocks[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  static const char* const ascii[] = {" ", ".", ":", "#"};
  const int steps = unicode_ ? 8 : 3;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const int cx = x + static_cast<int>(c);
    if (!columns[c]) continue;
    const int level =
        static_cast<int>(std::lround(std::clamp(*columns[c], 0.0, 1.0) * height * steps));
    for (int row = 0; row < height; ++row) {
      int in_row = std::clamp(level - row * steps, 0, steps);
      if (row == 0 && in_row == 0 && *columns[c] > 0) in_row = 1;  // non-zero shows
      if (in_row == 0) break;
      text(y + height - 1 - row, cx, unicode_ ? blocks[in_row] : ascii[in_row], 1, tone);
    }
  }
}

void Terminal::hline(int y, int x, int width) {
  for (int i = 0; i < width; ++i) text(y, x + i, unicode_ ? "─" : "-", 1, Tone::plain);
}

void Terminal::box(int y, int x, int height, int width) {
  for (int r = 0; r < height; ++r) {
    const bool edge = r == 0 || r == height - 1;
    for (int c = 0; c < width; ++c) {
      const bool side = c == 0 || c == width - 1;
      std::string cell = " ";
      if (edge && side)
        cell = unicode_ ? (r == 0 ? (c == 0 ? "┌" : "┐") : (c == 0 ? "└" : "┘")) : "+";
      else if (edge)
        cell = unicode_ ? "─" : "-";
      else if (side)
        cell = unicode_ ? "│" : "|";
      text(y + r, x + c, cell, 1);
    }
  }
}

}  // namespace gpuclk::tui
