/* kernels/spincount.h: a short OpenMP spin before waiting threads sleep.
 * GNU OpenMP threads spin about 300000 times (a few milliseconds) before they
 * sleep; on a shared machine (a laptop, a login node, CI) the spinning
 * threads take the cores the working ones need (docs/performance.md, "A
 * shared machine"). libgomp reads GOMP_SPINCOUNT when it is loaded, before
 * main, so the default is set by running the program again with
 * GOMP_SPINCOUNT=2000 (once: the variable is then set). Nothing happens when
 * the user set OMP_WAIT_POLICY, GOMP_SPINCOUNT or MINIAPP_NO_REEXEC, under
 * valgrind (which does not follow exec by default), or when /proc/self/exe is
 * not this program (ld.so ./prog, an emulator). libc only. */
#ifndef MINIAPP_KERNELS_SPINCOUNT_H
#define MINIAPP_KERNELS_SPINCOUNT_H

/* Call first thing in main(argc, argv) with main's own address; returns only
 * when it did not re-execute. */
void spincount_default(char **argv, void *main_addr);

#endif
