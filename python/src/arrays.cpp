#include "arrays.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>

namespace tcemu::python {
namespace {

namespace dl = nb::dlpack;

std::string dtype_name(dl::dtype t) {
  switch (static_cast<dl::dtype_code>(t.code)) {
    case dl::dtype_code::Int:
      return "int" + std::to_string(t.bits);
    case dl::dtype_code::UInt:
      return "uint" + std::to_string(t.bits);
    case dl::dtype_code::Float:
      return "float" + std::to_string(t.bits);
    case dl::dtype_code::Bfloat:
      return "bfloat" + std::to_string(t.bits);
    case dl::dtype_code::Bool:
      return "bool";
    case dl::dtype_code::Float8_E4M3FN:
      return "float8_e4m3fn";
    case dl::dtype_code::Float8_E5M2:
      return "float8_e5m2";
    case dl::dtype_code::Float8_E8M0FNU:
      return "float8_e8m0fnu";
    case dl::dtype_code::Float6_E2M3FN:
      return "float6_e2m3fn";
    case dl::dtype_code::Float6_E3M2FN:
      return "float6_e3m2fn";
    case dl::dtype_code::Float4_E2M1FN:
      return "float4_e2m1fn";
    default:
      return "DLPack type code " + std::to_string(t.code) + " of " + std::to_string(t.bits) +
             " bits";
  }
}

// ml_dtypes' NumPy types, which NumPy does not export through DLPack, and the format each holds.
// Every one but bfloat16 is one byte a value, the bits in the low bits (float4_e2m1fn: 0..15,
// the float6 types: 0..63), so an unsigned view of the array holds the format's bit patterns.
struct MlDtype {
  std::string_view name;
  FloatFormat format;
};
constexpr MlDtype kMlDtypes[] = {
    {"bfloat16", formats::bf16},        {"float8_e4m3fn", formats::e4m3},
    {"float8_e5m2", formats::e5m2},     {"float6_e3m2fn", formats::e3m2},
    {"float6_e2m3fn", formats::e2m3},   {"float4_e2m1fn", formats::e2m1},
    {"float8_e8m0fnu", formats::ue8m0},
};

const MlDtype* ml_dtype(std::string_view dtype) {
  for (const MlDtype& t : kMlDtypes) {
    if (t.name == dtype) return &t;
  }
  return nullptr;
}

// The array type that holds `format`, for messages.
std::string dtype_holding(const FloatFormat& format) {
  if (format == formats::fp16) return "float16";
  if (format == formats::fp32 || format == formats::tf32) return "float32";
  if (format == formats::ue4m3) return "float8_e4m3fn (its sign ignored)";
  for (const MlDtype& t : kMlDtypes) {
    if (t.format == format) return std::string(t.name);
  }
  return std::string(format.name) + " values";
}

void require_host(const Operand& op) {
  if (op.array.device_type() != nb::device::cpu::value) {
    throw nb::value_error((op.name + ": the array is in GPU memory; this call takes host arrays "
                                     "(NumPy, or a CPU tensor)")
                              .c_str());
  }
}

// Element (i, j) of a 2-D array by its strides (in elements).
const unsigned char* element(const Operand& op, std::int64_t i, std::int64_t j) {
  const std::int64_t index = i * op.array.stride(0) + j * op.array.stride(1);
  return static_cast<const unsigned char*>(op.array.data()) +
         index * static_cast<std::int64_t>(op.array.itemsize());
}

}  // namespace

Operand operand(nb::handle object, const char* name) {
  Operand op{{}, std::nullopt, std::nullopt, name, {}};
  nb::object array = nb::borrow(object);
  const nb::module_ numpy = nb::module_::import_("numpy");
  if (nb::isinstance(object, numpy.attr("ndarray"))) {
    const std::string dtype = nb::cast<std::string>(object.attr("dtype").attr("name"));
    if (const MlDtype* t = ml_dtype(dtype)) {
      op.typed = t->format;
      op.dtype = dtype;
      array = object.attr("view")(numpy.attr(container_bytes(t->format) == 2 ? "uint16" : "uint8"));
    }
  }
  if (!nb::try_cast(array, op.array)) {
    throw nb::type_error((op.name + ": expected a NumPy array or an object with __dlpack__, got " +
                          nb::cast<std::string>(nb::type_name(object.type())))
                             .c_str());
  }
  const int device = op.array.device_type();
  if (device != nb::device::cpu::value && device != nb::device::cuda::value) {
    throw nb::value_error((op.name + ": arrays on DLPack device type " + std::to_string(device) +
                           " are not supported: pass host or CUDA arrays")
                              .c_str());
  }
  const dl::dtype t = op.array.dtype();
  if (op.dtype.empty()) op.dtype = dtype_name(t);
  if (t.lanes != 1) throw nb::type_error((op.name + ": vector dtypes are not supported").c_str());
  if (op.typed) return op;
  switch (static_cast<dl::dtype_code>(t.code)) {
    case dl::dtype_code::UInt:
      if (t.bits == 8 || t.bits == 16 || t.bits == 32) return op;
      break;
    case dl::dtype_code::Float:
      if (t.bits == 16) {
        op.typed = formats::fp16;
      } else if (t.bits == 32) {
        op.typed = formats::fp32;
        op.real = Real::fp32;
      } else if (t.bits == 64) {
        op.real = Real::fp64;
      } else {
        break;
      }
      return op;
    case dl::dtype_code::Bfloat:
      if (t.bits != 16) break;
      op.typed = formats::bf16;
      return op;
    case dl::dtype_code::Complex:
      if (t.bits != 128 && t.bits != 64) break;
      op.complex = t.bits == 128 ? Complex::c128 : Complex::c64;
      return op;
    case dl::dtype_code::Float8_E4M3FN:
      op.typed = formats::e4m3;
      return op;
    case dl::dtype_code::Float8_E5M2:
      op.typed = formats::e5m2;
      return op;
    case dl::dtype_code::Float8_E8M0FNU:
      op.typed = formats::ue8m0;
      return op;
    default:
      break;
  }
  throw nb::type_error((op.name + ": dtype " + op.dtype +
                        " is not supported: pass float16, bfloat16, float32, float64, "
                        "complex64, complex128 (ozaki_gemm, accurate_gemm), "
                        "float8_e4m3fn, float8_e5m2, ml_dtypes' float6_e3m2fn, float6_e2m3fn, "
                        "float4_e2m1fn and float8_e8m0fnu, or uint8/uint16/uint32 bit patterns")
                           .c_str());
}

bool on_gpu(const Operand& op) {
  return op.array.device_type() == nb::device::cuda::value;
}

void require_ndim(const Operand& op, std::size_t ndim) {
  if (op.array.ndim() != ndim) {
    throw nb::value_error((op.name + ": expected a " + std::to_string(ndim) + "-D array, got " +
                           std::to_string(op.array.ndim()) + "-D")
                              .c_str());
  }
}

Operand batch_element(const Operand& op, std::size_t i) {
  const std::size_t shape[2] = {op.array.shape(1), op.array.shape(2)};
  const std::int64_t strides[2] = {op.array.stride(1), op.array.stride(2)};
  const auto offset = static_cast<std::int64_t>(i) * op.array.stride(0) *
                      static_cast<std::int64_t>(op.array.itemsize());
  Operand element = op;
  element.array =
      AnyArray(static_cast<const unsigned char*>(op.array.data()) + offset, 2, shape, nb::handle(),
               strides, op.array.dtype(), op.array.device_type(), op.array.device_id());
  element.name = op.name + "[" + std::to_string(i) + "]";
  return element;
}

void require_format(const Operand& op, const FloatFormat& format) {
  const dl::dtype t = op.array.dtype();
  // fp32 arrays hold tf32 values; e4m3 arrays hold ue4m3 scales, whose sign bit is ignored.
  const bool holds =
      op.typed ? (*op.typed == format || (*op.typed == formats::fp32 && format == formats::tf32) ||
                  (*op.typed == formats::e4m3 && format == formats::ue4m3))
               : t.code == static_cast<std::uint8_t>(dl::dtype_code::UInt) &&
                     t.bits == 8 * container_bytes(format);
  if (!holds) {
    throw nb::type_error((op.name + ": dtype " + op.dtype + " does not hold " +
                          std::string(format.name) + " values; pass " + dtype_holding(format) +
                          " or uint" + std::to_string(8 * container_bytes(format)) +
                          " bit patterns")
                             .c_str());
  }
}

std::vector<unsigned char> copy_2d(const Operand& op, Layout layout) {
  const auto rows = static_cast<std::int64_t>(op.array.shape(0));
  const auto cols = static_cast<std::int64_t>(op.array.shape(1));
  const std::size_t size = op.array.itemsize();
  std::vector<unsigned char> out(static_cast<std::size_t>(rows * cols) * size);
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      const std::int64_t at = layout == Layout::row_major ? i * cols + j : j * rows + i;
      std::memcpy(out.data() + static_cast<std::size_t>(at) * size, element(op, i, j), size);
    }
  }
  return out;
}

void require_real(const Operand& op, Real real) {
  if (op.real != real) {
    throw nb::type_error((op.name + ": dtype " + op.dtype + " is not " +
                          (real == Real::fp64 ? "float64" : "float32") + " as the call needs")
                             .c_str());
  }
}

void require_complex(const Operand& op, Complex complex) {
  if (op.complex != complex) {
    throw nb::type_error((op.name + ": dtype " + op.dtype + " is not " +
                          (complex == Complex::c128 ? "complex128" : "complex64") +
                          " as the call needs")
                             .c_str());
  }
}

std::optional<Strided> strided_2d(const Operand& op) {
  const auto rows = static_cast<std::int64_t>(op.array.shape(0));
  const auto cols = static_cast<std::int64_t>(op.array.shape(1));
  const std::int64_t s0 = op.array.stride(0), s1 = op.array.stride(1);
  if ((cols <= 1 || s1 == 1) && (rows <= 1 || s0 >= std::max<std::int64_t>(cols, 1))) {
    return Strided{Layout::row_major, rows <= 1 ? std::max<std::int64_t>(cols, 1) : s0};
  }
  if ((rows <= 1 || s0 == 1) && (cols <= 1 || s1 >= std::max<std::int64_t>(rows, 1))) {
    return Strided{Layout::column_major, cols <= 1 ? std::max<std::int64_t>(rows, 1) : s1};
  }
  return std::nullopt;
}

BitMatrix bit_matrix(const Operand& op, const FloatFormat& format) {
  require_ndim(op, 2);
  require_format(op, format);
  require_host(op);
  BitMatrix m;
  const auto rows = static_cast<std::int64_t>(op.array.shape(0));
  const auto cols = static_cast<std::int64_t>(op.array.shape(1));
  if (const auto s = strided_2d(op)) {
    m.view = {
        static_cast<const unsigned char*>(op.array.data()), format, rows, cols, s->ld, s->layout};
  } else {
    m.storage = copy_2d(op, Layout::row_major);
    m.view = {m.storage.data(), format, rows, cols, std::max<std::int64_t>(cols, 1),
              Layout::row_major};
  }
  // The FP6 and FP4 codes fill the low bits of a byte; decode() would drop the bits above them,
  // so a byte with any of them set is refused rather than read as another number. (ue4m3's bit 7
  // is its ignored sign, as the PTX ISA reads it.)
  if (format.is_signed && format.container_bits() < 8 * static_cast<int>(container_bytes(format))) {
    for (std::int64_t i = 0; i < rows; ++i) {
      for (std::int64_t j = 0; j < cols; ++j) {
        const std::uint32_t code = m.view.get(i, j);
        if (code >> format.container_bits() == 0) continue;
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned>(code));
        throw nb::value_error(
            (op.name + ": byte " + hex + " at [" + std::to_string(i) + ", " + std::to_string(j) +
             "] does not hold an " + std::string(format.name) + " code (" +
             std::to_string(format.container_bits()) + " bits, 0 to " +
             std::to_string((1 << format.container_bits()) - 1) +
             "): pass one code a byte in the low bits" +
             (format == formats::e2m1 ? " (matmul and mma read two a byte with packed=)" : ""))
                .c_str());
      }
    }
  }
  return m;
}

BitMatrix unpacked_fp4(const Operand& op, int k_axis, NibbleOrder order) {
  require_ndim(op, 2);
  const dl::dtype t = op.array.dtype();
  if (op.typed || t.code != static_cast<std::uint8_t>(dl::dtype_code::UInt) || t.bits != 8) {
    throw nb::type_error(
        (op.name + ": packed FP4 is a uint8 array of two e2m1 codes a byte, got dtype " + op.dtype +
         (op.typed == formats::e2m1 ? " (one value a byte: pass packed=False)" : ""))
            .c_str());
  }
  require_host(op);
  const auto rows = static_cast<std::int64_t>(op.array.shape(0));
  const auto cols = static_cast<std::int64_t>(op.array.shape(1));
  const std::int64_t out_rows = k_axis == 0 ? 2 * rows : rows;
  const std::int64_t out_cols = k_axis == 1 ? 2 * cols : cols;
  BitMatrix m;
  m.storage.resize(static_cast<std::size_t>(out_rows * out_cols));
  // Byte (i, j) holds the codes of k = 2j (`first`) and 2j + 1 (`second`) along the k axis.
  const std::int64_t step = k_axis == 1 ? 1 : out_cols;  // from k = 2j's code to 2j + 1's
  const int first = order == NibbleOrder::high_first ? 4 : 0, second = 4 - first;
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      const unsigned byte = *element(op, i, j);
      const std::int64_t at = k_axis == 1 ? i * out_cols + 2 * j : 2 * i * out_cols + j;
      m.storage[static_cast<std::size_t>(at)] = static_cast<unsigned char>((byte >> first) & 0xF);
      m.storage[static_cast<std::size_t>(at + step)] =
          static_cast<unsigned char>((byte >> second) & 0xF);
    }
  }
  m.view = {
      m.storage.data(), formats::e2m1, out_rows, out_cols, std::max<std::int64_t>(out_cols, 1),
      Layout::row_major};
  return m;
}

std::vector<std::uint32_t> bit_vector(const Operand& op, const FloatFormat& format) {
  require_ndim(op, 1);
  require_format(op, format);
  require_host(op);
  std::vector<std::uint32_t> out(op.array.shape(0));
  const auto* data = static_cast<const unsigned char*>(op.array.data());
  const auto step = op.array.stride(0) * static_cast<std::int64_t>(op.array.itemsize());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const ConstMatrixView one{
        data + static_cast<std::int64_t>(i) * step, format, 1, 1, 1, Layout::row_major};
    out[i] = one.get(0, 0);
  }
  return out;
}

BlasMatrix blas_matrix(const Operand& op) {
  if (!op.real && !op.complex) {
    throw nb::type_error((op.name + ": dtype " + op.dtype +
                          " is not supported here: pass float64, float32, complex128 or complex64")
                             .c_str());
  }
  require_ndim(op, 2);
  require_host(op);
  BlasMatrix m{op.array.data(),
               'N',
               static_cast<std::int64_t>(op.array.shape(0)),
               static_cast<std::int64_t>(op.array.shape(1)),
               std::max<std::int64_t>(static_cast<std::int64_t>(op.array.shape(0)), 1),
               op.complex ? part_format(*op.complex) : *op.real,
               op.complex.has_value(),
               {}};
  if (const auto s = strided_2d(op)) {
    m.trans = s->layout == Layout::column_major ? 'N' : 'T';
    m.ld = s->ld;
  } else {
    m.storage = copy_2d(op, Layout::column_major);
    m.data = m.storage.data();
  }
  return m;
}

nb::dlpack::dtype dtype_of(const FloatFormat& format) {
  return {static_cast<std::uint8_t>(dl::dtype_code::Float),
          static_cast<std::uint8_t>(8 * container_bytes(format)), 1};
}

nb::dlpack::dtype dtype_of(Real real) {
  return {static_cast<std::uint8_t>(dl::dtype_code::Float),
          static_cast<std::uint8_t>(8 * real_bytes(real)), 1};
}

nb::dlpack::dtype dtype_of(Complex complex) {
  return {static_cast<std::uint8_t>(dl::dtype_code::Complex),
          static_cast<std::uint8_t>(8 * element_bytes(complex)), 1};
}

NewArray new_array(const std::vector<std::size_t>& shape, nb::dlpack::dtype dtype, Layout layout) {
  std::size_t count = 1;
  for (const std::size_t n : shape) count *= n;
  const std::size_t bytes = std::max<std::size_t>(count * dtype.bits / 8, 1);
  auto* data = new unsigned char[bytes]();
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<unsigned char*>(p); });
  std::vector<std::int64_t> strides(shape.size());
  std::int64_t step = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const std::size_t axis = layout == Layout::row_major ? shape.size() - 1 - d : d;
    strides[axis] = step;
    step *= static_cast<std::int64_t>(std::max<std::size_t>(shape[axis], 1));
  }
  nb::ndarray<nb::numpy> array(data, shape.size(), shape.data(), owner, strides.data(), dtype,
                               nb::device::cpu::value);
  return {nb::cast(std::move(array)), data};
}

}  // namespace tcemu::python
