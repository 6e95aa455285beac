// floating_point_scope.hpp's scope.
#include <tcemu/emulator/floating_point_scope.hpp>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace tcemu {
namespace {

// How many scopes the thread is inside.
thread_local int depth = 0;

}  // namespace

FloatingPointScope::FloatingPointScope() : outermost_(depth++ == 0) {
  if (!outermost_) return;
  std::fegetenv(&saved_);
  std::fesetenv(FE_DFL_ENV);
#if defined(__x86_64__) || defined(__i386__)
  constexpr unsigned kFlushToZero = 0x8000u, kDenormalsAreZero = 0x0040u;
  _mm_setcsr(_mm_getcsr() & ~(kFlushToZero | kDenormalsAreZero));
#endif
}

FloatingPointScope::~FloatingPointScope() {
  --depth;
  if (outermost_) std::fesetenv(&saved_);
}

}  // namespace tcemu
