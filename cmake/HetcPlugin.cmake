# hetc_add_plugin(<name> SOURCES <src>... [KIT [<kit target>]]
#                 [OUTPUT_DIRECTORY <dir>] [INSTALL_DESTINATION <dir> | NO_INSTALL])
#
# Builds a hetc backend plugin: a MODULE library lib<name>.so in C11 with
# hidden visibility, -Bsymbolic, --no-undefined and a version script that
# exports only hetc_plugin_query, compiled against hetc::plugin_sdk.
#
# KIT links the plugin kit (hetc/kit/*.h; a static library with hidden
# visibility, so the plugin still exports only the query): hetc::plugin_kit,
# or the kit target named, for a plugin built against another hetc/plugin.h
# than the SDK's, whose kit must be built against that same header.
#
# Used in the hetc tree and installed for vendors building out of tree
# (find_package(hetc)). There, the plugin installs by default into
# ${CMAKE_INSTALL_LIBDIR}/hetc/plugins under the vendor's install prefix:
# with the prefix hetc was installed to, `hetc` finds it with no setting;
# elsewhere, point HETC_PLUGIN_PATH at that folder, or pass
# INSTALL_DESTINATION ${hetc_PLUGIN_DIR} to install beside hetc's own.
set(_HETC_PLUGIN_MAP "${CMAKE_CURRENT_LIST_DIR}/hetc-plugin.map")

function(hetc_add_plugin name)
  cmake_parse_arguments(ARG "NO_INSTALL" "OUTPUT_DIRECTORY;INSTALL_DESTINATION;KIT" "SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "hetc_add_plugin(${name}): no SOURCES given")
  endif()
  add_library(${name} MODULE ${ARG_SOURCES})
  set_target_properties(${name} PROPERTIES
    PREFIX "lib"
    C_STANDARD 11
    C_STANDARD_REQUIRED ON
    C_EXTENSIONS OFF
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(${name} PRIVATE
    "-Wl,-Bsymbolic" "-Wl,--version-script=${_HETC_PLUGIN_MAP}" "-Wl,--no-undefined")
  set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS "${_HETC_PLUGIN_MAP}")
  if(TARGET hetc::plugin_sdk)
    target_link_libraries(${name} PRIVATE hetc::plugin_sdk)
  endif()
  if("KIT" IN_LIST ARG_KEYWORDS_MISSING_VALUES)
    set(ARG_KIT hetc::plugin_kit)
  endif()
  if(ARG_KIT)
    target_link_libraries(${name} PRIVATE ${ARG_KIT})
  endif()
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  elseif(DEFINED HETC_PLUGIN_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${HETC_PLUGIN_OUTPUT_DIRECTORY})
  endif()
  # In hetc's own tree only the built-in plugins name a destination; test
  # plugins stay in the build tree. An installed SDK sets the default.
  set(destination "${ARG_INSTALL_DESTINATION}")
  if(NOT destination AND DEFINED HETC_PLUGIN_DEFAULT_INSTALL_DESTINATION)
    set(destination "${HETC_PLUGIN_DEFAULT_INSTALL_DESTINATION}")
  endif()
  if(destination AND NOT ARG_NO_INSTALL)
    install(TARGETS ${name} LIBRARY DESTINATION "${destination}")
  endif()
endfunction()
