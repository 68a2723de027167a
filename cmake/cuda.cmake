# The CUDA reference path (gpu_reference/, docs/gpu.md): a static library
# n3_cuda of the kernels, the CUDA model and the `cuda` Device backend,
# linked into n3_host where a CUDA compiler was found (cmake/cuda_check.cmake
# enables the language). N3_HAVE_CUDA tells host_driver/device.cc and the
# tests that the backend exists. Without nvcc (or with
# -DCMAKE_CUDA_COMPILER= ) nothing here is built and `--backend cuda` says so.
if(CMAKE_CUDA_COMPILER)
  find_package(CUDAToolkit REQUIRED)
  file(GLOB n3_cuda_srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/gpu_reference/*.cu)
  list(FILTER n3_cuda_srcs EXCLUDE REGEX ".*/numerics_compile_check\\.cu$")
  add_library(n3_cuda STATIC ${n3_cuda_srcs})
  target_include_directories(n3_cuda PUBLIC ${CMAKE_SOURCE_DIR})
  # sm_90 code for H100/H200 plus PTX for later GPUs; static cudart, so the
  # binaries need no libcudart.so (only the driver's libcuda.so at run time).
  set_target_properties(n3_cuda PROPERTIES
    CUDA_ARCHITECTURES "90-real;90-virtual"
    CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
    CUDA_RUNTIME_LIBRARY Static
    # Replaces the directory's g++-only flags; -fmad=false keeps float
    # products and sums unfused (bit-exactness), -Xcompiler passes g++ flags.
    COMPILE_OPTIONS "-fmad=false;-Xcompiler=-Wall,-Wextra,-ffp-contract=off,-Wno-unknown-pragmas")
  # n3_cuda uses the Device interface and open_weights_for of n3_host, which
  # in turn links n3_cuda: a cycle of static libraries, which CMake repeats
  # on the link line.
  target_link_libraries(n3_cuda PUBLIC n3_golden n3_host CUDA::cudart_static)
  target_link_libraries(n3_host PUBLIC n3_cuda)
  target_compile_definitions(n3_host PUBLIC N3_HAVE_CUDA=1)
  # The kernel tracer (gpu_reference/tools/kernel_trace.cc, CUPTI): a library
  # the CUDA driver loads into a run through CUDA_INJECTION64_PATH; built
  # where the toolkit has CUPTI with the kernel record it reads (CUDA 13).
  if(TARGET CUDA::cupti AND CUDAToolkit_VERSION VERSION_GREATER_EQUAL 13.0)
    add_library(n3_kernel_trace SHARED ${CMAKE_SOURCE_DIR}/gpu_reference/tools/kernel_trace.cc)
    target_link_libraries(n3_kernel_trace PRIVATE CUDA::cupti)
  endif()
  message(STATUS "n3: CUDA reference path (n3_cuda) for sm_90 + PTX")
endif()
