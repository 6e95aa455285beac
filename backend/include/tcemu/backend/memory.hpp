// The memory space of a backend (backend.hpp): a scheme allocates buffers there once, moves its
// inputs in, runs steps on them and moves the result out, so a GPU backend never copies matrices
// back to the host between steps. Every step family (tensor_core_steps.hpp, fp32_split_steps.hpp,
// ozaki_steps.hpp, inner_product_steps.hpp, integer_gemm_steps.hpp, complex_steps.hpp) checks its
// matrices against this memory with check().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include <tcemu/backend/buffer_matrix.hpp>

namespace tcemu {

class MemorySpace;

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
  // The backend whose memory holds it (for a borrowed buffer: the backend that borrowed it).
  const MemorySpace* owner() const { return owner_; }
  // The address in the owner's memory space: only the owning backend may dereference it.
  void* address() const { return address_; }

 private:
  friend class MemorySpace;
  Buffer(MemorySpace* owner, void* address, std::size_t bytes, bool owns)
      : owner_(owner), address_(address), bytes_(bytes), owns_(owns) {}
  MemorySpace* owner_ = nullptr;
  void* address_ = nullptr;
  std::size_t bytes_ = 0;
  bool owns_ = false;  // freed by owner_ when destroyed (false for MemorySpace::borrow)
};

class MemorySpace {
 public:
  virtual ~MemorySpace() = default;
  // The backend's name in messages ("emulator", "cpu64", "gpu (mma.sync on ...)").
  virtual std::string name() const = 0;

  // `bytes` of storage in the backend's memory. Throws std::runtime_error (out of memory) with
  // the size asked for.
  Buffer allocate(std::size_t bytes);
  // A buffer over `bytes` bytes at `address`, memory of this backend's space that someone else
  // allocated and frees (the GPU backend: a caller's device allocation, such as the operands of
  // an intercepted cublasDgemm; the host backends: host memory): steps run on it in place, and
  // the buffer never frees it. The caller guarantees that the bytes are this space's memory and
  // outlive the buffer. Throws std::invalid_argument for a null address with bytes > 0.
  Buffer borrow(void* address, std::size_t bytes);
  // Copies between host memory and a buffer; throws std::out_of_range past the buffer's end.
  void copy_in(const void* host, Buffer& buffer, std::size_t bytes, std::size_t offset = 0);
  void copy_out(const Buffer& buffer, void* host, std::size_t bytes, std::size_t offset = 0) const;

  // Throws as the steps do when `m` is not a view of this memory: a buffer of another backend
  // (std::invalid_argument), a negative dimension or ld too small (std::invalid_argument), an end
  // past its buffer (std::out_of_range); `name` names it in the message.
  void check(const BufferMatrix& m, const char* name) const;
  void check(const RealMatrix& m, const char* name) const;
  void check(const IntegerMatrix& m, const char* name) const;
  void check(const ComplexMatrix& m, const char* name) const;

 protected:
  // What each backend implements; arguments are already checked.
  virtual void* allocate_bytes(std::size_t bytes) = 0;
  virtual void free_bytes(void* address) noexcept = 0;
  virtual void copy_in_bytes(const void* host, void* address, std::size_t bytes) = 0;
  virtual void copy_out_bytes(const void* address, void* host, std::size_t bytes) const = 0;

 private:
  friend class Buffer;
};

}  // namespace tcemu
