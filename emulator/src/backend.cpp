// The checks every backend shares; the arithmetic is each backend's own.
#include <stdexcept>
#include <string>

#include <tcemu/emulator/backend.hpp>

namespace tcemu {

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    if (owner_ != nullptr) owner_->free_bytes(address_);
    owner_ = other.owner_;
    address_ = other.address_;
    bytes_ = other.bytes_;
    other.owner_ = nullptr;
    other.address_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

Buffer::~Buffer() {
  if (owner_ != nullptr) owner_->free_bytes(address_);
}

Buffer Backend::allocate(std::size_t bytes) {
  return Buffer(this, bytes == 0 ? nullptr : allocate_bytes(bytes), bytes);
}

void Backend::copy_in(const void* host, Buffer& buffer, std::size_t bytes, std::size_t offset) {
  if (buffer.owner() != this) throw std::invalid_argument(name() + ": buffer of another backend");
  if (offset > buffer.bytes() || bytes > buffer.bytes() - offset) {
    throw std::out_of_range(name() + ": copy of " + std::to_string(bytes) + " bytes at offset " +
                            std::to_string(offset) + " into a buffer of " +
                            std::to_string(buffer.bytes()));
  }
  if (bytes > 0) copy_in_bytes(host, static_cast<unsigned char*>(buffer.address()) + offset, bytes);
}

void Backend::copy_out(const Buffer& buffer, void* host, std::size_t bytes,
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

void Backend::check(const BufferMatrix& m, const char* name_of) const {
  const std::string what = name() + ": matrix " + name_of;
  if (m.buffer == nullptr || m.buffer->owner() != this) {
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
  const auto end = m.offset_bytes +
                   static_cast<std::size_t>((outer - 1) * m.ld + inner) * container_bytes(m.format);
  if (end > m.buffer->bytes()) {
    throw std::out_of_range(what + " (" + std::to_string(m.rows) + " x " + std::to_string(m.cols) +
                            ", ld " + std::to_string(m.ld) + ") ends at byte " +
                            std::to_string(end) + ", past its buffer of " +
                            std::to_string(m.buffer->bytes()));
  }
}

void Backend::mma_gemm(const Datapath& datapath, const GemmOptions& options, const BufferMatrix& a,
                       const BufferMatrix& b, const std::optional<BufferMatrix>& c,
                       const BufferMatrix& d) {
  check(a, "A");
  check(b, "B");
  if (c) check(*c, "C");
  check(d, "D");
  mma_gemm_checked(datapath, options, a, b, c, d);
}

void Backend::convert(const BufferMatrix& src, const BufferMatrix& dst, Rounding rounding) {
  check(src, "source");
  check(dst, "destination");
  if (src.rows != dst.rows || src.cols != dst.cols) {
    throw std::invalid_argument(name() + ": convert from " + std::to_string(src.rows) + " x " +
                                std::to_string(src.cols) + " to " + std::to_string(dst.rows) +
                                " x " + std::to_string(dst.cols));
  }
  convert_checked(src, dst, rounding);
}

}  // namespace tcemu
