# Finds NCCL for the multigpu track: the header nccl.h and the shared library.
#
# Looks, in this order, in: NCCL_ROOT (cache variable or environment) and $NCCL_HOME;
# the CUDA toolkit's own folders; the system (/usr, /usr/local); NVIDIA's Python wheel
# nvidia-nccl-cuXX (see MultigpuWheels.cmake). The first place that has both the header
# and the library wins, so a header never meets another installation's library.
# The wheel ships libnccl.so.2 and no unversioned libnccl.so: the library is found by
# either name and linked by its full path (its folder goes into the programs' RPATH).
#
# Sets TUT_NCCL_FOUND, TUT_NCCL_VERSION ("2.28.9"), TUT_NCCL_LIBRARY, TUT_NCCL_INCLUDE_DIR
# and, when found, the imported target tut::nccl.
include(${CMAKE_CURRENT_LIST_DIR}/MultigpuWheels.cmake)

set(TUT_NCCL_FOUND FALSE)
if(NOT TARGET tut::nccl)
  set(roots "")
  foreach(r "${NCCL_ROOT}" "$ENV{NCCL_ROOT}" "$ENV{NCCL_HOME}")
    if(r)
      list(APPEND roots "${r}")
    endif()
  endforeach()
  # The toolkit: include/ and the library folder (targets/x86_64-linux/lib, lib64, lib).
  set(cuda_candidates "")
  foreach(inc IN LISTS CUDAToolkit_INCLUDE_DIRS)
    list(APPEND cuda_candidates "${inc}|${CUDAToolkit_LIBRARY_DIR}")
    get_filename_component(cuda_root "${inc}" DIRECTORY)
    list(APPEND cuda_candidates "${inc}|${cuda_root}/lib64" "${inc}|${cuda_root}/lib")
  endforeach()
  if(CUDAToolkit_LIBRARY_ROOT)
    list(APPEND cuda_candidates "${CUDAToolkit_LIBRARY_ROOT}/include|${CUDAToolkit_LIBRARY_ROOT}/lib64"
                                "${CUDAToolkit_LIBRARY_ROOT}/include|${CUDAToolkit_LIBRARY_ROOT}/lib")
  endif()
  tut_wheel_dirs(wheel_roots nccl)

  set(candidates "")  # "include-dir|lib-dir" pairs, in search order
  foreach(r IN LISTS roots)
    list(APPEND candidates "${r}/include|${r}/lib" "${r}/include|${r}/lib64")
  endforeach()
  list(APPEND candidates ${cuda_candidates}
       "/usr/include|/usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}" "/usr/include|/usr/lib64" "/usr/include|/usr/lib"
       "/usr/local/include|/usr/local/lib")
  foreach(r IN LISTS wheel_roots)
    list(APPEND candidates "${r}/include|${r}/lib")
  endforeach()

  foreach(c IN LISTS candidates)
    string(REPLACE "|" ";" pair "${c}")
    list(GET pair 0 inc)
    list(GET pair 1 libdir)
    if(NOT EXISTS "${inc}/nccl.h")
      continue()
    endif()
    set(lib "")
    foreach(name libnccl.so libnccl.so.2)
      if(EXISTS "${libdir}/${name}")
        set(lib "${libdir}/${name}")
        break()
      endif()
    endforeach()
    if(lib)
      set(TUT_NCCL_INCLUDE_DIR "${inc}")
      get_filename_component(TUT_NCCL_LIBRARY "${lib}" REALPATH)
      set(TUT_NCCL_FOUND TRUE)
      break()
    endif()
  endforeach()

  if(TUT_NCCL_FOUND)
    file(STRINGS "${TUT_NCCL_INCLUDE_DIR}/nccl.h" defs REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
    set(TUT_NCCL_VERSION "")
    foreach(part MAJOR MINOR PATCH)
      string(REGEX MATCH "NCCL_${part} +([0-9]+)" m "${defs}")
      list(APPEND TUT_NCCL_VERSION "${CMAKE_MATCH_1}")
    endforeach()
    list(JOIN TUT_NCCL_VERSION "." TUT_NCCL_VERSION)
    add_library(tut::nccl SHARED IMPORTED GLOBAL)
    set_target_properties(tut::nccl PROPERTIES IMPORTED_LOCATION "${TUT_NCCL_LIBRARY}"
                          INTERFACE_INCLUDE_DIRECTORIES "${TUT_NCCL_INCLUDE_DIR}")
  endif()
else()
  set(TUT_NCCL_FOUND TRUE)
endif()
