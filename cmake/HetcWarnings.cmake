# Warnings every hetc target builds with. They are errors only in the
# developers' and CI's builds (HETC_WERROR): a user's build, with whatever
# compiler is newer than ours, must not fail on a warning it adds.
function(hetc_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter)
  if(HETC_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
