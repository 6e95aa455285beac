#include "npy_file.hpp"

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <tcemu/cases/input_error.hpp>
#include <tcemu/cases/printable.hpp>

namespace tcemu::cli {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
// Real headers are a few hundred bytes; a larger length field is a damaged file, not a reason
// to allocate.
constexpr std::uint32_t kLargestHeader = 1 << 16;

[[noreturn]] void bad(const std::string& name, const std::string& what) {
  throw InputError(name + ": " + what);
}

// The header's dict literal, read token by token: {'key': value, ...} with string, True/False
// and tuple-of-integers values, as numpy.lib.format writes it.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  struct Header {
    std::optional<std::string> descr;
    std::optional<bool> fortran_order;
    std::optional<std::vector<std::int64_t>> shape;
  };

  Header parse() {
    Header h;
    expect('{');
    while (!take('}')) {
      const std::string key = quoted();
      expect(':');
      if (key == "descr") {
        h.descr = quoted();
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
      } else if (key == "shape") {
        h.shape = tuple();
      } else {
        fail("unexpected header key '" + printable(key) + "'");
      }
      if (!take(',')) {
        expect('}');
        break;
      }
    }
    skip_space();
    if (pos_ != text_.size()) fail("text after the header's closing brace");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    bad(name_, ".npy header: " + what + " (header '" + printable(text_) + "')");
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool take(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!take(c)) fail(std::string("expected '") + c + "'");
  }
  std::string quoted() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      fail("expected a quoted string");
    }
    const char quote = text_[pos_++];
    const auto end = text_.find(quote, pos_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }
  bool boolean() {
    skip_space();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (text_.substr(pos_).starts_with(word)) {
        pos_ += std::string_view(word).size();
        return value;
      }
    }
    fail("fortran_order is neither True nor False");
  }
  std::vector<std::int64_t> tuple() {
    expect('(');
    std::vector<std::int64_t> values;
    while (!take(')')) {
      skip_space();
      std::int64_t v = 0;
      bool digits = false;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        const int d = text_[pos_++] - '0';
        if (v > (std::numeric_limits<std::int64_t>::max() - d) / 10) fail("a dimension overflows");
        v = v * 10 + d;
        digits = true;
      }
      if (!digits) fail("expected a dimension in shape");
      take('L');  // Python 2 long literals
      values.push_back(v);
      if (!take(',')) {
        expect(')');
        break;
      }
    }
    return values;
  }

  std::string_view text_;
  const std::string& name_;
  std::size_t pos_ = 0;
};

// Checks a dtype string against the element type: little endian (or no byte order for one
// byte), a float only where NumPy's float is the type's container, else bit patterns of the
// type's size, and those only where the command line gave the format.
void check_descr(const std::string& descr, const ElementType& type, const std::string& name) {
  const auto refuse = [&](const std::string& why) {
    bad(name, "dtype '" + printable(descr) + "' cannot hold " + type.name + " elements: " + why);
  };
  // Items of another format: where the format is the option's default, the option is what the
  // user may have missed.
  const auto refuse_format = [&](const std::string& why) {
    refuse(why +
           (type.given || type.option.empty()
                ? ""
                : " (" + type.option + " gives the format; its default is " + type.name + ")"));
  };
  if (descr.size() < 3) refuse("not a NumPy scalar dtype");
  const char order = descr[0], kind = descr[1];
  if (order == '>') refuse("big endian; save it as little endian (astype('<...'))");
  if (order != '<' && order != '|' && order != '=') refuse("not a NumPy scalar dtype");
  int size = 0;
  for (const char c : descr.substr(2)) {
    if (!std::isdigit(static_cast<unsigned char>(c)) || size > 1000) refuse("no item size");
    size = size * 10 + (c - '0');
  }
  if (size * 8 != type.bits) {
    refuse_format(std::to_string(size) + "-byte items, " + type.name + " needs " +
                  std::to_string(type.bytes()));
  }
  if (kind == 'f' && !type.numpy_float) {
    refuse_format("NumPy's float of that size is another format");
  }
  if (kind != 'f' && kind != 'u' && kind != 'i' && kind != 'V') {
    refuse("expected a float, unsigned or signed integer bit patterns, or ml_dtypes' void");
  }
  if (kind != 'f' && !type.given) {
    bad(name, "dtype '" + printable(descr) + "' (" + describe_npy_dtype(descr) +
                  ") does not say which format its elements are; give it with " + type.option +
                  " (the default " + type.name + " is taken only from NumPy's float" +
                  std::to_string(type.bits) + ")");
  }
}

}  // namespace

BitMatrix read_npy(std::istream& in, const std::string& name, const ElementType& type) {
  // A read error (badbit) anywhere is one, never a short file.
  const auto read = [&](char* to, std::size_t count) {
    in.read(to, static_cast<std::streamsize>(count));
    if (in.bad()) bad(name, "read error");
    return static_cast<bool>(in);
  };
  char prefix[8];
  if (!read(prefix, 8) || std::string_view(prefix, 6) != kMagic) {
    bad(name, "not a .npy file (no \\x93NUMPY magic)");
  }
  const int major = static_cast<unsigned char>(prefix[6]);
  if (major < 1 || major > 3) bad(name, "unsupported .npy version " + std::to_string(major));
  unsigned char length_bytes[4] = {};
  const int length_size = major == 1 ? 2 : 4;
  if (!read(reinterpret_cast<char*>(length_bytes), static_cast<std::size_t>(length_size))) {
    bad(name, "the .npy header length is cut off");
  }
  std::uint32_t length = 0;
  for (int b = 0; b < length_size; ++b) length |= std::uint32_t{length_bytes[b]} << (8 * b);
  if (length > kLargestHeader) {
    bad(name, ".npy header of " + std::to_string(length) + " bytes (at most " +
                  std::to_string(kLargestHeader) + " expected)");
  }
  std::string text(length, '\0');
  if (!read(text.data(), length)) bad(name, "the .npy header is cut off");
  const auto h = HeaderParser(text, name).parse();
  if (!h.descr || !h.fortran_order || !h.shape) {
    bad(name, ".npy header lacks " + std::string(!h.descr           ? "'descr'"
                                                 : !h.fortran_order ? "'fortran_order'"
                                                                    : "'shape'"));
  }
  check_descr(*h.descr, type, name);
  if (h.shape->size() != 2) {
    bad(name, "the array is " + std::to_string(h.shape->size()) + "-D; a matrix file is 2-D");
  }
  BitMatrix m{.type = type,
              .rows = (*h.shape)[0],
              .cols = (*h.shape)[1],
              .layout = *h.fortran_order ? Layout::column_major : Layout::row_major,
              .bytes = {},
              .npy_dtype = *h.descr};
  if (m.rows != 0 && m.cols > std::numeric_limits<std::int64_t>::max() / type.bytes() / m.rows) {
    bad(name, "shape (" + std::to_string(m.rows) + ", " + std::to_string(m.cols) +
                  ") overflows a byte count");
  }
  const auto expected = static_cast<std::uint64_t>(m.rows * m.cols * type.bytes());
  // The elements grow with the bytes the file holds, in chunks, never to more than the shape
  // needs plus one chunk.
  constexpr std::size_t kChunk = 1 << 20;
  while (in) {
    const std::size_t have = m.bytes.size();
    if (have > expected) break;
    m.bytes.resize(have + kChunk);
    read(reinterpret_cast<char*>(m.bytes.data() + have), kChunk);
    m.bytes.resize(have + static_cast<std::size_t>(in.gcount()));
  }
  if (m.bytes.size() != expected) {
    bad(name, "shape (" + std::to_string(m.rows) + ", " + std::to_string(m.cols) + ") of " +
                  type.name + " needs " + std::to_string(expected) + " data bytes, the file has " +
                  (m.bytes.size() > expected ? "more" : std::to_string(m.bytes.size())));
  }
  return m;
}

std::string describe_npy_dtype(const std::string& descr) {
  // check_descr took it: a byte order, a kind among f u i V, then the item size in bytes.
  const char kind = descr.size() >= 3 ? descr[1] : '?';
  const std::string size = descr.size() >= 3 ? descr.substr(2) : "?";
  const std::string bits = std::to_string(std::atoi(size.c_str()) * 8);
  switch (kind) {
    case 'f':
      return "float" + bits;
    case 'u':
      return "uint" + bits + " bit patterns";
    case 'i':
      return "int" + bits + " bit patterns";
    case 'V':
      return size + "-byte void items" +
             (size == "2"   ? ", as ml_dtypes saves bfloat16"
              : size == "1" ? ", as ml_dtypes saves float8 and float4"
                            : "");
    default:
      return "dtype '" + printable(descr) + "'";
  }
}

bool npy_dtypes_differ_in_format(const std::string& a, const std::string& b) {
  const auto kind = [](const std::string& descr) { return descr.size() >= 3 ? descr[1] : '?'; };
  return (kind(a) == 'f' && kind(b) == 'V') || (kind(a) == 'V' && kind(b) == 'f');
}

void write_npy(std::ostream& out, const BitMatrix& m) {
  const std::string size = std::to_string(m.type.bytes());
  const std::string descr = m.type.numpy_float    ? "<f" + size
                            : m.type.bytes() == 1 ? "|u1"
                                                  : "<u" + size;
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " +
                       (m.layout == Layout::column_major ? "True" : "False") + ", 'shape': (" +
                       std::to_string(m.rows) + ", " + std::to_string(m.cols) + "), }";
  // Magic (6), version (2), length (2), header and its '\n': a multiple of 64 bytes.
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  out.write(kMagic.data(), static_cast<std::streamsize>(kMagic.size()));
  out.put('\x01').put('\x00');
  out.put(static_cast<char>(header.size() & 0xff)).put(static_cast<char>(header.size() >> 8));
  out << header;
  out.write(reinterpret_cast<const char*>(m.bytes.data()),
            static_cast<std::streamsize>(m.bytes.size()));
}

}  // namespace tcemu::cli
