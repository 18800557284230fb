/* tests/cudaemu/test_emu_errors.c: the device backend's error paths, with the
 * emulation made to fail on purpose.
 *   reason   (CUDAEMU_DEVICE_ERROR=35): no usable device, and the runtime's
 *            reason (driver too old) reaches the user's one line (C4).
 *   launch   (CUDAEMU_FAIL_LAUNCH=<kernel>): a refused launch of that kernel
 *            makes mlp_cuda_predict return the error, not stale
 *            predictions (C7).
 *   wide     a 3-6000-6000-1 network is created under a 2 GiB address-space
 *            limit: the host scratch is bounded by a call, not a layer (C1).
 *   waits    the host's waits on the device in one reproducible train step
 *            (mlp_cuda_grad), counted by the emulation: each layer adds at
 *            most two (its rows' maxima down, its exponents up); a real
 *            device pays each in the step's fixed cost. */
#include "mlp_cuda.h"
#include "surrogate.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

unsigned long cudaemu_host_waits(void); /* emu.cpp */

static int keep_maxima(float *m, size_t n, int l, void *ctx) /* the rows' maxima are bounds of their own exponents */
{
  (void)m, (void)n, (void)l, (void)ctx;
  return 0;
}

/* The waits of one reproducible train step of a 3-8-...-8-2 network with
 * nlayer layers over n samples; ULONG_MAX on an error. */
static unsigned long step_waits(int nlayer, size_t n)
{
  long long dim[8];
  size_t    woff[8], boff[8], nparam = 0;
  dim[0] = 3, dim[nlayer] = 2;
  for (int l = 1; l < nlayer; l++) dim[l] = 8;
  for (int l = 0; l < nlayer; l++) woff[l] = nparam, boff[l] = nparam + (size_t)(dim[l] * dim[l + 1]), nparam = boff[l] + (size_t)dim[l + 1];
  float         *w = calloc(nparam, sizeof *w), *mo = calloc(nparam, sizeof *mo), *v = calloc(nparam, sizeof *v);
  float         *in = malloc(3 * n * sizeof *in), *tgt = malloc(2 * n * sizeof *tgt), norm[10] = {0, 0, 0, 1, 1, 1, 0, 0, 1, 1};
  red_partial_t *part = calloc(nparam + 1, sizeof *part);
  mlp_cuda      *m    = NULL;
  unsigned long  got  = ULONG_MAX;
  if (w && mo && v && in && tgt && part && !mlp_cuda_create(nlayer, dim, woff, boff, nparam, &m)) {
    for (size_t i = 0; i < nparam; i++) w[i] = 0.25f * (float)((i * 7) % 5) - 0.5f;
    for (size_t i = 0; i < 3 * n; i++) in[i] = (float)(i % 11) / 11;
    for (size_t i = 0; i < 2 * n; i++) tgt[i] = (float)(i % 5) / 5;
    if (!mlp_cuda_set_state(m, w, mo, v)) {
      unsigned long w0 = cudaemu_host_waits();
      if (!mlp_cuda_grad(m, RED_REPRODUCIBLE, n, in, tgt, norm, 1.0f, part, NULL, NULL, keep_maxima, NULL)) got = cudaemu_host_waits() - w0;
    }
  }
  if (m) mlp_cuda_destroy(m);
  free(w), free(mo), free(v), free(in), free(tgt), free(part);
  return got;
}

int main(int argc, char **argv)
{
  if (argc == 2 && !strcmp(argv[1], "waits")) {
    unsigned long w2 = step_waits(2, 5000), w4 = step_waits(4, 5000);
    if (w2 == ULONG_MAX || w4 == ULONG_MAX) {
      printf("FAIL: a train step returned an error\n");
      return 1;
    }
    printf("host waits in a reproducible train step: %lu with 2 layers, %lu with 4\n", w2, w4);
    if (w4 < w2 || w4 - w2 > 2 * 2) {
      printf("FAIL: %lu waits for the 2 more layers: more than two a layer (the rows' maxima down in one copy, the exponents up)\n", w4 - w2);
      return 1;
    }
    printf("ok: %lu a layer\n", (w4 - w2) / 2);
    return 0;
  }
  if (argc == 2 && !strcmp(argv[1], "reason")) {
    const char *why = SurrogateCUDAUnavailableReason();
    if (SurrogateCUDAAvailable() != 0 || !strstr(why, "insufficient")) {
      printf("FAIL: available %d, reason \"%s\": the runtime's reason is lost\n", SurrogateCUDAAvailable(), why);
      return 1;
    }
    printf("ok: %s\n", why);
    return 0;
  }
  if (argc == 2 && !strcmp(argv[1], "launch")) {
    long long dim[3] = {3, 4, 2};
    size_t    woff[2] = {0, 16}, boff[2] = {12, 24}, nparam = 26, n = 5;
    float     norm[10], in[15], out[10];
    mlp_cuda *m = NULL;
    int       rc;
    for (int i = 0; i < 10; i++) norm[i] = (i < 3 || (i >= 6 && i < 8)) ? 0.f : 1.f; /* mu_in, sd_in, mu_out, sd_out */
    for (int i = 0; i < 15; i++) in[i] = (float)i / 15;
    if ((rc = mlp_cuda_create(2, dim, woff, boff, nparam, &m))) {
      printf("FAIL: mlp_cuda_create: %s\n", mlp_cuda_error_string(rc));
      return 1;
    }
    rc = mlp_cuda_predict(m, n, in, norm, out);
    mlp_cuda_destroy(m);
    if (!rc) {
      printf("FAIL: a refused launch, yet mlp_cuda_predict returned 0 (stale predictions)\n");
      return 1;
    }
    printf("ok: mlp_cuda_predict returned \"%s\"\n", mlp_cuda_error_string(rc));
    return 0;
  }
  if (argc == 2 && !strcmp(argv[1], "wide")) {
    size_t        w = 6000;
    long long     dim[4] = {3, (long long)w, (long long)w, 1};
    size_t        woff[3] = {0, 4 * w, 4 * w + w * w + w}, boff[3] = {3 * w, 4 * w + w * w, 4 * w + w * w + w + w}, nparam = boff[2] + 1;
    struct rlimit as = {(rlim_t)2 << 30, (rlim_t)2 << 30};
    mlp_cuda     *m = NULL;
    int           rc;
    if (setrlimit(RLIMIT_AS, &as)) {
      printf("FAIL: setrlimit\n");
      return 1;
    }
    rc = mlp_cuda_create(3, dim, woff, boff, nparam, &m);
    mlp_cuda_destroy(m);
    if (rc) {
      printf("FAIL: a 3-%zu-%zu-1 network (%zu parameters) under 2 GiB of address space: %s\n", w, w, nparam, mlp_cuda_error_string(rc));
      return 1;
    }
    printf("ok: a 3-%zu-%zu-1 network created under 2 GiB of address space\n", w, w);
    return 0;
  }
  fprintf(stderr, "usage: test_emu_errors reason|launch|wide\n");
  return 2;
}
