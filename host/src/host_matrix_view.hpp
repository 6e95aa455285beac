// The emulator's matrix views (tcemu/emulator/matrix.hpp) of a BufferMatrix whose buffer lives in
// host memory (the host backends).
#pragma once

#include <tcemu/backend/buffer_matrix.hpp>
#include <tcemu/backend/memory.hpp>
#include <tcemu/emulator/matrix.hpp>

namespace tcemu::detail {

inline ConstMatrixView host_view(const BufferMatrix& m) {
  return {static_cast<const unsigned char*>(m.buffer->address()) + m.offset_bytes,
          m.format,
          m.rows,
          m.cols,
          m.ld,
          m.layout};
}

inline MatrixView host_view_mutable(const BufferMatrix& m) {
  return {{static_cast<unsigned char*>(m.buffer->address()) + m.offset_bytes, m.format, m.rows,
           m.cols, m.ld, m.layout}};
}

}  // namespace tcemu::detail
