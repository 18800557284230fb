/* miniapp/cli/optdecl.h: the declared options (optdecl.c), private to the
 * strict options (optstrict.c). */
#ifndef MINIAPP_OPTDECL_H
#define MINIAPP_OPTDECL_H

#include "optstrict.h"

#include <stddef.h>

typedef enum { T_INT, T_INTS, T_REAL, T_REALS, T_BOOL, T_CHOICE, T_TEXT } OptType;

/* names: blank-separated, without the dash; a choice may list its words
 * after '=' for the message. prefixed: also read as <prefix>name. */
typedef struct {
  unsigned    groups;
  PetscBool   prefixed;
  OptType     type;
  const char *names;
} OptDecl;

extern const OptDecl opt_decl[];
extern const size_t  opt_ndecl;

#endif
