/* tests/cudaemu/test_emu_errors.c: the device backend's error paths, with the
 * emulation made to fail on purpose (issue 26).
 *   reason   (CUDAEMU_DEVICE_ERROR=35): no usable device, and the runtime's
 *            reason (driver too old) reaches the user's one line (C4).
 *   launch   (CUDAEMU_FAIL_LAUNCH=<kernel>): a refused launch of that kernel
 *            makes mlp_cuda_predict return the error, not stale
 *            predictions (C7). */
#include "mlp_cuda.h"
#include "surrogate.h"

#include <stdio.h>
#include <string.h>

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
    mlp_cuda *m;
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
  fprintf(stderr, "usage: test_emu_errors reason|launch\n");
  return 2;
}
