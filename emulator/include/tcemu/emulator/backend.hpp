// The backend interface of DESIGN.md: what a scheme (ozaki/, markidis/) asks of the machine it
// runs on. A backend owns its memory; a scheme allocates buffers there once, moves its inputs in,
// runs the steps it needs on them and moves the result out, so a GPU backend never copies
// matrices back to the host between steps. The control flow of an algorithm lives in the scheme,
// the arithmetic of each step in the backend.
//
// This first version has the steps every tensor-core scheme needs: format conversion (the splits
// are conversions with RN or RZ) and the low-precision GEMM through a datapath. Schemes add the
// steps they need here, each implemented by every backend.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/emulator/gemm.hpp>
#include <tcemu/emulator/matrix.hpp>
#include <tcemu/emulator/round.hpp>

namespace tcemu {

class Backend;

// Storage owned by a backend, in its memory space. Move-only; freed by the backend that made it.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&& other) noexcept { *this = std::move(other); }
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  std::size_t bytes() const { return bytes_; }
  const Backend* owner() const { return owner_; }
  // The address in the owner's memory space: only the owning backend may dereference it.
  void* address() const { return address_; }

 private:
  friend class Backend;
  Buffer(Backend* owner, void* address, std::size_t bytes)
      : owner_(owner), address_(address), bytes_(bytes) {}
  Backend* owner_ = nullptr;
  void* address_ = nullptr;
  std::size_t bytes_ = 0;
};

// A matrix of bit patterns of `format` inside a buffer, described as BLAS describes one.
struct BufferMatrix {
  const Buffer* buffer;
  std::size_t offset_bytes;
  FloatFormat format;
  std::int64_t rows;
  std::int64_t cols;
  std::int64_t ld;
  Layout layout;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;

  // `bytes` of storage in the backend's memory. Throws std::runtime_error (out of memory) with
  // the size asked for.
  Buffer allocate(std::size_t bytes);
  // Copies between host memory and a buffer; throws std::out_of_range past the buffer's end.
  void copy_in(const void* host, Buffer& buffer, std::size_t bytes, std::size_t offset = 0);
  void copy_out(const Buffer& buffer, void* host, std::size_t bytes, std::size_t offset = 0) const;

  // D = alpha * A B + beta * C through `datapath` (the semantics of emulated_gemm, gemm.hpp).
  // Every matrix lies in a buffer of this backend; a view past a buffer's end is refused.
  void mma_gemm(const Datapath& datapath, const GemmOptions& options, const BufferMatrix& a,
                const BufferMatrix& b, const std::optional<BufferMatrix>& c, const BufferMatrix& d);

  // dst = src converted elementwise from src.format to dst.format (convert.hpp), same shape.
  void convert(const BufferMatrix& src, const BufferMatrix& dst, Rounding rounding);

 protected:
  // What each backend implements; arguments are already checked.
  virtual void* allocate_bytes(std::size_t bytes) = 0;
  virtual void free_bytes(void* address) noexcept = 0;
  virtual void copy_in_bytes(const void* host, void* address, std::size_t bytes) = 0;
  virtual void copy_out_bytes(const void* address, void* host, std::size_t bytes) const = 0;
  virtual void mma_gemm_checked(const Datapath& datapath, const GemmOptions& options,
                                const BufferMatrix& a, const BufferMatrix& b,
                                const std::optional<BufferMatrix>& c, const BufferMatrix& d) = 0;
  virtual void convert_checked(const BufferMatrix& src, const BufferMatrix& dst,
                               Rounding rounding) = 0;

 private:
  friend class Buffer;
  void check(const BufferMatrix& m, const char* name) const;
};

// The CPU backend: host memory and the emulated GEMM (gemm.hpp).
std::unique_ptr<Backend> make_emulator_backend();

}  // namespace tcemu
