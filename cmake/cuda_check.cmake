# Where nvcc is present, prove that the numerics core compiles as CUDA device
# code: gpu_reference/numerics_compile_check.cu calls every function of
# golden/numerics/ from a kernel. Without nvcc the build goes on without it.
# Configure with -DCMAKE_CUDA_COMPILER= (empty) to leave it out where nvcc is.
include(CheckLanguage)
if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)  # the toolkit's place when it is not on PATH
endif()
check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)  # H100 / H200 (sm_90)
  endif()
  enable_language(CUDA)
  add_library(n3_numerics_cuda_check OBJECT ${CMAKE_SOURCE_DIR}/gpu_reference/numerics_compile_check.cu)
  target_include_directories(n3_numerics_cuda_check PRIVATE ${CMAKE_SOURCE_DIR})
  # The directory's -Wall/-Wextra/-ffp-contract=off are host-compiler flags:
  # hand them to g++ through -Xcompiler; -fmad=false keeps device float
  # products and sums unfused, as bit-exactness needs.
  set_target_properties(n3_numerics_cuda_check PROPERTIES
    CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
    COMPILE_OPTIONS "-fmad=false;-Xcompiler=-Wall,-Wextra,-ffp-contract=off")
  message(STATUS "n3: CUDA compile check of the numerics core with ${CMAKE_CUDA_COMPILER}")
else()
  message(STATUS "n3: no CUDA compiler; skipping the numerics device compile check")
endif()
