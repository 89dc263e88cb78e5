# hetc_add_cmocka_test(<name> SOURCES <src>... [LIBS <lib>...] [TIMEOUT s])
# A cmocka unit test linked against libhetc-private (all of libhetc's
# internals), run by ctest.
function(hetc_add_cmocka_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  hetc_target_warnings(${name})
  target_link_libraries(${name} PRIVATE hetc_private ${CMOCKA_LIBRARIES} ${ARG_LIBS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/driver ${CMOCKA_INCLUDE_DIR})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "HETC_SOURCE_DIR=${PROJECT_SOURCE_DIR};HETC_BINARY_DIR=${PROJECT_BINARY_DIR}")
  if(ARG_TIMEOUT)
    set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT})
  endif()
endfunction()

# hetc_keep_state_in_build_tree(): called at the end of each tests/*
# CMakeLists.txt. Every test of that directory that does not choose its own
# gets XDG_DATA_HOME in the build tree, so the default records store of a
# test run (records, peaks, kept plans) is never the user's, and two build
# trees never share one. The kernel caches (hetc's and PoCL's, under
# XDG_CACHE_HOME) stay where they are: they are keyed by content, and a
# cold cache per build tree doubled the e2e tests' time.
function(hetc_keep_state_in_build_tree)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(test ${tests})
    get_property(environment TEST ${test} PROPERTY ENVIRONMENT)
    string(FIND "${environment}" "XDG_DATA_HOME=" found)
    if(found EQUAL -1)
      set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT "XDG_DATA_HOME=${PROJECT_BINARY_DIR}/tests/state")
    endif()
  endforeach()
endfunction()
