/* miniapp/tools/compare_checks.c: miniapp-compare's refusals before any metric:
 * two runs are compared only if they are of one problem (grid, components,
 * step and epoch series, model times, scenario parameters, and every option
 * that steers the arithmetic); else a difference would be read as the
 * builds' rounding divergence. Each refusal is one line (die). */
#include "compare_impl.h"
#include "freeopts.h"
#include "settings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void components(const run *r, char *s, size_t len)
{
  s[0] = 0;
  for (int c = 0; c < r->ncomp; c++) snprintf(s + strlen(s), len - strlen(s), "%s%s", c ? "," : "", r->comp[c]);
}

/* B must have A's grid and A's components (looked up by name). */
static void check_grids(const run *a, const run *b)
{
  if (a->nx != b->nx || a->ny != b->ny)
    die("mismatched grids: %s is %d x %d (x by y), %s is %d x %d", a->path, a->nx, a->ny, b->path, b->nx, b->ny);
  int same = a->ncomp == b->ncomp;
  for (int c = 0; same && c < a->ncomp; c++) same = !strcmp(a->comp[c], b->comp[c]);
  if (!same) {
    char ca[512], cb[512];
    components(a, ca, sizeof ca), components(b, cb, sizeof cb);
    die("mismatched grids: %s has components %s, %s has %s", a->path, ca, b->path, cb);
  }
}

/* s[0..n) == t[0..n), n <= m */
static int prefix(const int *s, size_t n, const int *t, size_t m)
{
  if (n > m) return 0;
  for (size_t i = 0; i < n; i++)
    if (s[i] != t[i]) return 0;
  return 1;
}

/* B's steps and epochs must be A's: a 5-step run compared with a 10-step one
 * would otherwise report "never diverged" over the steps it lacks. A run
 * that stopped early (its last_step: a signal, an unsolved step, a
 * non-finite state) holds the first part of the other's series: the steps
 * and epochs both hold are compared, and compare() makes no "never" claim
 * past them. */
static void check_series(const run *a, const run *b)
{
  const run *s = a->nt <= b->nt ? a : b, *l = s == a ? b : a;
  if (!(a->nt == b->nt && prefix(a->step, a->nt, b->step, b->nt)) &&
      !(s->stopped && prefix(s->step, s->nt, l->step, l->nt)))
    die("series do not line up: %s holds %zu time records (steps %d..%d), %s holds %zu (steps %d..%d); compare runs of "
        "the same length and restart point",
        a->path, a->nt, a->nt ? a->step[0] : -1, a->nt ? a->step[a->nt - 1] : -1, b->path, b->nt,
        b->nt ? b->step[0] : -1, b->nt ? b->step[b->nt - 1] : -1);
  s = a->nep <= b->nep ? a : b, l = s == a ? b : a;
  if (a->nep != b->nep && !(s->stopped && prefix(s->epoch, s->nep, l->epoch, l->nep)))
    die("series do not line up: %s holds %zu training epochs, %s holds %zu; compare runs with the same training "
        "schedule",
        a->path, a->nep, b->path, b->nep);
}

/* The value text of option `name` in an options attribute ("-a 1 -b x ..."),
 * NULL if absent or given without a value. */
static const char *option_value(const char *opts, const char *name, char *v, size_t len)
{
  size_t n = strlen(name);
  for (const char *p = opts; (p = strstr(p, name)); p += n) {
    if ((p != opts && p[-1] != ' ') || (p[n] != ' ' && p[n] != 0)) continue;
    const char *q = p + n;
    while (*q == ' ') q++;
    if (!*q || (*q == '-' && !(q[1] >= '0' && q[1] <= '9') && q[1] != '.')) return NULL;
    size_t k = strcspn(q, " ");
    snprintf(v, len, "%.*s", (int)(k < len ? k : len - 1), q);
    return v;
  }
  return NULL;
}

/* A flag's value: 1 true, 0 false, -1 not a truth word; no value is true. */
static int truth(const char *v)
{
  static const char *const t[] = {"1", "true", "yes", "on"}, *const f[] = {"0", "false", "no", "off"};
  if (!v) return 1;
  for (int k = 0; k < 4; k++) {
    if (!strcasecmp(v, t[k])) return 1;
    if (!strcasecmp(v, f[k])) return 0;
  }
  return -1;
}

/* The value of setting key in a `settings` attribute ("key: value; ..."),
 * or NULL. */
static const char *setting_value(const char *settings, const char *key, char *v, size_t len)
{
  size_t n = strlen(key);
  for (const char *p = settings; p && *p; p = strstr(p, "; "), p = p ? p + 2 : NULL)
    if (!strncmp(p, key, n) && p[n] == ':' && p[n + 1] == ' ') {
      size_t k = strcspn(p + n + 2, ";");
      snprintf(v, len, "%.*s", (int)k, p + n + 2);
      return v;
    }
  return NULL;
}

/* Whether both files' settings in effect (their `settings` attributes,
 * written since 2026-11-27) hold the same value of the setting that is
 * option name's whole effect (settings.h). */
static int same_setting(const run *a, const run *b, const char *name)
{
  const char *key = described_setting(name);
  char        sa[16384], sb[16384], x[512], y[512];
  if (!key) return 0;
  attr(a, "settings", sa, sizeof sa), attr(b, "settings", sb, sizeof sb);
  const char *xa = setting_value(sa, key, x, sizeof x), *yb = setting_value(sb, key, y, sizeof y);
  return xa && yb && !strcmp(xa, yb);
}

/* Every option A's run was given (its `options` attribute) that is not
 * free must be given to B's with the same value (0.03 and 3e-2 are one; the
 * CG implementations fpnacg and cg give the same bits), unless both files
 * hold the setting that is the option's whole effect with one value (a
 * default restated). */
static void check_options(const run *a, const char *va, const run *b, const char *vb)
{
  char words[16384], *save = NULL;
  snprintf(words, sizeof words, "%s", va);
  for (char *name = strtok_r(words, " ", &save); name; name = strtok_r(NULL, " ", &save)) {
    char x[256], y[256];
    /* a value, free, or the same in effect */
    if (name[0] != '-' || (name[1] >= '0' && name[1] <= '9') || name[1] == '.' || option_free(name, FREE_COMPARE) ||
        same_setting(a, b, name))
      continue;
    const char *xa = option_value(va, name, x, sizeof x), *yb = option_value(vb, name, y, sizeof y);
    int         inb = 0;
    size_t      n   = strlen(name);
    for (const char *p = vb; (p = strstr(p, name)); p += n)
      if ((p == vb || p[-1] == ' ') && (p[n] == ' ' || !p[n])) inb = 1;
    /* the default is fpnacg */
    int cga = !strcmp(name, "-ksp_type") && xa && (!strcmp(xa, "cg") || !strcmp(xa, "fpnacg"));
    /* scenario values: the attribute `parameters` has them with the defaults */
    if (!inb && (cga || !strncmp(name, "-gs_", 4) || !strncmp(name, "-heat_", 6))) continue;
    if (!inb)
      die("different runs: %s was given %s%s%s, %s was not (a setting of the arithmetic: its differences are not "
          "rounding)",
          a->path, name, xa ? " " : "", xa ? xa : "", b->path);
    char  *ea = NULL, *eb = NULL;
    double na = xa ? strtod(xa, &ea) : 0, nb = yb ? strtod(yb, &eb) : 0;
    int    cg   = cga && yb && (!strcmp(yb, "cg") || !strcmp(yb, "fpnacg"));
    /* -f = -f true = -f 1 */
    int same = (!xa && !yb) || (xa && yb && (!strcmp(xa, yb) || (ea != xa && eb != yb && !*ea && !*eb && na == nb))) ||
               cg || (truth(xa) >= 0 && truth(xa) == truth(yb));
    if (!same)
      die("different runs: %s has %s %s, %s has %s %s (a setting of the arithmetic: its differences are not rounding)",
          a->path, name, xa ? xa : "(no value)", b->path, name, yb ? yb : "(no value)");
  }
}

/* A and B must be runs of one problem: the same scenario, coupling mode and
 * initial condition, the same model time at every step (another -ts_dt), the
 * same scenario parameters (the attribute `parameters`, defaults included)
 * and the same options but the free ones (check_options). Else a difference
 * would be read as the builds' divergence. */
static void check_problem(const run *a, const run *b)
{
  static const char *const keys[] = {"scenario", "coupling", "gs_seed"};
  char va[16384], vb[16384];
  for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
    attr(a, keys[k], va, sizeof va), attr(b, keys[k], vb, sizeof vb);
    if (strcmp(va, "-") && strcmp(vb, "-") && strcmp(va, vb))
      die("different problems: %s has %s %s, %s has %s %s", a->path, keys[k], va, b->path, keys[k], vb);
  }
  for (size_t i = 0; i < a->nt && i < b->nt; i++) { /* the steps both hold (check_series: the same ones) */
    double ta = a->time[i], tb = b->time[i];
    if (!(isnan(ta) && isnan(tb)) && !(fabs(ta - tb) <= 1e-12 * fmax(fabs(ta), fabs(tb))))
      die("different problems: step %d is at model time %.17g in %s and %.17g in %s (another -ts_dt?)", a->step[i], ta,
          a->path, tb, b->path);
  }
  attr(a, "parameters", va, sizeof va), attr(b, "parameters", vb, sizeof vb); /* the values used, defaults included */
  if (strcmp(va, "-") && strcmp(vb, "-") && strcmp(va, vb))
    die("different problems: %s has parameters %s, %s has %s", a->path, va, b->path, vb);
  attr(a, "options", va, sizeof va), attr(b, "options", vb, sizeof vb);
  if (strcmp(va, "-") && strcmp(vb, "-")) check_options(a, va, b, vb), check_options(b, vb, a, va);
}

void compare_check_runs(const run *a, const run *b)
{
  check_grids(a, b), check_series(a, b), check_problem(a, b);
}
