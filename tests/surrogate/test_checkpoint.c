/* tests/surrogate/test_checkpoint.c: checkpoint round trip and error paths.
 * All builds: save -> load -> save gives byte-identical files and identical
 * weights; truncated, corrupt, missing and mismatched files fail with a clear
 * message. Deterministic and reproducible builds also: 5 steps + save + load +
 * 5 steps gives the same weights bits, and the same checkpoint bytes, as 10
 * uninterrupted steps. */
#include "surr_test.h"
#include "hashrng.h"

#include <unistd.h>

static int same_file(const char *a, const char *b)
{
  FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
  int   ok = fa && fb, ca, cb;
  while (ok && ((ca = fgetc(fa)) != EOF) | ((cb = fgetc(fb)) != EOF)) ok = ca == cb;
  if (fa) fclose(fa);
  if (fb) fclose(fb);
  return ok;
}

static void copy_prefix(const char *src, const char *dst, long nbytes, long flip)
{
  FILE *fi = fopen(src, "rb"), *fo = fopen(dst, "wb");
  for (long i = 0; fi && fo && (nbytes < 0 || i < nbytes); i++) {
    int c = fgetc(fi);
    if (c == EOF) break;
    fputc(i == flip ? c ^ 1 : c, fo);
  }
  if (fi) fclose(fi);
  if (fo) fclose(fo);
}

/* The version-1 file of a version-2 checkpoint (written before the gradient
 * sums' row exponents were state): header version 1, without the trailing
 * int32 exponent per row (sum of dim[l+1] + dim[l]), checksum recomputed. */
static int make_v1(const char *src, const char *dst)
{
  FILE          *f = fopen(src, "rb");
  unsigned char  buf[1 << 16];
  size_t         n = f ? fread(buf, 1, sizeof buf, f) : 0;
  uint32_t       nlayer, dim[17], one = 1, rows = 0;
  if (f) fclose(f);
  if (n < 200 || n == sizeof buf) return 1;
  memcpy(&nlayer, buf + 24, 4), memcpy(dim, buf + 32, sizeof dim);
  for (uint32_t l = 0; l < nlayer && l < 16; l++) rows += dim[l + 1] + dim[l];
  size_t body = n - 8 - 4 * (size_t)rows;
  memcpy(buf + 8, &one, 4);
  uint64_t h = 0x243f6a8885a308d3ULL; /* surrogate_io.c's checksum */
  for (size_t i = 0; i < body; i++) h = mix64(h ^ buf[i]);
  memcpy(buf + body, &h, 8);
  f = fopen(dst, "wb");
  if (!f) return 1;
  int bad = fwrite(buf, 1, body + 8, f) != body + 8;
  return fclose(f) || bad;
}

/* Load path into a fresh heat surrogate with `nh` hidden layers of width wdt
 * (0: from options); return the error's message in msg ("" on success). */
static PetscErrorCode try_load(const char *path, PetscInt wdt, char *msg, size_t len)
{
  Surrogate      s;
  PetscErrorCode ierr;
  char          *specific = NULL;

  PetscFunctionBeginUser;
  PetscCall(SurrogateCreate(PETSC_COMM_SELF, &s));
  PetscCall(SurrogateSetSizes(s, HEAT_NIN, HEAT_NOUT));
  PetscCall(SurrogateSetFromOptions(s));
  if (wdt) PetscCall(SurrogateSetHiddenLayers(s, 1, &wdt));
  PetscCall(SurrogateSetUp(s));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = SurrogateLoad(s, path);
  PetscCall(PetscPopErrorHandler());
  msg[0] = 0;
  if (ierr) {
    PetscErrorMessage(ierr, NULL, &specific);
    snprintf(msg, len, "%s", specific ? specific : "(no message)");
  }
  PetscCall(SurrogateDestroy(&s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Surrogate a, b, c;
  PetscInt  n = 2048, np;
  float    *in, *tgt, *wa, *wb, la, lb, lc;
  uint64_t  hb, hc;
  char      f1[64], f2[64], f3[64], msg[512];
  int       failures = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  snprintf(f1, sizeof f1, "surr_ckpt_%d_a.bin", (int)getpid());
  snprintf(f2, sizeof f2, "surr_ckpt_%d_b.bin", (int)getpid());
  snprintf(f3, sizeof f3, "surr_ckpt_%d_c.bin", (int)getpid());
  PetscCall(PetscMalloc2(n * HEAT_NIN, &in, n, &tgt));
  heat_samples(7, 0, (size_t)n, 0.2f, in, tgt);

  PetscCall(heat_surrogate(PETSC_COMM_SELF, &a));
  PetscCall(train_steps(a, 5, n, in, tgt, &la));
  PetscCall(SurrogateSave(a, f1));
  PetscCall(heat_surrogate(PETSC_COMM_SELF, &b));
  PetscCall(SurrogateLoad(b, f1));
  PetscCall(SurrogateSave(b, f2));
  CHECK(same_file(f1, f2), "save(load(save(state))) differs from save(state)");
  PetscCall(SurrogateGetNumWeights(a, &np));
  PetscCall(PetscMalloc2(np, &wa, np, &wb));
  PetscCall(SurrogateGetWeights(a, wa, np));
  PetscCall(SurrogateGetWeights(b, wb, np));
  CHECK(count_diff_bits((size_t)np, wa, wb) == 0, "loaded weights differ from saved ones");

  /* resumed (b: 5 + load + 5) vs uninterrupted (c: 10) */
  PetscCall(train_steps(b, 5, n, in, tgt, &lb));
  PetscCall(heat_surrogate(PETSC_COMM_SELF, &c));
  PetscCall(train_steps(c, 10, n, in, tgt, &lc));
  PetscCall(SurrogateGetWeightsHash(b, &hb));
  PetscCall(SurrogateGetWeightsHash(c, &hc));
  printf("resumed: hash %016llx loss %.9e; uninterrupted: hash %016llx loss %.9e\n", (unsigned long long)hb, (double)lb, (unsigned long long)hc, (double)lc);
#if defined(MINIAPP_SURROGATE_REDUCTION_ATOMIC)
  printf("atomic build: resumed == uninterrupted is not promised (not asserted)\n");
#else
  CHECK(hb == hc && lb == lc, "resumed training differs from uninterrupted training (%s build)", SurrogateGetStrategyName());
  /* the whole state, not only the weights: the moments and the gradient sums' row exponents too (a resumed
   * reproducible run that started its exponents afresh kept the weights' bits here but not the exponents) */
  PetscCall(SurrogateSave(b, f2));
  PetscCall(SurrogateSave(c, f3));
  CHECK(same_file(f2, f3), "the resumed surrogate's checkpoint differs from the uninterrupted one's (%s build)", SurrogateGetStrategyName());
#endif
  { /* a gradient without a step changes no state: on data 2^12 larger, whose rows leave their exponents' window (it renewed them) */
    float *big, *bigt;
    PetscCall(PetscMalloc2(n * HEAT_NIN, &big, n, &bigt));
    for (PetscInt i = 0; i < n * HEAT_NIN; i++) big[i] = in[i] * 4096.0f;
    for (PetscInt i = 0; i < n; i++) bigt[i] = tgt[i] * 4096.0f;
    PetscCall(SurrogateSave(c, f2));
    PetscCall(SurrogateComputeGradient(c, n, big, bigt, NULL, NULL));
    PetscCall(SurrogateSave(c, f3));
    CHECK(same_file(f2, f3), "SurrogateComputeGradient changed the surrogate's checkpoint (%s build)", SurrogateGetStrategyName());
    PetscCall(PetscFree2(big, bigt));
  }

  /* error paths: each must fail with a message that names the problem */
  PetscCall(SurrogateSave(a, f1));
  for (int cut = 0; cut < 2; cut++) { /* inside the header, inside the payload */
    copy_prefix(f1, f3, cut ? 1000 : 100, -1);
    PetscCall(try_load(f3, 0, msg, sizeof msg));
    printf("truncated: %s\n", msg);
    CHECK(strstr(msg, "truncated") != NULL, "truncated checkpoint not reported as such: '%s'", msg);
  }
  copy_prefix(f1, f3, -1, 200);
  PetscCall(try_load(f3, 0, msg, sizeof msg));
  printf("corrupt: %s\n", msg);
  CHECK(strstr(msg, "checksum") != NULL, "corrupt checkpoint not reported: '%s'", msg);
  PetscCall(try_load("surr_ckpt_does_not_exist.bin", 0, msg, sizeof msg));
  printf("missing: %s\n", msg);
  CHECK(strstr(msg, "cannot open") != NULL, "missing checkpoint not reported: '%s'", msg);
  PetscCall(try_load(f1, 7, msg, sizeof msg));
  printf("mismatch: %s\n", msg);
  CHECK(strstr(msg, "5-7-1") != NULL, "architecture mismatch not reported: '%s'", msg);
  PetscCall(try_load(f1, 0, msg, sizeof msg));
  CHECK(msg[0] == 0, "a good checkpoint failed to load: '%s'", msg);
  /* a version-1 file (from before the row exponents were saved) loads: the same weights; the exponents start afresh */
  CHECK(make_v1(f1, f3) == 0, "could not write a version-1 file");
  PetscCall(try_load(f3, 0, msg, sizeof msg));
  printf("version 1: %s\n", msg[0] ? msg : "loaded");
  CHECK(msg[0] == 0, "a version-1 checkpoint failed to load: '%s'", msg);
  {
    Surrogate v;
    float    *wv;
    PetscCall(heat_surrogate(PETSC_COMM_SELF, &v));
    PetscCall(SurrogateLoad(v, f3));
    PetscCall(PetscMalloc1(np, &wv));
    PetscCall(SurrogateGetWeights(v, wv, np));
    CHECK(count_diff_bits((size_t)np, wa, wv) == 0, "the version-1 file's weights differ from the saved ones");
    PetscCall(PetscFree(wv));
    PetscCall(SurrogateDestroy(&v));
  }

  remove(f1), remove(f2), remove(f3);
  PetscCall(PetscFree2(wa, wb));
  PetscCall(PetscFree2(in, tgt));
  PetscCall(SurrogateDestroy(&a));
  PetscCall(SurrogateDestroy(&b));
  PetscCall(SurrogateDestroy(&c));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
