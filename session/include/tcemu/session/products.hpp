// The products an Ozaki scheme runs with, from the slices it multiplies and what the backend's
// floating-point GEMMs are (SliceProducts of its word, backends.hpp): the one place that turns a
// backend choice into ozaki::Products.
#pragma once

#include <functional>

#include <tcemu/emulator/datapath.hpp>
#include <tcemu/ozaki/options.hpp>
#include <tcemu/session/backends.hpp>

namespace tcemu::session {

// The slices an Ozaki scheme multiplies.
enum class OzakiSlices {
  floating,  // floating-point slices (Ozaki-I, DGEMM-TC/SGEMM-TC): tensor cores or binary64
  int8,      // int8 slices of 6 bits and sign, exact integer products (Ozaki-I int8)
  crt,       // int8 residues, one integer GEMM per modulus (Ozaki-II)
};

// The products an Ozaki scheme of `slices` runs with on a backend whose floating-point GEMMs are
// `backend` (BackendChoice::products): integer (int8), CRT (crt), binary64 (floating on a binary64
// backend) or the tensor cores on `tensor_cores()` (floating elsewhere; called only then).
ozaki::Products ozaki_products(SliceProducts backend, OzakiSlices slices,
                               const std::function<Datapath()>& tensor_cores);

}  // namespace tcemu::session
