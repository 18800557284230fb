# cmake -DSRC=<source dir> -DOUT=<file> -P cmake/revision.cmake: writes OUT,
# a C file defining miniapp_revision (git describe --always --dirty), at build
# time, and only when it changed (so a build with no change relinks nothing).
execute_process(COMMAND git -C "${SRC}" describe --always --dirty --abbrev=12
                OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT rev)
  set(rev "unknown")
endif()
set(text "/* generated at build time by cmake/revision.cmake */\nconst char miniapp_revision[] = \"${rev}\";\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
