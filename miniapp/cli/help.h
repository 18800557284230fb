/* miniapp/cli/help.h: -help with the mini-app's own options first (help.c). */
#ifndef MINIAPP_HELP_H
#define MINIAPP_HELP_H

#include <petscsys.h>

void HelpCapture(void);       /* before PetscInitialize: keep PETSc's help text */
void HelpCaptureStdout(void); /* after it, with -help: and what PETSc prints to stdout */
void HelpFlush(void);   /* print it, ours first; later help lines print directly */

#endif
