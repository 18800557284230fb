/* miniapp/loop/restart_keys.c: what a restart must agree on with the run that
 * wrote its checkpoint, and the settings in effect that the run file writes
 * (CoupledSettings). Not the checkpoint's file format (solver/ckpt.c) nor
 * its records of state (checkpoint.c). */
#include "coupling_impl.h"
#include "report.h"
#include "freeopts.h"
#include "settings.h"
#include "vecred.h"

#include <stdlib.h>
#include <string.h>

/* The halves a run uses: the solver's always, the network's only where there is
 * one (-coupling none has none, and a mixed build's network half then decides
 * nothing about restarts or replicas). */
static PetscBool RunUses(Coupled c, const char *strategy)
{
  return (PetscBool)(!strcmp(VecFPNACompiledStrategy(), strategy) ||
                     (c->rep[0].net && !strcmp(SurrogateGetStrategyName(), strategy)));
}

/* No half the run uses adds in completion order: replicas must agree bitwise,
 * the atomic order's seed steers nothing. */
PetscBool RunOrdered(Coupled c) { return (PetscBool)!RunUses(c, "atomic"); }

/* The run's bits do not depend on the layout: every half it uses is reproducible, the solver's through the
 * switch (-solver_stock_vec: PETSc's own reductions, whose bits depend on the ranks). */
PetscBool RunLayoutFree(Coupled c)
{
  PetscBool stock = PETSC_FALSE;
  if (c->rep[0].solver) (void)SolverUsesStockVectors(c->rep[0].solver, &stock);
  return (PetscBool)(!stock && !RunUses(c, "atomic") && !RunUses(c, "deterministic"));
}

/* What a restart must agree on, stored as its own record of length-prefixed
 * (key, value) pairs (never parsed out of free text, so no value can forge
 * another key): the run's effective settings (Describe: build strategies,
 * scenario, grid and physics, Krylov method and tolerances, coupling,
 * replicas, seeds, network and optimizer), and every option in the database
 * as given ("-name" keys), except those that only steer output,
 * verification or where the run executes (RestartFree). */

/* Options a restart may change: they do not touch the run's arithmetic. */
static PetscBool RestartFree(Coupled c, const char *name)
{
  if (!strcmp(name, "-atomic_order_seed") && RunOrdered(c)) return PETSC_TRUE; /* it steers nothing in this run */
  /* placement: the same bits on any split */
  if ((!strcmp(name, "-da_processors_x") || !strcmp(name, "-da_processors_y")) && RunLayoutFree(c)) return PETSC_TRUE;
  return (PetscBool)option_free(name, FREE_RESTART);
}

/* Options whose whole effect is a described setting (settings.h): their
 * text as given is not compared, the setting's value in effect is. */
static PetscBool RestartDescribed(const char *name) { return (PetscBool)(described_setting(name) != NULL); }

static PetscErrorCode KeysAppend(RestartKeys *k, const char *s, size_t len)
{
  uint32_t l = (uint32_t)len;

  PetscFunctionBegin;
  if (k->n + 4 + len > k->cap) {
    size_t cap = 2 * (k->cap + 4 + len);
    char  *b;
    PetscCall(PetscMalloc1(cap, &b));
    if (k->n) PetscCall(PetscArraycpy(b, k->b, k->n));
    PetscCall(PetscFree(k->b));
    k->b = b, k->cap = cap;
  }
  memcpy(k->b + k->n, &l, 4);
  memcpy(k->b + k->n + 4, s, len);
  k->n += 4 + len;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KeysAdd(RestartKeys *k, const char *key, const char *val)
{
  PetscFunctionBegin;
  PetscCall(KeysAppend(k, key, strlen(key)));
  PetscCall(KeysAppend(k, val, strlen(val)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The i-th (from *pos) length-prefixed string of b[0..n): 0 at the end, -1 if corrupt. */
static int KeysNext(const char *b, size_t n, size_t *pos, const char **s, size_t *len)
{
  uint32_t l;
  if (*pos == n) return 0;
  if (n - *pos < 4) return -1;
  memcpy(&l, b + *pos, 4);
  if (n - *pos - 4 < l) return -1;
  *s = b + *pos + 4, *len = l, *pos += 4 + (size_t)l;
  return 1;
}

/* The value of key in a keys record; found: 0 absent, 1 present, -1 corrupt. */
void RestartKeysFind(const char *b, size_t n, const char *key, const char **val, size_t *vlen, int *found)
{
  size_t      pos = 0, kl;
  const char *k;
  int         st;

  *found = 0;
  while ((st = KeysNext(b, n, &pos, &k, &kl)) == 1) {
    if (KeysNext(b, n, &pos, val, vlen) != 1) break;
    if (kl == strlen(key) && !memcmp(k, key, kl)) {
      *found = 1;
      return;
    }
  }
  if (st) *found = -1;
}

/* The settings in effect that decide the run's arithmetic, as "key: value"
 * lines (numbers and registered names only): the solver's, the coupling's,
 * the network's; the rank count where the bits depend on the layout. A
 * restart must agree on them (RestartKeysBuild); the run file holds them as its
 * `settings` attribute (miniapp-compare). */
PetscErrorCode CoupledSettings(Coupled c, char desc[], size_t len)
{
  size_t    n;
  PetscBool atomic = !RunOrdered(c); /* the seed steers only an atomic half: no key in a run without one */

  PetscFunctionBegin;
  desc[0] = 0;
  PetscCall(SolverDescribe(c->rep[0].solver, desc, len));
  n = strlen(desc);
  PetscCall(PetscSNPrintf(desc + n, len - n,
                          "surrogate_build: %s\ncoupling: %s\nreplicas: %" PetscInt_FMT
                          "\natomic_order_seed: %llu\ntrain: %" PetscInt_FMT " %" PetscInt_FMT "\n",
                          SurrogateGetStrategyName(), CouplingModeNames[c->mode], c->nrep,
                          atomic ? (unsigned long long)c->base_order.seed : 0ull, c->train_every, c->train_epochs));
  n = strlen(desc);
  if (c->mode == COUPLING_GUESS)
    PetscCall(PetscSNPrintf(desc + n, len - n,
                            "guess: %s\nguess_history: %" PetscInt_FMT
                            "\nguess_projection: %d\ncoupling_baselines: %d\n",
                            ncout_guess_names[c->guess], c->history, (int)c->projection, (int)c->baselines));
  if (c->mode == COUPLING_CLOSURE)
    PetscCall(
      PetscSNPrintf(desc + n, len - n, "closure: %" PetscInt_FMT " %.17g\n", c->warmup, (double)c->closure_tol));
  if (c->rep[0].net) PetscCall(SurrogateDescribe(c->rep[0].net, desc, len));
  if (!RunLayoutFree(c)) { /* the bits of this run depend on the layout */
    n = strlen(desc);
    PetscCall(PetscSNPrintf(desc + n, len - n, "mpi_ranks: %d\n", (int)c->size));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The run's keys: its step, the effective settings, the options as given. */
PetscErrorCode RestartKeysBuild(Coupled c, RestartKeys *k)
{
  char      desc[4096], *all, *tok, *save = NULL, *name = NULL, val[4096];
  PetscInt  step;
  PetscBool key;

  PetscFunctionBegin;
  PetscCall(SolverGetStep(c->rep[0].solver, &step, NULL, NULL, NULL));
  PetscCall(PetscSNPrintf(val, sizeof val, "%" PetscInt_FMT, step));
  PetscCall(KeysAdd(k, "step", val));
  desc[0] = 0;
  PetscCall(CoupledSettings(c, desc, sizeof desc));
  for (char *line = desc, *end; *line;
       line       = end + 1) { /* our own "key: value" lines: numbers and registered names only */
    char *colon = strstr(line, ": ");
    end         = strchr(line, '\n');
    if (!end || !colon || colon > end) break;
    *colon = 0, *end = 0;
    PetscCall(KeysAdd(k, line, colon + 2));
  }
  PetscCall(PetscOptionsGetAll(NULL, &all)); /* "-name value -name -name value ...": values joined by spaces */
  val[0] = 0;
  for (tok = strtok_r(all, " ", &save);; tok = strtok_r(NULL, " ", &save)) {
    key = PETSC_FALSE;
    if (tok) PetscCall(PetscOptionsValidKey(tok, &key));
    if ((key || !tok) && name) {
      if (!RestartFree(c, name) && !RestartDescribed(name)) PetscCall(KeysAdd(k, name, val));
      name = NULL;
    }
    if (!tok) break;
    if (key) name = tok, val[0] = 0;
    else if (name) {
      size_t n = strlen(val);
      PetscCall(PetscSNPrintf(val + n, sizeof val - n, "%s%s", n ? " " : "", tok));
    }
  }
  PetscCall(PetscFree(all));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A value for a one-line message: newlines and other controls escaped. */
static void Printable(const char *v, size_t n, char *out, size_t len)
{
  size_t j = 0;
  for (size_t i = 0; i < n && j + 5 < len; i++) {
    unsigned char ch = (unsigned char)v[i];
    if (ch >= 32 && ch != 127) out[j++] = (char)ch;
    else j += (size_t)snprintf(out + j, len - j, "\\x%02x", ch);
  }
  out[j] = 0;
}

/* "key value", "-name value", "-name" (given without a value) or "no -name". */
static void Phrase(const char *key, const char *v, size_t vl, PetscBool present, char *out, size_t len)
{
  char p[512];
  Printable(v, present ? vl : 0, p, sizeof p);
  if (!present) snprintf(out, len, "no %s", key);
  else snprintf(out, len, "%s%s%s", key, p[0] ? " " : "", p);
}

/* Every key of either run must have the same value in both (step aside). */
PetscErrorCode RestartKeysCompare(Coupled c, const char *option, const char *path, const RestartKeys *mine,
                                  const char *theirs, size_t tn)
{
  int corrupt = 0; /* a key without its value, or a record KeysNext cannot read */

  for (int pass = 0; pass < 2 && !corrupt; pass++) { /* mine against theirs, then keys only theirs has */
    const char *b = pass ? theirs : mine->b, *o = pass ? mine->b : theirs;
    size_t      n = pass ? tn : mine->n, on = pass ? mine->n : tn, pos = 0, kl, vl, ol;
    const char *k, *v, *ov;
    int         st, found;
    while (!corrupt && (st = KeysNext(b, n, &pos, &k, &kl)) == 1) {
      char key[256], a[800], m[800];
      if ((corrupt = KeysNext(b, n, &pos, &v, &vl) != 1) || kl >= sizeof key) continue;
      memcpy(key, k, kl), key[kl] = 0;
      /* described: a file written before this rule holds them as given */
      if (!strcmp(key, "step") || RestartDescribed(key)) continue;
      RestartKeysFind(o, on, key, &ov, &ol, &found);
      if ((corrupt = found < 0) || (found && ol == vl && !memcmp(ov, v, vl))) continue;
      if (pass && found) continue; /* a different value: the first pass named it */
      Phrase(key, pass ? v : ov, pass ? vl : ol, pass || found, a, sizeof a); /* the checkpoint's */
      Phrase(key, v, vl, !pass, m, sizeof m);                                /* this run's */
      SETERRQ(c->comm, PETSC_ERR_ARG_INCOMP,
              "%s %s: the checkpoint was written with %s, this run has %s (restart with the options and build that "
              "wrote it; only output, verification and placement options may change)",
              option, path, a, m);
    }
    corrupt = corrupt || st != 0;
  }
  PetscCheck(!corrupt, c->comm, PETSC_ERR_FILE_UNEXPECTED, "%s %s: corrupt keys record", option, path);
  return PETSC_SUCCESS;
}
