// The CPU backend: buffers in host memory, the emulated GEMM, host conversions.
#include <cstring>
#include <new>
#include <stdexcept>

#include <tcemu/emulator/backend.hpp>
#include <tcemu/emulator/convert.hpp>

namespace tcemu {
namespace {

constexpr std::align_val_t kAlignment{64};

ConstMatrixView host_view(const BufferMatrix& m) {
  return {static_cast<const unsigned char*>(m.buffer->address()) + m.offset_bytes,
          m.format,
          m.rows,
          m.cols,
          m.ld,
          m.layout};
}

MatrixView host_view_mutable(const BufferMatrix& m) {
  return {{static_cast<unsigned char*>(m.buffer->address()) + m.offset_bytes, m.format, m.rows,
           m.cols, m.ld, m.layout}};
}

class EmulatorBackend final : public Backend {
 public:
  std::string name() const override { return "emulator"; }

 protected:
  void* allocate_bytes(std::size_t bytes) override {
    try {
      return ::operator new(bytes, kAlignment);
    } catch (const std::bad_alloc&) {
      throw std::runtime_error("emulator: out of host memory allocating " + std::to_string(bytes) +
                               " bytes");
    }
  }
  void free_bytes(void* address) noexcept override { ::operator delete(address, kAlignment); }
  void copy_in_bytes(const void* host, void* address, std::size_t bytes) override {
    std::memcpy(address, host, bytes);
  }
  void copy_out_bytes(const void* address, void* host, std::size_t bytes) const override {
    std::memcpy(host, address, bytes);
  }
  void mma_gemm_checked(const Datapath& datapath, const GemmOptions& options, const BufferMatrix& a,
                        const BufferMatrix& b, const std::optional<BufferMatrix>& c,
                        const BufferMatrix& d) override {
    std::optional<ConstMatrixView> c_view;
    if (c) c_view = host_view(*c);
    emulated_gemm(datapath, options, host_view(a), host_view(b), c_view, host_view_mutable(d));
  }
  void convert_checked(const BufferMatrix& src, const BufferMatrix& dst,
                       Rounding rounding) override {
    const ConstMatrixView from = host_view(src);
    const MatrixView to = host_view_mutable(dst);
    for (std::int64_t i = 0; i < src.rows; ++i) {
      for (std::int64_t j = 0; j < src.cols; ++j) {
        to.set(i, j, tcemu::convert(src.format, dst.format, from.get(i, j), rounding));
      }
    }
  }
};

}  // namespace

std::unique_ptr<Backend> make_emulator_backend() {
  return std::make_unique<EmulatorBackend>();
}

}  // namespace tcemu
