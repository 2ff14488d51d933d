# The CG track, in order. See cmake/Tutorial.cmake for tut_lesson().
#
# Before the lessons, two small programs the tour also runs (manifest entries added here
# by hand, in the shape tut_lesson() writes, tree "solutions", no checks):
#   00_launch_queue     how many launches queue behind a running kernel (always built);
#                       with --share it starts the tour's shared results file afresh;
#   00_eigen_baseline   Eigen's Jacobi CG on all host cores (built when Eigen 3.3+ and
#                       OpenMP are found); writes its time into the shared file.
# Every CG program of a tour run gets --share ${CG_SHARE}: the lessons read Eigen's time
# and lesson 1's from it for their "x Eigen" and "x L1/iter" columns
# (tut::cg::Problem). Lessons whose large-problem figure matters (1: the reference;
# 5, 7, 9: the bandwidth floor) run both problems in the tour (--problem both); lessons 8
# and 10 keep the matrix on chip and refuse the large one. Lesson 10 also reads lesson 8's
# time from the shared file (its "x L8/iter" column), so lesson 8 runs before it.
#
# compute-sanitizer runs (SANITIZE_RUNS): every lesson on data/spd100.mtx (100 rows, fewer
# than a block's threads, rows of 1 to 48 nonzeros: make_spd100.py) and on the default
# problem for a few iterations; memcheck always, racecheck where our kernels use shared
# memory (block sums, lesson 8's products), synccheck for the grid-wide barriers of 8 and 9
# and for lesson 10's block barriers.

set(CG_SHARE ${CMAKE_BINARY_DIR}/cg_tour_share.tsv)
set(cg_dir ${CMAKE_CURRENT_LIST_DIR})

# 00_launch_queue (CUDA; needs a GPU to run, exits 77 without one).
add_executable(cg-launch-queue ${cg_dir}/launch_queue.cu)
target_link_libraries(cg-launch-queue PRIVATE tut_common)
set_target_properties(cg-launch-queue PROPERTIES OUTPUT_NAME launch_queue RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/checks/cg)
set_property(GLOBAL APPEND PROPERTY TUT_MANIFEST
  "  {\"tree\": \"solutions\", \"track\": \"cg\", \"lesson\": \"00_launch_queue\", \"source\": \"${cg_dir}/launch_queue.cu\", \"target\": \"cg-launch-queue\", \"exe\": \"$<TARGET_FILE:cg-launch-queue>\", \"timeout\": 60, \"tour_args\": [\"--share\", \"${CG_SHARE}\"]}")
if(TUT_BUILD_CHECKS)
  add_test(NAME solutions/cg/00_launch_queue/run COMMAND cg-launch-queue --max-launches 20000)
  set_tests_properties(solutions/cg/00_launch_queue/run PROPERTIES
                       SKIP_RETURN_CODE 77 TIMEOUT 60 RESOURCE_LOCK gpu LABELS "gpu;cg")
endif()

# 00_eigen_baseline (CPU only): optional.
find_package(Eigen3 3.3 NO_MODULE QUIET)
find_package(OpenMP QUIET COMPONENTS CXX)
if(TARGET Eigen3::Eigen AND TARGET OpenMP::OpenMP_CXX)
  message(STATUS "CG track: Eigen ${Eigen3_VERSION} and OpenMP found: building the Eigen baseline")
  add_executable(cg-eigen-baseline ${cg_dir}/eigen_baseline.cpp)
  target_link_libraries(cg-eigen-baseline PRIVATE tut_common Eigen3::Eigen OpenMP::OpenMP_CXX)
  set_target_properties(cg-eigen-baseline PROPERTIES OUTPUT_NAME eigen_baseline
                        RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/checks/cg)
  set_property(GLOBAL APPEND PROPERTY TUT_MANIFEST
    "  {\"tree\": \"solutions\", \"track\": \"cg\", \"lesson\": \"00_eigen_baseline\", \"source\": \"${cg_dir}/eigen_baseline.cpp\", \"target\": \"cg-eigen-baseline\", \"exe\": \"$<TARGET_FILE:cg-eigen-baseline>\", \"timeout\": 120, \"tour_args\": [\"--share\", \"${CG_SHARE}\"]}")
  if(TUT_BUILD_CHECKS)
    add_test(NAME cpu/cg/eigen-baseline COMMAND cg-eigen-baseline --warmup 0 --repeats 1)
    set_tests_properties(cpu/cg/eigen-baseline PROPERTIES TIMEOUT 300 LABELS "cpu;cg")
  endif()
else()
  message(STATUS "CG track: Eigen 3.3+ with OpenMP not found: the Eigen baseline is skipped "
                 "(Debian/Ubuntu: apt-get install libeigen3-dev); lessons then show no 'x Eigen' figure")
endif()

set(cg_bad "--problem nope" "--problem" "--tol 0" "--tol abc" "--max-iter 0" "--matrix /nonexistent.mtx"
           "--variant nosuch")
set(cg_bad_k ${cg_bad} "--check-every 0" "--check-every x")
set(cg_smoke --warmup 1 --repeats 2)
set(cg_sanitize "--matrix ${cg_dir}/data/spd100.mtx --warmup 0 --repeats 1"
                "--max-iter 8 --no-check --warmup 0 --repeats 1")
set(cg_tour --share ${CG_SHARE})
set(cg_tour_both --share ${CG_SHARE} --problem both)
# What the grader names as the likely cause when a lesson's checks time out.
set(cg_grid_hang "a grid barrier that not every block reaches, or blocks that leave the loop on different iterations?")

tut_lesson(cg 01_sample sample.cu LIBS CUDA::cublas CUDA::cusparse
           SMOKE_ARGS ${cg_smoke} BAD_ARGS ${cg_bad} TOUR_ARGS ${cg_tour_both}
           SANITIZE_RUNS ${cg_sanitize} SANITIZE_TOOLS memcheck)
tut_lesson(cg 02_jacobi jacobi.cu LIBS CUDA::cublas CUDA::cusparse
           SMOKE_ARGS ${cg_smoke} BAD_ARGS ${cg_bad} TOUR_ARGS ${cg_tour}
           SANITIZE_RUNS ${cg_sanitize} SANITIZE_TOOLS memcheck)
tut_lesson(cg 03_device_pointer_mode device_pointers.cu LIBS CUDA::cublas CUDA::cusparse
           SMOKE_ARGS ${cg_smoke} BAD_ARGS ${cg_bad_k} TOUR_ARGS ${cg_tour}
           SANITIZE_RUNS ${cg_sanitize} SANITIZE_TOOLS memcheck)
# Lesson 04's runs sanitize its own dot kernel only: its baseline variant (lesson 03's
# cublasSdot) is not the exercise, and under racecheck it took the case from 21 s to 31 s
# on an H100.
set(cg_sanitize_04 "")
foreach(run IN LISTS cg_sanitize)
  list(APPEND cg_sanitize_04 "${run} --variant 'own dot'")
endforeach()
tut_lesson(cg 04_own_dot own_dot.cu LIBS CUDA::cublas CUDA::cusparse
           SMOKE_ARGS ${cg_smoke} BAD_ARGS ${cg_bad_k} TOUR_ARGS ${cg_tour}
           SANITIZE_RUNS ${cg_sanitize_04} SANITIZE_TOOLS memcheck racecheck)
tut_lesson(cg 05_fusion fusion.cu
           SMOKE_ARGS ${cg_smoke} BAD_ARGS ${cg_bad_k} TOUR_ARGS ${cg_tour_both}
           SANITIZE_RUNS ${cg_sanitize} SANITIZE_TOOLS memcheck racecheck)
tut_lesson(cg 06_mapped_polling mapped_polling.cu
           HANG_HINT "a host loop polling a mapped flag that the GPU never writes, or a stopping test never met?"
           SMOKE_ARGS ${cg_smoke} BAD_ARGS ${cg_bad_k} TOUR_ARGS ${cg_tour}
           SANITIZE_RUNS ${cg_sanitize} SANITIZE_TOOLS memcheck racecheck)
# Lesson 07's sanitizer runs use its variant without the conditional node (the same
# kernels): compute-sanitizer 2025.3 faults WHILE-node graphs at random (lesson 07's
# README, docs/experiments/sanitizer_while_graph.cu).
set(cg_sanitize_07 "")
foreach(run IN LISTS cg_sanitize)
  list(APPEND cg_sanitize_07 "${run} --variant 'graph per iteration'")
endforeach()
tut_lesson(cg 07_graph_while graph_while.cu
           HANG_HINT "a WHILE node whose condition the graph never clears (a stopping test never met)?"
           SMOKE_ARGS ${cg_smoke} BAD_ARGS ${cg_bad_k} TOUR_ARGS ${cg_tour_both}
           SANITIZE_RUNS ${cg_sanitize_07} SANITIZE_TOOLS memcheck racecheck)
tut_lesson(cg 08_persistent persistent.cu HANG_HINT ${cg_grid_hang}
           SMOKE_ARGS ${cg_smoke} BAD_ARGS ${cg_bad} TOUR_ARGS ${cg_tour}
           SANITIZE_RUNS ${cg_sanitize} SANITIZE_TOOLS memcheck racecheck synccheck)
tut_lesson(cg 09_streaming streaming.cu HANG_HINT ${cg_grid_hang}
           SMOKE_ARGS ${cg_smoke} BAD_ARGS ${cg_bad} "--l2-window maybe" "--blocks-per-sm 9" TOUR_ARGS ${cg_tour_both}
           SANITIZE_RUNS ${cg_sanitize} SANITIZE_TOOLS memcheck racecheck synccheck)
# Lesson 10: memcheck, and synccheck for the block barriers around its waits and the one
# grid barrier before its loop. Like lesson 08 it keeps the matrix on chip and refuses the
# large problem.
tut_lesson(cg 10_one_round one_round.cu
           HANG_HINT "a wait for a flag that another block never sets, or a barrier that not every block reaches?"
           SMOKE_ARGS ${cg_smoke} BAD_ARGS ${cg_bad} TOUR_ARGS ${cg_tour}
           SANITIZE_RUNS ${cg_sanitize} SANITIZE_TOOLS memcheck synccheck)
