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
# CMakeLists.txt. A test run keeps its state in the build tree, never in the
# user's home: every test of that directory that does not choose its own
# gets XDG_DATA_HOME (the default records store: records, peaks, kept plans)
# in the build tree, XDG_CACHE_HOME (hetc's and PoCL's kernel caches, keyed
# by content, so shared by the tests of one tree) at HETC_TEST_CACHE_DIR,
# and HOME at an empty read-only folder that test_home_untouched checks is
# still empty after the run.
set(HETC_TEST_CACHE_DIR "${PROJECT_BINARY_DIR}/tests/cache" CACHE PATH
  "Kernel caches of the test suite (XDG_CACHE_HOME); another tree's may be shared")
set(HETC_TEST_HOME "${PROJECT_BINARY_DIR}/tests/empty-home")
function(hetc_keep_state_in_build_tree)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(test ${tests})
    get_property(environment TEST ${test} PROPERTY ENVIRONMENT)
    foreach(pair "XDG_DATA_HOME=${PROJECT_BINARY_DIR}/tests/state" "XDG_CACHE_HOME=${HETC_TEST_CACHE_DIR}"
                 "HOME=${HETC_TEST_HOME}")
      string(REGEX REPLACE "=.*" "=" name "${pair}")
      string(FIND ";${environment}" ";${name}" found)
      if(found EQUAL -1)
        set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT "${pair}")
      endif()
    endforeach()
    set_property(TEST ${test} APPEND PROPERTY FIXTURES_REQUIRED hetc_empty_home)
    # ctest -j starts the longest tests first when it knows their cost; a
    # fresh tree has no timings of its own, so the longest (seconds on a
    # cold 2-core run) are named here, and the short ones fill the gaps.
    list(FIND HETC_TEST_LONG_ONES ${test} long)
    if(NOT long EQUAL -1)
      math(EXPR cost_index "${long} + 1")
      list(GET HETC_TEST_LONG_ONES ${cost_index} cost)
      set_property(TEST ${test} PROPERTY COST ${cost})
    endif()
  endforeach()
endfunction()
set(HETC_TEST_LONG_ONES
  test_e2e_samples_hetero_all 230 test_e2e_samples 220 test_template_conformance_opencl 215
  test_e2e_samples_opencl 160 test_selection_many_layouts 160 test_opencl_ops 150 test_cuda_compile 90
  test_template_conformance_cuda 80 test_e2e_samples_hetero_vec_opencl 65 test_e2e_samples_split_opencl 50)
