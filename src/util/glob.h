// Shell-style name patterns (*, ?, [abc], [a-z], [!x]) matched without backtracking blow-up:
// the one pattern language gpuclk takes from users for names (occupancy --kernel). Unlike a
// std::regex, whose recursion overflows the stack on a long name, matching is iterative and
// takes O(pattern × name) steps at worst; patterns are capped at kMaxPattern characters.
#pragma once

#include <cstddef>
#include <string_view>

namespace gpuclk::glob {

inline constexpr std::size_t kMaxPattern = 1024;

// Whether `pattern` matches the whole of `text`.
bool match(std::string_view pattern, std::string_view text);

// Whether `pattern` matches somewhere in `text` (as if it were *pattern*): a plain word finds
// the names that contain it.
bool search(std::string_view pattern, std::string_view text);

// Throws Error (exit 2, naming `option`) when `pattern` is longer than kMaxPattern or has an
// unclosed '['.
void check(std::string_view pattern, std::string_view option);

}  // namespace gpuclk::glob
