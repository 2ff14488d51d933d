# The JOR track (dense Jacobi over-relaxation), in order. See cmake/Tutorial.cmake for
# tut_lesson(); the CUDA lessons are planned (docs/experiments/jor.md) and not here yet.
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

find_package(OpenMP QUIET COMPONENTS CXX)
if(TARGET OpenMP::OpenMP_CXX)
  message(STATUS "JOR track: OpenMP found: building the CPU baseline")
  add_executable(jor-cpu-baseline ${jor_dir}/cpu_baseline.cpp)
  target_link_libraries(jor-cpu-baseline PRIVATE tut_common OpenMP::OpenMP_CXX)
  set_target_properties(jor-cpu-baseline PROPERTIES OUTPUT_NAME cpu_baseline
                        RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/checks/jor)
  set_property(GLOBAL APPEND PROPERTY TUT_MANIFEST
    "  {\"tree\": \"solutions\", \"track\": \"jor\", \"lesson\": \"00_cpu_baseline\", \"source\": \"${jor_dir}/cpu_baseline.cpp\", \"target\": \"jor-cpu-baseline\", \"exe\": \"$<TARGET_FILE:jor-cpu-baseline>\", \"timeout\": 300, \"tour_args\": []}")
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
