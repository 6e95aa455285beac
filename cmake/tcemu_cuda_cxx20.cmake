# CMake 3.25 knows no C++20 dialect of nvcc, so a CUDA target cannot ask for cuda_std_20 (which
# tcemu::gpu requires of its users). nvcc 12 and 13 spell it like the host compilers; this teaches
# CMake the flag and the feature, in the directory scope that includes this file (after CUDA is
# enabled), and does nothing where CMake already knows them.
if(CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA" AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12
   AND NOT "cuda_std_20" IN_LIST CMAKE_CUDA_COMPILE_FEATURES)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
  list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
endif()
