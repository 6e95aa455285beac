#include <tcemu/cases/line_reader.hpp>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <utility>

#include <tcemu/cases/input_error.hpp>

namespace tcemu {

LineReader::LineReader(std::istream& in, std::string name, std::size_t longest)
    : in_(in), name_(std::move(name)), longest_(longest) {}

bool LineReader::failed() const {
  // std::cin, synchronised with C stdio (the default), reads through stdin's FILE: a failed read
  // sets ferror(stdin) and ends the stream as if at its end.
  return in_.bad() || (&in_ == &std::cin && std::ferror(stdin) != 0);
}

bool LineReader::next(std::string& text) {
  text.clear();
  // istream::getline into a fixed chunk: failbit without eofbit means the chunk filled before the
  // '\n' (the line goes on); eofbit means the input ended after gcount() characters (failbit with
  // it: none); neither means that the '\n' ended the line; badbit is a
  // read error (libstdc++'s filebuf throws on a failed read() and the stream turns it into
  // badbit; an allocation failure would do the same, and none happens here).
  std::array<char, 4096> chunk;
  bool any = false;
  for (;;) {
    if (failed()) break;
    if (!in_.good()) return false;  // eof (or failbit) from the line before: nothing is left
    errno = 0;
    in_.getline(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto count = static_cast<std::size_t>(in_.gcount());
    if (failed()) break;
    any = any || count > 0;
    // The '\n' was extracted (counted in gcount, not stored) when neither bit is set.
    const bool newline = !in_.fail() && !in_.eof();
    text.append(chunk.data(), newline ? count - 1 : count);
    if (text.size() > longest_) {
      throw InputError(name_ + ":" + std::to_string(line_ + 1) + ": line longer than " +
                       std::to_string(longest_) +
                       " bytes (the longest a line may be); not read further");
    }
    if (newline || in_.eof()) {
      if (!newline && !any) return false;
      ++line_;
      return true;
    }
    in_.clear(in_.rdstate() & ~std::ios::failbit);  // the chunk filled: the line goes on
  }
  const int error = errno;
  throw InputError(name_ + ": read error after line " + std::to_string(line_) +
                   (error != 0 ? std::string(": ") + std::strerror(error) : std::string()));
}

}  // namespace tcemu
