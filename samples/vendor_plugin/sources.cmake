# The example_c plugin's sources, with absolute paths, and the one way to
# build them, so that any project can: this folder's CMakeLists.txt (out of
# tree, against an installed hetc) and hetc's own tree (tests/plugins/check,
# and tests/plugins/abi, which builds the sample against several SDK headers
# to test ABI evolution).
set(EXAMPLE_C_SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/plugin.c
    ${CMAKE_CURRENT_LIST_DIR}/artifact.c
    ${CMAKE_CURRENT_LIST_DIR}/conv_direct.c)

# example_c_add_plugin(<target> [KIT <kit target>] [hetc_add_plugin options...])
#
# The plugin with the plugin kit: hetc::plugin_kit, built against the SDK's
# hetc/plugin.h, or KIT, a kit built against the header the plugin is built
# against (hetc_add_plugin_kit(... ABI_HEADER_DIR ...) in hetc's ABI tests):
# one plugin must not see two ABI headers.
function(example_c_add_plugin target)
  cmake_parse_arguments(ARG "" "KIT" "" ${ARGN})
  hetc_add_plugin(${target} SOURCES ${EXAMPLE_C_SOURCES} KIT ${ARG_KIT} ${ARG_UNPARSED_ARGUMENTS})
endfunction()
