#include "buffers.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#if TCEMU_WITH_GPU
#include <cuda_runtime_api.h>

#include <tcemu/gpu/gpu_backend.hpp>
#endif

#include "backends.hpp"

namespace tcemu::python {
namespace {

#if TCEMU_WITH_GPU
void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
  }
}
#endif

// Elements from the first to one past the last of a rows x cols matrix with this leading
// dimension.
std::int64_t extent(std::int64_t rows, std::int64_t cols, const Strided& s) {
  const std::int64_t outer = s.layout == Layout::row_major ? rows : cols;
  const std::int64_t inner = s.layout == Layout::row_major ? cols : rows;
  return outer == 0 || inner == 0 ? 0 : (outer - 1) * s.ld + inner;
}

template <class Format>
BufferOperand<Format> to_buffer_as(Backend& backend, const Operand& op, Format format) {
  require_ndim(op, 2);
  const auto rows = static_cast<std::int64_t>(op.array.shape(0));
  const auto cols = static_cast<std::int64_t>(op.array.shape(1));
  const void* data = op.array.data();
  std::vector<unsigned char> copy;
  std::optional<Strided> s = strided_2d(op);
  if (!s && on_gpu(op)) {
    throw nb::value_error((op.name + ": a CUDA array must have unit stride along one axis and a "
                                     "leading dimension along the other (make it contiguous)")
                              .c_str());
  }
  if (!s) {
    copy = copy_2d(op, Layout::row_major);
    data = copy.data();
    s = Strided{Layout::row_major, std::max<std::int64_t>(cols, 1)};
  }
  const auto bytes = static_cast<std::size_t>(extent(rows, cols, *s)) * element_bytes(format);
  BufferOperand<Format> out{backend.allocate(std::max<std::size_t>(bytes, 1)),
                            {nullptr, 0, format, rows, cols, s->ld, s->layout}};
  if (on_gpu(op)) {
#if TCEMU_WITH_GPU
    if (!gpu::is_gpu_backend(backend)) {
      throw nb::value_error((op.name + ": a CUDA array needs backend 'gpu'").c_str());
    }
    cuda_check(cudaMemcpy(out.buffer.address(), data, bytes, cudaMemcpyDeviceToDevice),
               "copying a CUDA array into the GPU backend");
#else
    no_gpu_build(op.name + " in GPU memory");
#endif
  } else {
    backend.copy_in(data, out.buffer, bytes);
  }
  return out;
}

// A new CUDA array of `shape` with `strides` (in elements) on `device`, uninitialised, and its
// data; an array_api object (__dlpack__ and __dlpack_device__) that any framework takes.
struct NewCudaArray {
  nb::object object;
  void* data;
};
NewCudaArray new_cuda_array(const std::vector<std::size_t>& shape,
                            const std::vector<std::int64_t>& strides, nb::dlpack::dtype dtype,
                            int device) {
#if TCEMU_WITH_GPU
  std::size_t bytes = dtype.bits / 8;
  for (std::size_t extent : shape) bytes *= extent;
  const CurrentDevice current(device);
  void* data = nullptr;
  cuda_check(cudaMalloc(&data, std::max<std::size_t>(bytes, 1)), "allocating the result");
  nb::capsule owner(data, [](void* p) noexcept { cudaFree(p); });
  return {
      nb::cast(nb::ndarray<nb::array_api>(data, shape.size(), shape.data(), owner, strides.data(),
                                          dtype, nb::device::cuda::value, device)),
      data};
#else
  (void)shape, (void)strides, (void)dtype, (void)device;
  no_gpu_build("a result in GPU memory");
#endif
}

template <class Format>
nb::object from_buffer_as(Backend& backend, const BufferOperand<Format>& m, nb::dlpack::dtype dtype,
                          bool on_device, int device) {
  const BufferMatrixOf<Format>& v = m.shape;
  const auto rows = static_cast<std::size_t>(v.rows);
  const auto cols = static_cast<std::size_t>(v.cols);
  const bool row_major = v.layout == Layout::row_major;
  const std::size_t outer = row_major ? rows : cols, inner = row_major ? cols : rows;
  const std::size_t size = element_bytes(v.format);
  const auto pitch = static_cast<std::size_t>(v.ld) * size;
  if (!on_device) {
    const NewArray out = new_array({rows, cols}, dtype, v.layout);
    for (std::size_t o = 0; o < outer && inner > 0; ++o) {
      backend.copy_out(m.buffer, static_cast<unsigned char*>(out.data) + o * inner * size,
                       inner * size, o * pitch);
    }
    return out.object;
  }
  const NewCudaArray out = new_cuda_array({rows, cols},
                                          {row_major ? static_cast<std::int64_t>(cols) : 1,
                                           row_major ? 1 : static_cast<std::int64_t>(rows)},
                                          dtype, device);
#if TCEMU_WITH_GPU
  if (outer > 0 && inner > 0) {
    cuda_check(cudaMemcpy2D(out.data, inner * size, m.buffer.address(), pitch, inner * size, outer,
                            cudaMemcpyDeviceToDevice),
               "copying the result out of the GPU backend");
  }
#endif
  return out.object;
}

}  // namespace

BufferOperand<FloatFormat> to_buffer(Backend& backend, const Operand& op,
                                     const FloatFormat& format) {
  require_format(op, format);
  return to_buffer_as(backend, op, format);
}

BufferOperand<FloatFormat> read_only_buffer(Backend& backend, const Operand& op,
                                            const FloatFormat& format) {
  if (!on_gpu(op)) return to_buffer(backend, op, format);
  require_format(op, format);
  require_ndim(op, 2);
  const auto rows = static_cast<std::int64_t>(op.array.shape(0));
  const auto cols = static_cast<std::int64_t>(op.array.shape(1));
  const std::optional<Strided> s = strided_2d(op);
  if (!s) {
    throw nb::value_error((op.name + ": a CUDA array must have unit stride along one axis and a "
                                     "leading dimension along the other (make it contiguous)")
                              .c_str());
  }
#if TCEMU_WITH_GPU
  if (!gpu::is_gpu_backend(backend)) {
    throw nb::value_error((op.name + ": a CUDA array needs backend 'gpu'").c_str());
  }
#endif
  const auto bytes = static_cast<std::size_t>(extent(rows, cols, *s)) * element_bytes(format);
  // The steps only read it: borrowing drops the const of the caller's read-only view.
  return {backend.borrow(const_cast<void*>(op.array.data()), bytes),
          {nullptr, 0, format, rows, cols, s->ld, s->layout}};
}

CudaResult new_cuda_result(Backend& backend, const std::vector<std::size_t>& shape,
                           nb::dlpack::dtype dtype, int device) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) {
    strides[i - 1] = strides[i] * static_cast<std::int64_t>(shape[i]);
  }
  std::size_t bytes = dtype.bits / 8;
  for (std::size_t extent : shape) bytes *= extent;
  NewCudaArray out = new_cuda_array(shape, strides, dtype, device);
#if TCEMU_WITH_GPU
  cuda_check(cudaMemset(out.data, 0, bytes), "clearing the result");
#endif
  return {std::move(out.object), backend.borrow(out.data, bytes)};
}

CurrentDevice::CurrentDevice([[maybe_unused]] int device) {
#if TCEMU_WITH_GPU
  cuda_check(cudaGetDevice(&caller_), "reading the current CUDA device");
  if (caller_ != device) cuda_check(cudaSetDevice(device), "selecting the CUDA device");
#endif
}

CurrentDevice::~CurrentDevice() {
#if TCEMU_WITH_GPU
  int now = -1;
  if (caller_ >= 0 && cudaGetDevice(&now) == cudaSuccess && now != caller_) cudaSetDevice(caller_);
#endif
}

BufferOperand<Real> to_buffer(Backend& backend, const Operand& op, Real real) {
  require_real(op, real);
  return to_buffer_as(backend, op, real);
}

BufferOperand<Complex> to_buffer(Backend& backend, const Operand& op, Complex complex) {
  require_complex(op, complex);
  return to_buffer_as(backend, op, complex);
}

template <class Format>
BufferOperand<Format> new_buffer(Backend& backend, Format format, std::int64_t rows,
                                 std::int64_t cols) {
  const auto bytes = static_cast<std::size_t>(rows * cols) * element_bytes(format);
  BufferOperand<Format> out{
      backend.allocate(std::max<std::size_t>(bytes, 1)),
      {nullptr, 0, format, rows, cols, std::max<std::int64_t>(cols, 1), Layout::row_major}};
  backend.copy_in(std::vector<unsigned char>(bytes).data(), out.buffer, bytes);
  return out;
}
template BufferOperand<FloatFormat> new_buffer(Backend&, FloatFormat, std::int64_t, std::int64_t);
template BufferOperand<Real> new_buffer(Backend&, Real, std::int64_t, std::int64_t);
template BufferOperand<Complex> new_buffer(Backend&, Complex, std::int64_t, std::int64_t);

nb::object from_buffer(Backend& backend, const BufferOperand<FloatFormat>& m, bool on_device,
                       int device) {
  return from_buffer_as(backend, m, dtype_of(m.shape.format), on_device, device);
}

nb::object from_buffer(Backend& backend, const BufferOperand<Real>& m, bool on_device, int device) {
  return from_buffer_as(backend, m, dtype_of(m.shape.format), on_device, device);
}

nb::object from_buffer(Backend& backend, const BufferOperand<Complex>& m, bool on_device,
                       int device) {
  return from_buffer_as(backend, m, dtype_of(m.shape.format), on_device, device);
}

int cuda_device(std::initializer_list<const Operand*> ops) {
  int device = -1;
  bool host = false;
  for (const Operand* op : ops) {
    if (!on_gpu(*op)) {
      host = true;
    } else if (device >= 0 && op->array.device_id() != device) {
      throw nb::value_error("the CUDA arrays are on different devices");
    } else {
      device = op->array.device_id();
    }
    if (host && device >= 0) {
      throw nb::value_error("the arrays are a mix of host and CUDA arrays: pass all of one kind");
    }
  }
  return device;
}

}  // namespace tcemu::python
