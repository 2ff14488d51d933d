# The JOR track (dense Jacobi over-relaxation), in order. See cmake/Tutorial.cmake for
# tut_lesson().
#
# Before the lessons, a program the tour also runs (a manifest entry added here by hand,
# in the shape tut_lesson() writes, tree "solutions", no checks):
#   00_cpu_baseline   the 2015 report's CPU versions (scalar, simd, openmp+simd) in float
#                     and double, with the host's read bandwidth (built when OpenMP is found).
# And a tool that is not run by the tour: float_error, the float summation and stopping
# rule measurements of docs/experiments/jor.md.
#
# The tour runs the baseline's full default sweep (N = 128 ... 8192, ten matrices, float
# and double): the ten matrices are what the track's tables average over, and on a
# 16-core host the sweep takes under a minute (the single-thread solves at N = 4096 and 8192 are
# most of it; see docs/experiments/jor.md).

set(jor_dir ${CMAKE_CURRENT_LIST_DIR})
# Every JOR program of a tour run gets --share ${JOR_SHARE}: the CPU baseline starts it
# afresh and writes its times there; the lessons read them for their speedup and
# crossover columns (tut::jor::read_cpu_times).
set(JOR_SHARE ${CMAKE_BINARY_DIR}/jor_tour_share.tsv)

find_package(OpenMP QUIET COMPONENTS CXX)
if(TARGET OpenMP::OpenMP_CXX)
  message(STATUS "JOR track: OpenMP found: building the CPU baseline")
  add_executable(jor-cpu-baseline ${jor_dir}/cpu_baseline.cpp)
  target_link_libraries(jor-cpu-baseline PRIVATE tut_common OpenMP::OpenMP_CXX)
  set_target_properties(jor-cpu-baseline PROPERTIES OUTPUT_NAME cpu_baseline
                        RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/checks/jor)
  set_property(GLOBAL APPEND PROPERTY TUT_MANIFEST
    "  {\"tree\": \"solutions\", \"track\": \"jor\", \"lesson\": \"00_cpu_baseline\", \"source\": \"${jor_dir}/cpu_baseline.cpp\", \"target\": \"jor-cpu-baseline\", \"exe\": \"$<TARGET_FILE:jor-cpu-baseline>\", \"timeout\": 300, \"tour_args\": [\"--share\", \"${JOR_SHARE}\", \"--fresh-share\"]}")
  if(TUT_BUILD_CHECKS)
    # The CPU variants of tut/jor_cpu.hpp are checked in check-cpu (check_jor.cpp):
    # with OpenMP, so that simd and openmp+simd are what they claim to be there too.
    target_link_libraries(check-cpu PRIVATE OpenMP::OpenMP_CXX)
    # A run at tiny and odd sizes, every variant, both types, both stopping rules.
    add_test(NAME cpu/jor/cpu-baseline
             COMMAND jor-cpu-baseline --sizes 1,2,3,17,127,128 --matrices 3 --threads 2)
    add_test(NAME cpu/jor/cpu-baseline-min-rule
             COMMAND jor-cpu-baseline --sizes 1,64 --matrices 2 --stop min --threads 2)
    set_tests_properties(cpu/jor/cpu-baseline cpu/jor/cpu-baseline-min-rule PROPERTIES TIMEOUT 300 LABELS "cpu;jor")
    add_test(NAME cpu/jor/cpu-baseline/bad-input
             COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/scripts/expect_usage_error.py
                     $<TARGET_FILE:jor-cpu-baseline> ${TUT_COMMON_BAD_ARGS}
                     "--sizes 0" "--sizes" "--sizes 12x" "--sizes 128,,256" "--sizes 600000" "--sizes 400000"
                     "--matrices 0" "--type half" "--stop mean" "--tol 0" "--tol -1" "--tol abc" "--tol nan"
                     "--alpha 0" "--alpha 1.5" "--alpha nan" "--alpha -0.5" "--max-iter 0" "--variant nosuch"
                     "--threads -1")
    set_tests_properties(cpu/jor/cpu-baseline/bad-input PROPERTIES LABELS "cpu;jor")
  endif()
else()
  message(STATUS "JOR track: OpenMP not found: the CPU baseline is skipped "
                 "(GCC and Clang ship it: libgomp, libomp)")
endif()

# The float summation and stopping-rule measurements (docs/experiments/jor.md).
add_executable(jor-float-error ${jor_dir}/float_error.cpp)
target_link_libraries(jor-float-error PRIVATE tut_common)
if(TARGET OpenMP::OpenMP_CXX)
  target_link_libraries(jor-float-error PRIVATE OpenMP::OpenMP_CXX)
endif()
set_target_properties(jor-float-error PROPERTIES OUTPUT_NAME float_error
                      RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/checks/jor)

# The CUDA lessons. Sanitizer runs: small and odd sizes, a few matrices, both types;
# memcheck always, racecheck where a kernel shares memory between threads, synccheck for
# the grid-wide barrier of the persistent kernels. A right solve takes 8 to 11 sweeps (30
# or so by the min rule); --max-iter 200 stops a wrong one that never converges 5 times
# sooner than the default 1000, each sweep being slow under the sanitizer. Where the
# program keeps the previous lesson's approach as its baseline, the runs sanitize the
# lesson's own variant only.
set(jor_bad "--sizes 0" "--sizes" "--sizes 12x" "--sizes 600000" "--matrices 0" "--type half" "--tol 0" "--tol abc"
            "--tol nan" "--alpha 0" "--alpha 1.5" "--alpha nan" "--max-iter 0" "--variant nosuch")
set(jor_smoke --sizes 1,3,128,1000 --matrices 2 --warmup 0 --repeats 2)
set(jor_sanitize "--sizes 1,2,3,37,128 --matrices 1 --warmup 0 --repeats 1 --max-iter 200")
set(jor_tour --share ${JOR_SHARE})
# What the grader names as the likely cause when a lesson's checks time out.
set(jor_grid_hang "a grid barrier that not every block reaches, or blocks that leave the loop on different iterations?")

tut_lesson(jor 01_block_per_row block_per_row.cu
           SMOKE_ARGS ${jor_smoke} BAD_ARGS ${jor_bad} TOUR_ARGS ${jor_tour}
           SANITIZE_RUNS ${jor_sanitize} SANITIZE_TOOLS memcheck racecheck)
tut_lesson(jor 02_warp_rows warp_rows.cu
           SMOKE_ARGS ${jor_smoke} BAD_ARGS ${jor_bad} TOUR_ARGS ${jor_tour}
           SANITIZE_RUNS ${jor_sanitize} SANITIZE_TOOLS memcheck)
tut_lesson(jor 03_cublas_gemv cublas_gemv.cu LIBS CUDA::cublas
           SMOKE_ARGS ${jor_smoke} BAD_ARGS ${jor_bad} TOUR_ARGS ${jor_tour}
           SANITIZE_RUNS ${jor_sanitize} SANITIZE_TOOLS memcheck)
tut_lesson(jor 04_fused fused.cu
           SMOKE_ARGS ${jor_smoke} BAD_ARGS ${jor_bad} TOUR_ARGS ${jor_tour}
           SANITIZE_RUNS "${jor_sanitize} --variant fused" SANITIZE_TOOLS memcheck racecheck)
# Lesson 05's sanitizer runs use its variant without the conditional node (the same
# kernels): compute-sanitizer 2025.3 faults WHILE-node graphs launched after a large
# cudaFree (docs/experiments/sanitizer_while_graph.cu), which the driver's bandwidth
# measurement does.
tut_lesson(jor 05_graph_loop graph_loop.cu
           HANG_HINT "a WHILE node whose condition the graph never clears (a stopping test never met)?"
           SMOKE_ARGS ${jor_smoke} BAD_ARGS ${jor_bad} "--check-every 0" "--check-every x" TOUR_ARGS ${jor_tour}
           SANITIZE_RUNS "${jor_sanitize} --variant 'check every k'" SANITIZE_TOOLS memcheck racecheck)
tut_lesson(jor 06_persistent persistent.cu HANG_HINT ${jor_grid_hang}
           SMOKE_ARGS ${jor_smoke} BAD_ARGS ${jor_bad} TOUR_ARGS ${jor_tour}
           SANITIZE_RUNS ${jor_sanitize} SANITIZE_TOOLS memcheck racecheck synccheck)
tut_lesson(jor 07_l2_reuse l2_reuse.cu HANG_HINT ${jor_grid_hang}
           SMOKE_ARGS ${jor_smoke} BAD_ARGS ${jor_bad} TOUR_ARGS ${jor_tour}
           SANITIZE_RUNS ${jor_sanitize} SANITIZE_TOOLS memcheck racecheck synccheck)
tut_lesson(jor 08_mixed_precision mixed_precision.cu HANG_HINT ${jor_grid_hang}
           SMOKE_ARGS ${jor_smoke} BAD_ARGS ${jor_bad} TOUR_ARGS ${jor_tour}
           SANITIZE_RUNS ${jor_sanitize} SANITIZE_TOOLS memcheck racecheck synccheck)

# The checks are plain C++; the device generator they call (tut::jor::generate_system) is
# compiled once for all of them, so that they do not depend on what a lesson's .cu
# instantiates.
if(TUT_BUILD_CHECKS)
  add_library(jor-checks-device STATIC ${jor_dir}/device_system.cu)
  target_link_libraries(jor-checks-device PUBLIC tut_common)
  if(TUT_SOLUTION_ARCHITECTURES)
    set_property(TARGET jor-checks-device PROPERTY CUDA_ARCHITECTURES ${TUT_SOLUTION_ARCHITECTURES})
  endif()
  foreach(lesson 01_block_per_row 02_warp_rows 03_cublas_gemv 04_fused 05_graph_loop 06_persistent
                 07_l2_reuse 08_mixed_precision)
    foreach(tree lessons solutions)
      if(TARGET check-${tree}-jor-${lesson})  # a tree may ship some lessons only
        target_link_libraries(check-${tree}-jor-${lesson} PRIVATE jor-checks-device)
      endif()
    endforeach()
  endforeach()
endif()
