# SPDX-License-Identifier: MIT
# Runs PROGRAM MODE (under MPIEXEC -np NP when MPIEXEC is set) and fails
# unless it ends with a non-zero status and prints a line matching EXPECT once.
#   cmake [-DMPIEXEC=mpirun -DNP=2] -DPROGRAM=sim_mpi_errors -DMODE=abort
#         "-DEXPECT=stops every rank" -P expect_failure.cmake
if(MPIEXEC)
  set(command ${MPIEXEC} -np ${NP} --oversubscribe ${PROGRAM} ${MODE})
else()
  set(command ${PROGRAM} ${MODE})
endif()
execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
string(REGEX MATCHALL "sim_mpi_errors: [^\n]*${EXPECT}" lines "${out}${err}")
list(LENGTH lines count)
message("${command}: status ${rc}, the line ${count} time(s): ${lines}")
if(NOT rc MATCHES "^[0-9]+$" OR rc EQUAL 0)
  message(FATAL_ERROR "expected a non-zero exit status, got '${rc}'\n${out}${err}")
endif()
if(NOT count EQUAL 1)
  message(FATAL_ERROR "expected one line matching '${EXPECT}', got ${count}\n${out}${err}")
endif()
