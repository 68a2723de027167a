# The CUDA reference path (gpu_reference/, docs/gpu.md): a static library
# n3_cuda of the kernels, the CUDA model and the `cuda` Device backend,
# linked into n3_host where a CUDA compiler was found (cmake/cuda_check.cmake
# enables the language). N3_HAVE_CUDA tells host_driver/backends.cc and the
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
  # A timing build (docs/gpu.md): N3_CUDA_SKIP=gemv|other leaves those
  # launches out. Its results are wrong; never for anything but timing.
  option(N3_CUDA_TIMING_SKIP "CUDA timing build: N3_CUDA_SKIP leaves launches out (wrong results)" OFF)
  if(N3_CUDA_TIMING_SKIP)
    target_compile_definitions(n3_cuda PRIVATE N3_CUDA_TIMING_SKIP)
    message(WARNING "n3: N3_CUDA_TIMING_SKIP build, for timing only")
  endif()
  # The cuda backend implements runtime/'s Device; the driver floor
  # (n3_host, CMakeLists.txt) links it and defines N3_HAVE_CUDA.
  target_link_libraries(n3_cuda PUBLIC n3_runtime CUDA::cudart_static)
  # The kernel tracer (gpu_reference/tools/kernel_trace.cc, CUPTI): a library
  # the CUDA driver loads into a run through CUDA_INJECTION64_PATH; built
  # where the toolkit has CUPTI with the kernel record it reads (CUDA 13).
  if(TARGET CUDA::cupti AND CUDAToolkit_VERSION VERSION_GREATER_EQUAL 13.0)
    add_library(n3_kernel_trace SHARED ${CMAKE_SOURCE_DIR}/gpu_reference/tools/kernel_trace.cc)
    target_link_libraries(n3_kernel_trace PRIVATE CUDA::cupti)
  endif()
  # What a persistent decode kernel could reach (bench/cuda_megakernel_probe.cu,
  # docs/gpu.md): kernel-boundary, barrier and handoff costs and a skeleton
  # step over the model's GEMV byte stream. sm_90 only (griddepcontrol, cp.async).
  if(N3_BUILD_BENCH)
    add_executable(cuda_megakernel_probe ${CMAKE_SOURCE_DIR}/bench/cuda_megakernel_probe.cu)
    set_target_properties(cuda_megakernel_probe PROPERTIES
      CUDA_ARCHITECTURES "90-real" CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON CUDA_RUNTIME_LIBRARY Static
      RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
    target_include_directories(cuda_megakernel_probe PRIVATE ${CMAKE_SOURCE_DIR})
    target_link_libraries(cuda_megakernel_probe PRIVATE n3_golden CUDA::cudart_static)
    target_compile_definitions(cuda_megakernel_probe PRIVATE N3_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  endif()
  message(STATUS "n3: CUDA reference path (n3_cuda) for sm_90 + PTX")
endif()
