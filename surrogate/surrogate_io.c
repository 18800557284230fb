/* surrogate/surrogate_io.c: checkpoints. One little-endian binary file: a fixed
 * header (magic, version, architecture, Adam step and beta powers), the
 * normalization statistics, weights, Adam moments, the reproducible gradient
 * sums' row exponents (version 2), then a 64-bit checksum of
 * everything before it. Floats are stored as their bits: the round trip is
 * bit-exact. Rank 0 reads and writes; writes go to a unique temporary that
 * is checked, synced and renamed (kernels/atomicfile.h), so neither a crash,
 * a full disk nor a concurrent writer leaves a bad checkpoint under the name. */
#include "surrogate_impl.h"
#include "optrange.h"
#include "atomicfile.h"
#include "hashrng.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SURR_MAGIC   "MLPSURR1"
#define SURR_VERSION 2u /* 2: the gradient sums' row exponents after the moments */

typedef struct {
  char     magic[8];
  uint32_t version, endian; /* endian = 0x01020304 as written by the host */
  uint32_t n_in, n_out, nlayer, have_norm;
  uint32_t dim[SURR_MAX_LAYERS + 1];
  uint32_t pad;
  uint64_t nparam;
  int64_t  step;
  float    beta1_t, beta2_t;
} SurrHeader;

static uint64_t checksum(const unsigned char *p, size_t n)
{
  uint64_t h = 0x243f6a8885a308d3ULL;
  for (size_t i = 0; i < n; i++) h = mix64(h ^ p[i]);
  return h;
}

/* 4-byte words: the statistics, weights and moments as float bits, then the
 * row exponents (int32) */
static size_t payload_floats(Surrogate s)
{
  return 2 * (size_t)s->n_in + 2 * (size_t)s->n_out + 3 * s->nparam + s->nurow;
}

static void arch_string(const uint32_t *dim, uint32_t nlayer, char *buf, size_t len)
{
  size_t o = 0;
  for (uint32_t l = 0; l <= nlayer && o < len; l++) o += (size_t)snprintf(buf + o, len - o, l ? "-%u" : "%u", dim[l]);
}

/* The checkpoint bytes (rank 0; other ranks get NULL, 0). */
PetscErrorCode SurrogateSerialize(Surrogate s, unsigned char **bufp, size_t *lenp)
{
  SurrHeader h;

  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
  PetscCall(SurrogateSyncHost_Private(s));
  *bufp = NULL, *lenp = 0;
  if (s->rank) PetscFunctionReturn(PETSC_SUCCESS);
  size_t         nf = payload_floats(s), bytes = sizeof h + nf * sizeof(float) + sizeof(uint64_t);
  unsigned char *buf;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, SURR_MAGIC, 8);
  h.version = SURR_VERSION, h.endian = 0x01020304u;
  h.n_in = (uint32_t)s->n_in, h.n_out = (uint32_t)s->n_out, h.nlayer = (uint32_t)s->nlayer,
  h.have_norm = (uint32_t)s->have_norm;
  for (int l = 0; l <= s->nlayer; l++) h.dim[l] = (uint32_t)s->dim[l];
  h.nparam = s->nparam, h.step = s->step, h.beta1_t = s->beta1_t, h.beta2_t = s->beta2_t;
  PetscCall(PetscMalloc1(bytes, &buf));
  float *f = (float *)(buf + sizeof h);
  memcpy(buf, &h, sizeof h);
  memcpy(f, s->mu_in, (size_t)s->n_in * sizeof(float)), f += s->n_in;
  memcpy(f, s->sd_in, (size_t)s->n_in * sizeof(float)), f += s->n_in;
  memcpy(f, s->mu_out, (size_t)s->n_out * sizeof(float)), f += s->n_out;
  memcpy(f, s->sd_out, (size_t)s->n_out * sizeof(float)), f += s->n_out;
  memcpy(f, s->w, s->nparam * sizeof(float)), f += s->nparam;
  memcpy(f, s->m, s->nparam * sizeof(float)), f += s->nparam;
  memcpy(f, s->v, s->nparam * sizeof(float)), f += s->nparam;
  memcpy(f, s->uexp, s->nurow * sizeof(int32_t));
  uint64_t ck = checksum(buf, bytes - sizeof ck);
  memcpy(buf + bytes - sizeof ck, &ck, sizeof ck);
  *bufp = buf, *lenp = bytes;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateSave(Surrogate s, const char path[])
{
  unsigned char *buf;
  size_t         bytes;
  int            status = 0;

  PetscFunctionBeginUser;
  PetscCall(SurrogateSerialize(s, &buf, &bytes));
  if (s->rank == 0) {
    afile af;
    int   create = afile_begin(&af, path, 1);
    if (create) status = -create; /* negative: creating failed; positive: writing */
    else {
      (void)fwrite(buf, 1, bytes, af.fp); /* a short write sets the stream's error, which the commit checks */
      status = afile_commit(&af);
    }
    PetscCall(PetscFree(buf));
  }
  PetscCallMPI(MPI_Bcast(&status, 1, MPI_INT, 0, s->comm));
  PetscCheck(status >= 0, s->comm, PETSC_ERR_FILE_OPEN, "SurrogateSave: cannot create a file next to %s (%s)", path,
             afile_strerror(-status));
  PetscCheck(status == 0, s->comm, PETSC_ERR_FILE_WRITE, "SurrogateSave: writing checkpoint %s failed (%s)", path,
             afile_strerror(status));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rank 0 reads the whole file; every rank gets the bytes (or the reason). */
static PetscErrorCode ReadAll(Surrogate s, const char path[], unsigned char **buf, size_t *len)
{
  long n = -1;

  PetscFunctionBeginUser;
  *buf = NULL;
  if (s->rank == 0) {
    struct stat st;
    FILE       *fp = NULL;
    if (!stat(path, &st) && !S_ISREG(st.st_mode)) n = -3; /* a directory "opens" and has a huge size */
    else fp = fopen(path, "rb");
    if (fp && !fseek(fp, 0, SEEK_END)) n = ftell(fp);
    if (fp && n >= 0) {
      rewind(fp);
      PetscCall(PetscMalloc1((size_t)n + 1, buf));
      if (fread(*buf, 1, (size_t)n, fp) != (size_t)n) n = -2;
    }
    if (fp) fclose(fp);
  }
  PetscCallMPI(MPI_Bcast(&n, 1, MPI_LONG, 0, s->comm));
  /* n: -1 the file cannot be opened, -2 reading it failed, -3 it is not a regular file */
  PetscCheck(n >= 0, s->comm, n == -2 ? PETSC_ERR_FILE_READ : PETSC_ERR_FILE_OPEN, "SurrogateLoad: %scheckpoint %s%s",
             n == -1 ? "cannot open " : n == -2 ? "reading " : "", path,
             n == -2 ? " failed" : n == -3 ? " is not a regular file" : "");
  if (s->rank != 0) PetscCall(PetscMalloc1((size_t)n + 1, buf));
  PetscCallMPI(MPI_Bcast(*buf, (int)n, MPI_BYTE, 0, s->comm));
  *len = (size_t)n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* What is wrong with checkpoint bytes for this surrogate, in one line after
 * `what` (NULL when nothing is): their header, architecture, length and
 * checksum, in that order. */
static const char *Problem(Surrogate s, const unsigned char *buf, size_t len, const char what[], SurrHeader *h,
                           char *msg, size_t n)
{
  char     have[128], want[128];
  size_t   expect;
  uint64_t ck;
  uint32_t d[SURR_MAX_LAYERS + 1];
  int      same;

  if (len < sizeof *h) return opt_say(msg, n, "%s is truncated (%zu bytes, shorter than its header)", what, len);
  memcpy(h, buf, sizeof *h);
  if (memcmp(h->magic, SURR_MAGIC, 8)) return opt_say(msg, n, "%s is not a surrogate checkpoint (bad magic)", what);
  if (h->endian != 0x01020304u || (h->version != SURR_VERSION && h->version != 1u))
    return opt_say(msg, n, "%s has version %u (this build reads 1 and %u) or foreign byte order", what, h->version,
               SURR_VERSION);
  if (h->nlayer < 1 || h->nlayer > SURR_MAX_LAYERS)
    return opt_say(msg, n, "%s has a corrupt header (%u layers)", what, h->nlayer);
  same = h->nlayer == (uint32_t)s->nlayer && h->nparam == s->nparam;
  for (int l = 0; l <= s->nlayer; l++) d[l] = (uint32_t)s->dim[l], same = same && h->dim[l] == d[l];
  if (!same) {
    arch_string(h->dim, h->nlayer, have, sizeof have);
    arch_string(d, (uint32_t)s->nlayer, want, sizeof want);
    return opt_say(msg, n, "%s holds an MLP %s, this surrogate is %s (check -surrogate_layers and the sizes)", what,
               have, want);
  }
  /* version 1: no row exponents */
  expect = sizeof *h + (payload_floats(s) - (h->version == 1u ? s->nurow : 0)) * sizeof(float) + sizeof ck;
  if (len < expect) return opt_say(msg, n, "%s is truncated (%zu bytes, expected %zu)", what, len, expect);
  if (len > expect) return opt_say(msg, n, "%s has %zu trailing bytes", what, len - expect);
  memcpy(&ck, buf + expect - sizeof ck, sizeof ck);
  if (ck != checksum(buf, expect - sizeof ck)) return opt_say(msg, n, "%s is corrupt (checksum mismatch)", what);
  return NULL;
}

/* Restore from checkpoint bytes (the same on every rank); what names them in
 * messages, e.g. "SurrogateLoad: checkpoint ck.bin". */
PetscErrorCode SurrogateDeserialize(Surrogate s, const unsigned char *buf, size_t len, const char what[])
{
  SurrHeader  h;
  char        msg[512];
  const char *bad;

  PetscFunctionBeginUser;
  if (!s->setup) PetscCall(SurrogateSetUp(s));
  bad = Problem(s, buf, len, what, &h, msg, sizeof msg);
  PetscCheck(!bad, s->comm, PETSC_ERR_FILE_UNEXPECTED, "%s", bad);
  const unsigned char *f = buf + sizeof h;
#define TAKE(dst, cnt) (memcpy((dst), f, (size_t)(cnt) * sizeof(float)), f += (size_t)(cnt) * sizeof(float))
  TAKE(s->mu_in, s->n_in), TAKE(s->sd_in, s->n_in), TAKE(s->mu_out, s->n_out), TAKE(s->sd_out, s->n_out);
  TAKE(s->w, s->nparam), TAKE(s->m, s->nparam), TAKE(s->v, s->nparam);
  if (h.version == 1u) /* written before the exponents were state: the next train step renews them all */
    for (size_t r = 0; r < s->nurow; r++) s->uexp[r] = GSUM_ZERO;
  else TAKE(s->uexp, s->nurow);
#undef TAKE
  s->have_norm = h.have_norm ? PETSC_TRUE : PETSC_FALSE;
  s->step = h.step, s->beta1_t = h.beta1_t, s->beta2_t = h.beta2_t;
  s->host_stale = PETSC_FALSE;
  if (s->ops->push) PetscCall(s->ops->push(s));
  s->ck.encoded = PETSC_FALSE; /* ABFT checks: re-encoded before the next step */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateLoad(Surrogate s, const char path[])
{
  unsigned char *buf;
  size_t         len = 0;
  char           what[PETSC_MAX_PATH_LEN + 64];
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  PetscCall(ReadAll(s, path, &buf, &len));
  PetscCall(PetscSNPrintf(what, sizeof what, "SurrogateLoad: checkpoint %s", path));
  ierr = SurrogateDeserialize(s, buf, len, what);
  PetscCall(PetscFree(buf));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}
