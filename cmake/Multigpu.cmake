# The multigpu track's build: its dependencies (MPI, NCCL, NVSHMEM), its check programs'
# main(), its CPU tests, and tut_multigpu_lesson(), which registers a lesson as
# tut_lesson() does, for programs that run one process per GPU under mpirun.
# Included by common/checks/multigpu/lessons.cmake, so only when the track is built.
#
#   tut_multigpu_lesson(LESSON SOURCE
#       [NEEDS mpi nccl nvshmem]   what the lesson links; when one is missing the lesson is
#                                  not built and configure says so in one line
#       [GPUS n]                   GPUs its checks need (default 2); fewer: skipped (77)
#       [SINGLE]                   one process that uses the GPUs itself (no mpirun)
#       [RDC]                      relocatable device code (NVSHMEM's device library)
#       [LIBS <libs...>] [SMOKE_ARGS <args...>] [BAD_ARGS <"a b"...>] [TOUR_ARGS <args...>]
#       [TIMEOUT seconds])         as in tut_lesson(); the default here is 60 s (a check
#                                  program of the track needs under 20 s on H100s, and a
#                                  hung one must not hold the GPUs for long): CTest's
#                                  limit, and the grader's (its launcher ends the job 15 s
#                                  earlier, each rank's watchdog a few seconds before that)
#
# Each lesson becomes, per tree (lessons/, solutions/), the same targets as tut_lesson()'s
# (<tree>-multigpu-<lesson>, its -obj, check-<tree>-multigpu-<lesson>) and a manifest entry
# with three more fields: "gpus" (what its checks need), "launch" ("mpi" or "single") and
# "launcher" (common/checks/multigpu/mpi_launch.py, which scripts/grade.py and
# scripts/tour.py put in front of the program). CTest runs the solution checks on 2 GPUs
# and smoke runs on 1 and 2 GPUs through the launcher (skipped with fewer GPUs), and the
# bad-input test without it.

include(${CMAKE_CURRENT_LIST_DIR}/FindNCCL.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/FindNVSHMEM.cmake)
# FindMPI's pkg-config fallback prints two lines of its own when MPI is missing: the one
# line below says it.
set(tut_saved_log_level "${CMAKE_MESSAGE_LOG_LEVEL}")
set(CMAKE_MESSAGE_LOG_LEVEL WARNING)
find_package(MPI COMPONENTS CXX QUIET)
set(CMAKE_MESSAGE_LOG_LEVEL "${tut_saved_log_level}")
set(TUT_MG_HAVE_MPI ${MPI_CXX_FOUND})

set(mg_deps "")
if(TUT_MG_HAVE_MPI)
  list(APPEND mg_deps "MPI ${MPI_CXX_VERSION}")
else()
  list(APPEND mg_deps "MPI not found")
endif()
if(TUT_NCCL_FOUND)
  list(APPEND mg_deps "NCCL ${TUT_NCCL_VERSION} (${TUT_NCCL_LIBRARY})")
else()
  list(APPEND mg_deps "NCCL not found")
endif()
if(TUT_NVSHMEM_FOUND)
  list(APPEND mg_deps "NVSHMEM ${TUT_NVSHMEM_VERSION} (${TUT_NVSHMEM_LIB_DIR})")
else()
  list(APPEND mg_deps "NVSHMEM not found")
endif()
list(JOIN mg_deps ", " mg_deps)
message(STATUS "multigpu: ${mg_deps}")

set(TUT_MG_LAUNCHER ${CMAKE_SOURCE_DIR}/common/checks/multigpu/mpi_launch.py)
# NVLink multicast stays off in every test (see tut/multigpu.hpp).
set(TUT_MG_SAFETY_ENV "NCCL_NVLS_ENABLE=0;NVSHMEM_DISABLE_NVLS=1;TORCH_SYMM_MEM_DISABLE_MULTICAST=1")

if(TUT_BUILD_CHECKS)
  # main() of the check programs: one process with several GPUs, and one per GPU (MPI).
  add_library(tut_checks_mg STATIC ${CMAKE_SOURCE_DIR}/common/checks/multigpu/mg_catch_main.cpp)
  target_include_directories(tut_checks_mg PUBLIC ${CMAKE_SOURCE_DIR}/common/checks ${CMAKE_SOURCE_DIR}/common/checks/multigpu)
  target_compile_definitions(tut_checks_mg PUBLIC TUT_CATCH_MAJOR=${TUT_CATCH_MAJOR})
  target_link_libraries(tut_checks_mg PUBLIC Catch2::Catch2 tut_common)
  if(TUT_MG_HAVE_MPI)
    add_library(tut_checks_mg_mpi STATIC ${CMAKE_SOURCE_DIR}/common/checks/multigpu/mg_catch_main.cpp)
    target_include_directories(tut_checks_mg_mpi PUBLIC ${CMAKE_SOURCE_DIR}/common/checks ${CMAKE_SOURCE_DIR}/common/checks/multigpu)
    target_compile_definitions(tut_checks_mg_mpi PUBLIC TUT_CATCH_MAJOR=${TUT_CATCH_MAJOR} TUT_MG_MPI)
    target_link_libraries(tut_checks_mg_mpi PUBLIC Catch2::Catch2 tut_common MPI::MPI_CXX)
  endif()

  # CPU tests: the partition, the halo discovery and the ring schedule (no GPU, no MPI).
  add_executable(check-multigpu-cpu ${CMAKE_SOURCE_DIR}/common/checks/multigpu/check_cpu.cpp)
  target_link_libraries(check-multigpu-cpu PRIVATE tut_checks_cpu)
  set_target_properties(check-multigpu-cpu PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/checks)
  add_test(NAME cpu/multigpu COMMAND check-multigpu-cpu)
  set_tests_properties(cpu/multigpu PROPERTIES LABELS "cpu;multigpu")
  # The launcher itself (GPU counting, skips, the mpirun command line, time limits), and,
  # where MPI is, the job's behaviour when a rank hangs, throws or fails alone (it runs the
  # hidden cases of check-multigpu-mpi-cpu under mpirun; skipped without mpirun).
  add_test(NAME cpu/multigpu-launch
           COMMAND Python3::Interpreter -m unittest discover -s ${CMAKE_SOURCE_DIR}/common/checks/multigpu -p "test_*.py")
  set_tests_properties(cpu/multigpu-launch PROPERTIES LABELS "cpu;multigpu")
  if(TUT_MG_HAVE_MPI)
    # The MPI helpers on 2 processes without a GPU: agreed verdicts and stops, collectives
    # refused inside one rank's own work, the same test order everywhere, the halo lists.
    add_library(tut_checks_mg_mpi_cpu STATIC ${CMAKE_SOURCE_DIR}/common/checks/multigpu/mg_catch_main.cpp)
    target_include_directories(tut_checks_mg_mpi_cpu PUBLIC ${CMAKE_SOURCE_DIR}/common/checks ${CMAKE_SOURCE_DIR}/common/checks/multigpu)
    target_compile_definitions(tut_checks_mg_mpi_cpu PUBLIC TUT_CATCH_MAJOR=${TUT_CATCH_MAJOR} TUT_MG_MPI TUT_MG_CPU)
    target_link_libraries(tut_checks_mg_mpi_cpu PUBLIC Catch2::Catch2 tut_common MPI::MPI_CXX)
    add_executable(check-multigpu-mpi-cpu ${CMAKE_SOURCE_DIR}/common/checks/multigpu/check_mpi_cpu.cpp)
    target_link_libraries(check-multigpu-mpi-cpu PRIVATE tut_checks_mg_mpi_cpu)
    set_target_properties(check-multigpu-mpi-cpu PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/checks)
    add_test(NAME cpu/multigpu-mpi
             COMMAND Python3::Interpreter ${TUT_MG_LAUNCHER} --np 2 --no-gpu --timeout 60 -- $<TARGET_FILE:check-multigpu-mpi-cpu>)
    set_tests_properties(cpu/multigpu-mpi PROPERTIES LABELS "cpu;multigpu" SKIP_RETURN_CODE 77 TIMEOUT 90)
    set_tests_properties(cpu/multigpu-launch PROPERTIES
                         ENVIRONMENT "TUT_MG_MPI_CPU_CHECK=$<TARGET_FILE:check-multigpu-mpi-cpu>")
  endif()
endif()

function(tut_multigpu_lesson lesson source)
  cmake_parse_arguments(PARSE_ARGV 2 L "SINGLE;RDC" "GPUS;TIMEOUT" "NEEDS;LIBS;SMOKE_ARGS;BAD_ARGS;TOUR_ARGS")
  set(track multigpu)
  tut_lesson_present(${track} ${lesson} ${source} present)
  if(NOT present)
    return()
  endif()
  if(NOT L_GPUS)
    set(L_GPUS 2)
  endif()
  if(NOT L_TIMEOUT)
    set(L_TIMEOUT 60)
  endif()
  set(launch mpi)
  if(L_SINGLE)
    set(launch single)
  endif()

  # What the lesson needs, and whether this build has it.
  set(missing "")
  set(libs ${L_LIBS})
  foreach(need IN LISTS L_NEEDS)
    if(need STREQUAL "mpi")
      if(TUT_MG_HAVE_MPI)
        list(APPEND libs MPI::MPI_CXX)
      else()
        list(APPEND missing "MPI (Debian: libopenmpi-dev)")
      endif()
    elseif(need STREQUAL "nccl")
      if(TUT_NCCL_FOUND)
        list(APPEND libs tut::nccl)
      else()
        list(APPEND missing "NCCL (pip: nvidia-nccl-cu${CUDAToolkit_VERSION_MAJOR})")
      endif()
    elseif(need STREQUAL "nvshmem")
      if(TUT_NVSHMEM_FOUND)
        list(APPEND libs tut::nvshmem_host tut::nvshmem_device)
      else()
        list(APPEND missing "NVSHMEM (pip: nvidia-nvshmem-cu${CUDAToolkit_VERSION_MAJOR})")
      endif()
    else()
      message(FATAL_ERROR "tut_multigpu_lesson(${lesson}): unknown NEEDS entry '${need}'")
    endif()
  endforeach()
  if(missing)
    list(JOIN missing ", " missing)
    message(STATUS "multigpu/${lesson}: not built, needs ${missing}; scripts/install-deps installs what it can")
    return()
  endif()
  if(NOT L_SINGLE AND NOT "mpi" IN_LIST L_NEEDS)
    message(FATAL_ERROR "tut_multigpu_lesson(${lesson}): a lesson run under mpirun NEEDS mpi (or say SINGLE)")
  endif()

  tut_json_strings(tour ${L_TOUR_ARGS})
  get_filename_component(stem ${source} NAME_WE)
  foreach(tree lessons solutions)
    if(tree STREQUAL "lessons")
      set(root ${TUT_LESSONS_DIR})
    else()
      set(root ${TUT_SOLUTIONS_DIR})
    endif()
    set(src ${root}/${track}/${lesson}/${source})
    set(t ${tree}-${track}-${lesson})
    add_library(${t}-obj OBJECT ${src})
    target_compile_definitions(${t}-obj PRIVATE main=tut_lesson_main)
    target_link_libraries(${t}-obj PRIVATE tut_common ${libs})
    if(tree STREQUAL "solutions" AND TUT_SOLUTION_ARCHITECTURES)
      set_property(TARGET ${t}-obj PROPERTY CUDA_ARCHITECTURES ${TUT_SOLUTION_ARCHITECTURES})
    endif()
    add_executable(${t} ${TUT_LESSON_MAIN})
    target_link_libraries(${t} PRIVATE ${t}-obj tut_common ${libs})
    set_target_properties(${t} PROPERTIES OUTPUT_NAME ${stem}
                          RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/${tree}/${track}/${lesson})
    set(exes ${t})

    set(check_json "")
    if(TUT_BUILD_CHECKS)
      set(c check-${t})
      add_executable(${c} ${CMAKE_SOURCE_DIR}/common/checks/${track}/check_${lesson}.cpp)
      if(L_SINGLE)
        target_link_libraries(${c} PRIVATE ${t}-obj tut_checks_mg ${libs})
      else()
        target_link_libraries(${c} PRIVATE ${t}-obj tut_checks_mg_mpi ${libs})
      endif()
      target_compile_definitions(${c} PRIVATE TUT_LESSON_SOURCE="${src}" TUT_LESSON_ID="${track}/${lesson}")
      set_target_properties(${c} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/checks/${tree})
      list(APPEND exes ${c})
      set(check_json ", \"check_target\": \"${c}\", \"check_exe\": \"$<TARGET_FILE:${c}>\"")
      set(single_flag "")
      if(L_SINGLE)
        set(single_flag --single)
      endif()
      if(tree STREQUAL "solutions")
        set(launch_cmd Python3::Interpreter ${TUT_MG_LAUNCHER} --need-gpus ${L_GPUS} ${single_flag})
        add_test(NAME ${tree}/${track}/${lesson}/check
                 COMMAND ${launch_cmd} --np ${L_GPUS} --timeout ${L_TIMEOUT} -- $<TARGET_FILE:${c}>)
        set_tests_properties(${tree}/${track}/${lesson}/check PROPERTIES
                             SKIP_RETURN_CODE 77 TIMEOUT ${L_TIMEOUT} RESOURCE_LOCK gpu LABELS "gpu;${track}"
                             ENVIRONMENT "${TUT_MG_SAFETY_ENV}")
        # Smoke runs: on one GPU (the lesson's own baseline) and on two.
        foreach(np 1 2)
          if(L_SINGLE)
            set(run_cmd Python3::Interpreter ${TUT_MG_LAUNCHER} --single --need-gpus ${L_GPUS} --timeout ${L_TIMEOUT}
                        -- $<TARGET_FILE:${t}> --gpus ${np} ${L_SMOKE_ARGS})
            if(np LESS L_GPUS)
              continue()
            endif()
          else()
            set(run_cmd Python3::Interpreter ${TUT_MG_LAUNCHER} --np ${np} --timeout ${L_TIMEOUT}
                        -- $<TARGET_FILE:${t}> ${L_SMOKE_ARGS})
          endif()
          add_test(NAME ${tree}/${track}/${lesson}/run-x${np} COMMAND ${run_cmd})
          set_tests_properties(${tree}/${track}/${lesson}/run-x${np} PROPERTIES
                               SKIP_RETURN_CODE 77 TIMEOUT ${L_TIMEOUT} RESOURCE_LOCK gpu LABELS "gpu;${track}"
                               ENVIRONMENT "${TUT_MG_SAFETY_ENV}")
        endforeach()
        add_test(NAME ${tree}/${track}/${lesson}/bad-input
                 COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/scripts/expect_usage_error.py $<TARGET_FILE:${t}>
                         ${TUT_COMMON_BAD_ARGS} ${L_BAD_ARGS})
        set_tests_properties(${tree}/${track}/${lesson}/bad-input PROPERTIES LABELS "cpu;${track}")
      endif()
    endif()

    if(L_RDC)
      # NVSHMEM's device functions live in libnvshmem_device.a: relocatable device code,
      # device-linked into each program.
      set_target_properties(${t}-obj PROPERTIES CUDA_SEPARABLE_COMPILATION ON)
      foreach(e IN LISTS exes)
        set_target_properties(${e} PROPERTIES CUDA_SEPARABLE_COMPILATION ON CUDA_RESOLVE_DEVICE_SYMBOLS ON)
        # the device link targets the architectures the object was compiled for
        if(tree STREQUAL "solutions" AND TUT_SOLUTION_ARCHITECTURES)
          set_property(TARGET ${e} PROPERTY CUDA_ARCHITECTURES ${TUT_SOLUTION_ARCHITECTURES})
        endif()
      endforeach()
    endif()

    set_property(GLOBAL APPEND PROPERTY TUT_MANIFEST
      "  {\"tree\": \"${tree}\", \"track\": \"${track}\", \"lesson\": \"${lesson}\", \"source\": \"${src}\", \"target\": \"${t}\", \"exe\": \"$<TARGET_FILE:${t}>\"${check_json}, \"timeout\": ${L_TIMEOUT}, \"tour_args\": ${tour}, \"sanitize_tools\": [\"memcheck\"], \"gpus\": ${L_GPUS}, \"launch\": \"${launch}\", \"launcher\": \"${TUT_MG_LAUNCHER}\"}")
  endforeach()
  tut_wrong_bank(${track} ${lesson} lessons-${track}-${lesson}-obj ${libs})
endfunction()
