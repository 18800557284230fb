/* kernels/blasthreads.h: one BLAS thread per rank, whichever BLAS the
 * process has. PETSc's vector kernels call BLAS-1, whose own threads would
 * fight this app's OpenMP threads; the thread count is set through the BLAS's
 * own call, looked up at run time (dlsym), so that no BLAS is needed to
 * build: PETSc built on OpenBLAS, BLIS or MKL all work, and a BLAS without
 * such a call is left alone. Returns the BLAS found ("openblas", "blis",
 * "mkl") or "unknown". Header-only; needs dlsym (glibc >= 2.34: libc). */
#ifndef KERNELS_BLASTHREADS_H
#define KERNELS_BLASTHREADS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>

static inline const char *blas_threads_one(void)
{
  void *f;
  if ((f = dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) {
    ((void (*)(int))f)(1);
    return "openblas";
  }
  if ((f = dlsym(RTLD_DEFAULT, "bli_thread_set_num_threads"))) {
    ((void (*)(long))f)(1);
    return "blis";
  }
  if ((f = dlsym(RTLD_DEFAULT, "MKL_Set_Num_Threads"))) {
    ((void (*)(int))f)(1);
    return "mkl";
  }
  return "unknown";
}

#endif
