// The memory space every backend shares: buffers, copies, and the checks of a matrix view.
#include <algorithm>
#include <stdexcept>
#include <string>

#include <tcemu/backend/memory.hpp>

namespace tcemu {

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    if (owner_ != nullptr && owns_) owner_->free_bytes(address_);
    owner_ = other.owner_;
    address_ = other.address_;
    bytes_ = other.bytes_;
    owns_ = other.owns_;
    other.owner_ = nullptr;
    other.address_ = nullptr;
    other.bytes_ = 0;
    other.owns_ = false;
  }
  return *this;
}

Buffer::~Buffer() {
  if (owner_ != nullptr && owns_) owner_->free_bytes(address_);
}

Buffer MemorySpace::allocate(std::size_t bytes) {
  return Buffer(this, bytes == 0 ? nullptr : allocate_bytes(bytes), bytes, true);
}

Buffer MemorySpace::borrow(void* address, std::size_t bytes) {
  if (address == nullptr && bytes > 0) {
    throw std::invalid_argument(name() + ": borrowed buffer of " + std::to_string(bytes) +
                                " bytes at a null address");
  }
  return Buffer(this, address, bytes, false);
}

void MemorySpace::copy_in(const void* host, Buffer& buffer, std::size_t bytes, std::size_t offset) {
  if (buffer.owner() != this) throw std::invalid_argument(name() + ": buffer of another backend");
  if (offset > buffer.bytes() || bytes > buffer.bytes() - offset) {
    throw std::out_of_range(name() + ": copy of " + std::to_string(bytes) + " bytes at offset " +
                            std::to_string(offset) + " into a buffer of " +
                            std::to_string(buffer.bytes()));
  }
  if (bytes > 0) copy_in_bytes(host, static_cast<unsigned char*>(buffer.address()) + offset, bytes);
}

void MemorySpace::copy_out(const Buffer& buffer, void* host, std::size_t bytes,
                           std::size_t offset) const {
  if (buffer.owner() != this) throw std::invalid_argument(name() + ": buffer of another backend");
  if (offset > buffer.bytes() || bytes > buffer.bytes() - offset) {
    throw std::out_of_range(name() + ": copy of " + std::to_string(bytes) + " bytes at offset " +
                            std::to_string(offset) + " out of a buffer of " +
                            std::to_string(buffer.bytes()));
  }
  if (bytes > 0) {
    copy_out_bytes(static_cast<const unsigned char*>(buffer.address()) + offset, host, bytes);
  }
}

namespace {

// The checks of a matrix view (BufferMatrix or RealMatrix) of `backend`'s memory with elements of
// `element_bytes` bytes: its own buffer, dimensions, leading dimension, and its end inside the
// buffer.
template <class Matrix>
void check_matrix(const MemorySpace& backend, const Matrix& m, std::size_t element_bytes,
                  const char* name_of) {
  const std::string what = backend.name() + ": matrix " + name_of;
  if (m.buffer == nullptr || m.buffer->owner() != &backend) {
    throw std::invalid_argument(what + " is not in a buffer of this backend");
  }
  if (m.rows < 0 || m.cols < 0) throw std::invalid_argument(what + " has a negative dimension");
  const std::int64_t inner = m.layout == Layout::row_major ? m.cols : m.rows;
  const std::int64_t outer = m.layout == Layout::row_major ? m.rows : m.cols;
  if (m.ld < std::max<std::int64_t>(1, inner)) {
    throw std::invalid_argument(what + ": ld = " + std::to_string(m.ld) + " must be >= max(1, " +
                                std::to_string(inner) + ")");
  }
  if (m.rows == 0 || m.cols == 0) return;
  const auto end =
      m.offset_bytes + static_cast<std::size_t>((outer - 1) * m.ld + inner) * element_bytes;
  if (end > m.buffer->bytes()) {
    throw std::out_of_range(what + " (" + std::to_string(m.rows) + " x " + std::to_string(m.cols) +
                            ", ld " + std::to_string(m.ld) + ") ends at byte " +
                            std::to_string(end) + ", past its buffer of " +
                            std::to_string(m.buffer->bytes()));
  }
}

}  // namespace

void MemorySpace::check(const BufferMatrix& m, const char* name_of) const {
  check_matrix(*this, m, element_bytes(m.format), name_of);
}

void MemorySpace::check(const RealMatrix& m, const char* name_of) const {
  check_matrix(*this, m, element_bytes(m.format), name_of);
}

void MemorySpace::check(const IntegerMatrix& m, const char* name_of) const {
  check_matrix(*this, m, element_bytes(m.format), name_of);
}

void MemorySpace::check(const ComplexMatrix& m, const char* name_of) const {
  check_matrix(*this, m, element_bytes(m.format), name_of);
}

}  // namespace tcemu
