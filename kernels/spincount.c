/* kernels/spincount.c: see spincount.h. */
#define _GNU_SOURCE
#include "spincount.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

void spincount_default(char **argv, void *main_addr)
{
  const char *pre = getenv("LD_PRELOAD");
  struct stat self, prog;
  Dl_info     info;

  if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT") || getenv("MINIAPP_NO_REEXEC")) return;
  if (pre && strstr(pre, "vgpreload")) return; /* valgrind does not follow exec by default: stay where it watches */
  /* only when /proc/self/exe is this program (not ld.so ./prog, not an emulator) */
  const char *path = dladdr(main_addr, &info) && info.dli_fname && info.dli_fname[0] ? info.dli_fname
                   : strchr(argv[0], '/')                                            ? argv[0]
                                          : (const char *)getauxval(AT_EXECFN);
  if (!path || stat("/proc/self/exe", &self) || stat(path, &prog) || self.st_dev != prog.st_dev ||
      self.st_ino != prog.st_ino)
    return;
  if (setenv("GOMP_SPINCOUNT", "2000", 0)) return;
  execv("/proc/self/exe", argv); /* returns only on failure: */
  unsetenv("GOMP_SPINCOUNT");    /* go on with the defaults, and say so in the environment */
}
