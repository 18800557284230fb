# tests/surrogate/expect_fail.cmake: run CMD (a ;-list) and pass only when it
# exits nonzero AND its output matches REGEX (one clear error line).
execute_process(COMMAND ${CMD} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "expected a nonzero exit, got 0; output:\n${all}")
endif()
if(NOT all MATCHES "${REGEX}")
  message(FATAL_ERROR "exit ${rc} but output does not match '${REGEX}':\n${all}")
endif()
message(STATUS "exit ${rc}, message: ${all}")
