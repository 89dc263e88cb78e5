# Warnings every hetc target builds with: C11, all warnings as errors.
function(hetc_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror
                         -Wshadow -Wstrict-prototypes -Wno-unused-parameter)
endfunction()
