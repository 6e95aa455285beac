// Reading a text input line by line with a bound on the length of a line: every text file the
// front doors read (case files, capture sets, matrix text files) goes through it. A line longer
// than the bound is refused after reading `longest` + 1 bytes of it, so that an input without a
// newline (/dev/zero, a binary file, a 1 GB line) costs at most the bound; a read error is an
// error, never the end of the input.
#pragma once

#include <cstddef>
#include <istream>
#include <string>

namespace tcemu {

class LineReader {
 public:
  // No valid line of a case file or capture set comes near it: a case line of K = 32768 tf32
  // products has 2 x 32768 x 9 + 20 bytes, 590 KB.
  static constexpr std::size_t kLongestLine = std::size_t{1} << 20;

  // `name` stands for the input in messages ("cases.txt", "<stdin>").
  LineReader(std::istream& in, std::string name, std::size_t longest = kLongestLine);

  // Reads the next line into `text`, without its '\n' (a last line without one counts), and
  // returns true; returns false at the end of the input. Throws InputError "NAME:L: line longer
  // than N bytes (the longest a line may be); not read further" for a longer line, and
  // "NAME: read error after line L[: REASON]" when the stream reports one (badbit; for std::cin
  // also ferror(stdin)).
  bool next(std::string& text);

  // The number of the line `next` returned last (from 1).
  std::size_t line() const { return line_; }
  const std::string& name() const { return name_; }

  // The bound for the lines still to come (a matrix file's rows are as long as its columns).
  void set_longest(std::size_t longest) { longest_ = longest; }

 private:
  bool failed() const;

  std::istream& in_;
  std::string name_;
  std::size_t longest_;
  std::size_t line_ = 0;
};

}  // namespace tcemu
