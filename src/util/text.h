// Text helpers shared by every layer (parsers of options, profiles, CSV, tool outputs). ASCII
// only: NVML names, option words and tool outputs are ASCII; other bytes pass through unchanged.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace gpuclk::text {

inline bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
inline char to_lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

// `text` without leading and trailing white space (space, tab, CR, LF, VT, FF).
inline std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// `text` in lower case.
inline std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = to_lower(c);
  return out;
}

// `text` in upper case.
inline std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// `text` in lower case with every white space character dropped: "Power Limit" -> "powerlimit",
// for matching words a user may type with any case or spacing.
inline std::string lower_without_space(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (!is_space(c)) out += to_lower(c);
  }
  return out;
}

// The non-empty items of a `separator`-separated list: "a,,b" -> {"a", "b"}.
inline std::vector<std::string> split(std::string_view list, char separator = ',') {
  std::vector<std::string> items;
  while (true) {
    const auto end = list.find(separator);
    const auto item = list.substr(0, end);
    if (!item.empty()) items.emplace_back(item);
    if (end == std::string_view::npos) return items;
    list.remove_prefix(end + 1);
  }
}

// Levenshtein distance (insertions, deletions, substitutions), to suggest what a user probably
// meant. O(a.size() * b.size()) time: callers compare against short names.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "1 error", "3 errors", "0 errors": a count and its noun, singular for exactly one. `plural`
// for nouns that do not take an s ("1 entry", "2 entries").
inline std::string counted(unsigned long long n, std::string_view singular,
                           std::string_view plural = {}) {
  std::string out = std::to_string(n) + " ";
  if (n == 1) return out.append(singular);
  if (!plural.empty()) return out.append(plural);
  return out.append(singular).append("s");
}

}  // namespace gpuclk::text
