# tests/surrogate/atomic_chunks.cmake (docs/surrogate.md): in a build whose
# surrogate is atomic, a batch of at most two chunks (2048 samples) trains
# the same bits under any atomic order (two terms add the same either way),
# and one sample more (a third chunk) lets the order show: two seeds give
# equal weights hashes at 2048 samples and different ones at 2049.
foreach(n 2048 2049)
  foreach(seed 1 2)
    execute_process(COMMAND ${TRAIN} -train_steps 20 -train_batch ${n} -surrogate_device cpu -atomic_order_seed ${seed}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0 OR NOT out MATCHES "weights hash ([0-9a-f]+)")
      message(FATAL_ERROR "batch ${n}, seed ${seed} failed (${rc}):\n${out}${err}")
    endif()
    set(h${n}_${seed} "${CMAKE_MATCH_1}")
  endforeach()
endforeach()
message(STATUS "batch 2048: ${h2048_1} ${h2048_2}; batch 2049: ${h2049_1} ${h2049_2}")
if(NOT h2048_1 STREQUAL h2048_2)
  message(FATAL_ERROR "two chunks: the atomic order changed the weights (${h2048_1}, ${h2048_2})")
endif()
if(h2049_1 STREQUAL h2049_2)
  message(FATAL_ERROR "three chunks: two atomic orders gave the same weights (${h2049_1}): the seed no longer reaches the sums")
endif()
