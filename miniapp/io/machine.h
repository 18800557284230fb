/* miniapp/io/machine.h: what the report says of the machine the run ran on
 * (machine.c; collective calls, rank 0 writes). With anonymize the nodes are
 * named by a hash of their host names (-report_anonymize). */
#ifndef MINIAPP_MACHINE_H
#define MINIAPP_MACHINE_H

#include "surrogate.h"

#include <petscsys.h>
#include <stdio.h>

/* What the report says of the machine, gathered over the ranks. */
typedef struct {
  char   host[256], cpu[256], date[32], mpilib[MPI_MAX_LIBRARY_VERSION_STRING];
  int    pernode; /* ranks per node: the most on one node */
  double mem[2];  /* peak resident MiB per rank: -min, max */
} MachineInfo;

PetscErrorCode MachineGather(MPI_Comm comm, PetscBool anonymize, MachineInfo *mi);
/* nodes, cores, sockets, vector ISA, memory, OS, kernel, libraries, environment */
PetscErrorCode MachineWriteFacts(MPI_Comm comm, FILE *f, PetscBool anonymize);
/* the network's device; on a GPU the distinct device numbers of the ranks and rank 0's device */
PetscErrorCode MachineWriteDevice(MPI_Comm comm, FILE *f, Surrogate net, PetscMPIInt size);
/* itself, or "host-" and 48 bits of its FNV-1a hash */
const char    *MachineHostName(const char *name, PetscBool anonymize, char *buf, size_t len);

#endif
