/* SPDX-License-Identifier: MIT */
/*
 * Which hosts a push goes to: the HOSTS argument, a host file (-f), or
 * Slurm's allocation; minus excluded hosts (-x); duplicates dropped.  And
 * the host lists written back: the failed line, --ok-file, --failed-file.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "util/log.h"
#include "hosts/topo.h"

#define MAX_HOSTFILE (64u << 20)

/* The host (or topology: `what`) file opened ("-": a copy of stdin): a
 * descriptor, or -errno after a message. */
static int
open_host_file(const char *path, const char *what)
{
	struct stat st;
	int fd = strcmp(path, "-") == 0 ? dup(0) : open(path, O_RDONLY);
	int rc = 0;

	if (fd < 0 || fstat(fd, &st) < 0)
		rc = -errno;
	else if (S_ISDIR(st.st_mode))
		rc = -EISDIR;
	if (rc == 0)
		return fd;
	warnx_("cannot read %s '%s': %s", what, path, strerror(-rc));
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The whole of a host (or topology: `what`) file ("-": stdin),
 * NUL-terminated, or NULL after a message. */
static char *
slurp(const char *path, const char *what)
{
	char *text = NULL, *grown;
	size_t len = 0, cap = 0;
	ssize_t n = 1;
	int fd = open_host_file(path, what);

	while (fd >= 0 && n != 0) {
		if (len + 1 >= cap) {
			cap = cap ? cap * 2 : 65536;
			grown = cap <= MAX_HOSTFILE + 1 ? realloc(text, cap) : NULL;
			if (grown == NULL) {
				warnx_("%s '%s' is too large", what, path);
				break;
			}
			text = grown;
		}
		n = read(fd, text + len, cap - len - 1);
		if (n < 0 && errno != EINTR) {
			warnx_("cannot read %s '%s': %s", what, path,
			       strerror(errno));
			break;
		}
		len += n > 0 ? (size_t)n : 0;
	}
	if (fd >= 0)
		close(fd);
	if (n != 0) {		/* stopped early: an error */
		free(text);
		return NULL;
	}
	text[len] = '\0';
	return text;
}

/* A file name, never a host: "-" (standard input) or a name with a '/'
 * (no host name or address holds one). */
static bool
never_a_host(const char *arg)
{
	return strcmp(arg, "-") == 0 || strchr(arg, '/') != NULL;
}

/* Is the last argument a host list rather than a file?  Without -f, -w
 * or Slurm it must be; inside an allocation, a lone argument, an
 * existing local path or a name that cannot be a host is a file and the
 * hosts come from SLURM_JOB_NODELIST.  Returns the host list, or NULL
 * if there is none in the arguments; *nfiles is how many are files. */
static const char *
hosts_source(const struct opts *o, int *nfiles)
{
	const char *slurm = getenv("SLURM_JOB_NODELIST");
	const char *last = o->nargs > 0 ? o->args[o->nargs - 1] : NULL;

	*nfiles = o->nargs;
	if (o->hostfile != NULL || o->nwlists > 0)
		return NULL;
	if (slurm != NULL && slurm[0] != '\0' && last != NULL &&
	    (o->nargs == 1 || access(last, F_OK) == 0 ||
	     never_a_host(last))) {
		if (o->verbose > 0)
			warnx_("hosts from SLURM_JOB_NODELIST: %s", slurm);
		return slurm;
	}
	*nfiles = o->nargs - 1;
	return last;
}

/* The hosts of -f and every -w, or of spec, appended to hl.  Returns 0,
 * or -errno with err set. */
static int
parse_hosts(const struct opts *o, const char *spec, struct hostlist *hl,
	    struct rd_err *err)
{
	char *text;
	size_t i;
	int rc = 0;

	if (spec != NULL)
		return hostlist_parse(hl, spec, err);
	if (o->hostfile != NULL) {
		text = slurp(o->hostfile, "host file");
		if (text == NULL)
			return -EINVAL;	/* slurp said why */
		rc = hostlist_parse_file(hl, text, o->hostfile, err);
		free(text);
	}
	for (i = 0; rc == 0 && i < o->nwlists; i++)
		rc = hostlist_parse(hl, o->wlists[i], err);
	return rc;
}

/* Usage errors in where the hosts come from: -EINVAL after a message. */
static int
check_hosts_source(const struct opts *o, const char *spec, int nfiles)
{
	if (nfiles < 1 || (spec == NULL && o->hostfile == NULL &&
			   o->nwlists == 0)) {
		warnx_("need at least one FILE and hosts (a HOSTS argument, "
		       "-w HOSTS, -f FILE, or a Slurm allocation)");
		return -EINVAL;
	}
	if (spec != NULL && never_a_host(spec)) {
		warnx_("'%s' is not a host list but a file name (hosts hold "
		       "no '/'): give the hosts last, or with -w or -f", spec);
		return -EINVAL;
	}
	return 0;
}

/* The rack of this machine in t, by its host name; -1 if not listed. */
static int
own_rack(const struct topo *t)
{
	char name[256];

	if (gethostname(name, sizeof(name) - 1) < 0)
		return -1;
	name[sizeof(name) - 1] = '\0';
	return topo_rack_of(t, name);
}

/* Say (-v) which racks the hosts are in, in the order they will go. */
static void
tell_racks(const struct topo *t, const char *file, const int *rack_of,
	   size_t n)
{
	size_t i = 0, j;

	while (i < n) {
		for (j = i; j < n && rack_of[j] == rack_of[i]; j++)
			;
		if (rack_of[i] >= 0)
			log_info("rack %s: %zu host%s", topo_rack_name(t,
				 (size_t)rack_of[i]), j - i, j - i > 1 ? "s" : "");
		else
			warnx_("warning: %zu host%s in no rack of the topology "
			       "(%s): they come last", j - i,
			       j - i > 1 ? "s are" : " is", file);
		i = j;
	}
}

/* --topology -: standard input, unless the hosts or a source are there */
static int
check_topology_stdin(const struct opts *o, int nfiles)
{
	const char *clash = NULL;
	int i;

	if (strcmp(o->topology, "-") != 0)
		return 0;
	if (o->hostfile != NULL && strcmp(o->hostfile, "-") == 0)
		clash = "the hosts (-f -)";
	for (i = 0; i < nfiles; i++)
		if (strcmp(o->args[i], "-") == 0)
			clash = "a source (-)";
	if (clash == NULL)
		return 0;
	warnx_("standard input cannot be both %s and the topology "
	       "(--topology -)", clash);
	return -EINVAL;
}

/* --topology: put the hosts in rack order, this machine's rack first;
 * their racks and this machine's in hr. */
static int
apply_topology(const struct opts *o, struct hostlist *hl,
	       struct host_racks *hr)
{
	struct rd_err err = { 0 };
	struct topo *t = NULL;
	char *text = slurp(o->topology, "topology file");
	int *rack_of = calloc(hl->n ? hl->n : 1, sizeof(*rack_of));
	int rc = text == NULL ? -EINVAL : 0;	/* slurp said why */

	if (rc == 0 && rack_of == NULL) {
		warnx_("%s", strerror(ENOMEM));
		rc = -ENOMEM;
	}
	if (rc == 0 && (rc = topo_parse(text, o->topology, &t, &err)) < 0)
		warnx_("%s", err.code != 0 ? err.msg : strerror(-rc));
	if (rc == 0) {
		hr->own = own_rack(t);
		rc = topo_order(t, hr->own, hl->hosts, hl->n, rack_of);
		if (rc < 0)
			warnx_("--topology: %s", strerror(-rc));
	}
	if (rc == 0) {
		tell_racks(t, o->topology, rack_of, hl->n);
		hr->rack_of = rack_of;
		rack_of = NULL;
	}
	topo_free(t);
	free(rack_of);
	free(text);
	return rc == -ENOMEM ? rc : rc < 0 ? -EINVAL : 0;
}

int
gather_hosts(const struct opts *o, struct hostlist *hl, int *nfiles,
	     struct host_racks *hr)
{
	struct hostlist ex = { 0 };
	struct rd_err err = { 0 };
	const char *spec = hosts_source(o, nfiles);
	size_t dups, i;
	int rc = check_hosts_source(o, spec, *nfiles);

	if (rc < 0)
		return rc;
	rc = parse_hosts(o, spec, hl, &err);
	for (i = 0; rc == 0 && i < o->nxlists; i++)
		rc = hostlist_parse(&ex, o->xlists[i], &err);
	if (rc == -EINVAL && err.code == 0)
		return rc;	/* slurp said why */
	if (rc < 0) {
		warnx_("%s", err.code != 0 ? err.msg : strerror(-rc));
		hostlist_clear(&ex);
		return rc == -ENOMEM ? rc : -EINVAL;
	}
	hostlist_exclude(hl, &ex);
	hostlist_clear(&ex);
	dups = hostlist_dedupe(hl);
	if (dups > 0)
		warnx_("warning: %zu duplicate host%s ignored", dups,
		       dups > 1 ? "s" : "");
	if (hl->n == 0) {
		warnx_("no hosts to copy to%s", o->nxlists ? " (all excluded)"
							   : "");
		return -EINVAL;
	}
	if (o->topology != NULL && ((rc = check_topology_stdin(o, *nfiles)) < 0 ||
				    (rc = apply_topology(o, hl, hr)) < 0))
		return rc;
	return refuse_self(hl, o->bind);
}

/* hosts[i] with pick[i] == want, compressed; malloc'd or NULL. */
char *
hosts_compressed(const struct hostlist *hl, const bool *failed, bool want)
{
	bool *pick = calloc(hl->n ? hl->n : 1, sizeof(*pick));
	char *buf = NULL;
	long need;
	size_t i;

	if (pick == NULL)
		return NULL;
	for (i = 0; i < hl->n; i++)
		pick[i] = failed[i] == want;
	need = hostlist_compress(hl->hosts, hl->n, pick, NULL, 0);
	if (need >= 0)
		buf = malloc((size_t)need + 1);
	if (buf != NULL)
		hostlist_compress(hl->hosts, hl->n, pick, buf, (size_t)need + 1);
	free(pick);
	return buf;
}

/* Could `path` be written: an existing file we may open for writing, or
 * a new name in a directory where we may create it?  Creates and changes
 * nothing.  Returns 0 or -errno. */
static int
writable(const char *path)
{
	char *copy = strdup(path), *dir;
	struct stat st;
	int fd, rc = 0;

	if (copy == NULL)
		return -ENOMEM;
	dir = dirname(copy);	/* "." for a bare name */
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd >= 0)
		close(fd);
	else if (errno != ENOENT)
		rc = -errno;
	else if (stat(dir, &st) < 0)
		rc = -errno;
	else if (!S_ISDIR(st.st_mode))
		rc = -ENOTDIR;
	else if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0)
		rc = -errno;
	free(copy);
	return rc;
}

int
check_host_files(const char *ok_file, const char *failed_file)
{
	const char *paths[2] = { ok_file, failed_file };
	const char *opts[2] = { "--ok-file", "--failed-file" };
	int i, rc;

	if (ok_file != NULL && failed_file != NULL &&
	    strcmp(ok_file, failed_file) == 0) {
		warnx_("--ok-file and --failed-file are both '%s'", ok_file);
		return -EINVAL;
	}
	for (i = 0; i < 2; i++) {
		rc = paths[i] != NULL ? writable(paths[i]) : 0;
		if (rc < 0) {
			warnx_("cannot write %s '%s': %s (nothing was sent)",
			       opts[i], paths[i], strerror(-rc));
			return rc == -EINVAL ? -EIO : rc;
		}
	}
	return 0;
}

/* Write the hosts with failed[i] == want to path, one line.  Returns 0 or
 * -errno after a message. */
int
write_host_file(const char *path, const struct hostlist *hl,
		const bool *failed, bool want)
{
	char *list = hosts_compressed(hl, failed, want);
	FILE *f;
	bool ok;

	if (list == NULL) {
		warnx_("cannot write '%s': out of memory", path);
		return -ENOMEM;
	}
	f = fopen(path, "w");
	ok = f != NULL && fprintf(f, "%s%s", list, list[0] ? "\n" : "") >= 0;
	if (f != NULL && fclose(f) != 0)
		ok = false;
	free(list);
	if (!ok) {
		warnx_("cannot write '%s': %s", path, strerror(errno));
		return -EIO;
	}
	return 0;
}
