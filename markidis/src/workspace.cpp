#include <tcemu/markidis/workspace.hpp>

namespace tcemu::markidis {

const Buffer& Workspace::buffer(Backend& backend, std::size_t slot, std::size_t bytes) {
  if (slot >= slots_.size()) slots_.resize(slot + 1);
  Buffer& b = slots_[slot];
  if (b.owner() != &backend || b.bytes() < bytes) {
    b = Buffer();  // free first: the old and the new buffer need not fit together
    b = backend.allocate(bytes);
  }
  return b;
}

std::size_t Workspace::bytes() const {
  std::size_t total = 0;
  for (const Buffer& b : slots_) total += b.bytes();
  return total;
}

}  // namespace tcemu::markidis
