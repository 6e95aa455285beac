// An input error: a file (or standard input) that is missing, unreadable, malformed, empty or of
// the wrong shape or type. The message names the file, and the line, field or option where there
// is one. Front doors report it apart from their results (every tcemu command exits 2 for it;
// session::InputError is this class).
#pragma once

#include <stdexcept>

namespace tcemu {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tcemu
