# Reference executor: the numerical oracle every kernel is tested against.
list(APPEND HETC_DRIVER_SOURCES
  reference/concat.c
  reference/conv.c
  reference/dense.c
  reference/dispatch.c
  reference/elementwise.c
  reference/layout.c
  reference/matmul.c
  reference/normalize.c
  reference/pool.c
  reference/resize.c
  reference/softmax.c
  reference/transpose.c
)
list(APPEND HETC_DRIVER_SOURCES reference/graph_exec.c)
