/* tests/cudaemu/test_emu_errors.c: the device backend's error paths, with the
 * emulation made to fail on purpose (issue 26).
 *   reason   (CUDAEMU_DEVICE_ERROR=35): no usable device, and the runtime's
 *            reason (driver too old) reaches the user's one line (C4).
 *   launch   (CUDAEMU_FAIL_LAUNCH=<kernel>): a refused launch of that kernel
 *            makes mlp_cuda_predict return the error, not stale
 *            predictions (C7).
 *   wide     a 3-6000-6000-1 network is created under a 2 GiB address-space
 *            limit: the host scratch is bounded by a call, not a layer (C1). */
#include "mlp_cuda.h"
#include "surrogate.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

int main(int argc, char **argv)
{
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
