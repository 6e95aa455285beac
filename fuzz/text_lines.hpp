// The lines of a fuzz input, as the case-file parsers see them: split at '\n', numbered from 1,
// the last one possibly empty (fuzz_case_file.cpp, fuzz_block_scaled.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace tcemu_fuzz {

// Calls visit(line_number, line) for every line of `text`, in order.
template <class Visit>
void for_each_line(std::string_view text, const Visit& visit) {
  std::size_t number = 0;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    visit(++number, text.substr(start, end - start));
    start = end + 1;
  }
}

}  // namespace tcemu_fuzz
