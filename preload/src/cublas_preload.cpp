// The cuBLAS entry points of the LD_PRELOAD library (docs/preload.md): cublas{D,S,Z,C}gemm_v2
// (what cublas_v2.h's cublas?gemm names), cublasGemmEx with A, B and C all CUDA_R_64F or
// CUDA_C_64F and CUBLAS_COMPUTE_64F[_PEDANTIC], or all CUDA_R_32F or CUDA_C_32F and
// CUBLAS_COMPUTE_32F[_PEDANTIC] (the TF32 and other fast compute types fall through), and the
// batched forms (cublas{D,Z}gemmBatched, cublas{D,Z}gemmStridedBatched, cublasGemmBatchedEx,
// cublasGemmStridedBatchedEx), each also _64: a batch is its products one after another, each as
// one call. Each call is routed to the Ozaki scheme the environment names
// (tcemu/session/preload_route.hpp), run on the GPU backend in place on the caller's device
// memory (complex ones through the real form, ozaki::Handle::gemm on ComplexMatrix), or passed
// to cuBLAS wherever the program loaded it (next_definition.hpp) when the scheme is off, the
// variables are bad, the call is below TCEMU_PRELOAD_MIN_SIZE, its arguments are not a valid
// GEMM (cuBLAS then reports them), or the scheme refuses the operands (C is restored first); a
// single-precision call takes session::for_single_precision's mode (sp for dp, cr for cr,
// tunable for tunable). One log line per call says which. A call made while the calling host
// thread rounds upward, downward or toward zero is routed in mode cr rounded in that direction
// to its own precision on the device (session::with_caller_rounding).
// Where no loaded object defines the entry point, a call that falls through returns
// CUBLAS_STATUS_NOT_INITIALIZED (a line on stderr says so once) instead of taking the process
// down.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cfenv>
#include <chrono>
#include <complex>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <tcemu/gpu/device.hpp>
#include <tcemu/ozaki/handle.hpp>
#include <tcemu/session/backends.hpp>
#include <tcemu/session/preload_route.hpp>

#include "next_definition.hpp"

namespace tcemu::preload {
namespace {

using session::HandleCache;
using session::Routing;

// Set while this thread runs a scheme: the GPU backend's own cuBLAS calls (the int8 GEMMs of
// dgemm-int8 and dgemm-crt) reach the definitions below too, and must go to cuBLAS.
thread_local bool inside_scheme = false;

// One backend per device, its tensor-core preset (for dgemm-tc; "" for a GPU without one) and
// its handles (HandleCache: one per routing, its workspace grown to the calls' size), made at
// the first call that needs them and kept for the process.
struct Engine {
  std::unique_ptr<Backend> backend;
  std::string arch;
  HandleCache handles;
};

struct Engines {
  std::mutex mutex;
  std::map<int, Engine> devices;
};

Engines& engines() {
  static Engines* e = new Engines;  // never destroyed: calls may come from exit handlers
  return *e;
}

Engine& engine_for(int device) {
  Engine& e = engines().devices[device];
  if (!e.backend) {
    e.backend = session::make_backend(session::backend_choice("gpu"),
                                      {.device = device, .engine = session::Engine::fastest});
    e.arch = gpu::require_device(device).arch_preset();
  }
  return e;
}

// The element types of the GEMMs routed: FP64 and FP32, real and complex (cuBLAS's D, S, Z, C).
enum class Element { d, s, z, c };

constexpr bool is_complex(Element e) {
  return e == Element::z || e == Element::c;
}
constexpr bool is_single(Element e) {
  return e == Element::s || e == Element::c;
}
constexpr std::size_t element_bytes(Element e) {
  return e == Element::z ? 16 : e == Element::d || e == Element::c ? 8 : 4;
}

// 'N', 'T' or 'C' ('C' is 'T' for real matrices); 0 for anything else (CUBLAS_OP_CONJG).
char op_char(cublasOperation_t op, Element e) {
  if (op == CUBLAS_OP_N) return 'N';
  if (op == CUBLAS_OP_T) return 'T';
  if (op == CUBLAS_OP_C) return is_complex(e) ? 'C' : 'T';
  return 0;
}

// Where the products of a batched call are: `count` of them, each A, B and C `stride_*` elements
// after the one before (strided batches; 0 and count 1 for a plain call), or, with `arrays`, at
// the addresses in device arrays of `count` pointers (cublas*Batched), read once the caller's
// stream has finished writing them.
struct Batch {
  std::int64_t count = 1;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  bool arrays = false;
  const void* const* a_array = nullptr;
  const void* const* b_array = nullptr;
  void* const* c_array = nullptr;
  bool batched = false;  // a batched entry point (its log line gives the count)
};

// A GEMM call of element type `type`, whatever entry point it came through; a, b and c are null
// for pointer arrays; alpha and beta point to one element of the type (host or device memory, as
// the handle's pointer mode says).
struct Call {
  const char* entry;
  cublasHandle_t handle;
  cublasOperation_t transa, transb;
  std::int64_t m, n, k;
  const void* alpha;
  const void* a;
  std::int64_t lda;
  const void* b;
  std::int64_t ldb;
  const void* beta;
  void* c;
  std::int64_t ldc;
  Batch batch{};
  Element type = Element::d;
};

// Bytes from the first element of a column-major rows x cols matrix with leading dimension ld
// to past its last.
std::size_t span_bytes(std::int64_t rows, std::int64_t cols, std::int64_t ld, Element e) {
  if (rows == 0 || cols == 0) return 0;
  return static_cast<std::size_t>((cols - 1) * ld + rows) * element_bytes(e);
}

// The entry point as the log names it: "cublasDgemmStridedBatched batch 12" for a batch.
std::string entry_name(const Call& c) {
  return c.batch.batched ? std::string(c.entry) + " batch " + std::to_string(c.batch.count)
                         : std::string(c.entry);
}

// The call's shape (each product's, for a batch), as the checks and the log take it; `entry`
// is entry_name(c), which must outlive it.
session::DgemmCall shape(const Call& c, const std::string& entry) {
  return {entry.c_str(),
          op_char(c.transa, c.type),
          op_char(c.transb, c.type),
          c.m,
          c.n,
          c.k,
          c.lda,
          c.ldb,
          c.ldc};
}

// Why `call` is not a GEMM the scheme takes, or nothing. Invalid arguments go to cuBLAS, which
// returns its error for them; so does an empty or negative batch, which leaves nothing to route.
std::optional<std::string> refusal(const Call& c, const session::DgemmCall& s, const Routing& r) {
  if (c.batch.count <= 0) return "batch count " + std::to_string(c.batch.count);
  if (c.batch.arrays &&
      (c.batch.a_array == nullptr || c.batch.b_array == nullptr || c.batch.c_array == nullptr)) {
    return std::string("a null pointer array");
  }
  return session::refusal(s, r, c.alpha == nullptr || c.beta == nullptr);
}

// The count addresses of a batch's matrices: those of a device pointer array (`array`, for
// batch.arrays), or those `stride` elements of type e apart from `first`.
template <class T>
std::vector<T*> addresses(const Batch& batch, T* first, std::int64_t stride, T* const* array,
                          Element e) {
  std::vector<T*> out(static_cast<std::size_t>(batch.count));
  if (batch.arrays) {
    if (cudaMemcpy(out.data(), array, out.size() * sizeof(T*), cudaMemcpyDeviceToHost) !=
        cudaSuccess) {
      throw std::runtime_error("reading the batch's pointer array");
    }
  } else {
    using Byte = std::conditional_t<std::is_const_v<T>, const unsigned char, unsigned char>;
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i] = static_cast<Byte*>(first) +
               stride * std::int64_t(i) * static_cast<std::int64_t>(element_bytes(e));
    }
  }
  return out;
}

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// The scalar at `p` (one element of type e, in host or device memory) as a complex<double>
// (exact: every element type widens to it).
std::complex<double> read_scalar(const void* p, Element e, bool device) {
  unsigned char bytes[16] = {};
  if (device) {
    cuda_check(cudaMemcpy(bytes, p, element_bytes(e), cudaMemcpyDeviceToHost), "alpha, beta");
  } else {
    std::memcpy(bytes, p, element_bytes(e));
  }
  const auto part = [&](std::size_t at) {
    if (is_single(e)) {
      float f;
      std::memcpy(&f, bytes + at, 4);
      return static_cast<double>(f);
    }
    double d;
    std::memcpy(&d, bytes + at, 8);
    return d;
  };
  return {part(0), is_complex(e) ? part(is_single(e) ? 4 : 8) : 0.0};
}

// Runs `call` through the scheme, a batch's products one after another; returns a description
// for the log. Throws on any failure, with every C as it was (restored from a copy when beta != 0
// and the scheme had begun writing it; when beta == 0, C is rewritten entirely by whoever computes
// the call next).
std::string route(const Call& call, const session::DgemmCall& s, const Routing& r) {
  cudaStream_t stream = nullptr;
  if (cublasGetStream(call.handle, &stream) != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error("cublasGetStream failed");
  }
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
  if (cublasGetPointerMode(call.handle, &pointer_mode) != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error("cublasGetPointerMode failed");
  }
  // A stream being captured into a CUDA graph cannot be synchronised, and the scheme's work
  // would not be part of the graph: such calls go to cuBLAS, which records them.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cuda_check(cudaStreamIsCapturing(stream, &capture), "cudaStreamIsCapturing");
  if (capture != cudaStreamCaptureStatusNone) {
    throw std::runtime_error("the handle's stream is being captured into a CUDA graph");
  }
  // The caller's stream has finished writing A, B, C (and alpha, beta) before the scheme, on
  // the backend's stream, reads them; the backend is synchronised before returning, so work
  // the caller queues afterwards sees C.
  cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  const Element e = call.type;
  const bool device_scalars = pointer_mode == CUBLAS_POINTER_MODE_DEVICE;
  const std::complex<double> alpha = read_scalar(call.alpha, e, device_scalars);
  const std::complex<double> beta = read_scalar(call.beta, e, device_scalars);
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  const Batch& batch = call.batch;
  const std::vector<const void*> as = addresses(batch, call.a, batch.stride_a, batch.a_array, e);
  const std::vector<const void*> bs = addresses(batch, call.b, batch.stride_b, batch.b_array, e);
  const std::vector<void*> cs = addresses(batch, call.c, batch.stride_c, batch.c_array, e);

  std::lock_guard lock(engines().mutex);
  Engine& engine = engine_for(device);
  Backend& backend = *engine.backend;
  ozaki::Handle& h = engine.handles.handle(backend, r, engine.arch);
  // op(A) is m x k: column-major A (m x k) or, transposed, the column-major k x m A read as a
  // row-major m x k matrix with the same leading dimension (conjugated for 'C' on complex
  // matrices); the same for op(B).
  const bool ta = s.transa != 'N', tb = s.transb != 'N';
  const auto layout = [](bool t) { return t ? Layout::row_major : Layout::column_major; };

  // A copy of each C when the scheme reads them, to put back if the scheme fails part way.
  unsigned char* saved = nullptr;
  const std::size_t row_bytes = static_cast<std::size_t>(call.m) * element_bytes(e);
  const std::size_t c_bytes = row_bytes * static_cast<std::size_t>(call.n);
  const std::size_t c_pitch = static_cast<std::size_t>(call.ldc) * element_bytes(e);
  const auto copy_c = [&](void* to, std::size_t to_pitch, const void* from,
                          std::size_t from_pitch) {
    return cudaMemcpy2D(to, to_pitch, from, from_pitch, row_bytes, call.n,
                        cudaMemcpyDeviceToDevice);
  };
  if (beta != 0.0 && c_bytes > 0) {
    cuda_check(cudaMalloc(&saved, c_bytes * cs.size()), "cudaMalloc");
    for (std::size_t i = 0; i < cs.size(); ++i) {
      cuda_check(copy_c(saved + i * c_bytes, row_bytes, cs[i], c_pitch), "saving C");
    }
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    inside_scheme = true;
    for (std::size_t i = 0; i < cs.size(); ++i) {
      Buffer a =
          backend.borrow(const_cast<void*>(as[i]),
                         span_bytes(ta ? call.k : call.m, ta ? call.m : call.k, call.lda, e));
      Buffer b =
          backend.borrow(const_cast<void*>(bs[i]),
                         span_bytes(tb ? call.n : call.k, tb ? call.k : call.n, call.ldb, e));
      Buffer c = backend.borrow(cs[i], span_bytes(call.m, call.n, call.ldc, e));
      if (is_complex(e)) {
        const Complex type = is_single(e) ? Complex::c64 : Complex::c128;
        h.gemm(alpha, {&a, 0, type, call.m, call.k, call.lda, layout(ta)}, s.transa == 'C',
               {&b, 0, type, call.k, call.n, call.ldb, layout(tb)}, s.transb == 'C', beta,
               {&c, 0, type, call.m, call.n, call.ldc, Layout::column_major});
      } else {
        const Real type = is_single(e) ? Real::fp32 : Real::fp64;
        h.gemm(alpha.real(), {&a, 0, type, call.m, call.k, call.lda, layout(ta)},
               {&b, 0, type, call.k, call.n, call.ldb, layout(tb)}, beta.real(),
               {&c, 0, type, call.m, call.n, call.ldc, Layout::column_major});
      }
    }
    backend.synchronize();
    inside_scheme = false;
  } catch (...) {
    inside_scheme = false;
    if (saved != nullptr) {
      cudaDeviceSynchronize();
      for (std::size_t i = 0; i < cs.size(); ++i) {
        copy_c(cs[i], c_pitch, saved + i * c_bytes, row_bytes);
      }
      cudaFree(saved);
    }
    throw;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (saved != nullptr) cudaFree(saved);
  const ozaki::Report report = h.report();  // after_call may replace the handle
  // Half of the device memory still free for the workspace of the calls to come.
  std::size_t free = 0, total = 0;
  cuda_check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  const std::string note = engine.handles.after_call(backend, r, engine.arch, free / 2);
  return session::routed_line(s, r, "", report, alpha, beta, seconds, note);
}

// Routes `call` or passes it to `fall_through`, logging which. A single-precision call takes
// session::for_single_precision's routing.
template <class FallThrough>
cublasStatus_t dispatch(const Call& call, FallThrough fall_through) {
  if (inside_scheme) return fall_through();
  const int caller_mode = std::fegetround();  // before any scope of the libraries sets its own
  const std::string entry = entry_name(call);
  const session::DgemmCall s = shape(call, entry);
  std::string why;
  std::optional<Routing> r = session::routing_from_environment(why);
  if (r) r = session::with_caller_rounding(*r, caller_mode);
  if (r && is_single(call.type)) r = session::for_single_precision(*r);
  if (r) {
    if (auto refused = refusal(call, s, *r)) {
      why = *refused;
    } else {
      try {
        session::log_line(route(call, s, *r));
        return CUBLAS_STATUS_SUCCESS;
      } catch (const std::exception& e) {
        why = std::string("not routed: ") + e.what();
      }
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const cublasStatus_t status = fall_through();
  std::ostringstream line;
  line << session::fell_through_line(s, "cuBLAS", why) << ", status " << status;
  if (status == CUBLAS_STATUS_SUCCESS) {
    cudaStream_t stream = nullptr;
    cublasGetStream(call.handle, &stream);
    cudaStreamSynchronize(stream);
    line << ", " << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
         << " s";
  }
  session::log_line(line.str());
  return status;
}

// The element type of a cublasGemm*Ex call that the schemes take: A, B and C all FP64 (real or
// complex) with compute 64F or 64F_PEDANTIC, or all FP32 with compute 32F or 32F_PEDANTIC (not
// the TF32 and other fast modes, whose results the caller asked to be less accurate); nothing
// otherwise.
std::optional<Element> ex_element(cudaDataType at, cudaDataType bt, cudaDataType ct,
                                  cublasComputeType_t compute) {
  if (at != bt || at != ct) return std::nullopt;
  const bool compute64 = compute == CUBLAS_COMPUTE_64F || compute == CUBLAS_COMPUTE_64F_PEDANTIC;
  const bool compute32 = compute == CUBLAS_COMPUTE_32F || compute == CUBLAS_COMPUTE_32F_PEDANTIC;
  if (at == CUDA_R_64F && compute64) return Element::d;
  if (at == CUDA_C_64F && compute64) return Element::z;
  if (at == CUDA_R_32F && compute32) return Element::s;
  if (at == CUDA_C_32F && compute32) return Element::c;
  return std::nullopt;
}

// A cublasGemm*Ex call: dispatched as `call` with the element type of its types; any other type
// (and a call from inside a scheme) goes to cuBLAS untouched and unlogged.
template <class FallThrough>
cublasStatus_t dispatch_ex(Call call, cudaDataType at, cudaDataType bt, cudaDataType ct,
                           cublasComputeType_t compute, FallThrough fall_through) {
  const std::optional<Element> e = ex_element(at, bt, ct, compute);
  if (inside_scheme || !e) return fall_through();
  call.type = *e;
  return dispatch(call, fall_through);
}

// The batch of a cublas*Batched call (device arrays of pointers) and of a *StridedBatched one.
Batch pointer_arrays(std::int64_t count, const void* const* a, const void* const* b,
                     void* const* c) {
  return {count, 0, 0, 0, true, a, b, c, true};
}
Batch strided(std::int64_t count, long long stride_a, long long stride_b, long long stride_c) {
  return {count, stride_a, stride_b, stride_c, false, nullptr, nullptr, nullptr, true};
}

// What a call that finds no cuBLAS does (find_definition's report).
constexpr const char* kNoCublas = "return CUBLAS_STATUS_NOT_INITIALIZED";

// next's definition called with `args`, or CUBLAS_STATUS_NOT_INITIALIZED where there is none.
template <class Function, class... Args>
cublasStatus_t call_next(NextDefinition<Function>& next, Args... args) {
  const Function f = next.get();
  return f != nullptr ? f(args...) : CUBLAS_STATUS_NOT_INITIALIZED;
}

// With TCEMU_PRELOAD_LOG set, one line when the library is loaded: what it intercepts and how
// the variables route calls now.
__attribute__((constructor)) void log_load() {
  std::string why;
  const std::optional<Routing> r = session::routing_from_environment(why);
  session::log_line(
      std::string("libtcemu_cublas_preload.so loaded: intercepts cublasDgemm_v2, "
                  "cublasSgemm_v2, cublasZgemm_v2, cublasCgemm_v2, cublasDgemmBatched, "
                  "cublasZgemmBatched, cublasDgemmStridedBatched, cublasZgemmStridedBatched, "
                  "cublasGemmEx, cublasGemmBatchedEx, cublasGemmStridedBatchedEx (A, B, C all "
                  "CUDA_R_64F or CUDA_C_64F with compute 64F[_PEDANTIC], or CUDA_R_32F or "
                  "CUDA_C_32F with compute 32F[_PEDANTIC]), each also _64; ") +
      (r ? std::string("routes them to ") + session::scheme_name(r->scheme) + " mode " +
               ozaki::mode_name(r->mode)
         : "lets them fall through (" + why + ")") +
      "; a call under a directed rounding mode of the calling thread is routed in mode cr "
      "rounded in that direction to its own precision");
}

}  // namespace
}  // namespace tcemu::preload

using tcemu::preload::Call;
using tcemu::preload::call_next;
using tcemu::preload::dispatch;
using tcemu::preload::dispatch_ex;
using tcemu::preload::Element;
using tcemu::preload::kNoCublas;
using tcemu::preload::NextDefinition;
using tcemu::preload::pointer_arrays;
using tcemu::preload::strided;

// The typed entry points, one line each below: cublas?gemm_v2 (and _64) of element type T
// (double, float, cuDoubleComplex, cuComplex) with integers INT, and the batched forms.
#define TCEMU_CUBLAS_GEMM(NAME, T, INT, ELEMENT)                                                 \
  cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, \
                      INT m, INT n, INT k, const T* alpha, const T* A, INT lda, const T* B,      \
                      INT ldb, const T* beta, T* C, INT ldc) {                                   \
    static NextDefinition<decltype(&NAME)> next(#NAME, kNoCublas);                               \
    return dispatch(Call{#NAME,                                                                  \
                         handle,                                                                 \
                         transa,                                                                 \
                         transb,                                                                 \
                         m,                                                                      \
                         n,                                                                      \
                         k,                                                                      \
                         alpha,                                                                  \
                         A,                                                                      \
                         lda,                                                                    \
                         B,                                                                      \
                         ldb,                                                                    \
                         beta,                                                                   \
                         C,                                                                      \
                         ldc,                                                                    \
                         {},                                                                     \
                         ELEMENT},                                                               \
                    [&] {                                                                        \
                      return call_next(next, handle, transa, transb, m, n, k, alpha, A, lda, B,  \
                                       ldb, beta, C, ldc);                                       \
                    });                                                                          \
  }
#define TCEMU_CUBLAS_GEMM_BATCHED(NAME, T, INT, ELEMENT)                                           \
  cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,   \
                      INT m, INT n, INT k, const T* alpha, const T* const Aarray[], INT lda,       \
                      const T* const Barray[], INT ldb, const T* beta, T* const Carray[], INT ldc, \
                      INT batchCount) {                                                            \
    static NextDefinition<decltype(&NAME)> next(#NAME, kNoCublas);                                 \
    return dispatch(Call{#NAME, handle, transa, transb, m, n, k, alpha, nullptr, lda, nullptr,     \
                         ldb, beta, nullptr, ldc,                                                  \
                         pointer_arrays(batchCount, reinterpret_cast<const void* const*>(Aarray),  \
                                        reinterpret_cast<const void* const*>(Barray),              \
                                        reinterpret_cast<void* const*>(Carray)),                   \
                         ELEMENT},                                                                 \
                    [&] {                                                                          \
                      return call_next(next, handle, transa, transb, m, n, k, alpha, Aarray, lda,  \
                                       Barray, ldb, beta, Carray, ldc, batchCount);                \
                    });                                                                            \
  }
#define TCEMU_CUBLAS_GEMM_STRIDED(NAME, T, INT, ELEMENT)                                         \
  cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, \
                      INT m, INT n, INT k, const T* alpha, const T* A, INT lda,                  \
                      long long int strideA, const T* B, INT ldb, long long int strideB,         \
                      const T* beta, T* C, INT ldc, long long int strideC, INT batchCount) {     \
    static NextDefinition<decltype(&NAME)> next(#NAME, kNoCublas);                               \
    return dispatch(Call{#NAME, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, \
                         ldc, strided(batchCount, strideA, strideB, strideC), ELEMENT},          \
                    [&] {                                                                        \
                      return call_next(next, handle, transa, transb, m, n, k, alpha, A, lda,     \
                                       strideA, B, ldb, strideB, beta, C, ldc, strideC,          \
                                       batchCount);                                              \
                    });                                                                          \
  }

// The cublasGemm*Ex entry points with integers INT, their types checked by dispatch_ex. The
// next definition's type is spelled out: cuBLAS declares C++ overloads of some of these names.
#define TCEMU_CUBLAS_GEMM_EX(NAME, INT)                                                           \
  cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,  \
                      INT m, INT n, INT k, const void* alpha, const void* A, cudaDataType Atype,  \
                      INT lda, const void* B, cudaDataType Btype, INT ldb, const void* beta,      \
                      void* C, cudaDataType Ctype, INT ldc, cublasComputeType_t computeType,      \
                      cublasGemmAlgo_t algo) {                                                    \
    using Next = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, INT,    \
                                    INT, INT, const void*, const void*, cudaDataType, INT,        \
                                    const void*, cudaDataType, INT, const void*, void*,           \
                                    cudaDataType, INT, cublasComputeType_t, cublasGemmAlgo_t);    \
    static NextDefinition<Next> next(#NAME, kNoCublas);                                           \
    return dispatch_ex(                                                                           \
        Call{#NAME, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc}, Atype, \
        Btype, Ctype, computeType, [&] {                                                          \
          return call_next(next, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, \
                           ldb, beta, C, Ctype, ldc, computeType, algo);                          \
        });                                                                                       \
  }
#define TCEMU_CUBLAS_GEMM_BATCHED_EX(NAME, INT)                                                    \
  cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,   \
                      INT m, INT n, INT k, const void* alpha, const void* const Aarray[],          \
                      cudaDataType Atype, INT lda, const void* const Barray[], cudaDataType Btype, \
                      INT ldb, const void* beta, void* const Carray[], cudaDataType Ctype,         \
                      INT ldc, INT batchCount, cublasComputeType_t computeType,                    \
                      cublasGemmAlgo_t algo) {                                                     \
    using Next = cublasStatus_t (*)(                                                               \
        cublasHandle_t, cublasOperation_t, cublasOperation_t, INT, INT, INT, const void*,          \
        const void* const*, cudaDataType, INT, const void* const*, cudaDataType, INT, const void*, \
        void* const*, cudaDataType, INT, INT, cublasComputeType_t, cublasGemmAlgo_t);              \
    static NextDefinition<Next> next(#NAME, kNoCublas);                                            \
    return dispatch_ex(                                                                            \
        Call{#NAME, handle, transa, transb, m, n, k, alpha, nullptr, lda, nullptr, ldb, beta,      \
             nullptr, ldc, pointer_arrays(batchCount, Aarray, Barray, Carray)},                    \
        Atype, Btype, Ctype, computeType, [&] {                                                    \
          return call_next(next, handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda,       \
                           Barray, Btype, ldb, beta, Carray, Ctype, ldc, batchCount, computeType,  \
                           algo);                                                                  \
        });                                                                                        \
  }
#define TCEMU_CUBLAS_GEMM_STRIDED_EX(NAME, INT)                                                   \
  cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,  \
                      INT m, INT n, INT k, const void* alpha, const void* A, cudaDataType Atype,  \
                      INT lda, long long int strideA, const void* B, cudaDataType Btype, INT ldb, \
                      long long int strideB, const void* beta, void* C, cudaDataType Ctype,       \
                      INT ldc, long long int strideC, INT batchCount,                             \
                      cublasComputeType_t computeType, cublasGemmAlgo_t algo) {                   \
    using Next = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, INT,    \
                                    INT, INT, const void*, const void*, cudaDataType, INT,        \
                                    long long int, const void*, cudaDataType, INT, long long int, \
                                    const void*, void*, cudaDataType, INT, long long int, INT,    \
                                    cublasComputeType_t, cublasGemmAlgo_t);                       \
    static NextDefinition<Next> next(#NAME, kNoCublas);                                           \
    return dispatch_ex(Call{#NAME, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta,  \
                            C, ldc, strided(batchCount, strideA, strideB, strideC)},              \
                       Atype, Btype, Ctype, computeType, [&] {                                    \
                         return call_next(next, handle, transa, transb, m, n, k, alpha, A, Atype, \
                                          lda, strideA, B, Btype, ldb, strideB, beta, C, Ctype,   \
                                          ldc, strideC, batchCount, computeType, algo);           \
                       });                                                                        \
  }

extern "C" {

TCEMU_CUBLAS_GEMM(cublasDgemm_v2, double, int, Element::d)
TCEMU_CUBLAS_GEMM(cublasDgemm_v2_64, double, int64_t, Element::d)
TCEMU_CUBLAS_GEMM(cublasSgemm_v2, float, int, Element::s)
TCEMU_CUBLAS_GEMM(cublasSgemm_v2_64, float, int64_t, Element::s)
TCEMU_CUBLAS_GEMM(cublasZgemm_v2, cuDoubleComplex, int, Element::z)
TCEMU_CUBLAS_GEMM(cublasZgemm_v2_64, cuDoubleComplex, int64_t, Element::z)
TCEMU_CUBLAS_GEMM(cublasCgemm_v2, cuComplex, int, Element::c)
TCEMU_CUBLAS_GEMM(cublasCgemm_v2_64, cuComplex, int64_t, Element::c)
TCEMU_CUBLAS_GEMM_BATCHED(cublasDgemmBatched, double, int, Element::d)
TCEMU_CUBLAS_GEMM_BATCHED(cublasDgemmBatched_64, double, int64_t, Element::d)
TCEMU_CUBLAS_GEMM_BATCHED(cublasZgemmBatched, cuDoubleComplex, int, Element::z)
TCEMU_CUBLAS_GEMM_BATCHED(cublasZgemmBatched_64, cuDoubleComplex, int64_t, Element::z)
TCEMU_CUBLAS_GEMM_STRIDED(cublasDgemmStridedBatched, double, int, Element::d)
TCEMU_CUBLAS_GEMM_STRIDED(cublasDgemmStridedBatched_64, double, int64_t, Element::d)
TCEMU_CUBLAS_GEMM_STRIDED(cublasZgemmStridedBatched, cuDoubleComplex, int, Element::z)
TCEMU_CUBLAS_GEMM_STRIDED(cublasZgemmStridedBatched_64, cuDoubleComplex, int64_t, Element::z)

TCEMU_CUBLAS_GEMM_EX(cublasGemmEx, int)
TCEMU_CUBLAS_GEMM_EX(cublasGemmEx_64, int64_t)
TCEMU_CUBLAS_GEMM_BATCHED_EX(cublasGemmBatchedEx, int)
TCEMU_CUBLAS_GEMM_BATCHED_EX(cublasGemmBatchedEx_64, int64_t)
TCEMU_CUBLAS_GEMM_STRIDED_EX(cublasGemmStridedBatchedEx, int)
TCEMU_CUBLAS_GEMM_STRIDED_EX(cublasGemmStridedBatchedEx_64, int64_t)

}  // extern "C"
