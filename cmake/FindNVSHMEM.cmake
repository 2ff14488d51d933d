# Finds NVSHMEM for the multigpu track: nvshmem.h, the host library libnvshmem_host and
# the device library libnvshmem_device.a (device code: programs that call NVSHMEM from a
# kernel are compiled with relocatable device code, -rdc, and device-linked with it).
#
# Looks, in this order, in: NVSHMEM_ROOT (cache variable or environment) and
# $NVSHMEM_HOME; /usr/local/nvshmem; Debian/Ubuntu's packages (libnvshmem3-dev-cuda-NN:
# /usr/include/nvshmem_NN, /usr/lib/<arch>/nvshmem/NN); NVIDIA's Python wheel
# nvidia-nvshmem-cuXX (see MultigpuWheels.cmake). The host library of the wheel is
# libnvshmem_host.so.3 (no unversioned name): it is linked by its full path. Its
# bootstrap plugins (nvshmem_bootstrap_uid.so.3, ...) sit beside it and are found
# through its own RPATH ($ORIGIN).
#
# Sets TUT_NVSHMEM_FOUND, TUT_NVSHMEM_VERSION, TUT_NVSHMEM_INCLUDE_DIR, TUT_NVSHMEM_LIB_DIR
# and, when found, the imported targets tut::nvshmem_host and tut::nvshmem_device.
include(${CMAKE_CURRENT_LIST_DIR}/MultigpuWheels.cmake)

set(TUT_NVSHMEM_FOUND FALSE)
if(NOT TARGET tut::nvshmem_host)
  set(candidates "")  # "include-dir|lib-dir" pairs, in search order
  foreach(r "${NVSHMEM_ROOT}" "$ENV{NVSHMEM_ROOT}" "$ENV{NVSHMEM_HOME}" "/usr/local/nvshmem")
    if(r)
      list(APPEND candidates "${r}/include|${r}/lib" "${r}/include|${r}/lib64")
    endif()
  endforeach()
  set(cuda_major "")
  if(CUDAToolkit_VERSION_MAJOR)
    set(cuda_major "${CUDAToolkit_VERSION_MAJOR}")
  endif()
  if(cuda_major)
    list(APPEND candidates "/usr/include/nvshmem_${cuda_major}|/usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/nvshmem/${cuda_major}")
  endif()
  tut_wheel_dirs(wheel_roots nvshmem)
  foreach(r IN LISTS wheel_roots)
    list(APPEND candidates "${r}/include|${r}/lib")
  endforeach()

  foreach(c IN LISTS candidates)
    string(REPLACE "|" ";" pair "${c}")
    list(GET pair 0 inc)
    list(GET pair 1 libdir)
    if(NOT EXISTS "${inc}/nvshmem.h" OR NOT EXISTS "${libdir}/libnvshmem_device.a")
      continue()
    endif()
    set(host "")
    foreach(name libnvshmem_host.so libnvshmem_host.so.3)
      if(EXISTS "${libdir}/${name}")
        set(host "${libdir}/${name}")
        break()
      endif()
    endforeach()
    if(host)
      set(TUT_NVSHMEM_INCLUDE_DIR "${inc}")
      set(TUT_NVSHMEM_LIB_DIR "${libdir}")
      set(TUT_NVSHMEM_HOST_LIBRARY "${host}")
      set(TUT_NVSHMEM_FOUND TRUE)
      break()
    endif()
  endforeach()

  if(TUT_NVSHMEM_FOUND)
    set(TUT_NVSHMEM_VERSION "")
    set(version_header "${TUT_NVSHMEM_INCLUDE_DIR}/non_abi/nvshmem_version.h")
    if(EXISTS "${version_header}")
      file(STRINGS "${version_header}" defs REGEX "^#define NVSHMEM_VENDOR_(MAJOR|MINOR|PATCH)_VERSION ")
      foreach(part MAJOR MINOR PATCH)
        string(REGEX MATCH "NVSHMEM_VENDOR_${part}_VERSION +([0-9]+)" m "${defs}")
        list(APPEND TUT_NVSHMEM_VERSION "${CMAKE_MATCH_1}")
      endforeach()
      list(JOIN TUT_NVSHMEM_VERSION "." TUT_NVSHMEM_VERSION)
    endif()
    add_library(tut::nvshmem_host SHARED IMPORTED GLOBAL)
    set_target_properties(tut::nvshmem_host PROPERTIES IMPORTED_LOCATION "${TUT_NVSHMEM_HOST_LIBRARY}"
                          INTERFACE_INCLUDE_DIRECTORIES "${TUT_NVSHMEM_INCLUDE_DIR}")
    add_library(tut::nvshmem_device STATIC IMPORTED GLOBAL)
    set_target_properties(tut::nvshmem_device PROPERTIES IMPORTED_LOCATION "${TUT_NVSHMEM_LIB_DIR}/libnvshmem_device.a"
                          INTERFACE_INCLUDE_DIRECTORIES "${TUT_NVSHMEM_INCLUDE_DIR}")
  endif()
else()
  set(TUT_NVSHMEM_FOUND TRUE)
endif()
