# tcemu_default_cuda_architectures(OUT): the CUDA architectures tcemu builds for when the builder
# names none (CMAKE_CUDA_ARCHITECTURES or the CUDAARCHS environment variable): machine code for
# the GPUs of this machine, as nvidia-smi reports their compute capabilities, or else for one
# architecture, sm_90a (the H100/H200 on which the presets were measured). One architecture keeps
# the first build short (each one more compiles every .cu file again); a portable build names its
# list, e.g. -DCMAKE_CUDA_ARCHITECTURES="80-real;89-real;90a-real;90-virtual".
#
# Compute capability 9.0 builds as sm_90a: the wgmma GEMM and probe runners exist only there
# (__CUDA_ARCH_FEAT_SM90_ALL); any other X.Y builds as XY-real.
function(tcemu_default_cuda_architectures out)
  set(architectures "")
  find_program(TCEMU_NVIDIA_SMI nvidia-smi)
  mark_as_advanced(TCEMU_NVIDIA_SMI)
  if(TCEMU_NVIDIA_SMI)
    execute_process(COMMAND ${TCEMU_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                    OUTPUT_VARIABLE capabilities RESULT_VARIABLE status ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE TIMEOUT 30)
    if(status EQUAL 0)
      string(REPLACE "\n" ";" capabilities "${capabilities}")
      foreach(capability IN LISTS capabilities)
        string(STRIP "${capability}" capability)
        if(capability MATCHES "^([0-9]+)\\.([0-9])$")
          set(number "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
          if(number STREQUAL "90")
            list(APPEND architectures 90a-real)
          else()
            list(APPEND architectures ${number}-real)
          endif()
        endif()
      endforeach()
      list(REMOVE_DUPLICATES architectures)
    endif()
  endif()
  if(architectures)
    message(STATUS "tcemu: CUDA code for this machine's GPUs: ${architectures}")
  else()
    set(architectures 90a-real)
    message(STATUS "tcemu: no GPU found; CUDA code for ${architectures} "
                   "(-DCMAKE_CUDA_ARCHITECTURES=... names others)")
  endif()
  set(${out} "${architectures}" PARENT_SCOPE)
endfunction()
