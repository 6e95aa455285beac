# FindMPFR: the MPFR library and the GMP library under it, as the imported targets MPFR::MPFR and
# GMP::GMP (MPFR::MPFR links GMP::GMP). Used by tcemu::reference, in this tree and by the
# installed package (tcemu-config.cmake). Debian keeps gmp.h under include/<multiarch>/, which
# find_path searches.
find_path(MPFR_INCLUDE_DIR mpfr.h)
find_library(MPFR_LIBRARY mpfr)
find_path(GMP_INCLUDE_DIR gmp.h)
find_library(GMP_LIBRARY gmp)
mark_as_advanced(MPFR_INCLUDE_DIR MPFR_LIBRARY GMP_INCLUDE_DIR GMP_LIBRARY)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(MPFR REQUIRED_VARS MPFR_LIBRARY MPFR_INCLUDE_DIR GMP_LIBRARY
                                  GMP_INCLUDE_DIR)

if(MPFR_FOUND)
  if(NOT TARGET GMP::GMP)
    add_library(GMP::GMP UNKNOWN IMPORTED)
    set_target_properties(GMP::GMP PROPERTIES IMPORTED_LOCATION "${GMP_LIBRARY}"
                                               INTERFACE_INCLUDE_DIRECTORIES "${GMP_INCLUDE_DIR}")
  endif()
  if(NOT TARGET MPFR::MPFR)
    add_library(MPFR::MPFR UNKNOWN IMPORTED)
    set_target_properties(MPFR::MPFR PROPERTIES IMPORTED_LOCATION "${MPFR_LIBRARY}"
                                                INTERFACE_INCLUDE_DIRECTORIES "${MPFR_INCLUDE_DIR}"
                                                INTERFACE_LINK_LIBRARIES GMP::GMP)
  endif()
endif()
