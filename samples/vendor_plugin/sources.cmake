# The example_c plugin's sources, with absolute paths, so that any project can
# build them: this folder's CMakeLists.txt (out of tree, against an installed
# hetc) and hetc's own tree (which builds the sample against several SDK
# headers to test ABI evolution).
set(EXAMPLE_C_SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/plugin.c
    ${CMAKE_CURRENT_LIST_DIR}/artifact.c
    ${CMAKE_CURRENT_LIST_DIR}/buffers.c
    ${CMAKE_CURRENT_LIST_DIR}/conv_direct.c
    ${CMAKE_CURRENT_LIST_DIR}/ops.c)
