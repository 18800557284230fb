/* solver/guess.c: initial guesses for the coming step's system A x = b from a
 * space of directions: the last m solution increments d_j = u^{j+1} - u^j
 * (kept with A d_j and their Gram matrix), the current state u itself,
 * the direction to Fischer's guess (below), and one extra direction the
 * caller brings (e.g. a network's
 * correction). The guess is the point of u + span(directions) closest to
 * the solution in the energy norm (A is SPD):
 *   x0 = u + V a,  (V^T A V) a = V^T (b - A u),
 * so it never starts further from the solution, in that norm, than any
 * guess inside the same space (u, the extrapolation u + d_n, Fischer's
 * guess, the caller's u + z). Every dot product goes through the solver's
 * Vec type, hence the switch; the small system is solved on every rank by
 * the same fixed-order code, so in the reproducible build the guess has the
 * same bits on any layout. Knows nothing of the network.
 *
 * Fischer's guess (P. F. Fischer, Comput. Methods Appl. Mech. Engrg. 163,
 * 1998; "model 1" of PETSc's KSPGUESSFISCHER): the space of the last
 * solutions, kept as x~_i with b~_i = A x~_i orthonormal; the guess for b is
 * sum_i (b~_i . b) x~_i, the point of the space whose residual is smallest.
 * After each solve the new solution's part outside the space joins it; when
 * FISCHER_MAX are held the space restarts from the newest solution alone.
 * It is written here rather than taken from PETSc so that its basis can be
 * checkpointed (GuessSpaceCheckpoint) and a restarted run go on
 * with the same bits. Before any solution is stored it guesses u itself. */
#include "solver_impl.h"
#include "ckpt.h"

#define GUESS_MAX_HIST 32
#define GUESS_MAX_DIRS (GUESS_MAX_HIST + 3)
#define FISCHER_MAX    10 /* solutions in Fischer's space (PETSc's default for model 1) */

struct _p_GuessSpace {
  Solver      s;
  PetscInt    m, n, head;                /* capacity, stored, ring slot of the newest */
  Vec        *d, *Ad;                    /* ring of increments and A d */
  PetscScalar G[GUESS_MAX_HIST][GUESS_MAX_HIST]; /* d_i^T A d_j by ring slot */
  /* Fischer: nf basis pairs; xf is its guess for the system of step fischer_step */
  PetscInt    nf;
  Vec         xt[FISCHER_MAX], bt[FISCHER_MAX];
  PetscScalar alpha[FISCHER_MAX];
  /* per-step cache, valid while cache_step == step */
  PetscInt    cache_step, fischer_step;
  Vec         Au, r, xf, Av;
};

PetscInt GuessSpaceVectorCount(PetscInt m) { return 2 * m + 4 + 2 * FISCHER_MAX; } /* d, Ad; Au, r, Av, xf; xt, bt */

PetscErrorCode GuessSpaceCreate(Solver s, PetscInt m, GuessSpace *g)
{
  PetscFunctionBegin;
  PetscCall(SolverCheckSetUp(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
  {
    const opt_range r = {"-guess_history", m, 0, GUESS_MAX_HIST, OPT_INT, NULL};
    PetscCall(SolverCheckRanges(s, &r, 1));
  }
  PetscCall(PetscNew(g));
  (*g)->s = s, (*g)->m = m, (*g)->cache_step = -1;
  /* one by one into zeroed arrays: a Duplicate that fails (out of memory)
   * leaves NULLs, which GuessSpaceDestroy skips (VecDuplicateVecs leaves
   * uninitialized entries, and destroying them crashed) */
  PetscCall(PetscCalloc1(m, &(*g)->d));
  PetscCall(PetscCalloc1(m, &(*g)->Ad));
  for (PetscInt i = 0; i < m; i++) PetscCall(VecDuplicate(s->u, &(*g)->d[i]));
  for (PetscInt i = 0; i < m; i++) PetscCall(VecDuplicate(s->u, &(*g)->Ad[i]));
  PetscCall(VecDuplicate(s->u, &(*g)->Au));
  PetscCall(VecDuplicate(s->u, &(*g)->r));
  PetscCall(VecDuplicate(s->u, &(*g)->Av));
  PetscCall(VecDuplicate(s->u, &(*g)->xf));
  for (int i = 0; i < FISCHER_MAX; i++) PetscCall(VecDuplicate(s->u, &(*g)->xt[i]));
  for (int i = 0; i < FISCHER_MAX; i++) PetscCall(VecDuplicate(s->u, &(*g)->bt[i]));
  (*g)->fischer_step = -1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GuessSpaceDestroy(GuessSpace *g)
{
  PetscFunctionBegin;
  if (!*g) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt i = 0; i < (*g)->m; i++) {
    if ((*g)->d) PetscCall(VecDestroy(&(*g)->d[i]));
    if ((*g)->Ad) PetscCall(VecDestroy(&(*g)->Ad[i]));
  }
  PetscCall(PetscFree((*g)->d));
  PetscCall(PetscFree((*g)->Ad));
  PetscCall(VecDestroy(&(*g)->Au));
  PetscCall(VecDestroy(&(*g)->r));
  PetscCall(VecDestroy(&(*g)->Av));
  PetscCall(VecDestroy(&(*g)->xf));
  for (int i = 0; i < FISCHER_MAX; i++) PetscCall(VecDestroy(&(*g)->xt[i]));
  for (int i = 0; i < FISCHER_MAX; i++) PetscCall(VecDestroy(&(*g)->bt[i]));
  PetscCall(PetscFree(*g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FischerUpdate(GuessSpace g);

/* ring slot of the k-th newest increment (k = 0: the newest) */
static inline PetscInt Slot(GuessSpace g, PetscInt k) { return (g->head - k + g->m) % g->m; }

PetscErrorCode GuessSpacePush(GuessSpace g, Vec d)
{
  PetscScalar row[GUESS_MAX_HIST];
  Vec         y[GUESS_MAX_HIST];
  PetscInt    h;

  PetscFunctionBegin;
  PetscCall(FischerUpdate(g));
  if (!g->m) PetscFunctionReturn(PETSC_SUCCESS);
  g->head = g->n ? (g->head + 1) % g->m : 0;
  g->n    = PetscMin(g->n + 1, g->m);
  h       = g->head;
  PetscCall(VecCopy(d, g->d[h]));
  PetscCall(MatMult(g->s->A, g->d[h], g->Ad[h]));
  for (PetscInt k = 0; k < g->n; k++) y[k] = g->d[Slot(g, k)];
  PetscCall(VecMDot(g->Ad[h], g->n, y, row)); /* one new row of the Gram matrix */
  for (PetscInt k = 0; k < g->n; k++) g->G[h][Slot(g, k)] = g->G[Slot(g, k)][h] = row[k];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GuessSpaceGetSize(GuessSpace g, PetscInt *n)
{
  *n = g->n;
  return PETSC_SUCCESS;
}

PetscErrorCode GuessSpaceReset(GuessSpace g)
{
  PetscFunctionBegin;
  g->n = 0, g->head = 0, g->nf = 0, g->cache_step = g->fischer_step = -1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Fischer's guess for right-hand side b into g->xf (u while the space is empty). */
static PetscErrorCode FischerForm(GuessSpace g, Vec b)
{
  PetscFunctionBegin;
  if (!g->nf) PetscCall(VecCopy(g->s->u, g->xf));
  else {
    PetscCall(VecMDot(b, g->nf, g->bt, g->alpha));
    PetscCall(VecSet(g->xf, 0.0));
    PetscCall(VecMAXPY(g->xf, g->nf, g->alpha, g->xt));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GuessSpaceFischer(GuessSpace g, Vec x)
{
  Vec b;

  PetscFunctionBegin;
  if (g->fischer_step != g->s->step) {
    PetscCall(SolverGetRHS(g->s, &b));
    PetscCall(FischerForm(g, b));
    g->fischer_step = g->s->step;
  }
  PetscCall(VecCopy(g->xf, x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a step: its solution x = u joins Fischer's space as the part the
 * guess missed, x - xf (x itself into an empty space), orthonormalized in
 * the A-image; a full space restarts from x alone. */
static PetscErrorCode FischerUpdate(GuessSpace g)
{
  Solver    s = g->s;
  PetscInt  k = g->nf;
  PetscReal nrm;

  PetscFunctionBegin;
  if (k == FISCHER_MAX) k = 0;
  /* the guess the step had; s->b is still its system */
  else if (k > 0 && g->fischer_step != s->step - 1) PetscCall(FischerForm(g, s->b));
  if (k == 0) PetscCall(VecCopy(s->u, g->xt[0]));
  else PetscCall(VecWAXPY(g->xt[k], -1.0, g->xf, s->u));
  PetscCall(MatMult(s->A, g->xt[k], g->bt[k]));
  if (k > 0) {
    PetscCall(VecMDot(g->bt[k], k, g->bt, g->alpha));
    for (PetscInt i = 0; i < k; i++) g->alpha[i] = -g->alpha[i];
    PetscCall(VecMAXPY(g->bt[k], k, g->alpha, g->bt));
    PetscCall(VecMAXPY(g->xt[k], k, g->alpha, g->xt));
  }
  PetscCall(VecNormalize(g->bt[k], &nrm));
  g->fischer_step = -1;
  if (!(nrm > 0)) { /* nothing new (a still state) */
    g->nf = k;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(VecScale(g->xt[k], 1.0 / nrm));
  g->nf = k + 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* r = b - A u for the coming step, once per step. */
static PetscErrorCode Prepare(GuessSpace g)
{
  Solver s = g->s;
  Vec    b;

  PetscFunctionBegin;
  if (g->cache_step == s->step) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SolverGetRHS(s, &b));
  PetscCall(MatMult(s->A, s->u, g->Au));
  PetscCall(VecWAXPY(g->r, -1.0, g->Au, b));
  g->cache_step = s->step;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Solve the k x k SPD system G a = f in a fixed order: Jacobi scaling, then
 * Cholesky that drops a direction whose pivot falls below tol of its own
 * scaled norm (it lies, to rounding, in the span of the earlier ones). */
static void SolveSmall(PetscInt k, PetscScalar G[][GUESS_MAX_DIRS], const PetscScalar *f, PetscScalar *a)
{
  const PetscReal tol = 1e-8; /* pivots below: the direction is gone in rounding (Gram entries carry ~1e-16) */
  PetscScalar     L[GUESS_MAX_DIRS][GUESS_MAX_DIRS] = {{0}}, sc[GUESS_MAX_DIRS], y[GUESS_MAX_DIRS];
  PetscBool       keep[GUESS_MAX_DIRS];

  for (PetscInt i = 0; i < k; i++) sc[i] = G[i][i] > 0 ? 1.0 / PetscSqrtReal(G[i][i]) : 0.0;
  for (PetscInt j = 0; j < k; j++) {
    PetscScalar p = G[j][j] * sc[j] * sc[j];
    for (PetscInt l = 0; l < j; l++) p -= L[j][l] * L[j][l];
    keep[j] = (PetscBool)(sc[j] > 0 && p > tol);
    if (!keep[j]) continue;
    L[j][j] = PetscSqrtReal(p);
    for (PetscInt i = j + 1; i < k; i++) {
      PetscScalar v = G[i][j] * sc[i] * sc[j];
      for (PetscInt l = 0; l < j; l++) v -= L[i][l] * L[j][l];
      L[i][j] = v / L[j][j];
    }
  }
  for (PetscInt i = 0; i < k; i++) { /* L y = S f */
    y[i] = 0;
    if (!keep[i]) continue;
    PetscScalar v = f[i] * sc[i];
    for (PetscInt l = 0; l < i; l++) v -= L[i][l] * y[l];
    y[i] = v / L[i][i];
  }
  for (PetscInt i = k - 1; i >= 0; i--) { /* L^T z = y, a = S z */
    a[i] = 0;
    if (!keep[i]) continue;
    PetscScalar v = y[i];
    for (PetscInt l = i + 1; l < k; l++) v -= L[l][i] * a[l];
    a[i] = v / L[i][i];
  }
  for (PetscInt i = 0; i < k; i++) a[i] *= sc[i];
}

/* phi(a) = a^T G a - 2 a^T f: the change of the squared energy-norm error. */
static PetscReal Phi(PetscInt k, PetscScalar G[][GUESS_MAX_DIRS], const PetscScalar *f, const PetscScalar *a)
{
  PetscReal phi = 0;
  for (PetscInt i = 0; i < k; i++) {
    PetscReal gi = 0;
    for (PetscInt j = 0; j < k; j++) gi += G[i][j] * a[j];
    phi += a[i] * (gi - 2 * f[i]);
  }
  return phi;
}

/* The combination must never be worse than its best part. The small solve
 * can lose that to rounding when the directions are nearly dependent (its
 * coefficients then grow large and phi cancels): keep its answer only if
 * phi, with its rounding bound, beats every single direction at its own
 * best scale and Fischer's guess as it is (coefficient 1, index ifd). */
static void Safeguard(PetscInt k, PetscScalar G[][GUESS_MAX_DIRS], const PetscScalar *f, PetscInt ifd, PetscScalar *a)
{
  PetscScalar best[GUESS_MAX_DIRS], cand[GUESS_MAX_DIRS];
  PetscReal   phi_best = 0, size = 0, phi;

  for (PetscInt i = 0; i < k; i++) best[i] = 0, size += PetscAbsReal(a[i]) * PetscSqrtReal(PetscMax(G[i][i], 0));
  for (PetscInt c = 0; c <= k; c++) {
    if (c == k && ifd < 0) break;
    for (PetscInt i = 0; i < k; i++) cand[i] = 0;
    if (c < k) cand[c] = G[c][c] > 0 ? f[c] / G[c][c] : 0;
    else cand[ifd] = 1;
    phi = Phi(k, G, f, cand);
    if (phi < phi_best) {
      phi_best = phi;
      for (PetscInt i = 0; i < k; i++) best[i] = cand[i];
    }
  }
  phi = Phi(k, G, f, a) + 8 * PETSC_MACHINE_EPSILON * size * size;
  if (phi <= phi_best) return;
  for (PetscInt i = 0; i < k; i++) a[i] = best[i];
}

PetscErrorCode GuessSpaceProject(GuessSpace g, PetscInt nhist, PetscBool with_u, PetscBool with_fischer, Vec extra,
                                 Vec x0)
{
  Solver      s = g->s;
  PetscScalar G[GUESS_MAX_DIRS][GUESS_MAX_DIRS], f[GUESS_MAX_DIRS], a[GUESS_MAX_DIRS], e[GUESS_MAX_DIRS + 1];
  Vec         V[GUESS_MAX_DIRS + 1], fd = NULL;
  PetscInt    k = 0, nh;

  PetscFunctionBegin;
  PetscCall(Prepare(g));
  nh = PetscMin(nhist, g->n);
  for (PetscInt i = 0; i < nh; i++) {
    V[k] = g->d[Slot(g, i)];
    for (PetscInt j = 0; j < nh; j++) G[i][j] = g->G[Slot(g, i)][Slot(g, j)];
    k++;
  }
  if (with_fischer) { /* the direction to Fischer's guess, kept in x0 meanwhile */
    PetscCall(GuessSpaceFischer(g, x0));
    PetscCall(VecAXPY(x0, -1.0, s->u));
    fd = x0;
  }
  /* the other directions: A v, then one multi-dot against all so far */
  for (int t = 0; t < 3; t++) {
    Vec v = t == 0 ? (with_u ? s->u : NULL) : t == 1 ? fd : extra, Av = t == 0 ? g->Au : g->Av;
    if (!v) continue;
    if (t > 0) PetscCall(MatMult(s->A, v, Av));
    V[k] = v;
    PetscCall(VecMDot(Av, k + 1, V, e));
    for (PetscInt i = 0; i <= k; i++) G[k][i] = G[i][k] = e[i];
    k++;
  }
  if (k) PetscCall(VecMDot(g->r, k, V, f)); /* f = V^T r in one pass */
  if (fd) { /* x0 holds the Fischer direction: keep it as a direction of its own */
    /* Av is free again: copy fd there */
    for (PetscInt i = 0; i < k; i++) if (V[i] == fd) V[i] = g->Av;
    PetscCall(VecCopy(fd, g->Av));
  }
  PetscCall(VecCopy(s->u, x0));
  if (!k) PetscFunctionReturn(PETSC_SUCCESS);
  SolveSmall(k, G, f, a);
  Safeguard(k, G, f, fd ? k - (extra ? 2 : 1) : -1, a);
  PetscCall(VecMAXPY(x0, k, a, V));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Checkpoint, either direction (ckpt.h): the ring (slots 0..n-1 are the
 * filled ones), its Gram matrix and Fischer's basis; the per-step caches are
 * rebuilt by the next step. */
PetscErrorCode GuessSpaceCheckpoint(GuessSpace g, Ckpt ck, const char prefix[])
{
  char    name[64];
  int64_t meta[4] = {g->m, g->n, g->head, g->nf};
  struct {
    const char *tag;
    PetscInt    n;
    Vec        *v;
  } vecs[4] = {{"d", 0, g->d}, {"Ad", 0, g->Ad}, {"xt", 0, g->xt}, {"bt", 0, g->bt}};

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(name, sizeof name, "%s/meta", prefix));
  PetscCall(CkptData(ck, name, meta, sizeof meta));
  if (!CkptIsWriting(ck)) {
    PetscCheck(meta[0] == g->m, g->s->comm, PETSC_ERR_FILE_UNEXPECTED,
               "%s %s: holds %lld past increments, this run keeps %" PetscInt_FMT " (-guess_history must match)",
               CkptOption(ck), CkptPath(ck), (long long)meta[0], g->m);
    PetscCheck(meta[1] >= 0 && meta[1] <= g->m && meta[2] >= 0 && meta[2] < PetscMax(g->m, 1) && meta[3] >= 0 &&
                 meta[3] <= FISCHER_MAX,
               g->s->comm, PETSC_ERR_FILE_UNEXPECTED, "%s %s: corrupt record %s", CkptOption(ck), CkptPath(ck), name);
    g->n = (PetscInt)meta[1], g->head = (PetscInt)meta[2], g->nf = (PetscInt)meta[3];
    g->cache_step = g->fischer_step = -1;
  }
  PetscCall(PetscSNPrintf(name, sizeof name, "%s/gram", prefix));
  PetscCall(CkptData(ck, name, g->G, sizeof g->G));
  vecs[0].n = vecs[1].n = g->n, vecs[2].n = vecs[3].n = g->nf;
  for (int k = 0; k < 4; k++)
    for (PetscInt i = 0; i < vecs[k].n; i++) {
      PetscCall(PetscSNPrintf(name, sizeof name, "%s/%s%" PetscInt_FMT, prefix, vecs[k].tag, i));
      PetscCall(CkptVec(ck, name, g->s->da, vecs[k].v[i]));
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}
