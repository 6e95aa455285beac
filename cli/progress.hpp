// A progress line on stderr for long runs of `tcemu gemm`: "LABEL: 42%", redrawn in place on a
// terminal, a plain line at every further 10% otherwise. Nothing is shown in a run that ends
// within its first second (--progress auto) or at all (never); always shows every phase.
#pragma once

#include <chrono>
#include <string>

namespace tcemu::cli {

class Progress {
 public:
  enum class Show { never, automatic, always };

  // `show` as --progress spells it: never, auto or always; anything else is a UsageError.
  static Show show_named(const std::string& word);

  explicit Progress(Show show);
  ~Progress() { end_phase(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Starts a phase called `label`, ending the one before.
  void phase(std::string label);
  // The current phase is `fraction` (0 to 1) done.
  void update(double fraction);
  // Ends the current phase: a terminal's line is finished with a newline.
  void end_phase();

 private:
  bool due() const;

  Show show_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::string label_;
  int shown_ = -1;      // the last percent shown in this phase
  bool drawn_ = false;  // terminal: a line is drawn and not yet ended
};

}  // namespace tcemu::cli
