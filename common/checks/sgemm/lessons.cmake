# The SGEMM track, in order. See cmake/Tutorial.cmake for tut_lesson().
set(sgemm_bad "--n abc" "--n 0" "--n -4" "--n 8193" "--n 1e3" "--n" "--variant nosuch")
set(sgemm_smoke --n 300 --repeats 2 --warmup 1)
tut_lesson(sgemm 01_naive naive.cu LIBS CUDA::cublas SMOKE_ARGS ${sgemm_smoke} BAD_ARGS ${sgemm_bad})
