/* kernels/fault.c: the spec parser and the bit flip of kernels/fault.h. One
 * armed fault per fault_ctx; a seeded random entry or bit is drawn from the
 * spec's seed when the site first reports the array's global size. */
#include "fault.h"
#include "hashrng.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const fault_site_names[FAULT_NSITES] = {"state", "iterate", "operator", "gradient", "weight", "activation"};

int fault_site_is_solver(fault_site s) { return s == FAULT_STATE || s == FAULT_ITERATE || s == FAULT_OPERATOR; }
int fault_site_bits(fault_site s) { return fault_site_is_solver(s) ? 64 : 32; }

static int fail(char *err, size_t len, const char *fmt, ...)
{
  va_list ap;
  int     n = snprintf(err, len, "-inject: ");
  va_start(ap, fmt);
  if (n >= 0 && (size_t)n < len) vsnprintf(err + n, len - (size_t)n, fmt, ap);
  va_end(ap);
  return -1;
}

/* A whole decimal number >= lo written in full ("random" gives -1 where
 * allowed): base 10 always (step=010 is step 10, not octal 8), no sign
 * games, no wrap beyond 64 bits. */
static int number(const char *key, const char *v, long long lo, int random_ok, long long *out, char *err, size_t len)
{
  char *end;
  if (random_ok && !strcmp(v, "random")) return *out = -1, 0;
  if (!*v || strspn(v, "0123456789") != strlen(v))
    return fail(err, len, "%s=%s is not a whole decimal number%s", key, v, random_ok ? " or 'random'" : "");
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (*end || errno) return fail(err, len, "%s=%s is out of range (at most %lld)", key, v, LLONG_MAX);
  if (x < lo) return fail(err, len, "%s=%s: must be >= %lld", key, v, lo);
  *out = x;
  return 0;
}

int fault_parse(const char *text, fault_spec *spec, char *err, size_t errlen)
{
  char      buf[512], *save = NULL;
  int       have_site = 0, have_step = 0, have_epoch = 0;
  long long x;

  *spec = (fault_spec){.site = FAULT_STATE, .at = -1, .replica = -1, .entry = -1, .bit = -1, .call = 1, .seed = 1};
  if (!text || !*text) return fail(err, errlen, "empty spec (e.g. -inject site=state,step=10,bit=0)");
  if (strlen(text) >= sizeof buf) return fail(err, errlen, "spec too long");
  if (text[0] == ',' || text[strlen(text) - 1] == ',' ||
      strstr(text, ",,")) /* strtok_r skips empty entries: a typo ran */
    return fail(err, errlen, "empty entry in '%s' (entries are key=value, separated by single commas)", text);
  strcpy(buf, text);
  char seen[8][8] = {{0}};
  int  nseen      = 0;
  for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(kv, '=');
    if (!eq)
      return fail(err, errlen, "'%s' is not key=value (keys: site, step, epoch, replica, entry, bit, call, seed)", kv);
    *eq = 0;
    const char *k = kv, *v = eq + 1;
    for (int j = 0; j < nseen; j++) /* the last would silently win */
      if (!strcmp(seen[j], k)) return fail(err, errlen, "%s= given twice", k);
    if (nseen < 8 && strlen(k) < sizeof seen[0]) strcpy(seen[nseen++], k);
    if (!strcmp(k, "site")) {
      int s;
      for (s = 0; s < FAULT_NSITES && strcmp(v, fault_site_names[s]); s++) {}
      if (s == FAULT_NSITES)
        return fail(err, errlen, "site=%s: unknown (state, iterate, operator, gradient, weight, activation)", v);
      spec->site = (fault_site)s, have_site = 1;
    } else if (!strcmp(k, "step") || !strcmp(k, "epoch")) {
      if (number(k, v, !strcmp(k, "step") ? 1 : 0, 0, &x, err, errlen)) return -1;
      spec->at = x, have_step |= !strcmp(k, "step"), have_epoch |= !strcmp(k, "epoch");
    } else if (!strcmp(k, "replica")) {
      if (number(k, v, 0, 0, &x, err, errlen)) return -1;
      if (x > 1000000) return fail(err, errlen, "replica=%s: out of range", v);
      spec->replica = (int)x;
    } else if (!strcmp(k, "entry")) {
      if (number(k, v, 0, 1, &spec->entry, err, errlen)) return -1;
    } else if (!strcmp(k, "bit")) {
      if (number(k, v, 0, 1, &x, err, errlen)) return -1;
      if (x > 63)
        return fail(err, errlen, "bit=%s: must be in [0, 63] (double) or [0, 31] (float sites), or 'random'", v);
      spec->bit = (int)x;
    } else if (!strcmp(k, "call")) {
      if (number(k, v, 1, 0, &spec->call, err, errlen)) return -1;
    } else if (!strcmp(k, "seed")) {
      if (number(k, v, 0, 0, &x, err, errlen)) return -1;
      spec->seed = (uint64_t)x;
    } else return fail(err, errlen, "unknown key '%s' (keys: site, step, epoch, replica, entry, bit, call, seed)", k);
  }
  if (!have_site) return fail(err, errlen, "no site= (state, iterate, operator, gradient, weight, activation)");
  if (have_step && have_epoch) return fail(err, errlen, "give step= or epoch=, not both");
  if (fault_site_is_solver(spec->site) && !have_step)
    return fail(err, errlen, "site=%s needs step=N (the step that produces state N, from 1)",
                fault_site_names[spec->site]);
  if (!fault_site_is_solver(spec->site) && !have_epoch)
    return fail(err, errlen, "site=%s needs epoch=N (from 0)", fault_site_names[spec->site]);
  if (spec->bit >= fault_site_bits(spec->site))
    return fail(err, errlen, "bit=%d: site %s holds %d-bit values (bits 0..%d)", spec->bit,
                fault_site_names[spec->site], fault_site_bits(spec->site), fault_site_bits(spec->site) - 1);
  if (spec->call != 1 && spec->site != FAULT_ITERATE && spec->site != FAULT_OPERATOR && spec->site != FAULT_ACTIVATION)
    return fail(err, errlen, "call= applies to sites iterate, operator and activation only");
  return 0;
}

void fault_init(fault_ctx *f)
{
  memset(f, 0, sizeof *f);
  f->armed = -1;
}

void fault_arm(fault_ctx *f, const fault_spec *spec)
{
  f->spec = *spec, f->calls = 0;
  memset(&f->rec, 0, sizeof f->rec);
  f->rec.site = spec->site, f->rec.at = spec->at, f->rec.replica = spec->replica, f->rec.entry = spec->entry,
  f->rec.bit = spec->bit;
  f->armed = (int)spec->site;
}

void fault_disarm(fault_ctx *f) { f->armed = -1; }

const fault_record *fault_get_record(const fault_ctx *f) { return &f->rec; }

/* This call is the armed one: resolve a random entry/bit against N. Returns
 * the local index to flip, or -1 (not this call, or not held here). */
static long long target(fault_ctx *f, size_t n, long long offset, long long N)
{
  fault_record *rec = &f->rec;
  if (++f->calls != f->spec.call || N <= 0) return -1;
  fault_disarm(f); /* once */
  rec->nentries = N;
  if (rec->entry < 0) rec->entry = (long long)(mix64(f->spec.seed * 2 + 1) % (uint64_t)N);
  if (rec->bit < 0) rec->bit = (int)(mix64(f->spec.seed * 2 + 2) % (uint64_t)fault_site_bits(f->spec.site));
  if (rec->entry >= N) return -1; /* out of range: nothing flips; the driver compares entry with nentries */
  if (rec->entry < offset || rec->entry >= offset + (long long)n) return -1;
  return rec->entry - offset;
}

/* Flip bit `bit` of the 8- or 4-byte value at p, through its integer image
 * (so that bit 0 is the least significant mantissa bit on any byte order). */
static void flip(void *p, size_t size, int bit)
{
  if (size == 8) {
    uint64_t b;
    memcpy(&b, p, 8), b ^= (uint64_t)1 << bit, memcpy(p, &b, 8);
  } else {
    uint32_t b;
    memcpy(&b, p, 4), b ^= (uint32_t)1 << bit, memcpy(p, &b, 4);
  }
}

long long fault_take_(fault_ctx *f, fault_site s, size_t n, long long offset, long long N)
{
  return fault_is_armed(f, s) ? target(f, n, offset, N) : -1;
}

void fault_flip_double(fault_ctx *f, double *v)
{
  f->rec.old_value = *v;
  flip(v, sizeof *v, f->rec.bit);
  f->rec.new_value = *v, f->rec.fired = 1;
}

int fault_hit_double_(fault_ctx *f, fault_site s, double *x, size_t n, long long offset, long long N)
{
  long long i = fault_take_(f, s, n, offset, N);
  if (i < 0) return 0;
  fault_flip_double(f, &x[i]);
  return 1;
}

int fault_hit_float_(fault_ctx *f, fault_site s, float *x, size_t n, long long offset, long long N)
{
  long long i;
  if (!fault_is_armed(f, s) || (i = target(f, n, offset, N)) < 0) return 0;
  f->rec.old_value = x[i];
  flip(&x[i], sizeof x[i], f->rec.bit);
  f->rec.new_value = x[i], f->rec.fired = 1;
  return 1;
}
