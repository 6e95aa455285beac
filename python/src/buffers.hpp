// Arrays moved into a backend's memory (memory.hpp) and results moved back: a host array by
// MemorySpace::copy_in, a CUDA array by a device-to-device copy into a GPU backend's buffer, each
// as one copy of the array's extent with its own leading dimension and layout. Results come back
// as a new NumPy array, or as a new CUDA array (a DLPack producer) when the inputs were CUDA
// arrays.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include <tcemu/backend/backend.hpp>

#include "arrays.hpp"

namespace tcemu::python {

template <class Format>
struct BufferOperand {
  Buffer buffer;
  BufferMatrixOf<Format> shape;  // without its buffer, which moves with this object
  BufferMatrixOf<Format> view() const {
    BufferMatrixOf<Format> v = shape;
    v.buffer = &buffer;
    return v;
  }
};

// A 2-D array of `format` bit patterns (require_format), of `real` values or of `complex` ones, in
// `backend`'s
// memory. A CUDA array needs a GPU backend and strides with a leading dimension (ValueError
// otherwise); a host array without one is copied row-major first.
BufferOperand<FloatFormat> to_buffer(Backend& backend, const Operand& op,
                                     const FloatFormat& format);
BufferOperand<Real> to_buffer(Backend& backend, const Operand& op, Real real);
BufferOperand<Complex> to_buffer(Backend& backend, const Operand& op, Complex complex);

// An operand the steps only read: a CUDA array in place, its memory borrowed (no copy; the same
// stride rule as to_buffer), a host array copied in as to_buffer copies it.
BufferOperand<FloatFormat> read_only_buffer(Backend& backend, const Operand& op,
                                            const FloatFormat& format);

// A new C-contiguous CUDA array of `shape` and `dtype` on CUDA device `device`, its bytes zero,
// and a buffer of `backend` (a GPU backend) borrowing its memory, for steps to write the result
// of a call in place.
struct CudaResult {
  nb::object array;
  Buffer buffer;
};
CudaResult new_cuda_result(Backend& backend, const std::vector<std::size_t>& shape,
                           nb::dlpack::dtype dtype, int device);

// Makes CUDA device `device` current while it lives and then the caller's again (nothing in a
// build without the CUDA backend).
class CurrentDevice {
 public:
  explicit CurrentDevice(int device);
  ~CurrentDevice();
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  int caller_ = -1;
};

// A rows x cols row-major matrix of zero bits in `backend`'s memory.
template <class Format>
BufferOperand<Format> new_buffer(Backend& backend, Format format, std::int64_t rows,
                                 std::int64_t cols);

// The matrix as a new contiguous array of its layout: in the memory of CUDA device `device` when
// `on_device`, else NumPy.
nb::object from_buffer(Backend& backend, const BufferOperand<FloatFormat>& m, bool on_device,
                       int device);
nb::object from_buffer(Backend& backend, const BufferOperand<Real>& m, bool on_device, int device);
nb::object from_buffer(Backend& backend, const BufferOperand<Complex>& m, bool on_device,
                       int device);

// The CUDA device of the arrays among `ops` (None-free), or -1 when all are host arrays. Raises
// ValueError when host and CUDA arrays are mixed or the CUDA arrays are on different devices.
int cuda_device(std::initializer_list<const Operand*> ops);

}  // namespace tcemu::python
