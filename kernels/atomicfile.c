/* kernels/atomicfile.c: unique temporary, checked commit by rename, discard,
 * and removal of dead writers' partials (see atomicfile.h). libc only. */
#define _DEFAULT_SOURCE
#include "atomicfile.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

/* This host's name as it goes into temporary names: a shared file system
 * may hold partials of live runs on other hosts, whose PIDs mean nothing here. */
static void host_tag(char *h, size_t len)
{
  if (gethostname(h, len - 1)) h[0] = 0;
  h[len - 1] = 0;
  for (char *p = h; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.') *p = '_';
  if (!h[0]) snprintf(h, len, "localhost");
}

/* The directory part of path ("." when it has none) and its last component. */
static const char *split(const char *path, char *dir, size_t len)
{
  const char *slash = strrchr(path, '/');
  if (!slash) {
    snprintf(dir, len, ".");
    return path;
  }
  size_t n = slash == path ? 1 : (size_t)(slash - path);
  if (n >= len) n = len - 1;
  memcpy(dir, path, n), dir[n] = 0;
  return slash + 1;
}

int afile_diagnose(const char *path, int err)
{
  struct statvfs sv;
  char           dir[AFILE_PATH_MAX];
  if (err == ENOSPC || err == EDQUOT || err == AFILE_ENOTREG || err == AFILE_EDANGLING || err == AFILE_EPROGRAM ||
      err == AFILE_ESTREAM || err == AFILE_EPROTECTED)
    return err;
  split(path, dir, sizeof dir);
  /* blocks: /proc and /sys have none, and are not full */
  if (!statvfs(dir, &sv) && sv.f_blocks > 0 && (geteuid() == 0 ? sv.f_bfree : sv.f_bavail) == 0) return ENOSPC;
  return err;
}

const char *afile_strerror(int err)
{
  if (err == AFILE_ENOTREG) return "exists and is not a regular file; refusing to replace it";
  if (err == AFILE_EDANGLING) return "is a symbolic link to no file; name the file itself";
  if (err == AFILE_EPROGRAM) return "is a program (executable, ELF or #! script); refusing to replace it";
  if (err == AFILE_EPROTECTED)
    return "is write-protected (no write permission); refusing to replace it: make it writable or name another file";
  if (err == AFILE_ESTREAM)
    return "is where this run's standard input, output or error goes (a redirection); replacing it would lose what the "
           "stream holds: name another file";
  return strerror(err);
}

int afile_remove_stale(const char *target)
{
  char           dir[AFILE_PATH_MAX], prefix[AFILE_PATH_MAX], host[65], path[2 * AFILE_PATH_MAX];
  const char    *base = split(target, dir, sizeof dir);
  size_t         plen, hlen;
  int            removed = 0;
  DIR           *d;
  struct dirent *e;

  host_tag(host, sizeof host);
  hlen = strlen(host);
  plen = (size_t)snprintf(prefix, sizeof prefix, "%s.partial-", base);
  if (!base[0] || plen >= sizeof prefix || !(d = opendir(dir))) return 0;
  while ((e = readdir(d))) {
    const char *p = e->d_name + plen;
    char       *end;
    if (strncmp(e->d_name, prefix, plen) || !isdigit((unsigned char)*p)) continue;
    long pid = strtol(p, &end, 10);
    /* "<pid>" (older versions) or "<pid>.<this host>.XXXXXX" */
    int ours = !*end ||
               (*end == '.' && !strncmp(end + 1, host, hlen) && end[1 + hlen] == '.' && strlen(end + 2 + hlen) == 6);
    if (!ours || pid <= 0 || pid == (long)getpid()) continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive (or not ours to judge) */
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (!unlink(path)) removed++;
  }
  closedir(d);
  return removed;
}

/* Temporaries being written, removed if the process is told to stop: the
 * signals whose default action ends it and that are no fault of the program
 * (SIGINT, SIGTERM as batch systems send at the time limit, SIGHUP, SIGQUIT,
 * SIGUSR1/2, SIGALRM, SIGXCPU at a CPU-time limit, SIGVTALRM, SIGPROF).
 * SIGKILL leaves them to afile_remove_stale. */
#define MAX_ACTIVE 16
static char *volatile active[MAX_ACTIVE];
static const struct {
  int         sig;
  const char *name;
  int         core; /* its default action dumps core: the process exits 128 + sig instead (no core of a stopped run) */
} stops[] = {{SIGHUP, "SIGHUP", 0},       {SIGINT, "SIGINT", 0},   {SIGQUIT, "SIGQUIT", 1}, {SIGUSR1, "SIGUSR1", 0},
             {SIGUSR2, "SIGUSR2", 0},     {SIGALRM, "SIGALRM", 0}, {SIGTERM, "SIGTERM", 0}, {SIGXCPU, "SIGXCPU", 1},
             {SIGVTALRM, "SIGVTALRM", 0}, {SIGPROF, "SIGPROF", 0}};
#define NSTOPS (sizeof stops / sizeof *stops)
static char stop_line[NSTOPS][160]; /* the line afile_handle_signals' handler prints: composed beforehand */

static void on_signal(int sig)
{
  /* async-signal-safe */
  for (int i = 0; i < MAX_ACTIVE; i++) if (active[i]) unlink(active[i]);
  for (size_t k = 0; k < NSTOPS; k++)
    if (stops[k].sig == sig) {
      if (stop_line[k][0]) (void)!write(STDERR_FILENO, stop_line[k], strlen(stop_line[k]));
      if (stops[k].core) _exit(128 + sig);
    }
  signal(sig, SIG_DFL);
  raise(sig); /* delivered when the handler returns: the process ends by the signal, as without a handler */
}

/* The handler on every stop signal that still has its default action. */
static void install(void)
{
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (size_t k = 0; k < NSTOPS; k++) sigaddset(&sa.sa_mask, stops[k].sig); /* one handler at a time: one line */
  for (size_t k = 0; k < NSTOPS; k++)
    if (!sigaction(stops[k].sig, NULL, &old) && old.sa_handler == SIG_DFL) sigaction(stops[k].sig, &sa, NULL);
}

void afile_handle_signals(const char *prog)
{
  for (size_t k = 0; k < NSTOPS && prog; k++)
    snprintf(stop_line[k], sizeof stop_line[k],
             "%s: stopped by %s: the files it was writing are not written (their temporaries removed, the files there "
             "kept); exit %d\n",
             prog, stops[k].name, 128 + stops[k].sig);
  install();
}

static void track(afile *f)
{
  static int installed;
  if (!installed) install(); /* only where nobody else handles the signal */
  installed = 1;
  for (int i = 0; i < MAX_ACTIVE; i++)
    if (!active[i]) {
      active[i] = f->tmp;
      return;
    }
}

static void untrack(afile *f)
{
  for (int i = 0; i < MAX_ACTIVE; i++)
    if (active[i] == f->tmp) active[i] = NULL;
}

/* An existing regular file that is a program: an execute bit, or the
 * first bytes of an ELF binary or a script. */
static int is_program(const char *path)
{
  struct stat st;
  char        head[4] = {0};

  if (stat(path, &st) || !S_ISREG(st.st_mode)) return 0;
  if (st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)) return 1;
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  ssize_t n = read(fd, head, sizeof head);
  close(fd);
  return (n >= 4 && !memcmp(head, "\177ELF", 4)) || (n >= 2 && head[0] == '#' && head[1] == '!');
}

/* An existing regular file with no write permission bit for anyone. */
static int is_protected(const char *path)
{
  struct stat st;
  return !stat(path, &st) && S_ISREG(st.st_mode) && !(st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH));
}

/* Is path the regular file one of the standard streams is open on? */
static int is_stream(const char *path)
{
  struct stat t, s;
  if (stat(path, &t) || !S_ISREG(t.st_mode)) return 0;
  for (int fd = 0; fd <= 2; fd++)
    if (!fstat(fd, &s) && S_ISREG(s.st_mode) && s.st_dev == t.st_dev && s.st_ino == t.st_ino) return 1;
  return 0;
}

int afile_begin(afile *f, const char *target, int stream)
{
  char        host[65], real[AFILE_PATH_MAX];
  struct stat lst;
  mode_t      mask;
  int         fd, n;

  memset(f, 0, sizeof *f);
  if (!target || !target[0]) return ENOENT;
  if (!lstat(target, &lst) && S_ISLNK(lst.st_mode)) {
    /* written through: the file it names is replaced, the link kept */
    if (!realpath(target, real)) return errno == ENOENT ? AFILE_EDANGLING : errno;
    target = real;
  }
  if (is_program(target)) return AFILE_EPROGRAM;
  if (is_protected(target)) return AFILE_EPROTECTED;
  if (is_stream(target)) return AFILE_ESTREAM;
  if (strlen(target) >= sizeof f->target) return ENAMETOOLONG;
  strcpy(f->target, target);
  host_tag(host, sizeof host);
  n = snprintf(f->tmp, sizeof f->tmp, "%s.partial-%ld.%s.XXXXXX", target, (long)getpid(), host);
  if (n < 0 || (size_t)n >= sizeof f->tmp) return ENAMETOOLONG;
  afile_remove_stale(target);
  if ((fd = mkstemp(f->tmp)) < 0) return afile_diagnose(f->tmp, errno);
  mask = umask(0), umask(mask); /* mkstemp makes 0600; an output file gets the usual 0666 & ~umask */
  (void)fchmod(fd, 0666 & ~mask);
  if (stream && !(f->fp = fdopen(fd, "w"))) {
    int e = errno;
    close(fd), unlink(f->tmp);
    return e;
  }
  if (!stream) close(fd);
  f->active = 1;
  track(f);
  return 0;
}

/* After the rename: make the new directory entry durable too (best effort). */
static void sync_dir(const char *target)
{
  char dir[AFILE_PATH_MAX];
  split(target, dir, sizeof dir);
  int fd = open(dir, O_RDONLY | O_DIRECTORY);
  if (fd >= 0) (void)fsync(fd), close(fd);
}

int afile_commit(afile *f)
{
  struct stat st;
  int         err = 0;

  if (!f->active) return EINVAL;
  untrack(f); /* from here the temporary is renamed or removed */
  if (f->fp) {
    /* stdio may have lost errno at the failed write; ferror still says so */
    errno = 0;
    if (fflush(f->fp) == EOF || ferror(f->fp)) err = errno ? errno : EIO;
    if (!err && fsync(fileno(f->fp))) err = errno;
    if (fclose(f->fp) && !err) err = errno;
    f->fp = NULL;
  } else { /* written and closed by a library: make its bytes durable */
    int fd = open(f->tmp, O_RDONLY);
    if (fd < 0) err = errno;
    else {
      if (fsync(fd)) err = errno;
      close(fd);
    }
  }
  /* f->target is the link's file: never a link */
  if (!err && !lstat(f->target, &st) && !S_ISREG(st.st_mode)) err = AFILE_ENOTREG;
  if (!err && rename(f->tmp, f->target)) err = errno;
  if (err) {
    err = afile_diagnose(f->tmp, err);
    unlink(f->tmp);
    f->active = 0;
    return err;
  }
  sync_dir(f->target);
  f->active = 0;
  return 0;
}

int afile_commit_copy(afile *f)
{
  afile   c;
  char    buf[1 << 16];
  ssize_t n = 0;
  int     err, in, out;

  if (!f->active || f->fp) return EINVAL;
  if ((err = afile_begin(&c, f->target, 0))) return err;
  in = open(f->tmp, O_RDONLY), out = open(c.tmp, O_WRONLY | O_TRUNC);
  err = in < 0 || out < 0 ? errno : 0;
  while (!err && (n = read(in, buf, sizeof buf)) > 0)
    for (char *p = buf; !err && n > 0;) {
      ssize_t w = write(out, p, (size_t)n);
      if (w < 0) err = errno;
      else p += w, n -= w;
    }
  if (!err && n < 0) err = errno;
  if (in >= 0) close(in);
  if (out >= 0 && close(out) && !err) err = errno;
  if (err) {
    err = afile_diagnose(c.tmp, err);
    afile_discard(&c);
    return err;
  }
  return afile_commit(&c); /* syncs the copy, renames it over the target */
}

void afile_discard(afile *f)
{
  if (!f->active) return;
  untrack(f);
  if (f->fp) fclose(f->fp);
  f->fp = NULL;
  unlink(f->tmp);
  f->active = 0;
}
