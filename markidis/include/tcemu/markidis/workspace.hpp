// The memory a scheme needs besides its operands (the parts of A and B, a residual, one fp32
// accumulator per group), kept between calls of gemm (gemm.hpp): once it has grown to a size,
// calls of that size or smaller allocate nothing, which on a GPU saves an allocation and a
// synchronising free per buffer and call. A workspace must not outlive the backends whose buffers
// it holds; it is not thread safe (one per concurrent caller).
#pragma once

#include <cstddef>
#include <deque>

#include <tcemu/backend/backend.hpp>

namespace tcemu::markidis {

class Workspace {
 public:
  // The buffer of `slot`: at least `bytes` in `backend`'s memory. It is reallocated (its contents
  // lost) when it is smaller or belongs to another backend; otherwise the same buffer as before.
  // The reference stays valid until the next call with this slot (other slots never move it).
  const Buffer& buffer(Backend& backend, std::size_t slot, std::size_t bytes);

  // Bytes held over all slots.
  std::size_t bytes() const;

 private:
  std::deque<Buffer> slots_;  // a deque: growing it moves no buffer that a view points to
};

}  // namespace tcemu::markidis
