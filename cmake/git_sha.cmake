# Writes OUT (a header defining KPERF_GIT_SHA) from `git rev-parse` in SRC, rewriting it only when
# the SHA changed, so every build records the commit it was built from (not the one it was
# configured at) without recompiling when nothing changed. "-dirty" follows the SHA only when a
# file under host/, kernels/ or schemes/ differs from the commit (an edit, or a new file git does
# not ignore): what the binary and its kernels are made of. Edits elsewhere (results, docs,
# scripts) leave the commit's name standing for what ran (SPEC section 15).
set(sha "unknown")
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY "${SRC}"
                OUTPUT_VARIABLE out OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(rc EQUAL 0 AND out)
  set(sha "${out}")
  execute_process(COMMAND git diff --quiet HEAD -- host kernels schemes
                  WORKING_DIRECTORY "${SRC}" RESULT_VARIABLE dirty)
  execute_process(COMMAND git ls-files --others --exclude-standard -- host kernels schemes
                  WORKING_DIRECTORY "${SRC}" OUTPUT_VARIABLE untracked ERROR_QUIET)
  if(NOT dirty EQUAL 0 OR NOT untracked STREQUAL "")
    set(sha "${sha}-dirty")
  endif()
endif()
set(text "#define KPERF_GIT_SHA \"${sha}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
