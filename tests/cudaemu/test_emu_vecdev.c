/* tests/cudaemu/test_emu_vecdev.c: the fpnacuda vector (solver/vecdev.c) on
 * the emulated device against the fpna vector on the host: the same chain
 * of element-wise operations and reductions on both, every result and every
 * entry bitwise equal (the build's strategy; the atomic build with a seeded
 * order, both vectors drawing from equal copies of it), on lengths with
 * partial blocks, on any rank count; and the count of full-vector copies
 * between host and device: one to bring the host's values over, none for
 * the chain, one to read the result on the host, and one more after a
 * planted host write. */
#include "vecred.h"
#include "solver.h" /* PETSC_SUCCESS on PETSc 3.18 */

#include <petscdmda.h>
#include <string.h>

static int fails;
#define EXPECT(c, ...) \
  do { \
    if (!(c)) { \
      fails++; \
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: " __VA_ARGS__)); \
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n")); \
    } \
  } while (0)

static PetscBool Same(PetscReal a, PetscReal b) { return (PetscBool)(!memcmp(&a, &b, sizeof a) || (a != a && b != b)); }

/* The chain on vectors x, w, z of one type; r[] its scalar results. */
static PetscErrorCode Chain(Vec x, Vec w, Vec z, PetscReal r[16])
{
  const PetscScalar a[3] = {0.25, -1.5, 3.0};
  Vec               v[3] = {x, w, x};
  PetscScalar       d[3];

  PetscFunctionBegin;
  PetscCall(VecCopy(x, w));
  PetscCall(VecAXPY(w, 0.3, x));
  PetscCall(VecAYPX(w, -1.7, x));
  PetscCall(VecAXPBY(w, 2.5, 0.5, x));
  PetscCall(VecWAXPY(z, 1.1, x, w));
  PetscCall(VecMAXPY(z, 3, a, v));
  PetscCall(VecPointwiseMult(z, z, w));
  PetscCall(VecScale(z, 0.75));
  PetscCall(VecDot(z, x, &r[0]));
  PetscCall(VecTDot(x, w, &r[1]));
  PetscCall(VecNorm(z, NORM_1, &r[2]));
  PetscCall(VecNorm(w, NORM_2, &r[3]));
  PetscCall(VecNorm(x, NORM_1_AND_2, &r[4]));
  PetscCall(VecSum(z, &r[6]));
  PetscCall(VecDotNorm2(x, z, &r[7], &r[8]));
  v[2] = z;
  PetscCall(VecMDot(z, 3, v, d));
  r[9] = d[0], r[10] = d[1], r[11] = d[2];
  PetscCall(VecAXPBY(x, 0.5, -0.25, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Fill(Vec v, PetscInt n0)
{
  PetscScalar *a;
  PetscInt     n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetArrayWrite(v, &a));
  for (PetscInt i = 0; i < n; i++) { /* signs and magnitudes over 40 binades, by global index */
    unsigned long long h = (unsigned long long)(i + n0 + 1) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    a[i] = ldexp((double)(h % 2000001) / 1e6 - 1.0, (int)(h >> 58) - 20);
  }
  PetscCall(VecRestoreArrayWrite(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Compare(Vec h, Vec d, const char *name, PetscInt N)
{
  const PetscScalar *ha, *da;
  PetscInt           n, bad = 0;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(h, &n));
  PetscCall(VecGetArrayRead(h, &ha));
  PetscCall(VecGetArrayRead(d, &da));
  for (PetscInt i = 0; i < n; i++) bad += !Same(ha[i], da[i]);
  PetscCall(VecRestoreArrayRead(d, &da));
  PetscCall(VecRestoreArrayRead(h, &ha));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &bad, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  EXPECT(!bad, "N %" PetscInt_FMT ": %" PetscInt_FMT " entries of %s differ", N, bad, name);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode One(PetscInt N)
{
  Vec               h[3], d[3];
  PetscReal         rh[16] = {0}, rd[16] = {0};
  red_atomic_state  oh = {3, 0}, od = {3, 0}, *ph = &oh, *pd = &od;
  PetscInt          n0;
  PetscInt64        c0, c1, c2, c3;
  const char *const names[3] = {"x", "w", "z"};

  PetscFunctionBegin;
  for (int k = 0; k < 3; k++) {
    PetscCall(VecCreate(PETSC_COMM_WORLD, &h[k]));
    PetscCall(VecSetSizes(h[k], PETSC_DECIDE, N));
    PetscCall(VecSetType(h[k], VECFPNA));
    PetscCall(VecFPNASetOrderSlot((PetscObject)h[k], &ph));
    PetscCall(VecCreate(PETSC_COMM_WORLD, &d[k]));
    PetscCall(VecSetSizes(d[k], PETSC_DECIDE, N));
    PetscCall(VecSetType(d[k], VECFPNACUDA));
    PetscCall(VecFPNASetOrderSlot((PetscObject)d[k], &pd));
  }
  PetscCall(VecGetOwnershipRange(h[0], &n0, NULL));
  PetscCall(Fill(h[0], n0));
  PetscCall(Fill(d[0], n0));
  c0 = VecFPNADeviceCopies();
  PetscCall(Chain(h[0], h[1], h[2], rh));
  PetscCall(Chain(d[0], d[1], d[2], rd));
  c1 = VecFPNADeviceCopies();
  for (int k = 0; k < 12; k++)
    EXPECT(Same(rh[k], rd[k]), "N %" PetscInt_FMT ": result %d: host %.17g, device %.17g", N, k, rh[k], rd[k]);
  EXPECT(oh.calls == od.calls, "N %" PetscInt_FMT ": %llu draws of the order on the host, %llu on the device", N,
         (unsigned long long)oh.calls, (unsigned long long)od.calls);
  PetscCall(VecNorm(d[2], NORM_INFINITY, &rd[12])); /* on the device too: no copy */
  PetscCall(VecNorm(h[2], NORM_INFINITY, &rh[12]));
  EXPECT(Same(rh[12], rd[12]), "N %" PetscInt_FMT ": infinity norm differs", N);
  EXPECT(VecFPNADeviceCopies() == c1, "N %" PetscInt_FMT ": the infinity norm copied the vector", N);
  {
    const PetscScalar *a; /* a host read: one copy */
    PetscCall(VecGetArrayRead(d[2], &a));
    PetscCall(VecRestoreArrayRead(d[2], &a));
  }
  c2 = VecFPNADeviceCopies();
  for (int k = 0; k < 3; k++) PetscCall(Compare(h[k], d[k], names[k], N));
  { /* the CG tail writes on the device: a norm after it is taken again, not PETSc's cached one */
    PetscReal a = 0.37, zz[2], zr[2], nh, nd;
    PetscCall(VecNorm(h[1], NORM_2, &nh));
    PetscCall(VecNorm(d[1], NORM_2, &nd));
    PetscCall(VecFPNACGTail(h[0], a, h[2], h[1], h[2], h[2], 0, h[2], &zz[0], &zr[0]));
    PetscCall(VecFPNACGTail(d[0], a, d[2], d[1], d[2], d[2], 0, d[2], &zz[1], &zr[1]));
    PetscCall(VecNorm(h[1], NORM_2, &nh));
    PetscCall(VecNorm(d[1], NORM_2, &nd));
    EXPECT(Same(zz[0], zz[1]) && Same(zr[0], zr[1]) && Same(nh, nd),
           "N %" PetscInt_FMT ": the CG tail or the norm after it differs (zz %g %g, norm %g %g)", N, zz[0], zz[1], nh,
           nd);
  }
  { /* VecPlaceArray: the device works on the placed values, and VecResetArray brings its results back */
    PetscScalar *buf;
    PetscReal    sum;
    PetscInt     n;
    PetscCall(VecGetLocalSize(d[0], &n));
    PetscCall(PetscMalloc1(n ? n : 1, &buf));
    for (PetscInt i = 0; i < n; i++) buf[i] = 7.0;
    PetscCall(VecPlaceArray(d[0], buf));
    PetscCall(VecSum(d[0], &sum));
    EXPECT(sum == 7.0 * N, "N %" PetscInt_FMT ": VecSum of a placed array of 7s is %g", N, sum);
    PetscCall(VecScale(d[0], 3.0));
    PetscCall(VecResetArray(d[0]));
    EXPECT(!n || (buf[0] == 21.0 && buf[n - 1] == 21.0), "N %" PetscInt_FMT ": the placed array did not get 3 x 7", N);
    PetscCall(PetscFree(buf));
  }
  { /* a planted host write: the next device operation copies the values over again */
    PetscScalar *a;
    PetscCall(VecGetArray(d[2], &a));
    PetscCall(VecRestoreArray(d[2], &a));
    c3 = VecFPNADeviceCopies();
    PetscCall(VecScale(d[2], 2.0));
  }
  /* per rank: the chain copies x's values over (1) and nothing else; a host read of z copies it (1) */
  EXPECT(c1 - c0 == 1, "N %" PetscInt_FMT ": the chain made %lld copies, expected 1", N, (long long)(c1 - c0));
  EXPECT(c2 - c1 == 1, "N %" PetscInt_FMT ": a host read made %lld copies, expected 1", N, (long long)(c2 - c1));
  EXPECT(VecFPNADeviceCopies() - c3 == 1, "N %" PetscInt_FMT ": the planted host write was not copied back", N);
  for (int k = 0; k < 3; k++) {
    PetscCall(VecDestroy(&h[k]));
    PetscCall(VecDestroy(&d[k]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A DMDA whose vectors are fpnacuda: the ghost exchange reads the device's values. */
static PetscErrorCode Grid(void)
{
  DM                   da[2];
  Vec                  g[2], l[2];
  const PetscScalar ***a[2];
  PetscInt             xs, ys, xm, ym, bad = 0;
  const char *const    type[2] = {VECFPNA, VECFPNACUDA};

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_PERIODIC, DMDA_STENCIL_STAR, 37, 29,
                           PETSC_DECIDE, PETSC_DECIDE, 2, 1, NULL, NULL, &da[k]));
    PetscCall(DMSetVecType(da[k], type[k]));
    PetscCall(DMSetUp(da[k]));
    PetscCall(DMCreateGlobalVector(da[k], &g[k]));
    PetscCall(DMCreateLocalVector(da[k], &l[k]));
    PetscCall(Fill(g[k], 0));
    PetscCall(VecScale(g[k], -3.0)); /* on the device for fpnacuda */
    PetscCall(DMGlobalToLocal(da[k], g[k], INSERT_VALUES, l[k]));
    PetscCall(DMDAVecGetArrayDOFRead(da[k], l[k], &a[k]));
  }
  PetscCall(DMDAGetGhostCorners(da[0], &xs, &ys, NULL, &xm, &ym, NULL));
  for (PetscInt j = ys; j < ys + ym; j++)
    for (PetscInt i = xs; i < xs + xm; i++)
      for (int c = 0; c < 2; c++) bad += !Same(a[0][j][i][c], a[1][j][i][c]);
  EXPECT(!bad, "DMGlobalToLocal of an fpnacuda vector: %" PetscInt_FMT " ghosted entries differ", bad);
  for (int k = 0; k < 2; k++) {
    PetscCall(DMDAVecRestoreArrayDOFRead(da[k], l[k], &a[k]));
    PetscCall(VecDestroy(&l[k]));
    PetscCall(VecDestroy(&g[k]));
    PetscCall(DMDestroy(&da[k]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  const PetscInt lens[] = {1, 1000, 9001, 40961};

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(VecFPNARegister());
  for (size_t k = 0; k < sizeof lens / sizeof *lens; k++) PetscCall(One(lens[k]));
  PetscCall(Grid());
  if (!fails)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS: fpnacuda equals fpna bitwise (%s), copies counted\n",
                          VecFPNACompiledStrategy()));
  PetscCall(PetscFinalize());
  return fails ? 1 : 0;
}
