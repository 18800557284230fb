/* solver/ckpt.h: the checkpoint file, a sequence of named records.
 *
 *   header   "FPNACKPT" magic, format version, byte-order mark, sizeof(PetscInt)
 *            and sizeof(PetscScalar)
 *   records  name length (u32), name, data length (u64), data; the first is
 *            "description", plain text "key: value" lines (what the run was:
 *            build strategies, scenario, grid, network, options), so
 *            `head -c 2000 ck.bin` shows what a file holds
 *   trailer  64-bit checksum of every byte before it
 *
 * Vectors of a DMDA are stored in natural (grid) order, so a checkpoint does
 * not depend on the MPI decomposition: a run on other ranks reads it back.
 * Rank 0 does all file I/O: it streams the records into a unique temporary
 * that is checked, synced and renamed over the target (kernels/atomicfile.h),
 * so a crash, a full disk or a concurrent writer never leaves a bad file under
 * the name; reading, rank 0 loads the whole file, checks it, and sends each
 * record to every rank (a vector: only each rank's part).
 * Every error is one line that starts with the option naming the file
 * (e.g. "-restart ck.bin: truncated (...)"), the same on every rank. */
#ifndef MINIAPP_SOLVER_CKPT_H
#define MINIAPP_SOLVER_CKPT_H

#include <petscdmda.h>

#ifndef PETSC_SUCCESS
#define PETSC_SUCCESS 0
#endif

typedef struct _p_Ckpt *Ckpt;

/* Writing: option is the option naming path, for messages. */
PetscErrorCode CkptCreateWrite(MPI_Comm comm, const char option[], const char path[], Ckpt *ck);
/* Reading: the whole file is loaded and checked (magic, version, checksum,
 * record structure) here. */
PetscErrorCode CkptCreateRead(MPI_Comm comm, const char option[], const char path[], Ckpt *ck);
/* Writing: commit = PETSC_TRUE renames the finished file over the target;
 * PETSC_FALSE (an error path) removes the temporary. Reading: frees. */
PetscErrorCode CkptClose(Ckpt *ck, PetscBool commit);

/* Raw bytes, the same on every rank (rank 0's are written). */
PetscErrorCode CkptPut(Ckpt ck, const char name[], const void *data, size_t n);
/* Exactly n bytes into data on every rank; a missing record or another
 * length is an error naming the record. */
PetscErrorCode CkptGet(Ckpt ck, const char name[], void *data, size_t n);
/* The length of a record (found = PETSC_FALSE when there is none). */
PetscErrorCode CkptGetLength(Ckpt ck, const char name[], size_t *n, PetscBool *found);
/* A global vector of da, in natural order. */
PetscErrorCode CkptPutVec(Ckpt ck, const char name[], DM da, Vec v);
PetscErrorCode CkptGetVec(Ckpt ck, const char name[], DM da, Vec v);
/* Either direction, for code that describes its state once for both: when
 * writing CkptPut/CkptPutVec, when reading CkptGet/CkptGetVec. */
PetscBool      CkptIsWriting(Ckpt ck);
PetscErrorCode CkptData(Ckpt ck, const char name[], void *data, size_t n);
PetscErrorCode CkptVec(Ckpt ck, const char name[], DM da, Vec v);
/* For messages in the file's terms: "<option> <path>: ..." */
const char    *CkptPath(Ckpt ck);
const char    *CkptOption(Ckpt ck);

#endif
