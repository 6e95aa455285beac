// libFuzzer target: the .npy reader's dtype rule (cli/npy_file.hpp) over every NumPy dtype kind,
// item size and byte order, every element type, the format given or the option's default.
//
// Input: byte 0 chooses the element type (bits 0-2: fp16 bf16 tf32 fp32 e4m3 e5m2 fp64) and
// whether the command line gave its format (bit 3; else the default of "--type"); byte 1 the
// dtype: a byte order (bits 0-1: < > | =), a kind (bits 2-5: b i u f c m M O S U V, or raw: the
// descr is the next byte's count of bytes), an item size (bits 6-7: 1 2 4 8); byte 2 the shape
// (bits 0-2 rows, 3-5 columns, 6 Fortran order); the rest is the data. Properties: a file read
// has a dtype the rule admits (little endian or byte-free, f u i or V of the type's size, a float
// only as NumPy's float of the type, bit patterns only with the format given) and ROWS x COLS
// elements that round-trip through write_npy; a refusal names the file, and a dtype refused only
// for want of the format names the option.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>

#include "matrix_file.hpp"
#include "npy_file.hpp"

namespace {

using namespace tcemu::cli;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "npy dtype: %s\n", what.c_str());
  std::abort();
}

ElementType type_of(std::uint8_t byte) {
  ElementType t;
  switch (byte & 7) {
    case 0:
      t = element_type(tcemu::formats::fp16);
      break;
    case 1:
      t = element_type(tcemu::formats::bf16);
      break;
    case 2:
      t = element_type(tcemu::formats::tf32);
      break;
    case 3:
      t = element_type(tcemu::formats::fp32);
      break;
    case 4:
      t = element_type(tcemu::formats::e4m3);
      break;
    case 5:
      t = element_type(tcemu::formats::e5m2);
      break;
    default:
      t = element_type(tcemu::Real::fp64);
      break;
  }
  t.option = "--type";
  t.given = (byte & 8) != 0;
  return t;
}

// The header as numpy.lib.format writes it, version 1.0.
std::string npy(const std::string& descr, bool fortran, int rows, int cols) {
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string s = "\x93NUMPY\x01";
  s += '\0';
  s += static_cast<char>(header.size() & 0xff);
  s += static_cast<char>(header.size() >> 8);
  return s + header;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const ElementType type = type_of(data[0]);
  const char orders[] = "<>|=";
  const char kinds[] = "biufcmMOSUV";
  const int kind_index = (data[1] >> 2) & 15;
  std::size_t at = 3;
  std::string descr;
  if (kind_index < 11) {
    descr = std::string(1, orders[data[1] & 3]) + kinds[kind_index] +
            std::to_string(1 << (data[1] >> 6));
  } else if (at < size) {  // raw: the descr's bytes
    const std::size_t count = data[at++] % 16;
    for (; descr.size() < count && at < size; ++at) descr += static_cast<char>(data[at]);
    if (descr.find('\'') != std::string::npos) return 0;  // would end the string early
  }
  const int rows = data[2] & 7, cols = (data[2] >> 3) & 7;
  const bool fortran = (data[2] & 64) != 0;
  std::istringstream in(npy(descr, fortran, rows, cols) +
                        std::string(reinterpret_cast<const char*>(data + at), size - at));
  BitMatrix m;
  try {
    m = read_npy(in, "fuzz", type);
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    if (!message.starts_with("fuzz: ")) finding("a refusal does not name the file: " + message);
    // Well formed but for the missing format: the message says which option gives it.
    const bool bits = descr.size() == 3 && (descr[1] == 'u' || descr[1] == 'i' || descr[1] == 'V');
    if (bits && !type.given && descr[0] != '>' && (descr[2] - '0') * 8 == type.bits &&
        message.find("does not say which format") != std::string::npos &&
        message.find("give it with --type") == std::string::npos) {
      finding("a refusal for the format does not name the option: " + message);
    }
    return 0;
  }
  // Admitted: the rule holds.
  if (m.npy_dtype != descr) finding("npy_dtype is not the file's descr");
  if (descr.size() < 3 || descr[0] == '>') finding("admitted a big-endian or short dtype");
  const char kind = descr[1];
  if (kind != 'f' && kind != 'u' && kind != 'i' && kind != 'V') finding("admitted kind " + descr);
  if (std::atoi(descr.c_str() + 2) * 8 != type.bits) finding("admitted another item size");
  if (kind == 'f' && !type.numpy_float) finding("admitted NumPy's float as another format");
  if (kind != 'f' && !type.given) finding("admitted bit patterns without the format given");
  if (m.rows != rows || m.cols != cols ||
      m.bytes.size() != static_cast<std::size_t>(rows * cols * type.bytes())) {
    finding("the matrix does not hold ROWS x COLS elements");
  }
  // The messages of the A/B check: symmetric, defined for every admitted dtype.
  if (npy_dtypes_differ_in_format(descr, "<f2") != npy_dtypes_differ_in_format("<f2", descr) ||
      describe_npy_dtype(descr).empty()) {
    finding("the A/B format check is not symmetric");
  }
  std::ostringstream out;
  write_npy(out, m);
  std::istringstream back_in(out.str());
  ElementType given = type;
  given.given = true;
  const BitMatrix back = read_npy(back_in, "written", given);
  if (back.rows != m.rows || back.cols != m.cols) finding("the written file has another shape");
  for (std::int64_t i = 0; i < m.rows; ++i) {
    for (std::int64_t j = 0; j < m.cols; ++j) {
      if (back.get(i, j) != m.get(i, j)) finding("the written file has other bits");
    }
  }
  return 0;
}
