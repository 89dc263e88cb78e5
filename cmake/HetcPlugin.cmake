# hetc_add_plugin(<name> SOURCES <src>...)
#
# Builds a hetc backend plugin: a MODULE library with hidden visibility,
# -Bsymbolic, and a version script that exports only hetc_plugin_query.
# Used in the hetc tree and installed for vendors building out of tree.
set(_HETC_PLUGIN_MAP "${CMAKE_CURRENT_LIST_DIR}/hetc-plugin.map")

function(hetc_add_plugin name)
  cmake_parse_arguments(ARG "" "OUTPUT_DIRECTORY;INSTALL_DESTINATION" "SOURCES" ${ARGN})
  add_library(${name} MODULE ${ARG_SOURCES})
  set_target_properties(${name} PROPERTIES
    PREFIX "lib"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(${name} PRIVATE
    "-Wl,-Bsymbolic" "-Wl,--version-script=${_HETC_PLUGIN_MAP}" "-Wl,--no-undefined")
  set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS "${_HETC_PLUGIN_MAP}")
  if(TARGET hetc::plugin_api)
    target_link_libraries(${name} PRIVATE hetc::plugin_api)
  endif()
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  elseif(DEFINED HETC_PLUGIN_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${HETC_PLUGIN_OUTPUT_DIRECTORY})
  endif()
  if(ARG_INSTALL_DESTINATION)
    install(TARGETS ${name} LIBRARY DESTINATION ${ARG_INSTALL_DESTINATION})
  endif()
endfunction()
