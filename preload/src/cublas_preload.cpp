// The cuBLAS entry points of the LD_PRELOAD library (docs/preload.md): cublasDgemm_v2 (what
// cublas_v2.h's cublasDgemm names), cublasDgemm_v2_64, cublasGemmEx / cublasGemmEx_64 with
// CUDA_R_64F A, B and C and CUBLAS_COMPUTE_64F[_PEDANTIC], and their batched forms
// (cublasDgemmBatched, cublasDgemmStridedBatched, cublasGemmBatchedEx, cublasGemmStridedBatchedEx,
// each also _64): a batch is its products one after another, each as one call. Each call is routed
// to the Ozaki scheme the environment names (tcemu/session/preload_route.hpp), run on the GPU
// backend in place on the caller's device memory, or passed to cuBLAS wherever the program loaded
// it (next_definition.hpp) when the scheme is off, the variables are bad, the call is below
// TCEMU_PRELOAD_MIN_SIZE, its arguments are not a valid DGEMM (cuBLAS then reports them), or the
// scheme refuses the operands (C is restored first). One log line per call says which. A call
// made while the calling host thread rounds upward, downward or toward zero is routed in mode cr
// rounded in that direction on the device (session::with_caller_rounding). Where no loaded object
// defines the entry point, a call that falls through returns CUBLAS_STATUS_NOT_INITIALIZED (a
// line on stderr says so once) instead of taking the process down.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cfenv>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
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

bool transposes(cublasOperation_t op) {
  return op == CUBLAS_OP_T || op == CUBLAS_OP_C;  // C is T for real matrices
}

// Where the products of a batched call are: `count` of them, each A, B and C `stride_*` elements
// after the one before (strided batches; 0 and count 1 for a plain call), or, with `arrays`, at
// the addresses in device arrays of `count` pointers (cublas*Batched), read once the caller's
// stream has finished writing them.
struct Batch {
  std::int64_t count = 1;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  bool arrays = false;
  const double* const* a_array = nullptr;
  const double* const* b_array = nullptr;
  double* const* c_array = nullptr;
  bool batched = false;  // a batched entry point (its log line gives the count)
};

// A DGEMM call, whatever entry point it came through; a, b and c are null for pointer arrays.
struct Call {
  const char* entry;
  cublasHandle_t handle;
  cublasOperation_t transa, transb;
  std::int64_t m, n, k;
  const double* alpha;
  const double* a;
  std::int64_t lda;
  const double* b;
  std::int64_t ldb;
  const double* beta;
  double* c;
  std::int64_t ldc;
  Batch batch{};
};

// Bytes from the first element of a column-major rows x cols matrix with leading dimension ld
// to past its last.
std::size_t span_bytes(std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  if (rows == 0 || cols == 0) return 0;
  return static_cast<std::size_t>((cols - 1) * ld + rows) * sizeof(double);
}

// The entry point as the log names it: "cublasDgemmStridedBatched batch 12" for a batch.
std::string entry_name(const Call& c) {
  return c.batch.batched ? std::string(c.entry) + " batch " + std::to_string(c.batch.count)
                         : std::string(c.entry);
}

// The call's shape (each product's, for a batch), as the checks and the log take it; `entry`
// is entry_name(c), which must outlive it.
session::DgemmCall shape(const Call& c, const std::string& entry) {
  auto op = [](cublasOperation_t o) -> char {
    return o == CUBLAS_OP_N ? 'N' : transposes(o) ? 'T' : 0;
  };
  return {entry.c_str(), op(c.transa), op(c.transb), c.m, c.n, c.k, c.lda, c.ldb, c.ldc};
}

// Why `call` is not a DGEMM the scheme takes, or nothing. Invalid arguments go to cuBLAS, which
// returns its error for them; so does an empty or negative batch, which leaves nothing to route.
std::optional<std::string> refusal(const Call& c, const session::DgemmCall& s, const Routing& r) {
  if (c.batch.count <= 0) return "batch count " + std::to_string(c.batch.count);
  if (c.batch.arrays &&
      (c.batch.a_array == nullptr || c.batch.b_array == nullptr || c.batch.c_array == nullptr)) {
    return std::string("a null pointer array");
  }
  return session::refusal(s, r, c.alpha == nullptr || c.beta == nullptr);
}

// The count pointers of a device pointer array (`array`, for batch.arrays), or those `stride`
// elements apart from `first`.
template <class T>
std::vector<T*> addresses(const Batch& batch, T* first, std::int64_t stride, T* const* array) {
  std::vector<T*> out(static_cast<std::size_t>(batch.count));
  if (batch.arrays) {
    if (cudaMemcpy(out.data(), array, out.size() * sizeof(T*), cudaMemcpyDeviceToHost) !=
        cudaSuccess) {
      throw std::runtime_error("reading the batch's pointer array");
    }
  } else {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = first + stride * std::int64_t(i);
  }
  return out;
}

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
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
  double alpha = 0, beta = 0;
  if (pointer_mode == CUBLAS_POINTER_MODE_DEVICE) {
    cuda_check(cudaMemcpy(&alpha, call.alpha, sizeof alpha, cudaMemcpyDeviceToHost), "alpha");
    cuda_check(cudaMemcpy(&beta, call.beta, sizeof beta, cudaMemcpyDeviceToHost), "beta");
  } else {
    alpha = *call.alpha;
    beta = *call.beta;
  }
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  const Batch& batch = call.batch;
  const std::vector<const double*> as = addresses(batch, call.a, batch.stride_a, batch.a_array);
  const std::vector<const double*> bs = addresses(batch, call.b, batch.stride_b, batch.b_array);
  const std::vector<double*> cs = addresses(batch, call.c, batch.stride_c, batch.c_array);

  std::lock_guard lock(engines().mutex);
  Engine& engine = engine_for(device);
  Backend& backend = *engine.backend;
  ozaki::Handle& h = engine.handles.handle(backend, r, engine.arch);
  // op(A) is m x k: column-major A (m x k) or, transposed, the column-major k x m A read as a
  // row-major m x k matrix with the same leading dimension; the same for op(B).
  const bool ta = transposes(call.transa), tb = transposes(call.transb);
  const auto layout = [](bool t) { return t ? Layout::row_major : Layout::column_major; };

  // A copy of each C when the scheme reads them, to put back if the scheme fails part way.
  double* saved = nullptr;
  const std::size_t row_bytes = static_cast<std::size_t>(call.m) * sizeof(double);
  const std::size_t c_bytes = row_bytes * static_cast<std::size_t>(call.n);
  const auto copy_c = [&](double* to, std::size_t to_pitch, const double* from,
                          std::size_t from_pitch) {
    return cudaMemcpy2D(to, to_pitch, from, from_pitch, row_bytes, call.n,
                        cudaMemcpyDeviceToDevice);
  };
  if (beta != 0 && c_bytes > 0) {
    cuda_check(cudaMalloc(&saved, c_bytes * cs.size()), "cudaMalloc");
    for (std::size_t i = 0; i < cs.size(); ++i) {
      cuda_check(
          copy_c(saved + i * c_bytes / sizeof(double), row_bytes, cs[i], call.ldc * sizeof(double)),
          "saving C");
    }
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    inside_scheme = true;
    for (std::size_t i = 0; i < cs.size(); ++i) {
      Buffer a = backend.borrow(const_cast<double*>(as[i]),
                                span_bytes(ta ? call.k : call.m, ta ? call.m : call.k, call.lda));
      Buffer b = backend.borrow(const_cast<double*>(bs[i]),
                                span_bytes(tb ? call.n : call.k, tb ? call.k : call.n, call.ldb));
      Buffer c = backend.borrow(cs[i], span_bytes(call.m, call.n, call.ldc));
      const RealMatrix ma{&a, 0, Real::fp64, call.m, call.k, call.lda, layout(ta)};
      const RealMatrix mb{&b, 0, Real::fp64, call.k, call.n, call.ldb, layout(tb)};
      const RealMatrix mc{&c, 0, Real::fp64, call.m, call.n, call.ldc, Layout::column_major};
      h.gemm(alpha, ma, mb, beta, mc);
    }
    backend.synchronize();
    inside_scheme = false;
  } catch (...) {
    inside_scheme = false;
    if (saved != nullptr) {
      cudaDeviceSynchronize();
      for (std::size_t i = 0; i < cs.size(); ++i) {
        copy_c(cs[i], call.ldc * sizeof(double), saved + i * c_bytes / sizeof(double), row_bytes);
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

// Routes `call` or passes it to `fall_through`, logging which.
template <class FallThrough>
cublasStatus_t dispatch(const Call& call, FallThrough fall_through) {
  if (inside_scheme) return fall_through();
  const int caller_mode = std::fegetround();  // before any scope of the libraries sets its own
  const std::string entry = entry_name(call);
  const session::DgemmCall s = shape(call, entry);
  std::string why;
  std::optional<Routing> r = session::routing_from_environment(why);
  if (r) {
    r = session::with_caller_rounding(*r, caller_mode);
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

bool is_fp64_gemm(cudaDataType at, cudaDataType bt, cudaDataType ct, cublasComputeType_t compute) {
  return at == CUDA_R_64F && bt == CUDA_R_64F && ct == CUDA_R_64F &&
         (compute == CUBLAS_COMPUTE_64F || compute == CUBLAS_COMPUTE_64F_PEDANTIC);
}

// A cublasGemm*Ex call: dispatched as `call` where its types are FP64; any other type (and a
// call from inside a scheme) goes to cuBLAS untouched and unlogged.
template <class FallThrough>
cublasStatus_t dispatch_ex(const Call& call, cudaDataType at, cudaDataType bt, cudaDataType ct,
                           cublasComputeType_t compute, FallThrough fall_through) {
  if (inside_scheme || !is_fp64_gemm(at, bt, ct, compute)) return fall_through();
  return dispatch(call, fall_through);
}

// The batch of a cublas*Batched call (device arrays of pointers) and of a *StridedBatched one.
Batch pointer_arrays(std::int64_t count, const void* const* a, const void* const* b,
                     void* const* c) {
  return {count,
          0,
          0,
          0,
          true,
          reinterpret_cast<const double* const*>(a),
          reinterpret_cast<const double* const*>(b),
          reinterpret_cast<double* const*>(c),
          true};
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
                  "cublasDgemm_v2_64, cublasGemmEx, cublasGemmEx_64 (FP64 A, B, C and compute) "
                  "and their Batched and StridedBatched forms; ") +
      (r ? std::string("routes them to ") + session::scheme_name(r->scheme) + " mode " +
               session::mode_name(r->mode)
         : "lets them fall through (" + why + ")") +
      "; a call under a directed rounding mode of the calling thread is routed in mode cr "
      "rounded in that direction");
}

}  // namespace
}  // namespace tcemu::preload

using tcemu::preload::Call;
using tcemu::preload::call_next;
using tcemu::preload::dispatch;
using tcemu::preload::dispatch_ex;
using tcemu::preload::kNoCublas;
using tcemu::preload::NextDefinition;
using tcemu::preload::pointer_arrays;
using tcemu::preload::strided;

extern "C" {

cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k, const double* alpha,
                              const double* A, int lda, const double* B, int ldb,
                              const double* beta, double* C, int ldc) {
  static NextDefinition<decltype(&cublasDgemm_v2)> next("cublasDgemm_v2", kNoCublas);
  return dispatch(
      Call{"cublasDgemm_v2", handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc},
      [&] {
        return call_next(next, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                         ldc);
      });
}

cublasStatus_t cublasDgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                 cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                 const double* alpha, const double* A, int64_t lda, const double* B,
                                 int64_t ldb, const double* beta, double* C, int64_t ldc) {
  static NextDefinition<decltype(&cublasDgemm_v2_64)> next("cublasDgemm_v2_64", kNoCublas);
  return dispatch(Call{"cublasDgemm_v2_64", handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
                       beta, C, ldc},
                  [&] {
                    return call_next(next, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
                                     beta, C, ldc);
                  });
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void* alpha,
                            const void* A, cudaDataType Atype, int lda, const void* B,
                            cudaDataType Btype, int ldb, const void* beta, void* C,
                            cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                            cublasGemmAlgo_t algo) {
  using Next = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                  int, const void*, const void*, cudaDataType, int, const void*,
                                  cudaDataType, int, const void*, void*, cudaDataType, int,
                                  cublasComputeType_t, cublasGemmAlgo_t);
  static NextDefinition<Next> next("cublasGemmEx", kNoCublas);
  return dispatch_ex(
      Call{"cublasGemmEx", handle, transa, transb, m, n, k, static_cast<const double*>(alpha),
           static_cast<const double*>(A), lda, static_cast<const double*>(B), ldb,
           static_cast<const double*>(beta), static_cast<double*>(C), ldc},
      Atype, Btype, Ctype, computeType, [&] {
        return call_next(next, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb,
                         beta, C, Ctype, ldc, computeType, algo);
      });
}

cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                               const void* alpha, const void* A, cudaDataType Atype, int64_t lda,
                               const void* B, cudaDataType Btype, int64_t ldb, const void* beta,
                               void* C, cudaDataType Ctype, int64_t ldc,
                               cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  using Next = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t,
                                  int64_t, int64_t, const void*, const void*, cudaDataType, int64_t,
                                  const void*, cudaDataType, int64_t, const void*, void*,
                                  cudaDataType, int64_t, cublasComputeType_t, cublasGemmAlgo_t);
  static NextDefinition<Next> next("cublasGemmEx_64", kNoCublas);
  return dispatch_ex(
      Call{"cublasGemmEx_64", handle, transa, transb, m, n, k, static_cast<const double*>(alpha),
           static_cast<const double*>(A), lda, static_cast<const double*>(B), ldb,
           static_cast<const double*>(beta), static_cast<double*>(C), ldc},
      Atype, Btype, Ctype, computeType, [&] {
        return call_next(next, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb,
                         beta, C, Ctype, ldc, computeType, algo);
      });
}

cublasStatus_t cublasDgemmBatched(cublasHandle_t handle, cublasOperation_t transa,
                                  cublasOperation_t transb, int m, int n, int k,
                                  const double* alpha, const double* const Aarray[], int lda,
                                  const double* const Barray[], int ldb, const double* beta,
                                  double* const Carray[], int ldc, int batchCount) {
  static NextDefinition<decltype(&cublasDgemmBatched)> next("cublasDgemmBatched", kNoCublas);
  return dispatch(Call{"cublasDgemmBatched", handle, transa, transb, m, n, k, alpha, nullptr, lda,
                       nullptr, ldb, beta, nullptr, ldc,
                       pointer_arrays(batchCount, reinterpret_cast<const void* const*>(Aarray),
                                      reinterpret_cast<const void* const*>(Barray),
                                      reinterpret_cast<void* const*>(Carray))},
                  [&] {
                    return call_next(next, handle, transa, transb, m, n, k, alpha, Aarray, lda,
                                     Barray, ldb, beta, Carray, ldc, batchCount);
                  });
}

cublasStatus_t cublasDgemmBatched_64(cublasHandle_t handle, cublasOperation_t transa,
                                     cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                     const double* alpha, const double* const Aarray[], int64_t lda,
                                     const double* const Barray[], int64_t ldb, const double* beta,
                                     double* const Carray[], int64_t ldc, int64_t batchCount) {
  static NextDefinition<decltype(&cublasDgemmBatched_64)> next("cublasDgemmBatched_64", kNoCublas);
  return dispatch(Call{"cublasDgemmBatched_64", handle, transa, transb, m, n, k, alpha, nullptr,
                       lda, nullptr, ldb, beta, nullptr, ldc,
                       pointer_arrays(batchCount, reinterpret_cast<const void* const*>(Aarray),
                                      reinterpret_cast<const void* const*>(Barray),
                                      reinterpret_cast<void* const*>(Carray))},
                  [&] {
                    return call_next(next, handle, transa, transb, m, n, k, alpha, Aarray, lda,
                                     Barray, ldb, beta, Carray, ldc, batchCount);
                  });
}

cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const double* alpha, const double* A, int lda,
                                         long long int strideA, const double* B, int ldb,
                                         long long int strideB, const double* beta, double* C,
                                         int ldc, long long int strideC, int batchCount) {
  static NextDefinition<decltype(&cublasDgemmStridedBatched)> next("cublasDgemmStridedBatched",
                                                                   kNoCublas);
  return dispatch(Call{"cublasDgemmStridedBatched", handle, transa, transb, m, n, k, alpha, A, lda,
                       B, ldb, beta, C, ldc, strided(batchCount, strideA, strideB, strideC)},
                  [&] {
                    return call_next(next, handle, transa, transb, m, n, k, alpha, A, lda, strideA,
                                     B, ldb, strideB, beta, C, ldc, strideC, batchCount);
                  });
}

cublasStatus_t cublasDgemmStridedBatched_64(cublasHandle_t handle, cublasOperation_t transa,
                                            cublasOperation_t transb, int64_t m, int64_t n,
                                            int64_t k, const double* alpha, const double* A,
                                            int64_t lda, long long int strideA, const double* B,
                                            int64_t ldb, long long int strideB, const double* beta,
                                            double* C, int64_t ldc, long long int strideC,
                                            int64_t batchCount) {
  static NextDefinition<decltype(&cublasDgemmStridedBatched_64)> next(
      "cublasDgemmStridedBatched_64", kNoCublas);
  return dispatch(Call{"cublasDgemmStridedBatched_64", handle, transa, transb, m, n, k, alpha, A,
                       lda, B, ldb, beta, C, ldc, strided(batchCount, strideA, strideB, strideC)},
                  [&] {
                    return call_next(next, handle, transa, transb, m, n, k, alpha, A, lda, strideA,
                                     B, ldb, strideB, beta, C, ldc, strideC, batchCount);
                  });
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                   cublasOperation_t transb, int m, int n, int k, const void* alpha,
                                   const void* const Aarray[], cudaDataType Atype, int lda,
                                   const void* const Barray[], cudaDataType Btype, int ldb,
                                   const void* beta, void* const Carray[], cudaDataType Ctype,
                                   int ldc, int batchCount, cublasComputeType_t computeType,
                                   cublasGemmAlgo_t algo) {
  // cuBLAS declares a C++ overload of this name too: the C definition's type, spelled out.
  using Next = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                  int, const void*, const void* const*, cudaDataType, int,
                                  const void* const*, cudaDataType, int, const void*, void* const*,
                                  cudaDataType, int, int, cublasComputeType_t, cublasGemmAlgo_t);
  static NextDefinition<Next> next("cublasGemmBatchedEx", kNoCublas);
  return dispatch_ex(Call{"cublasGemmBatchedEx", handle, transa, transb, m, n, k,
                          static_cast<const double*>(alpha), nullptr, lda, nullptr, ldb,
                          static_cast<const double*>(beta), nullptr, ldc,
                          pointer_arrays(batchCount, Aarray, Barray, Carray)},
                     Atype, Btype, Ctype, computeType, [&] {
                       return call_next(next, handle, transa, transb, m, n, k, alpha, Aarray, Atype,
                                        lda, Barray, Btype, ldb, beta, Carray, Ctype, ldc,
                                        batchCount, computeType, algo);
                     });
}

cublasStatus_t cublasGemmBatchedEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                      cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                      const void* alpha, const void* const Aarray[],
                                      cudaDataType Atype, int64_t lda, const void* const Barray[],
                                      cudaDataType Btype, int64_t ldb, const void* beta,
                                      void* const Carray[], cudaDataType Ctype, int64_t ldc,
                                      int64_t batchCount, cublasComputeType_t computeType,
                                      cublasGemmAlgo_t algo) {
  static NextDefinition<decltype(&cublasGemmBatchedEx_64)> next("cublasGemmBatchedEx_64",
                                                                kNoCublas);
  return dispatch_ex(Call{"cublasGemmBatchedEx_64", handle, transa, transb, m, n, k,
                          static_cast<const double*>(alpha), nullptr, lda, nullptr, ldb,
                          static_cast<const double*>(beta), nullptr, ldc,
                          pointer_arrays(batchCount, Aarray, Barray, Carray)},
                     Atype, Btype, Ctype, computeType, [&] {
                       return call_next(next, handle, transa, transb, m, n, k, alpha, Aarray, Atype,
                                        lda, Barray, Btype, ldb, beta, Carray, Ctype, ldc,
                                        batchCount, computeType, algo);
                     });
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const void* alpha, const void* A, cudaDataType Atype,
                                          int lda, long long int strideA, const void* B,
                                          cudaDataType Btype, int ldb, long long int strideB,
                                          const void* beta, void* C, cudaDataType Ctype, int ldc,
                                          long long int strideC, int batchCount,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  // cuBLAS declares a C++ overload of this name too: the C definition's type, spelled out.
  using Next = cublasStatus_t (*)(
      cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
      cudaDataType, int, long long int, const void*, cudaDataType, int, long long int, const void*,
      void*, cudaDataType, int, long long int, int, cublasComputeType_t, cublasGemmAlgo_t);
  static NextDefinition<Next> next("cublasGemmStridedBatchedEx", kNoCublas);
  return dispatch_ex(
      Call{"cublasGemmStridedBatchedEx", handle, transa, transb, m, n, k,
           static_cast<const double*>(alpha), static_cast<const double*>(A), lda,
           static_cast<const double*>(B), ldb, static_cast<const double*>(beta),
           static_cast<double*>(C), ldc, strided(batchCount, strideA, strideB, strideC)},
      Atype, Btype, Ctype, computeType, [&] {
        return call_next(next, handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B,
                         Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType,
                         algo);
      });
}

cublasStatus_t cublasGemmStridedBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const void* alpha, const void* A, cudaDataType Atype, int64_t lda,
    long long int strideA, const void* B, cudaDataType Btype, int64_t ldb, long long int strideB,
    const void* beta, void* C, cudaDataType Ctype, int64_t ldc, long long int strideC,
    int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  static NextDefinition<decltype(&cublasGemmStridedBatchedEx_64)> next(
      "cublasGemmStridedBatchedEx_64", kNoCublas);
  return dispatch_ex(
      Call{"cublasGemmStridedBatchedEx_64", handle, transa, transb, m, n, k,
           static_cast<const double*>(alpha), static_cast<const double*>(A), lda,
           static_cast<const double*>(B), ldb, static_cast<const double*>(beta),
           static_cast<double*>(C), ldc, strided(batchCount, strideA, strideB, strideC)},
      Atype, Btype, Ctype, computeType, [&] {
        return call_next(next, handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B,
                         Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType,
                         algo);
      });
}

}  // extern "C"
