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
# hetc_sanitizer_environment(<test>): the sanitizer runtime's options for
# one test of a sanitizer build, so that `ctest` in that tree runs as CI
# does. A test that sets ASAN_OPTIONS itself (detect_leaks=0,
# handle_segv=0) keeps its options and gets these added.
# intercept_tls_get_addr=0: GCC 12's runtime takes a dynamic TLS block
# that malloc happened to place 16 bytes past a page boundary for a
# pre-2.25 glibc header, reads a bogus range from it, and LeakSanitizer's
# tracer dies of SIGSEGV at exit ("Tracer caught signal 11"), failing a
# run that leaked nothing, depending only on where malloc put things.
# LSAN_OPTIONS: PoCL's and LLVM's compiler state, tests/sanitizers/lsan.supp.
function(hetc_sanitizer_environment test)
  set(asan_defaults "intercept_tls_get_addr=0")
  get_property(environment TEST ${test} PROPERTY ENVIRONMENT)
  set(merged "")
  set(has_asan FALSE)
  foreach(pair ${environment})
    if(pair MATCHES "^ASAN_OPTIONS=")
      set(pair "${pair}:${asan_defaults}")
      set(has_asan TRUE)
    endif()
    list(APPEND merged "${pair}")
  endforeach()
  if(NOT has_asan)
    list(APPEND merged "ASAN_OPTIONS=${asan_defaults}")
  endif()
  list(APPEND merged "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/sanitizers/lsan.supp"
                     "UBSAN_OPTIONS=print_stacktrace=1")
  set_property(TEST ${test} PROPERTY ENVIRONMENT "${merged}")
endfunction()

set(HETC_TEST_CACHE_DIR "${PROJECT_BINARY_DIR}/tests/cache" CACHE PATH
  "Kernel caches of the test suite (XDG_CACHE_HOME); another tree's may be shared")

# hetc_pocl_unoptimized(<test>...): PoCL builds these tests' kernels
# without optimizing them (-cl-opt-disable, through PoCL's
# POCL_EXTRA_BUILD_FLAGS). They check what kernels compute on small
# workloads, where PoCL's optimizer and code generator took 0.3 to 0.5 s a
# kernel and three quarters of the test (test_template_conformance_opencl:
# 218 s, 69 s unoptimized), and running them a few percent. What they check
# is the kernel text, which PoCL's optimizer must not change the meaning
# of. The tests that run whole models on PoCL keep its optimizer: there
# running dominates (ResNet-18 ran 1.3 s optimized, 42 s not). These tests
# keep their kernel caches and state (peaks, records) apart from the
# others', so that no unoptimized binary or peak serves another test.
function(hetc_pocl_unoptimized)
  foreach(test ${ARGN})
    set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT "POCL_EXTRA_BUILD_FLAGS=-cl-opt-disable"
                 "XDG_CACHE_HOME=${HETC_TEST_CACHE_DIR}/pocl-unoptimized"
                 "XDG_DATA_HOME=${PROJECT_BINARY_DIR}/tests/state-pocl-unoptimized")
  endforeach()
endfunction()
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
    if(HETC_SANITIZE)
      hetc_sanitizer_environment(${test})
    endif()
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
  test_onnx_pair_cpu_opencl 30 test_torchvision_small_vec 90 test_e2e_samples 85 test_e2e_samples_opencl 45
  test_selection_many_layouts 80 test_template_conformance_opencl 65 test_opencl_ops 60 test_cuda_compile 30
  test_worker_cli 55 test_torchvision_small_cpu 55 test_e2e_samples_hetero_all 50 test_tune_cli 50
  test_e2e_samples_split_opencl 30 test_onnx_corpus_opencl 35
  test_onnx_corpus_vec 35 test_samples_round_trip 35 test_simulation 20)
