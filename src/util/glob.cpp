#include "util/glob.h"

#include <fmt/format.h>

#include "util/error.h"
#include "util/parse.h"

namespace gpuclk::glob {
namespace {

// Matches the bracket expression at pattern[p] ('[' … ']') against c; sets `end` past it.
// Returns false with end = npos when the bracket is not closed.
bool bracket(std::string_view pattern, std::size_t p, char c, std::size_t& end) {
  std::size_t i = p + 1;
  bool negate = false;
  if (i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^')) {
    negate = true;
    ++i;
  }
  bool hit = false;
  bool first = true;
  while (i < pattern.size() && (first || pattern[i] != ']')) {
    first = false;
    char lo = pattern[i];
    char hi = lo;
    if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
      hi = pattern[i + 2];
      i += 3;
    } else {
      ++i;
    }
    if (lo <= c && c <= hi) hit = true;
  }
  if (i >= pattern.size()) {
    end = std::string_view::npos;
    return false;
  }
  end = i + 1;
  return hit != negate;
}

}  // namespace

// The classic iterative matcher: on a mismatch, go back to just after the last '*' and let it
// swallow one more character. Each star restarts at most |text| times, and only the last star
// is ever revisited, so the work is O(|pattern| × |text|) with no recursion.
bool match(std::string_view pattern, std::string_view text) {
  std::size_t p = 0, t = 0;
  std::size_t star = std::string_view::npos, star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size()) {
      const char pc = pattern[p];
      if (pc == '*') {
        star = p++;
        star_t = t;
        continue;
      }
      if (pc == '?') {
        ++p;
        ++t;
        continue;
      }
      if (pc == '[') {
        std::size_t end = 0;
        const bool hit = bracket(pattern, p, text[t], end);
        if (end != std::string_view::npos) {
          if (hit) {
            p = end;
            ++t;
            continue;
          }
        } else if (text[t] == '[') {  // an unclosed '[' is a literal
          ++p;
          ++t;
          continue;
        }
      } else if (pc == text[t]) {
        ++p;
        ++t;
        continue;
      }
    }
    if (star == std::string_view::npos) return false;
    p = star + 1;
    t = ++star_t;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool search(std::string_view pattern, std::string_view text) {
  std::string wrapped;
  wrapped.reserve(pattern.size() + 2);
  wrapped += '*';
  wrapped += pattern;
  wrapped += '*';
  return match(wrapped, text);
}

void check(std::string_view pattern, std::string_view option) {
  if (pattern.size() > kMaxPattern) {
    throw bad_argument(fmt::format("{}: the pattern '{}' is longer than {} characters", option,
                                   parse::quote(pattern), kMaxPattern),
                       "give a shorter pattern; * and ? match any characters");
  }
  for (std::size_t p = 0; p < pattern.size(); ++p) {
    if (pattern[p] != '[') continue;
    std::size_t end = 0;
    bracket(pattern, p, 'a', end);
    if (end == std::string_view::npos) {
      throw bad_argument(
          fmt::format("{}: '{}' has a '[' without its ']'", option, parse::quote(pattern)),
          "a pattern takes *, ?, [abc], [a-z], [!x]");
    }
    p = end - 1;
  }
}

}  // namespace gpuclk::glob
