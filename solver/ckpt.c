/* solver/ckpt.c: the checkpoint file (ckpt.h). */
#include "ckpt.h"
#include "atomicfile.h"
#include "hashrng.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#define CKPT_MAGIC   "FPNACKPT"
#define CKPT_VERSION 1u
#define CKPT_NAME    64 /* longest record name */

typedef struct {
  char     magic[8];
  uint32_t version, endian; /* endian = 0x01020304 as written by the host */
  uint32_t int_size, scalar_size;
} CkptHeader;

typedef struct {
  char   name[CKPT_NAME];
  size_t off, len; /* of the data in the loaded file */
} CkptRecord;

struct _p_Ckpt {
  MPI_Comm    comm;
  PetscMPIInt rank;
  char        option[64], path[PETSC_MAX_PATH_LEN];
  PetscBool   write;
  /* writing (rank 0) */
  afile       af;
  uint64_t    sum;
  unsigned    pend_n;
  unsigned char pend[8]; /* bytes not yet folded into the checksum */
  int         werr;      /* first failure: negative creating, positive writing */
  /* reading (rank 0) */
  unsigned char *buf;
  size_t         len;
  CkptRecord    *rec;
  int            nrec;
};

/* The checksum folds 8-byte words (bytes in file order) through mix64. */
static void SumBytes(Ckpt ck, const unsigned char *p, size_t n)
{
  while (n) {
    size_t k = PetscMin((size_t)8 - ck->pend_n, n);
    memcpy(ck->pend + ck->pend_n, p, k);
    ck->pend_n += (unsigned)k, p += k, n -= k;
    if (ck->pend_n == 8) {
      uint64_t w;
      memcpy(&w, ck->pend, 8);
      ck->sum = mix64(ck->sum ^ w), ck->pend_n = 0;
    }
  }
}

static uint64_t SumFinish(Ckpt ck)
{
  uint64_t w = 0;
  memcpy(&w, ck->pend, ck->pend_n);
  return mix64(ck->sum ^ w ^ ((uint64_t)ck->pend_n << 56));
}

static void Emit(Ckpt ck, const void *p, size_t n)
{
  if (ck->werr || !n) return;
  SumBytes(ck, (const unsigned char *)p, n);
  if (fwrite(p, 1, n, ck->af.fp) != n) ck->werr = errno ? errno : EIO; /* afile_commit reports the stream's error too */
}

static PetscErrorCode New(MPI_Comm comm, const char option[], const char path[], PetscBool write, Ckpt *ck)
{
  PetscFunctionBegin;
  PetscCall(PetscNew(ck));
  (*ck)->comm = comm, (*ck)->write = write, (*ck)->sum = 0x243f6a8885a308d3ULL;
  PetscCallMPI(MPI_Comm_rank(comm, &(*ck)->rank));
  PetscCall(PetscStrncpy((*ck)->option, option, sizeof (*ck)->option));
  PetscCall(PetscStrncpy((*ck)->path, path, sizeof (*ck)->path));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CkptCreateWrite(MPI_Comm comm, const char option[], const char path[], Ckpt *ck)
{
  int err = 0;

  PetscFunctionBegin;
  PetscCall(New(comm, option, path, PETSC_TRUE, ck));
  if ((*ck)->rank == 0) {
    CkptHeader h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, CKPT_MAGIC, 8);
    h.version = CKPT_VERSION, h.endian = 0x01020304u, h.int_size = sizeof(PetscInt),
    h.scalar_size = sizeof(PetscScalar);
    err = afile_begin(&(*ck)->af, path, 1);
    if (!err) Emit(*ck, &h, sizeof h);
  }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  if (err) {
    PetscCall(PetscFree(*ck));
    SETERRQ(comm, PETSC_ERR_FILE_OPEN, "%s %s: cannot create the checkpoint (%s)", option, path,
            afile_strerror(afile_diagnose(path, err)));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void PutHeader(Ckpt ck, const char name[], size_t n)
{
  uint32_t nl = (uint32_t)strlen(name);
  uint64_t dl = n;
  Emit(ck, &nl, sizeof nl);
  Emit(ck, name, nl);
  Emit(ck, &dl, sizeof dl);
}

/* A call that writes (write) or reads a checkpoint opened the other way is the caller's error. */
static PetscErrorCode OpenFor(Ckpt ck, PetscBool write)
{
  PetscFunctionBegin;
  PetscCheck(ck->write == write, ck->comm, PETSC_ERR_ORDER, "checkpoint %s is open for %s", ck->path,
             ck->write ? "writing" : "reading");
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CkptPut(Ckpt ck, const char name[], const void *data, size_t n)
{
  PetscFunctionBegin;
  PetscCall(OpenFor(ck, PETSC_TRUE));
  PetscCheck(strlen(name) < CKPT_NAME, ck->comm, PETSC_ERR_ARG_SIZ, "checkpoint record name %s too long", name);
  if (ck->rank == 0) {
    PutHeader(ck, name, n);
    Emit(ck, data, n);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CkptPutVec(Ckpt ck, const char name[], DM da, Vec v)
{
  Vec                nat, seq;
  VecScatter         sc;
  const PetscScalar *a;
  PetscInt           n;

  PetscFunctionBegin;
  PetscCall(DMDACreateNaturalVector(da, &nat));
  PetscCall(DMDAGlobalToNaturalBegin(da, v, INSERT_VALUES, nat));
  PetscCall(DMDAGlobalToNaturalEnd(da, v, INSERT_VALUES, nat));
  PetscCall(VecScatterCreateToZero(nat, &sc, &seq));
  PetscCall(VecScatterBegin(sc, nat, seq, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(sc, nat, seq, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGetLocalSize(seq, &n));
  PetscCall(VecGetArrayRead(seq, &a));
  if (ck->rank == 0) {
    PutHeader(ck, name, (size_t)n * sizeof(PetscScalar));
    Emit(ck, a, (size_t)n * sizeof(PetscScalar));
  }
  PetscCall(VecRestoreArrayRead(seq, &a));
  PetscCall(VecScatterDestroy(&sc));
  PetscCall(VecDestroy(&seq));
  PetscCall(VecDestroy(&nat));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rank 0 loads and checks the file; msg holds the first problem. */
static void Load(Ckpt ck, char *msg, size_t len)
{
  struct stat st;
  FILE       *fp;
  CkptHeader  h;
  size_t      n, pos, body;
  uint64_t    want;

  if (stat(ck->path, &st)) {
    snprintf(msg, len, "cannot open the checkpoint (%s)", strerror(errno));
    return;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(msg, len, "not a regular file");
    return;
  }
  if (!(fp = fopen(ck->path, "rb"))) {
    snprintf(msg, len, "cannot open the checkpoint (%s)", strerror(errno));
    return;
  }
  n       = (size_t)st.st_size;
  ck->buf = (unsigned char *)malloc(n ? n : 1);
  if (!ck->buf || fread(ck->buf, 1, n, fp) != n) {
    snprintf(msg, len, ck->buf ? "reading failed" : "out of memory (%zu bytes)", n);
    fclose(fp);
    return;
  }
  fclose(fp);
  ck->len = n;
  if (n < sizeof h || memcmp(ck->buf, CKPT_MAGIC, 8)) {
    snprintf(msg, len,
             n < sizeof h && n >= 8 && !memcmp(ck->buf, CKPT_MAGIC, 8)
               ? "truncated (%zu bytes, shorter than the header)"
               : "not a miniapp checkpoint (%zu bytes, no FPNACKPT header)",
             n);
    return;
  }
  memcpy(&h, ck->buf, sizeof h);
  if (h.endian != 0x01020304u || h.version != CKPT_VERSION || h.int_size != sizeof(PetscInt) ||
      h.scalar_size != sizeof(PetscScalar)) {
    snprintf(msg, len, "format version %u, %u-byte integers, %u-byte scalars%s; this build reads version %u, %zu, %zu",
             h.version, h.int_size, h.scalar_size, h.endian != 0x01020304u ? ", other byte order" : "", CKPT_VERSION,
             sizeof(PetscInt), sizeof(PetscScalar));
    return;
  }
  if (n < sizeof h + sizeof(uint64_t)) {
    snprintf(msg, len, "truncated (%zu bytes, no checksum)", n);
    return;
  }
  body = n - sizeof(uint64_t);
  SumBytes(ck, ck->buf, body);
  memcpy(&want, ck->buf + body, sizeof want);
  if (SumFinish(ck) != want) {
    snprintf(msg, len, "corrupt or truncated (checksum mismatch over %zu bytes)", n);
    return;
  }
  for (pos = sizeof h; pos < body;) { /* the records */
    uint32_t nl;
    uint64_t dl;
    if (body - pos < sizeof nl || (memcpy(&nl, ck->buf + pos, sizeof nl), nl == 0 || nl >= CKPT_NAME) ||
        body - pos - sizeof nl < nl + sizeof dl) {
      snprintf(msg, len, "corrupt record structure at byte %zu", pos);
      return;
    }
    memcpy(&dl, ck->buf + pos + sizeof nl + nl, sizeof dl);
    if (dl > body - pos - sizeof nl - nl - sizeof dl) {
      snprintf(msg, len, "corrupt record structure at byte %zu", pos);
      return;
    }
    CkptRecord *r = (CkptRecord *)realloc(ck->rec, (size_t)(ck->nrec + 1) * sizeof *r);
    if (!r) {
      snprintf(msg, len, "out of memory");
      return;
    }
    ck->rec = r, r += ck->nrec++;
    memcpy(r->name, ck->buf + pos + sizeof nl, nl), r->name[nl] = 0;
    r->off = pos + sizeof nl + nl + sizeof dl, r->len = (size_t)dl;
    pos    = r->off + r->len;
  }
}

PetscErrorCode CkptCreateRead(MPI_Comm comm, const char option[], const char path[], Ckpt *ck)
{
  char msg[256] = "";

  PetscFunctionBegin;
  PetscCall(New(comm, option, path, PETSC_FALSE, ck));
  if ((*ck)->rank == 0) Load(*ck, msg, sizeof msg);
  PetscCallMPI(MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, comm));
  if (msg[0]) {
    PetscCall(CkptClose(ck, PETSC_FALSE));
    SETERRQ(comm, PETSC_ERR_FILE_UNEXPECTED, "%s %s: %s", option, path, msg);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const CkptRecord *Find(Ckpt ck, const char name[])
{
  for (int i = 0; i < ck->nrec; i++)
    if (!strcmp(ck->rec[i].name, name)) return &ck->rec[i];
  return NULL;
}

PetscErrorCode CkptGetLength(Ckpt ck, const char name[], size_t *n, PetscBool *found)
{
  long long l = -1;

  PetscFunctionBegin;
  PetscCall(OpenFor(ck, PETSC_FALSE));
  if (ck->rank == 0) {
    const CkptRecord *r = Find(ck, name);
    if (r) l = (long long)r->len;
  }
  PetscCallMPI(MPI_Bcast(&l, 1, MPI_LONG_LONG, 0, ck->comm));
  *found = (PetscBool)(l >= 0);
  *n     = l >= 0 ? (size_t)l : 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The length of a record the run needs. */
static PetscErrorCode GetNeeded(Ckpt ck, const char name[], size_t *have)
{
  PetscBool found;

  PetscFunctionBegin;
  PetscCall(CkptGetLength(ck, name, have, &found));
  PetscCheck(found, ck->comm, PETSC_ERR_FILE_UNEXPECTED, "%s %s: has no record %s (written by another kind of run?)",
             ck->option, ck->path, name);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CkptGet(Ckpt ck, const char name[], void *data, size_t n)
{
  size_t have;

  PetscFunctionBegin;
  PetscCall(GetNeeded(ck, name, &have));
  PetscCheck(have == n, ck->comm, PETSC_ERR_FILE_UNEXPECTED, "%s %s: record %s holds %zu bytes, this run expects %zu",
             ck->option, ck->path, name, have, n);
  if (ck->rank == 0 && n) memcpy(data, ck->buf + Find(ck, name)->off, n);
  for (size_t o = 0; o < n; o += (size_t)1 << 30) /* MPI counts are int */
    PetscCallMPI(MPI_Bcast((char *)data + o, (int)PetscMin(n - o, (size_t)1 << 30), MPI_BYTE, 0, ck->comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CkptGetVec(Ckpt ck, const char name[], DM da, Vec v)
{
  Vec          nat, seq;
  VecScatter   sc;
  PetscScalar *a;
  PetscInt     N;
  size_t       have;

  PetscFunctionBegin;
  PetscCall(VecGetSize(v, &N));
  PetscCall(GetNeeded(ck, name, &have));
  PetscCheck(have == (size_t)N * sizeof(PetscScalar), ck->comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s %s: field %s has %zu values, this run's grid has %" PetscInt_FMT, ck->option, ck->path, name,
             have / sizeof(PetscScalar), N);
  PetscCall(DMDACreateNaturalVector(da, &nat));
  PetscCall(VecScatterCreateToZero(nat, &sc, &seq));
  PetscCall(VecGetArray(seq, &a));
  if (ck->rank == 0) memcpy(a, ck->buf + Find(ck, name)->off, have);
  PetscCall(VecRestoreArray(seq, &a));
  PetscCall(VecScatterBegin(sc, seq, nat, INSERT_VALUES, SCATTER_REVERSE));
  PetscCall(VecScatterEnd(sc, seq, nat, INSERT_VALUES, SCATTER_REVERSE));
  PetscCall(DMDANaturalToGlobalBegin(da, nat, INSERT_VALUES, v));
  PetscCall(DMDANaturalToGlobalEnd(da, nat, INSERT_VALUES, v));
  PetscCall(VecScatterDestroy(&sc));
  PetscCall(VecDestroy(&seq));
  PetscCall(VecDestroy(&nat));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CkptClose(Ckpt *ck, PetscBool commit)
{
  Ckpt     c = *ck;
  int      err = 0;
  char     option[64], path[PETSC_MAX_PATH_LEN];
  MPI_Comm comm;

  PetscFunctionBegin;
  if (!c) PetscFunctionReturn(PETSC_SUCCESS);
  if (c->write && c->rank == 0) {
    if (commit && !c->werr) {
      uint64_t s = SumFinish(c);
      if (fwrite(&s, 1, sizeof s, c->af.fp) != sizeof s) c->werr = errno ? errno : EIO;
    }
    if (commit && !c->werr) err = afile_commit(&c->af);
    else {
      err = commit ? c->werr : 0;
      afile_discard(&c->af);
    }
    if (err) err = afile_diagnose(c->path, err);
  }
  free(c->buf);
  free(c->rec);
  PetscCall(PetscStrncpy(option, c->option, sizeof option));
  PetscCall(PetscStrncpy(path, c->path, sizeof path));
  comm = c->comm;
  if (c->write) PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  PetscCall(PetscFree(*ck));
  PetscCheck(!err, comm, PETSC_ERR_FILE_WRITE, "%s %s: writing the checkpoint failed (%s)", option, path,
             afile_strerror(err));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool      CkptIsWriting(Ckpt ck) { return ck->write; }
PetscErrorCode CkptData(Ckpt ck, const char name[], void *data, size_t n)
{
  return ck->write ? CkptPut(ck, name, data, n) : CkptGet(ck, name, data, n);
}
PetscErrorCode CkptVec(Ckpt ck, const char name[], DM da, Vec v)
{
  return ck->write ? CkptPutVec(ck, name, da, v) : CkptGetVec(ck, name, da, v);
}

const char *CkptPath(Ckpt ck) { return ck->path; }
const char *CkptOption(Ckpt ck) { return ck->option; }
