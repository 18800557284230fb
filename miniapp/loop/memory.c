/* miniapp/loop/memory.c: what a run needs at least, counted before it
 * allocates: the vectors of the solver and of the coupling, per replica (and
 * the exact run beside a closure), and the surrogate's batch (floats), on
 * the host; the solver's vectors again on the device with -solver_device
 * cuda. A lower bound: PETSc's, MPI's and the network's own work space come
 * on top. A run whose bound exceeds what its node has available (the ranks
 * there together), or its device's memory (the ranks sharing one), stops in
 * one line before it allocates; the report states the bound. */
#include "coupling_impl.h"
#include "optrange.h"

#include <stdio.h>
#include <string.h>

/* MemAvailable of /proc/meminfo in bytes (negative when it cannot be read). */
static double HostAvailable(void)
{
  FILE  *f = fopen("/proc/meminfo", "r");
  char   line[256];
  double kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1) break;
  if (f) fclose(f);
  return kb < 0 ? -1 : kb * 1024.0;
}

PetscErrorCode MemoryCheck(Coupled c)
{
  Solver      s = c->rep[0].solver;
  PetscInt64  pts;
  PetscInt    dof, hv, dv, nv = 3; /* prev, w, x0 */
  double      avail, dev_bytes = 0, n, ratio[2] = {0, 0}; /* need / have: host, device */
  int         ndev = 0, share = 1;
  PetscMPIInt local;
  MPI_Comm    node;
  char        why[512] = "";

  PetscFunctionBegin;
  PetscCall(SolverGetMemoryBound(s, &pts, &dof, &hv, &dv));
  n = (double)pts * (double)dof;
  if (c->mode == COUPLING_GUESS)
    nv += 2 + (c->learn_residual ? 2 : 0) + GuessSpaceVectorCount(PetscMax(c->history, 1)); /* d, z; xp, rp; the space */
  if (c->mode == COUPLING_NONE) nv = 0;
  {
    PetscInt nrep = c->nrep + (c->mode == COUPLING_CLOSURE ? 1 : 0); /* the exact run */
    PetscInt nin   = c->mode == COUPLING_CLOSURE ? dof : (c->learn_residual ? 15 : 10) * dof;
    PetscInt nout  = c->mode == COUPLING_CLOSURE ? 1 : dof;
    double   batch = c->mode == COUPLING_NONE ? 0 : 4.0 * (double)pts * (double)(nin + 2 * nout) * (double)c->nrep;
    c->mem_host    = 8.0 * n * (double)(nrep * hv + c->nrep * nv) + batch;
    c->mem_device  = dv ? 8.0 * n * (double)(nrep * dv + c->nrep * nv) : 0;
  }
  PetscCallMPI(MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  PetscCallMPI(MPI_Comm_size(node, &local));
  PetscCallMPI(MPI_Comm_free(&node));
  avail = HostAvailable();
  if (avail > 0) ratio[0] = c->mem_host * local / avail;
  if (c->mem_device > 0) { /* the node's ranks take the devices in turn (surrogate/device_cuda.cu) */
    VecFPNADeviceMemory(&ndev, &dev_bytes);
    share = ndev > 0 ? (local + ndev - 1) / ndev : 1;
    if (ndev > 0 && dev_bytes > 0) ratio[1] = c->mem_device * share / dev_bytes;
  }
  /* every rank decides alike: the most loaded node or device */
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, ratio, 2, MPI_DOUBLE, MPI_MAX, c->comm));
  if (ratio[0] > 1)
    opt_say(why, sizeof why,
            "this run needs at least %.1f GiB of memory a rank (%.0f values of the solver's vectors a rank, %d rank(s) "
            "on this node), more than the node has available (%.1f GiB): use more nodes, fewer replicas or a smaller "
            "grid",
            c->mem_host / 1073741824.0, n, (int)local, avail / 1073741824.0);
  else if (ratio[1] > 1)
    opt_say(why, sizeof why,
            "-solver_device cuda: this run needs at least %.1f GiB of device memory a rank (%d rank(s) a device), "
            "more than a device has (%.1f GiB): use more devices or a smaller grid",
            c->mem_device / 1073741824.0, share, dev_bytes / 1073741824.0);
  PetscCheck(!why[0], c->comm, PETSC_ERR_ARG_OUTOFRANGE, "%s", why);
  PetscFunctionReturn(PETSC_SUCCESS);
}
