// The bounded line reader every text input goes through: lines as std::getline gives them, a line
// over the bound refused after reading little more than the bound, a read error an error.
#include <gtest/gtest.h>

#include <cstdio>
#include <iostream>
#include <istream>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include <tcemu/cases/input_error.hpp>
#include <tcemu/cases/line_reader.hpp>

namespace tcemu {
namespace {

std::vector<std::string> lines_of(const std::string& text, std::size_t longest) {
  std::istringstream in(text);
  LineReader reader(in, "t.txt", longest);
  std::vector<std::string> lines;
  for (std::string line; reader.next(line);) {
    lines.push_back(line);
    EXPECT_EQ(reader.line(), lines.size());
  }
  return lines;
}

std::string error_of(std::istream& in, std::size_t longest) {
  LineReader reader(in, "t.txt", longest);
  try {
    for (std::string line; reader.next(line);) {
    }
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(LineReader, GivesTheLinesOfGetline) {
  using Lines = std::vector<std::string>;
  EXPECT_EQ(lines_of("", 10), Lines{});
  EXPECT_EQ(lines_of("\n", 10), Lines{""});
  EXPECT_EQ(lines_of("a\n\nbc\r\n", 10), (Lines{"a", "", "bc\r"}));
  EXPECT_EQ(lines_of("a\nlast", 10), (Lines{"a", "last"}));  // no final '\n'
  EXPECT_EQ(lines_of(std::string("x\0y\n", 4), 10), Lines{std::string("x\0y", 3)});
  // Lines longer than the reader's chunk (4096 bytes), up to the bound, whole.
  const std::string long_line(10000, 'z');
  EXPECT_EQ(lines_of(long_line + "\n" + long_line, 10000), (Lines{long_line, long_line}));
  const std::string chunk_line(4095, 'c');  // exactly a chunk, then its '\n'
  EXPECT_EQ(lines_of(chunk_line + "\nd\n", 4095), (Lines{chunk_line, "d"}));
}

TEST(LineReader, RefusesALineOverTheBoundNamingFileAndLine) {
  std::istringstream ten("0123456789\n01234567890\n");
  EXPECT_EQ(error_of(ten, 10),
            "t.txt:2: line longer than 10 bytes (the longest a line may be); not read further");
  std::istringstream last("ok\n01234567890");
  EXPECT_EQ(error_of(last, 10),
            "t.txt:2: line longer than 10 bytes (the longest a line may be); not read further");
}

// An endless line (/dev/zero) is refused after about the bound, not read whole.
TEST(LineReader, StopsAnEndlessLineAtTheBound) {
  struct Zeros : std::streambuf {
    std::size_t served = 0;
    char block[4096] = {};
    int_type underflow() override {
      served += sizeof block;
      setg(block, block, block + sizeof block);
      return 0;
    }
  } zeros;
  std::istream in(&zeros);
  EXPECT_EQ(error_of(in, std::size_t{1} << 20),
            "t.txt:1: line longer than 1048576 bytes (the longest a line may be); not read "
            "further");
  EXPECT_LE(zeros.served, (std::size_t{1} << 20) + 2 * 4096);
}

// A read error (the stream's badbit) is an error, after the lines read before it.
TEST(LineReader, AReadErrorIsNotTheEndOfTheInput) {
  struct Failing : std::streambuf {
    std::string text = "one\ntwo\n";
    bool served = false;
    int_type underflow() override {
      if (served) throw std::ios_base::failure("disk on fire");
      served = true;
      setg(text.data(), text.data(), text.data() + text.size());
      return traits_type::to_int_type(text[0]);
    }
  } failing;
  std::istream in(&failing);
  LineReader reader(in, "t.txt");
  std::string line;
  ASSERT_TRUE(reader.next(line));
  ASSERT_TRUE(reader.next(line));
  EXPECT_EQ(line, "two");
  try {
    reader.next(line);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("t.txt: read error after line 2", 0), 0u) << e.what();
  }
}

// std::cin (synchronised with stdio) ends at a failed read as at the end of the input; the
// reader tells them apart by ferror(stdin). Standard input here: a directory, which opens and
// fails to read (EISDIR).
TEST(LineReader, AReadErrorOnStandardInputIsAnError) {
  ASSERT_NE(std::freopen("/", "r", stdin), nullptr);
  std::cin.clear();
  LineReader reader(std::cin, "<stdin>");
  std::string line;
  try {
    reader.next(line);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "<stdin>: read error after line 0: Is a directory");
  }
  std::clearerr(stdin);
  std::cin.clear();
}

}  // namespace
}  // namespace tcemu
