#include "progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <utility>

#include <tcemu/cases/printable.hpp>
#include <tcemu/session/arguments.hpp>

namespace tcemu::cli {

Progress::Show Progress::show_named(const std::string& word) {
  if (word == "never") return Show::never;
  if (word == "auto") return Show::automatic;
  if (word == "always") return Show::always;
  throw session::UsageError("--progress must be auto, always or never, got '" + printable(word) +
                            "'");
}

Progress::Progress(Show show) : show_(show), terminal_(::isatty(STDERR_FILENO) == 1) {}

void Progress::phase(std::string label) {
  end_phase();
  label_ = std::move(label);
  shown_ = -1;
}

bool Progress::due() const {
  return show_ == Show::always ||
         (show_ == Show::automatic &&
          std::chrono::steady_clock::now() - start_ >= std::chrono::seconds(1));
}

void Progress::update(double fraction) {
  if (!due()) return;
  const auto percent = static_cast<int>(std::floor(std::fmin(std::fmax(fraction, 0.0), 1.0) * 100));
  // A terminal's line is redrawn at each new percent, a plain line printed at each new 10%.
  const int step = terminal_ ? percent : percent / 10 * 10;
  if (step <= shown_) return;
  shown_ = step;
  if (terminal_) {
    std::fprintf(stderr, "\r%s: %3d%%", label_.c_str(), step);
    drawn_ = true;
  } else {
    std::fprintf(stderr, "%s: %d%%\n", label_.c_str(), step);
  }
  std::fflush(stderr);
}

void Progress::end_phase() {
  if (drawn_) std::fputc('\n', stderr);
  drawn_ = false;
}

}  // namespace tcemu::cli
