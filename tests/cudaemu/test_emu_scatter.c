/* tests/cudaemu/test_emu_scatter.c: the scatter operator in a seeded atomic
 * order on the emulated device (vec_cuda_stencil_seeded) against the host's
 * replay, bit for bit: the face plan built as solver/operator.c builds it,
 * the fluxes computed and scattered with kernels/scatter.c's seeded
 * scatter_add, then y = u - coef lap. The whole grid of one rank (periodic
 * and Dirichlet) and a block of several with its neighbours' edges; 1 and 2
 * components; grids of one cell, one row or column, odd sizes; several seeds
 * and call numbers. Exit 1 on the first difference. */
#include "reduce.h"
#include "vec_cuda.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static double   value(void)
{
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0 * 2 - 1;
}

/* The host's y for an xm x ym block: ghosts from g (vec_cuda.h's layout) or, g NULL, wrapped or 0. */
static int host(int xm, int ym, int dof, int periodic, const double coef[2], double ihx2, double ihy2,
                const double *u, const double *g, red_atomic_state *ord, double *y)
{
  const int     gx = xm + 2;
  const size_t  nowned = (size_t)xm * ym * dof, nface = (size_t)dof * ((size_t)(xm + 1) * ym + (size_t)xm * (ym + 1));
  double       *ug = calloc((size_t)gx * (ym + 2) * dof, sizeof *ug), *flux = malloc(2 * nface * sizeof *flux);
  double       *lap = calloc(nowned + 1, sizeof *lap);
  int64_t      *target = malloc(2 * nface * sizeof *target);
  scatter_plan *plan;
  size_t        k = 0;
#define UG(i, j, c) ug[((size_t)((j) + 1) * gx + (size_t)((i) + 1)) * dof + (c)]
#define OWN(i, j, c) ((i) >= 0 && (i) < xm && (j) >= 0 && (j) < ym ? (int64_t)(((size_t)(j) * xm + (i)) * dof + (c)) \
                                                                   : (int64_t)nowned)
  for (int j = -1; j <= ym; j++)
    for (int i = -1; i <= xm; i++)
      for (int c = 0; c < dof; c++) {
        int in = i >= 0 && i < xm && j >= 0 && j < ym, edge = (i < 0 || i == xm) != (j < 0 || j == ym);
        if (in) UG(i, j, c) = u[((size_t)j * xm + i) * dof + c];
        else if (edge && g) /* W, E columns, S, N rows */
          UG(i, j, c) = i < 0    ? g[(size_t)j * dof + c]
                      : i == xm  ? g[((size_t)ym + j) * dof + c]
                      : j < 0    ? g[(2 * (size_t)ym + i) * dof + c]
                                 : g[(2 * (size_t)ym + xm + i) * dof + c];
        else if (edge && periodic) UG(i, j, c) = u[((size_t)((j + ym) % ym) * xm + (i + xm) % xm) * dof + c];
      }
  for (int c = 0; c < dof; c++) {
    for (int j = 0; j < ym; j++)
      for (int i = 0; i <= xm; i++, k += 2) {
        double F = (UG(i, j, c) - UG(i - 1, j, c)) * ihx2;
        flux[k] = F, flux[k + 1] = -F, target[k] = OWN(i - 1, j, c), target[k + 1] = OWN(i, j, c);
      }
    for (int j = 0; j <= ym; j++)
      for (int i = 0; i < xm; i++, k += 2) {
        double F = (UG(i, j, c) - UG(i, j - 1, c)) * ihy2;
        flux[k] = F, flux[k + 1] = -F, target[k] = OWN(i, j - 1, c), target[k + 1] = OWN(i, j, c);
      }
  }
#undef UG
#undef OWN
  if (scatter_plan_create(nowned + 1, 2 * nface, target, &plan)) return 1;
  scatter_add(RED_ATOMIC, plan, flux, lap, ord);
  for (size_t o = 0; o < nowned; o++) y[o] = u[o] - coef[o % (size_t)dof] * lap[o];
  scatter_plan_destroy(&plan);
  free(ug), free(flux), free(lap), free(target);
  return 0;
}

int main(void)
{
  static const int shapes[][2] = {{1, 1}, {1, 5}, {6, 1}, {7, 5}, {33, 17}};
  const double     coef[2]     = {0.37, 1.0 / 3.0}, ihx2 = 1.0 / 0.0123, ihy2 = 1.0 / 0.0371;
  int              fails = 0, cases = 0;

  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
    for (int dof = 1; dof <= 2; dof++)
      for (int form = 0; form < 3; form++) /* Dirichlet, periodic, a block with its neighbours' edges */
        for (uint64_t seed = 1; seed <= 3; seed += 2) {
          int     xm = shapes[s][0], ym = shapes[s][1];
          size_t  n = (size_t)xm * ym * dof, ng = 2 * ((size_t)xm + ym) * dof;
          double *u = malloc(n * sizeof *u), *g = malloc(ng * sizeof *g), *yh = malloc(n * sizeof *yh);
          double *yd = malloc(n * sizeof *yd), *ud, *gd, *ydd;
          for (size_t i = 0; i < n; i++) u[i] = value();
          for (size_t i = 0; i < ng; i++) g[i] = value();
          red_atomic_state ord = {seed, 11 * seed};
          if (host(xm, ym, dof, form == 1, coef, ihx2, ihy2, u, form == 2 ? g : NULL, &ord, yh)) return 2;
          if (vec_cuda_alloc(&ud, n) || vec_cuda_alloc(&gd, ng) || vec_cuda_alloc(&ydd, n) ||
              vec_cuda_to_device(ud, u, n) || vec_cuda_to_device(gd, g, ng) ||
              vec_cuda_stencil_seeded(xm, ym, dof, form == 1, coef[0], coef[1], ihx2, ihy2, ud, form == 2 ? gd : NULL,
                                      seed, 11 * seed, ydd) ||
              vec_cuda_to_host(yd, ydd, n))
            return 2;
          cases++;
          if (ord.calls != 11 * seed + 1) /* one call of the order a product */
            printf("FAIL: the host's replay drew %llu calls\n", (unsigned long long)ord.calls), fails++;
          for (size_t i = 0; i < n; i++)
            if (memcmp(&yh[i], &yd[i], sizeof *yh)) {
              printf("FAIL: %dx%d dof %d %s seed %llu: entry %zu host %a device %a\n", xm, ym, dof,
                     form == 0 ? "Dirichlet" : form == 1 ? "periodic" : "halo", (unsigned long long)seed, i, yh[i],
                     yd[i]);
              fails++;
              break;
            }
          vec_cuda_free(ud), vec_cuda_free(gd), vec_cuda_free(ydd);
          free(u), free(g), free(yh), free(yd);
        }
  printf("%s: the seeded scatter operator on the device, %d cases: %s\n", fails ? "FAIL" : "PASS", cases,
         fails ? "not the host replay's bits" : "the host replay's bits");
  return fails != 0;
}
