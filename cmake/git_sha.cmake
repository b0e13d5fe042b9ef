# Writes OUT (a header defining KPERF_GIT_SHA) from `git rev-parse` in SRC, rewriting it only when
# the SHA changed, so every build records the commit it was built from (not the one it was
# configured at) without recompiling when nothing changed.
set(sha "unknown")
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY "${SRC}"
                OUTPUT_VARIABLE out OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(rc EQUAL 0 AND out)
  set(sha "${out}")
  execute_process(COMMAND git diff --quiet HEAD WORKING_DIRECTORY "${SRC}" RESULT_VARIABLE dirty)
  if(NOT dirty EQUAL 0)
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
