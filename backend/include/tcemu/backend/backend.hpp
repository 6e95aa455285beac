// The backend interface: what a scheme (ozaki/, markidis/, accurate/) may ask of the machine it
// runs on. A Backend is one object, a memory space (memory.hpp) with six families of steps:
//
//   tensor_core_steps.hpp    the low-precision GEMM through a datapath, format conversion
//   fp32_split_steps.hpp     the fp32 split, summary and combination steps of markidis/
//   ozaki_steps.hpp          the binary64 split, product, summation and epilogue steps of ozaki/
//   inner_product_steps.hpp  Dot2 and correctly rounded inner products (accurate/)
//   integer_gemm_steps.hpp   the int8 GEMM of integer tensor cores (the integer Ozaki schemes)
//   crt_steps.hpp            scaling, residues, residue products, reconstruction (Ozaki II)
//   complex_steps.hpp        the real form of a complex product and its complex epilogue
//
// The control flow of an algorithm lives in the scheme, the arithmetic of each step in the
// backend. Every step works on whole matrices in the backend's buffers; its result is defined
// bit for bit in its family's header (the order of every rounded operation is stated), and its
// element functions, shared by host and device code, sit beside it, so that every backend
// computes the same bits. The arguments of every step are checked once, in the family's source
// file here, before a backend's implementation runs; nan.hpp names the NaN each family writes.
//
// The backends: host/ (make_emulator_backend, make_cpu64_backend) and gpu/ (make_gpu_backend),
// one source file per step family on each side.
#pragma once

#include <tcemu/backend/complex_steps.hpp>
#include <tcemu/backend/crt_steps.hpp>
#include <tcemu/backend/fp32_split_steps.hpp>
#include <tcemu/backend/inner_product_steps.hpp>
#include <tcemu/backend/integer_gemm_steps.hpp>
#include <tcemu/backend/memory.hpp>
#include <tcemu/backend/ozaki_steps.hpp>
#include <tcemu/backend/tensor_core_steps.hpp>

namespace tcemu {

class Backend : public TensorCoreSteps,
                public Fp32SplitSteps,
                public OzakiSteps,
                public InnerProductSteps,
                public IntegerGemmSteps,
                public CrtSteps,
                public ComplexSteps {
 public:
  // Returns when every step issued so far has finished (for timing; steps that return values
  // to the host finish before they return).
  void synchronize() { synchronize_checked(); }

 protected:
  virtual void synchronize_checked() = 0;
};

}  // namespace tcemu
