# Writes OUT (a header defining NETSPEC_GIT_DESCRIBE) from `git describe --always --dirty` of SRC,
# run at every build; the file is rewritten only when the text changes (no needless rebuilds).
execute_process(COMMAND git describe --always --dirty --tags WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE v OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR v STREQUAL "")
  set(v "0.1.0 (no git)")
endif()
set(text "#define NETSPEC_GIT_DESCRIBE \"${v}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
