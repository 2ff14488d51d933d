# Sets CMAKE_CUDA_ARCHITECTURES when the user did not: the compute capability that
# nvidia-smi reports for GPU 0, else 90 (the H100/H200 the project is measured on).
if(DEFINED CMAKE_CUDA_ARCHITECTURES OR DEFINED ENV{CUDAARCHS})
  return()
endif()
set(_tut_arch "")
find_program(TUT_NVIDIA_SMI nvidia-smi)
if(TUT_NVIDIA_SMI)
  execute_process(COMMAND ${TUT_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                  OUTPUT_VARIABLE _tut_caps RESULT_VARIABLE _tut_rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(_tut_rc EQUAL 0 AND _tut_caps MATCHES "^([0-9]+)\\.([0-9]+)")
    set(_tut_arch "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
    message(STATUS "CUDA architecture: sm_${_tut_arch} (detected with nvidia-smi)")
  endif()
endif()
if(_tut_arch STREQUAL "")
  set(_tut_arch 90)
  message(STATUS "CUDA architecture: no GPU detected, building for sm_90 (H100/H200); "
                 "set -DCMAKE_CUDA_ARCHITECTURES=<cc> to change")
endif()
set(CMAKE_CUDA_ARCHITECTURES ${_tut_arch} CACHE STRING "CUDA architectures to build for")
