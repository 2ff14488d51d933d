# The SGEMM track, in order. See cmake/Tutorial.cmake for tut_lesson().
#
# Sanitizer runs: --profile runs each variant once, with no cuBLAS baseline and no check,
# so compute-sanitizer sees the lesson's own kernels only (lesson 08's are cuBLAS's), at
# small sizes that are not multiples of any block, tile or grain (37, 100) and cost about a
# second each under memcheck. racecheck for the kernels that share tiles in shared memory.
set(sgemm_bad "--n abc" "--n 0" "--n -4" "--n 8193" "--n 1e3" "--n" "--variant nosuch")
set(sgemm_smoke --n 300 --repeats 2 --warmup 1)
set(sgemm_sanitize "--n 37 --profile" "--n 100 --profile")
# What the grader names as the likely cause when a Hopper lesson's checks time out.
set(sgemm_mbarrier_hang "an mbarrier wait whose phase never completes (fewer arrivals or transaction bytes than it expects)?")
tut_lesson(sgemm 01_naive naive.cu LIBS CUDA::cublas SMOKE_ARGS ${sgemm_smoke} BAD_ARGS ${sgemm_bad}
           SANITIZE_RUNS ${sgemm_sanitize} SANITIZE_TOOLS memcheck)
# Lesson 02's pipelines use managed memory and cudaMemcpy; the kernel is lesson 01's.
tut_lesson(sgemm 02_unified_memory unified_memory.cu LIBS CUDA::cublas SMOKE_ARGS --n 300 --repeats 2 --warmup 0
           BAD_ARGS ${sgemm_bad} SANITIZE_RUNS ${sgemm_sanitize} SANITIZE_TOOLS memcheck)
# Lesson 03 compiles in N = 256, 512, ..., 8192 only: the smallest is the sanitizer's size.
tut_lesson(sgemm 03_unrolling unrolling.cu LIBS CUDA::cublas SMOKE_ARGS --n 256 --repeats 2 --warmup 1
           BAD_ARGS ${sgemm_bad} "--n 1000" "--n 100" "--n 255" SANITIZE_RUNS "--n 256 --profile" SANITIZE_TOOLS memcheck)
tut_lesson(sgemm 04_multi_output multi_output.cu LIBS CUDA::cublas SMOKE_ARGS ${sgemm_smoke} BAD_ARGS ${sgemm_bad}
           SANITIZE_RUNS ${sgemm_sanitize} SANITIZE_TOOLS memcheck)
tut_lesson(sgemm 05_shared_tiling shared_tiling.cu LIBS CUDA::cublas SMOKE_ARGS ${sgemm_smoke} BAD_ARGS ${sgemm_bad}
           SANITIZE_RUNS ${sgemm_sanitize} SANITIZE_TOOLS memcheck racecheck)
tut_lesson(sgemm 06_granularity granularity.cu LIBS CUDA::cublas SMOKE_ARGS ${sgemm_smoke} BAD_ARGS ${sgemm_bad}
           SANITIZE_RUNS ${sgemm_sanitize} SANITIZE_TOOLS memcheck racecheck)
tut_lesson(sgemm 07_volkov_ilp volkov_ilp.cu LIBS CUDA::cublas SMOKE_ARGS ${sgemm_smoke} BAD_ARGS ${sgemm_bad}
           SANITIZE_RUNS ${sgemm_sanitize} SANITIZE_TOOLS memcheck racecheck)
tut_lesson(sgemm 08_cublas cublas.cu LIBS CUDA::cublas SMOKE_ARGS ${sgemm_smoke} BAD_ARGS ${sgemm_bad}
           SANITIZE_RUNS ${sgemm_sanitize} SANITIZE_TOOLS memcheck)
# Lessons 09-14 go beyond the slides: register blocking, warp tiling, double buffering,
# a 128 x 256 tile, cp.async on it, tuning. Their sanitize sizes overhang every block tile
# (64 to 256) and are not multiples of 4 (the element-by-element edge path) or are (37, 100).
tut_lesson(sgemm 09_register_blocking register_blocking.cu LIBS CUDA::cublas SMOKE_ARGS ${sgemm_smoke}
           BAD_ARGS ${sgemm_bad} SANITIZE_RUNS ${sgemm_sanitize} SANITIZE_TOOLS memcheck racecheck)
tut_lesson(sgemm 10_warp_tiling warp_tiling.cu LIBS CUDA::cublas SMOKE_ARGS ${sgemm_smoke} BAD_ARGS ${sgemm_bad}
           SANITIZE_RUNS ${sgemm_sanitize} SANITIZE_TOOLS memcheck racecheck)
tut_lesson(sgemm 11_double_buffering double_buffering.cu LIBS CUDA::cublas SMOKE_ARGS ${sgemm_smoke}
           BAD_ARGS ${sgemm_bad} SANITIZE_RUNS ${sgemm_sanitize} SANITIZE_TOOLS memcheck racecheck)
tut_lesson(sgemm 12_large_tile large_tile.cu LIBS CUDA::cublas SMOKE_ARGS ${sgemm_smoke} BAD_ARGS ${sgemm_bad}
           SANITIZE_RUNS ${sgemm_sanitize} SANITIZE_TOOLS memcheck racecheck)
tut_lesson(sgemm 13_cp_async cp_async.cu LIBS CUDA::cublas SMOKE_ARGS ${sgemm_smoke} BAD_ARGS ${sgemm_bad}
           SANITIZE_RUNS ${sgemm_sanitize} SANITIZE_TOOLS memcheck racecheck)
# The tour adds the size sweep of the chosen variant against cuBLAS (N = 1024 .. 8192).
tut_lesson(sgemm 14_tuning tuning.cu LIBS CUDA::cublas SMOKE_ARGS ${sgemm_smoke} BAD_ARGS ${sgemm_bad}
           "--sweep nope" TOUR_ARGS --sweep SANITIZE_RUNS ${sgemm_sanitize} SANITIZE_TOOLS memcheck racecheck)
# Lessons 15-19: TF32 tensor cores (WMMA, mma.sync, Hopper wgmma with TMA, then without the
# transpose pass, then scheduled by persistent blocks and clusters), measured against cuBLAS TF32.
# Lessons 17-19 are compiled for sm_90a as well (HOPPER_FEATURES); on other GPUs the program and
# its check executables exit 77 (skipped) and say why.
tut_lesson(sgemm 15_wmma wmma.cu LIBS CUDA::cublas SMOKE_ARGS ${sgemm_smoke} BAD_ARGS ${sgemm_bad}
           SANITIZE_RUNS ${sgemm_sanitize} SANITIZE_TOOLS memcheck racecheck)
tut_lesson(sgemm 16_mma_sync mma_sync.cu LIBS CUDA::cublas SMOKE_ARGS ${sgemm_smoke} BAD_ARGS ${sgemm_bad}
           SANITIZE_RUNS ${sgemm_sanitize} SANITIZE_TOOLS memcheck racecheck)
tut_lesson(sgemm 17_wgmma wgmma.cu HOPPER_FEATURES HANG_HINT ${sgemm_mbarrier_hang}
           LIBS CUDA::cublas SMOKE_ARGS ${sgemm_smoke}
           BAD_ARGS ${sgemm_bad} "--sweep nope" TOUR_ARGS --sweep SANITIZE_RUNS ${sgemm_sanitize}
           SANITIZE_TOOLS memcheck racecheck synccheck)
tut_lesson(sgemm 18_operand_swap operand_swap.cu HOPPER_FEATURES HANG_HINT ${sgemm_mbarrier_hang}
           LIBS CUDA::cublas SMOKE_ARGS ${sgemm_smoke}
           BAD_ARGS ${sgemm_bad} "--sweep nope" TOUR_ARGS --sweep SANITIZE_RUNS ${sgemm_sanitize}
           SANITIZE_TOOLS memcheck synccheck)
# Lesson 19 runs at N = 8192 by default (its last wave is half full there); the sanitizer's small
# sizes have one tile, so they test the cluster pair, the padded and the TMA-store paths, not the split.
tut_lesson(sgemm 19_persistent_cluster persistent_cluster.cu HOPPER_FEATURES HANG_HINT ${sgemm_mbarrier_hang}
           LIBS CUDA::cublas
           SMOKE_ARGS ${sgemm_smoke} BAD_ARGS ${sgemm_bad} "--sweep nope" TOUR_ARGS --sweep
           SANITIZE_RUNS ${sgemm_sanitize} SANITIZE_TOOLS memcheck synccheck)
