# Sets CMAKE_CUDA_ARCHITECTURES when the user did not: the compute capability that
# nvidia-smi reports for GPU 0, else 90 (the H100/H200 the project is measured on).
# A GPU newer than the toolkit (say sm_120 with CUDA 12.4) gets PTX for the newest
# architecture nvcc knows, which the driver compiles for the GPU at the first run.
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
else()
  # Does this nvcc (CUDACXX, else the one on PATH or in /usr/local/cuda) know the GPU?
  if(DEFINED ENV{CUDACXX})
    set(_tut_nvcc "$ENV{CUDACXX}")
  else()
    find_program(_tut_nvcc nvcc PATHS /usr/local/cuda/bin NO_CACHE)
  endif()
  if(_tut_nvcc)
    execute_process(COMMAND ${_tut_nvcc} --list-gpu-arch OUTPUT_VARIABLE _tut_known
                    RESULT_VARIABLE _tut_rc ERROR_QUIET)
    string(REGEX MATCHALL "compute_[0-9]+" _tut_known "${_tut_known}")
    string(REPLACE "compute_" "" _tut_known "${_tut_known}")
    if(_tut_rc EQUAL 0 AND _tut_known AND NOT _tut_arch IN_LIST _tut_known)
      set(_tut_newest 0)
      foreach(_a IN LISTS _tut_known)
        if(_a LESS _tut_arch AND _a GREATER _tut_newest)
          set(_tut_newest ${_a})
        endif()
      endforeach()
      if(_tut_newest GREATER 0)
        message(STATUS "CUDA architecture: ${_tut_nvcc} does not know sm_${_tut_arch}; building PTX for "
                       "compute_${_tut_newest}, which the driver compiles at the first run (a newer CUDA "
                       "toolkit gives native code)")
        set(_tut_arch "${_tut_newest}-virtual")
      endif()
    endif()
  endif()
endif()
set(CMAKE_CUDA_ARCHITECTURES ${_tut_arch} CACHE STRING "CUDA architectures to build for")
