# hetc_onnx_proto: C for ONNX's protobuf messages, generated at build time by
# protoc-c from the onnx.proto that Debian's libonnx-dev installs, linked to
# libprotobuf-c. The importer (driver/model/onnx_*.c) and its fuzz target
# link it; nothing decodes protobuf by hand.
find_program(HETC_PROTOC_C protoc-c REQUIRED)
find_path(HETC_ONNX_PROTO_DIR onnx/onnx.proto REQUIRED)
find_path(HETC_PROTOBUF_C_INCLUDE_DIR protobuf-c/protobuf-c.h REQUIRED)
find_library(HETC_PROTOBUF_C_LIBRARY protobuf-c REQUIRED)

set(_onnx_out ${PROJECT_BINARY_DIR}/generated/onnx)
add_custom_command(
  OUTPUT ${_onnx_out}/onnx.pb-c.c ${_onnx_out}/onnx.pb-c.h
  COMMAND ${CMAKE_COMMAND} -E make_directory ${_onnx_out}
  COMMAND ${HETC_PROTOC_C} --proto_path=${HETC_ONNX_PROTO_DIR}/onnx --c_out=${_onnx_out}
          ${HETC_ONNX_PROTO_DIR}/onnx/onnx.proto
  DEPENDS ${HETC_ONNX_PROTO_DIR}/onnx/onnx.proto
  COMMENT "protoc-c: onnx.proto -> C")
add_library(hetc_onnx_proto STATIC ${_onnx_out}/onnx.pb-c.c)
# Generated code: built as it is, without the project's -Werror.
set_target_properties(hetc_onnx_proto PROPERTIES POSITION_INDEPENDENT_CODE ON C_VISIBILITY_PRESET hidden)
target_include_directories(hetc_onnx_proto PUBLIC ${_onnx_out} ${HETC_PROTOBUF_C_INCLUDE_DIR})
target_link_libraries(hetc_onnx_proto PUBLIC ${HETC_PROTOBUF_C_LIBRARY})
