/* tests/cudaemu/test_emu_gradsum.cpp: the tiled GPU
 * gradient sums against their specification, on the emulated device.
 *   deterministic: bitwise the one-pair-per-block order: per chunk of 4096
 *     samples, 256 lanes each adding its samples in order, a fixed 8-level
 *     tree over the lanes, then the pairwise tree over the chunks;
 *   reproducible: bitwise kernels/rsum.c's sum of the same products;
 *   reproducible weight gradients (gradsum_cuda_outer): the same
 *     rsum state as kernels/gsum.c on the CPU (state, not only the rounded
 *     value), also on rows with zeros, Inf, NaN and subnormals, and with the
 *     row maxima raised by another "rank" (the rowmax hook);
 *   atomic: within a float sum's error of the exact sum.
 * Shapes with partial tiles (rows and columns not multiples of the tile),
 * the bias column, a dropped bias, strided destinations and a partial last
 * chunk; every call of a strategy is launched before one flush, and the
 * pending results outgrow the workspace (GS_RES_MIN is small in this build),
 * so the automatic flush is crossed too. Entries a call must not write keep
 * their sentinel. */
#include "cuda_runtime.h"
#include "gradsum_cuda.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

static unsigned long long rng = 0x9E3779B97F4A7C15ull;
static float              draw(void)
{
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  if (rng % 17 == 0) return 0.0f;
  return ldexpf((float)(rng % 2000001) / 1e6f - 1.0f, (int)(rng >> 40) % 41 - 20); /* signs, 2^-21..2^20 */
}

/* the device's deterministic float order for one pair */
static float det_ref(const float *x, const float *y, size_t len)
{
  const size_t     C = 4096, L = 256;
  std::vector<float> part;
  for (size_t s0 = 0; s0 < len; s0 += C) {
    float lane[L];
    for (size_t t = 0; t < L; t++) {
      float a = 0.0f;
      for (size_t i = s0 + t; i < s0 + C && i < len; i += L) a = a + (y ? x[i] * y[i] : x[i] * 1.0f);
      lane[t] = a;
    }
    for (size_t h = L / 2; h > 0; h >>= 1)
      for (size_t t = 0; t < h; t++) lane[t] = lane[t] + lane[t + h];
    part.push_back(lane[0]);
  }
  for (size_t st = 1; st < part.size(); st *= 2)
    for (size_t c = 0; c + st < part.size(); c += 2 * st) part[c] = part[c] + part[c + st];
  return part.empty() ? 0.0f : part[0];
}

/* The same under -surrogate_cuda_kernels gemm (gradsum_gemm_float_kernel):
 * per chunk of 2048, G groups, group g adding in order the samples whose
 * offset in their round of 64 is g mod G; a bias sum split once more over
 * TK threads by the sample's rank m in its group's round (m mod TK); the
 * pairwise tree over the groups (over g TK + tk for a bias), then over the
 * chunks. Samples past the end are not added. */
static float det_ref_gemm(const float *x, const float *y, size_t len, int G, int TK)
{
  const size_t       C = 2048, S = 64;
  std::vector<float> part;
  for (size_t s0 = 0; s0 < len; s0 += C) {
    size_t             n = y ? (size_t)G : (size_t)G * TK;
    std::vector<float> lane(n, 0.0f);
    for (size_t i = s0; i < s0 + C && i < len; i++) {
      size_t s = (i - s0) % S, g = s % (size_t)G, m = (s - g) / (size_t)G;
      size_t l = y ? g : g * TK + m % (size_t)TK;
      lane[l]  = lane[l] + (y ? x[i] * y[i] : x[i] * 1.0f);
    }
    for (size_t h = 1; h < n; h *= 2)
      for (size_t g = 0; g + h < n; g += 2 * h) lane[g] = lane[g] + lane[g + h];
    part.push_back(lane[0]);
  }
  for (size_t st = 1; st < part.size(); st *= 2)
    for (size_t c = 0; c + st < part.size(); c += 2 * st) part[c] = part[c] + part[c + st];
  return part.empty() ? 0.0f : part[0];
}

struct Shape {
  int  nx, ny;   /* x rows, y rows (pairs: nx * (ny+1), the last of each row y = 1) */
  bool drop;     /* bias sums not wanted (b = NULL) */
  bool onepair;  /* the loss's shape: npair 1, ny 1 */
};

/* rsum states equal: the same top and bins, or the same non-finite sum */
static bool same_state(const rsum_t &a, const rsum_t &b)
{
  if (a.nonfinite || b.nonfinite) return a.nonfinite && b.nonfinite && (std::isnan(a.special) ? std::isnan(b.special) : a.special == b.special);
  return a.top == b.top && memcmp(a.bin, b.bin, sizeof a.bin) == 0;
}

/* The other "rank"'s row maxima, raised into the device's by the hook. */
static std::vector<float> other_max;
static int raise_max(float *m, size_t n, void *)
{
  for (size_t i = 0; i < n && i < other_max.size(); i++) m[i] = m[i] > other_max[i] ? m[i] : other_max[i];
  return 0;
}

/* gradsum_cuda_outer against gsum on the host, on nx x rows and ny y rows
 * (pairs nx * (ny + 1), the bias last); with hook, the maxima of a second
 * data set xo, yo count too. Returns the number of differing states. */
static int outer_case(int nx, int ny, size_t len, const float *hx, const float *hy, const float *xo, const float *yo, int gemm)
{
  int    npair = nx * (ny + 1), bad = 0;
  float *dx, *dy;
  if (cudaMalloc(&dx, (size_t)nx * len * 4) || cudaMalloc(&dy, (size_t)(ny ? ny : 1) * len * 4) || cudaMemcpy(dx, hx, (size_t)nx * len * 4, cudaMemcpyHostToDevice) ||
      (ny && cudaMemcpy(dy, hy, (size_t)ny * len * 4, cudaMemcpyHostToDevice)))
    return printf("FAIL: allocation\n"), 1;
  std::vector<int32_t> ex(nx), ey(ny ? ny : 1);
  other_max.assign((size_t)nx + ny, 0.0f);
  for (int j = 0; j < nx; j++) {
    float m = gsum_absmax(len, hx + (size_t)j * len), o = xo ? gsum_absmax(len, xo + (size_t)j * len) : 0.0f;
    other_max[j] = o, ex[j] = gsum_exponent(m > o ? m : o);
  }
  for (int k = 0; k < ny; k++) {
    float m = gsum_absmax(len, hy + (size_t)k * len), o = yo ? gsum_absmax(len, yo + (size_t)k * len) : 0.0f;
    other_max[nx + k] = o, ey[k] = gsum_exponent(m > o ? m : o);
  }
  std::vector<gsum_t>        g((size_t)nx * (ny + 1));
  std::vector<red_partial_t> out((size_t)npair);
  for (gsum_t &v : g) gsum_init(&v);
  gsum_add_outer(g.data(), g.data() + (size_t)nx * ny, len, nx, hx, len, ex.data(), ny, hy, len, ey.data());
  gradsum_ws ws;
  memset(&ws, 0, sizeof ws);
  ws.gemm = gemm;
  if (gradsum_cuda_outer(npair, ny, dx, len, dy, len, len, &ws, gradsum_dst{out.data(), (size_t)ny + 1, out.data() + ny, (size_t)ny + 1}, xo ? raise_max : nullptr, nullptr) || gradsum_cuda_flush(&ws))
    return printf("FAIL: outer launch\n"), 1;
  for (int j = 0; j < nx; j++)
    for (int k = 0; k <= ny; k++) {
      rsum_t ref;
      gsum_to_rsum(k < ny ? &g[(size_t)j * ny + k] : &g[(size_t)nx * ny + j], ex[j], k < ny ? ey[k] : 1, &ref);
      bad += !same_state(out[(size_t)j * (ny + 1) + k].r, ref);
    }
  gradsum_cuda_free(&ws);
  cudaFree(dx), cudaFree(dy);
  return bad;
}

/* Hostile rows: kind by row index (zero, Inf, NaN, subnormal, wide, plain). */
static void hostile(std::vector<float> &v, int rows, size_t len, int salt)
{
  v.resize((size_t)rows * len);
  for (int r = 0; r < rows; r++)
    for (size_t i = 0; i < len; i++) {
      float u = draw(), &o = v[(size_t)r * len + i];
      switch ((r + salt) % 6) {
      case 0: o = 0.0f; break;
      case 1: o = i == 1000 ? INFINITY : u; break;
      case 2: o = i == 7 ? NAN : u; break;
      case 3: o = ldexpf(u, -125); break; /* subnormals among them */
      case 4: o = ldexpf(u, (int)(i % 61) - 30); break;
      default: o = u;
      }
    }
}

int main()
{
  const size_t len = 3 * 4096 + 77;
  const Shape  shapes[] = {{1, 1, false, true}, {5, 1, true, false}, {17, 12, false, false}, {7, 0, false, false}, {9, 33, false, false}, {40, 40, false, false}};
  const int    ns = (int)(sizeof shapes / sizeof *shapes);
  int          fail = 0;
  std::vector<std::vector<float>> hx(ns), hy(ns);
  std::vector<float *>            dx(ns), dy(ns);
  for (int s = 0; s < ns; s++) {
    hx[s].resize((size_t)shapes[s].nx * len), hy[s].resize((size_t)(shapes[s].ny ? shapes[s].ny : 1) * len);
    for (float &v : hx[s]) v = draw();
    for (float &v : hy[s]) v = draw();
    if (cudaMalloc(&dx[s], hx[s].size() * 4) || cudaMalloc(&dy[s], hy[s].size() * 4) || cudaMemcpy(dx[s], hx[s].data(), hx[s].size() * 4, cudaMemcpyHostToDevice) ||
        cudaMemcpy(dy[s], hy[s].data(), hy[s].size() * 4, cudaMemcpyHostToDevice))
      return printf("FAIL: allocation\n"), 1;
  }
  const red_strategy_t sts[] = {RED_DETERMINISTIC, RED_REPRODUCIBLE, RED_ATOMIC};
  for (int gemm = 0; gemm < 2; gemm++)
  for (red_strategy_t st : sts) {
    gradsum_ws ws;
    memset(&ws, 0, sizeof ws);
    ws.gemm = gemm;
    std::vector<std::vector<red_partial_t>> out(ns);
    const int reps = 16; /* the same calls again and again: the pending results outgrow the workspace */
    std::vector<std::vector<red_partial_t>> again(reps);
    for (int s = 0; s < ns; s++) {
      const Shape &sh = shapes[s];
      int          npair = sh.onepair ? 1 : sh.nx * (sh.ny + 1);
      out[s].resize((size_t)npair + 1);
      for (red_partial_t &p : out[s]) p.d = -12345.0;
      gradsum_dst d = {out[s].data(), (size_t)sh.ny + 1, sh.drop ? nullptr : out[s].data() + sh.ny, (size_t)sh.ny + 1};
      if (gradsum_cuda(st, npair, sh.ny, dx[s], len, dy[s], len, len, &ws, d)) return printf("FAIL: launch\n"), 1;
    }
    for (int r = 0; r < reps; r++) { /* shape 4 repeated: 9 x 34 pairs each */
      again[r].resize(9 * 34);
      if (gradsum_cuda(st, 9 * 34, 33, dx[4], len, dy[4], len, len, &ws, gradsum_dst{again[r].data(), 34, again[r].data() + 33, 34})) return printf("FAIL: launch\n"), 1;
    }
    int pending = ws.ncall;
    if (gradsum_cuda_flush(&ws)) return printf("FAIL: flush\n"), 1;
    int bad = 0, n = 0;
    for (int s = 0; s < ns; s++) {
      const Shape &sh = shapes[s];
      int          npair = sh.onepair ? 1 : sh.nx * (sh.ny + 1);
      for (int p = 0; p < npair; p++, n++) {
        int          j = p / (sh.ny + 1), k = p % (sh.ny + 1);
        const float *x = &hx[s][(size_t)j * len], *y = k < sh.ny ? &hy[s][(size_t)k * len] : nullptr;
        const red_partial_t &g = out[s][p];
        if (sh.drop && k == sh.ny) {
          bad += g.d != -12345.0;
          continue;
        }
        if (st == RED_DETERMINISTIC) {
          int TJ, TK, nx = sh.onepair ? 1 : sh.nx;
          gradsum_gemm_shape(nx, sh.ny, &TJ, &TK);
          float ref = gemm ? det_ref_gemm(x, y, len, GS_GEMM_THREADS / (TJ * TK), TK) : det_ref(x, y, len), got = (float)g.d;
          bad += memcmp(&ref, &got, 4) != 0;
        } else {
          rsum_t r;
          rsum_init(&r);
          rsum_add_fdot(&r, len, x, y);
          double exact = rsum_value(&r);
          if (st == RED_REPRODUCIBLE) {
            double got = rsum_value(&g.r);
            bad += memcmp(&exact, &got, 8) != 0;
          } else {
            double mag = 0.0;
            for (size_t i = 0; i < len; i++) mag += fabs((double)x[i] * (y ? y[i] : 1.0f));
            bad += !(fabs(g.d - exact) <= 1e-5 * mag);
          }
        }
      }
      bad += out[s][npair].d != -12345.0; /* one past the last pair: untouched */
    }
    std::vector<double> mag4(9 * 34, 0.0); /* shape 4's sum |x y| per pair: a float sum's error scale */
    for (int p = 0; p < 9 * 34; p++)
      for (size_t i = 0; i < len; i++) mag4[p] += fabs((double)hx[4][(size_t)(p / 34) * len + i] * (p % 34 < 33 ? hy[4][(size_t)(p % 34) * len + i] : 1.0f));
    for (int r = 1; r < reps; r++) /* each repeat equal to the first (atomic: within the float error) */
      for (int p = 0; p < 9 * 34; p++)
        if (st == RED_ATOMIC) bad += !(fabs(again[r][p].d - again[0][p].d) <= 1e-5 * mag4[p]);
        else {
          double a = st == RED_REPRODUCIBLE ? rsum_value(&again[r][p].r) : again[r][p].d, b = st == RED_REPRODUCIBLE ? rsum_value(&again[0][p].r) : again[0][p].d;
          bad += memcmp(&a, &b, 8) != 0;
        }
    printf("%s, %s kernels: %d pair sums of %zu samples in %d shapes, %d calls pending at the flush (the rest flushed on the way): %d wrong\n", red_strategy_name(st), gemm ? "GEMM-style" : "tiled", n, len, ns, pending, bad);
    fail += bad != 0 || pending >= ns + reps;
    gradsum_cuda_free(&ws);
  }
  { /* many chunks: the deterministic chunk tree runs in groups of 32 partials over two launches (36 chunks of 4096, tiled;
       71 of 2048, GEMM-style: partial groups at both levels); its bits are the one-thread tree's of the specification */
    const size_t L = 70 * 2048 + 13;
    const int    nx = 3, ny = 2, npair = nx * (ny + 1);
    std::vector<float> lx((size_t)nx * L), ly((size_t)ny * L);
    for (float &v : lx) v = draw();
    for (float &v : ly) v = draw();
    float *ex, *ey;
    if (cudaMalloc(&ex, lx.size() * 4) || cudaMalloc(&ey, ly.size() * 4) || cudaMemcpy(ex, lx.data(), lx.size() * 4, cudaMemcpyHostToDevice) ||
        cudaMemcpy(ey, ly.data(), ly.size() * 4, cudaMemcpyHostToDevice))
      return printf("FAIL: allocation\n"), 1;
    for (int gemm = 0; gemm < 2; gemm++) {
      gradsum_ws ws;
      memset(&ws, 0, sizeof ws);
      ws.gemm = gemm;
      std::vector<red_partial_t> o((size_t)npair);
      if (gradsum_cuda(RED_DETERMINISTIC, npair, ny, ex, L, ey, L, L, &ws, gradsum_dst{o.data(), (size_t)ny + 1, o.data() + ny, (size_t)ny + 1}) || gradsum_cuda_flush(&ws))
        return printf("FAIL: launch\n"), 1;
      int bad = 0, TJ, TK;
      gradsum_gemm_shape(nx, ny, &TJ, &TK);
      for (int p = 0; p < npair; p++) {
        int          j = p / (ny + 1), k = p % (ny + 1);
        const float *x = &lx[(size_t)j * L], *y = k < ny ? &ly[(size_t)k * L] : nullptr;
        float        ref = gemm ? det_ref_gemm(x, y, L, GS_GEMM_THREADS / (TJ * TK), TK) : det_ref(x, y, L), got = (float)o[p].d;
        bad += memcmp(&ref, &got, 4) != 0;
      }
      printf("deterministic, %s kernels, %zu samples (%zu chunk partials a pair): %d of %d pair sums differ from the specification\n", gemm ? "GEMM-style" : "tiled", L,
             gemm ? gradsum_gemm_nchunk(L) : (L + 4095) / 4096, bad, npair);
      fail += bad != 0;
      gradsum_cuda_free(&ws);
    }
    cudaFree(ex), cudaFree(ey);
  }
  for (int gemm = 0; gemm < 2; gemm++) { /* the reproducible weight gradients: gsum's states, from both kernels */
    int bad = 0, n = 0;
    for (int s = 0; s < ns; s++)
      if (!shapes[s].onepair) bad += outer_case(shapes[s].nx, shapes[s].ny, len, hx[s].data(), hy[s].data(), nullptr, nullptr, gemm), n += shapes[s].nx * (shapes[s].ny + 1);
    std::vector<float> ax, ay, bx, by, wx, wy;
    hostile(ax, 13, len, 0), hostile(ay, 11, len, 3), hostile(bx, 13, len, 5), hostile(by, 11, len, 1);
    bad += outer_case(13, 11, len, ax.data(), ay.data(), nullptr, nullptr, gemm);
    bad += outer_case(13, 11, len, ax.data(), ay.data(), bx.data(), by.data(), gemm); /* another rank's maxima */
    bad += outer_case(13, 11, 0, ax.data(), ay.data(), bx.data(), by.data(), gemm);   /* this rank without samples */
    hostile(wx, 37, len, 2), hostile(wy, 70, len, 4); /* tiles of 32 x 32 and partial ones, rows of every kind in each */
    bad += outer_case(37, 70, len, wx.data(), wy.data(), nullptr, nullptr, gemm);
    n += 3 * 13 * 12 + 37 * 71;
    printf("reproducible weight gradients (gsum), %s kernel: %d pair states, hostile rows and another rank's maxima included: %d differ from the CPU's\n", gemm ? "GEMM-style" : "4x4-tile", n, bad);
    fail += bad != 0;
  }
  for (int s = 0; s < ns; s++) cudaFree(dx[s]), cudaFree(dy[s]);
  if (fail) printf("FAIL: the device's gradient sums differ from their specification\n");
  return fail != 0;
}
