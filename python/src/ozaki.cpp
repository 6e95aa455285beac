// ozaki_gemm(): the Ozaki scheme, DGEMM-TC and SGEMM-TC in modes dp, cr, sp and tunable
// (tcemu/ozaki/handle.hpp), on the emulator (tensor-core products through any datapath), cpu64
// (binary64 products, DGEMM-DP-CR) or the GPU, as `tcemu gemm --scheme dgemm-tc|sgemm-tc` runs it;
// with int8=True Ozaki-I on int8 slices and integer products (`--scheme dgemm-int8|sgemm-int8`),
// with crt=True Ozaki scheme II (`--scheme dgemm-crt|sgemm-crt`; `splits`: the moduli). complex128
// and complex64 host arrays run zgemm and cgemm (the real form, BlasRoutines::zgemm).
#include <optional>
#include <string>

#include <nanobind/stl/complex.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <tcemu/emulator/presets.hpp>
#include <tcemu/ozaki/handle.hpp>
#include <tcemu/session/products.hpp>

#include "arrays.hpp"
#include "backends.hpp"
#include "bindings.hpp"
#include "blas_gemm.hpp"
#include "buffers.hpp"

namespace tcemu::python {
namespace {

ozaki::Mode mode_named(const std::string& word) {
  if (const std::optional<ozaki::Mode> mode = ozaki::mode_by_name(word)) return *mode;
  throw nb::value_error(("mode must be 'dp', 'cr', 'sp' or 'tunable', got '" + word + "'").c_str());
}

fp64::Direction rounding_named(const std::string& word) {
  if (const auto d = ozaki::rounding_by_name(word)) return *d;
  throw nb::value_error(
      ("rounding must be 'nearest', 'upward', 'downward' or 'toward-zero', got '" + word + "'")
          .c_str());
}

// What the call did (ozaki::Report, tcemu/ozaki/options.hpp), as a dict of its field names.
nb::dict report_dict(const ozaki::Report& r) {
  nb::dict d;
  d["slice_bits"] = r.slice_bits;
  d["slices_a"] = r.slices_a;
  d["slices_b"] = r.slices_b;
  d["gemms"] = r.gemms;
  d["blocks"] = r.blocks;
  d["block_rows"] = r.block_rows;
  d["block_cols"] = r.block_cols;
  d["one_block_workspace"] = r.one_block_workspace;
  d["seconds_split_a"] = r.seconds_split_a;
  d["seconds_split_b"] = r.seconds_split_b;
  d["seconds_products"] = r.seconds_products;
  d["seconds_summation"] = r.seconds_summation;
  d["dp_bound_bits"] = r.dp_bound_bits;
  d["dp_bound_met"] = r.dp_bound_met;
  d["dp_bound_terms"] = r.dp_bound_terms;
  return d;
}

}  // namespace

void bind_ozaki(nb::module_& m) {
  m.def(
      "ozaki_gemm",
      [](nb::handle a, nb::handle b, nb::handle c, std::complex<double> alpha,
         std::complex<double> beta, std::optional<std::string> mode, int splits, bool fast,
         int max_splits, std::size_t workspace_mib, const std::string& backend,
         std::optional<Datapath> datapath, int threads, const std::string& engine, bool int8,
         bool crt, const std::string& rounding, bool return_report) {
        const Operand oa = operand(a, "a"), ob = operand(b, "b");
        std::optional<Operand> oc;
        if (!c.is_none()) oc = operand(c, "c");
        const int device = oc ? cuda_device({&oa, &ob, &*oc}) : cuda_device({&oa, &ob});
        // The element's type, or each part's: float64 and complex128 default to mode dp.
        const Real real = oa.complex ? part_format(*oa.complex) : oa.real.value_or(Real::fp64);
        ozaki::Options options{.mode = mode_named(mode.value_or(real == Real::fp64 ? "dp" : "sp")),
                               .splits = splits,
                               .fast = fast,
                               .max_splits = max_splits,
                               .workspace_bytes = workspace_mib << 20,
                               .rounding = rounding_named(rounding)};
        if ((int8 || crt) && datapath) {
          throw nb::value_error("int8=True and crt=True multiply int8 integers; no datapath");
        }
        if (int8 && crt) throw nb::value_error("int8=True and crt=True are two schemes: pick one");
        const ozaki::Products products = session::ozaki_products(
            backend_named(backend).products,
            crt    ? session::OzakiSlices::crt
            : int8 ? session::OzakiSlices::int8
                   : session::OzakiSlices::floating,
            [&] { return datapath.value_or(preset("sm90", formats::fp16, formats::fp32)); });
        const auto machine =
            make_backend(device >= 0 ? "gpu" : backend, threads, std::max(device, 0), engine);
        ozaki::Handle handle(*machine, products, options);
        nb::object result;
        if (device < 0) {
          BlasGemm g = blas_gemm(oa, ob, oc);
          run_gemm(handle, g, alpha, beta);
          result = g.c.object;
        } else if (oa.complex) {  // zgemm, cgemm on the device's memory (Handle::gemm)
          const auto ba = to_buffer(*machine, oa, *oa.complex);
          const auto bb = to_buffer(*machine, ob, *oa.complex);
          const auto bc = oc ? to_buffer(*machine, *oc, *oa.complex)
                             : new_buffer(*machine, *oa.complex, ba.shape.rows, bb.shape.cols);
          {
            nb::gil_scoped_release release;
            handle.gemm(alpha, ba.view(), false, bb.view(), false, beta, bc.view());
            machine->synchronize();
          }
          result = from_buffer(*machine, bc, true, device);
        } else {
          if (alpha.imag() != 0 || beta.imag() != 0) {
            throw nb::value_error("a complex alpha or beta needs complex arrays");
          }
          const auto ba = to_buffer(*machine, oa, real);
          const auto bb = to_buffer(*machine, ob, real);
          const auto bc = oc ? to_buffer(*machine, *oc, real)
                             : new_buffer(*machine, real, ba.shape.rows, bb.shape.cols);
          {
            nb::gil_scoped_release release;
            handle.gemm(alpha.real(), ba.view(), bb.view(), beta.real(), bc.view());
            machine->synchronize();
          }
          result = from_buffer(*machine, bc, true, device);
        }
        if (!return_report) return result;
        return nb::object(nb::make_tuple(result, report_dict(handle.report())));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("c") = nb::none(), nb::kw_only(), nb::arg("alpha") = 1.0,
      nb::arg("beta") = 0.0, nb::arg("mode") = nb::none(), nb::arg("splits") = 0,
      nb::arg("fast") = true, nb::arg("max_splits") = 48, nb::arg("workspace_mib") = 512,
      nb::arg("backend") = "emulator", nb::arg("datapath") = nb::none(), nb::arg("threads") = 0,
      nb::arg("engine") = "fastest", nb::arg("int8") = false, nb::arg("crt") = false,
      nb::arg("rounding") = "nearest", nb::arg("return_report") = false,
      "C := alpha A B + beta C by the Ozaki scheme (Mukunoki et al. 2020): float64 arrays "
      "(DGEMM-TC; mode 'dp' (default), 'cr' correctly rounded, 'tunable' with `splits` slices "
      "and `fast`) or float32 (SGEMM-TC; mode 'sp' (default), 'cr' correctly rounded to float32, "
      "or 'tunable'); complex128 and "
      "complex64 arrays as float64 and float32 (zgemm, cgemm: one real product of the "
      "real form [Ar Ai] [[Br Bi], [-Bi Br]], so in mode 'cr' each real and imaginary part is "
      "correctly rounded; alpha and beta may be complex). backend: "
      "'emulator' (slice products on the emulated tensor cores through `datapath`, default "
      "sm90 fp16 -> fp32), 'cpu64' (binary64 products, DGEMM-DP-CR) or 'gpu' (CUDA arrays run "
      "there without leaving the device). int8=True: Ozaki-I on int8 slices (6 bits and sign) "
      "with exact integer products (integer tensor cores: cublasGemmEx int8 -> int32 on the "
      "GPU), on any backend. crt=True: Ozaki scheme II (Chinese remainder theorem, one int8 GEMM "
      "per modulus): mode 'cr' gives the correctly rounded product, 'dp' FP64 accuracy (rows and "
      "columns scaled by their norms, 15 moduli or more as one more int8 GEMM's lower bound of "
      "|A||B| asks, so that every element meets DGEMM's bound k 2^-53 (|A||B|)_ij; cr's moduli "
      "when fewer; the bound sums the leading k/16 terms first from k = 4096 on), 'tunable' "
      "takes `splits` moduli. rounding: in mode 'cr', the exact product rounded once 'nearest' "
      "(default), 'upward', 'downward' or 'toward-zero' to the array's type (alpha 1, beta 0; "
      "float32 and complex64: rounded to odd in float64, then once to float32): downward and "
      "upward give the tightest bounds of A B that type holds. Returns a new array; with "
      "return_report=True, (array, report): "
      "the report a dict of what the call did (slices_a: slices or moduli, gemms, blocks, phase "
      "seconds, dp_bound_bits, dp_bound_terms, dp_bound_met; tcemu/ozaki/options.hpp, Report).");
}

}  // namespace tcemu::python
