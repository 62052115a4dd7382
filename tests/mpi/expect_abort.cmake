# Runs PROGRAM (under MPIEXEC -np NP when MPIEXEC is set) and fails unless it
# ends with a non-zero status and prints its "stops every rank" line once.
#   cmake [-DMPIEXEC=mpirun -DNP=2] -DPROGRAM=sim_mpi_abort -P expect_abort.cmake
if(MPIEXEC)
  set(command ${MPIEXEC} -np ${NP} --oversubscribe ${PROGRAM})
else()
  set(command ${PROGRAM})
endif()
execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
string(REGEX MATCHALL "stops every rank" lines "${out}${err}")
list(LENGTH lines count)
message("${command}: status ${rc}, the line ${count} time(s)")
if(NOT rc MATCHES "^[0-9]+$" OR rc EQUAL 0)
  message(FATAL_ERROR "expected a non-zero exit status, got '${rc}'\n${out}${err}")
endif()
if(NOT count EQUAL 1)
  message(FATAL_ERROR "expected the line once, got it ${count} time(s)\n${out}${err}")
endif()
