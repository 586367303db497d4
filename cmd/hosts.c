/* SPDX-License-Identifier: MIT */
/*
 * Which hosts a push goes to: the HOSTS argument, a host file (-f), or
 * Slurm's allocation; minus excluded hosts (-x); duplicates dropped.  And
 * the host lists written back: the failed line, --ok-file, --failed-file.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "util/log.h"
#include "hosts/topo.h"
#include "util/path.h"

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
 * outside brackets (no host name or address holds one; a step range,
 * node[1-30/4], does). */
static bool
never_a_host(const char *arg)
{
	bool in = false;

	if (strcmp(arg, "-") == 0)
		return true;
	for (; *arg != '\0'; arg++) {
		if (*arg == '[' || *arg == ']')
			in = *arg == '[';
		else if (*arg == '/' && !in)
			return true;
	}
	return false;
}

/* Does the resolver know no host of this name?  Only a definite answer
 * counts: a resolver that cannot tell (no DNS server) says nothing. */
static bool
no_such_name(const char *name)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	int rc = getaddrinfo(name, NULL, &hints, &res);

	if (res != NULL)
		freeaddrinfo(res);
	return rc == EAI_NONAME || rc == EAI_NODATA;
}

/* Is `arg`, where the hosts go, rather a file name with a typo: one plain
 * name (no list, range or port) with a '.', that could be a host's (what
 * could not is for the host list's parser to say), no address, and no
 * host's name?  (One lookup, for this one argument.) */
static bool
mistyped_file(const char *arg)
{
	struct hostlist one = { .max = 1 };
	struct rd_err err = { 0 };
	struct in_addr a;
	bool plain;

	if (strpbrk(arg, ",[]: \t") != NULL || strchr(arg, '.') == NULL ||
	    inet_pton(AF_INET, arg, &a) == 1)
		return false;
	plain = hostlist_parse(&one, arg, &err) == 0;
	hostlist_clear(&one);
	return plain && no_such_name(arg);
}

/* Is the last argument a host list rather than a file?  Without -f, -w
 * or Slurm it must be; inside an allocation, a lone argument, an
 * existing local path, a name that cannot be a host or a mistyped file
 * name (mistyped_file) is a file and the hosts come from
 * SLURM_JOB_NODELIST.  Returns the host list, or NULL if there is none in
 * the arguments; *nfiles is how many are files. */
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
	     never_a_host(last) || mistyped_file(last))) {
		if (o->verbose > 0)
			warnx_("hosts from SLURM_JOB_NODELIST: %s", slurm);
		return slurm;
	}
	*nfiles = o->nargs - 1;
	return last;
}

/* pdsh's -f N (its fanout) given to rdmcp, whose -f is a host file: a
 * number that names no file.  -EINVAL after a message; else 0. */
static int
check_fanout_habit(const char *hostfile)
{
	if (hostfile[strspn(hostfile, "0123456789")] != '\0' ||
	    access(hostfile, F_OK) == 0)
		return 0;
	warnx_("-f %s: no host file '%s'. rdmcp's -f reads the hosts from a "
	       "file (pdsh's -w ^FILE); there is no fanout to set: every host "
	       "receives at once and passes blocks on (--fanout is --rsh's, "
	       "for the remote commands)", hostfile, hostfile);
	return -EINVAL;
}

/* The hosts of a host file appended to hl.  0, or -errno with err set
 * (-EINVAL with err clear: slurp said why). */
static int
parse_host_file(const char *path, struct hostlist *hl, struct rd_err *err)
{
	char *text = slurp(path, "host file");
	int rc;

	if (text == NULL)
		return -EINVAL;
	rc = hostlist_parse_file(hl, text, path, err);
	free(text);
	return rc;
}

/* The hosts of a -w or -x value appended to hl: a host list, or with a
 * '^' a host file (pdsh's and clush's -w ^FILE).  As parse_host_file. */
static int
parse_host_arg(const char *arg, struct hostlist *hl, struct rd_err *err)
{
	if (arg[0] == '^')
		return parse_host_file(arg + 1, hl, err);
	return hostlist_parse(hl, arg, err);
}

/* The hosts of -f and every -w, or of spec, appended to hl.  Returns 0,
 * or -errno with err set (-EINVAL with err clear: said why). */
static int
parse_hosts(const struct opts *o, const char *spec, struct hostlist *hl,
	    struct rd_err *err)
{
	size_t i;
	int rc = 0;

	if (spec != NULL)
		return hostlist_parse(hl, spec, err);
	if (o->hostfile != NULL) {
		rc = check_fanout_habit(o->hostfile);
		if (rc == 0)
			rc = parse_host_file(o->hostfile, hl, err);
	}
	for (i = 0; rc == 0 && i < o->nwlists; i++)
		rc = parse_host_arg(o->wlists[i], hl, err);
	return rc;
}

/* -x: leave out the hosts its entries name (hostlist_leave_out), and warn
 * of each entry that names none (a typo, or a host not in the list).
 * 0, or -ENOMEM after a message. */
static int
leave_out(const struct opts *o, struct hostlist *hl, const struct hostlist *ex)
{
	bool *matched = calloc(ex->n ? ex->n : 1, sizeof(*matched));
	char *list = NULL;
	size_t i, n = 0;

	if (matched == NULL || hostlist_leave_out(hl, ex, o->port,
						  matched) < 0) {
		free(matched);
		warnx_("-x: out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < ex->n; i++) {
		matched[i] = !matched[i];	/* now: names no host */
		n += matched[i];
	}
	if (n > 0)
		list = hosts_compressed(ex, matched, true);
	if (list != NULL)
		warnx_("warning: -x %s: %s in the host list, not left out",
		       list, n > 1 ? "none of these is" : "no such host");
	free(list);
	free(matched);
	return 0;
}

/* The last argument, where the hosts go, is a file here, or a mistyped
 * file name: the host list was forgotten.  -EINVAL after a message; 0 if
 * it may be hosts. */
static int
check_last_is_hosts(const char *spec)
{
	struct stat st;

	if (never_a_host(spec)) {
		warnx_("'%s' is not a host list but a file name (hosts hold "
		       "no '/'): give the hosts last, or with -w or -f", spec);
		return -EINVAL;
	}
	if (lstat(spec, &st) == 0) {
		warnx_("'%s', last, is where the hosts go, but it is %s here: "
		       "are the hosts missing? Give them last, or with -w or "
		       "-f (-w %s if a host has that name)", spec,
		       path_kind(st.st_mode), spec);
		return -EINVAL;
	}
	if (mistyped_file(spec)) {
		warnx_("'%s', last, is where the hosts go, but no host has "
		       "that name, and no file here either: a mistyped FILE, "
		       "and the hosts missing? Give them last, or with -w or "
		       "-f", spec);
		return -EINVAL;
	}
	return 0;
}

/* pdcp's habit, 'pdcp -w HOSTS -r SRC DEST': with the hosts given
 * otherwise (-w, -f, Slurm) and no -d, a last argument that is a
 * directory here is taken for a destination, which rdmcp would copy as a
 * source (each source lands at its own path).  -EINVAL after a message;
 * "DIR/." names the directory as a source on purpose. */
static int
check_pdcp_dest(const struct opts *o, int nfiles)
{
	const char *last = nfiles > 0 ? o->args[nfiles - 1] : NULL;
	size_t len = last != NULL ? strlen(last) : 0;
	struct stat st;

	if (o->dest_dir != NULL || nfiles < 2 || nfiles != o->nargs ||
	    (len >= 2 && strcmp(last + len - 2, "/.") == 0) ||
	    stat(last, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	warnx_("'%s', last, is a directory here: did you mean -d %s%s? "
	       "rdmcp takes the destination with -d only, and would copy "
	       "'%s' as a source too, every source to its own path (to mean "
	       "that, name it other than last, or as '%s/.')", last, last,
	       last[len - 1] == '/' ? "" : "/", last, last);
	return -EINVAL;
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
	if (spec != NULL && nfiles < o->nargs && check_last_is_hosts(spec) < 0)
		return -EINVAL;
	return check_pdcp_dest(o, nfiles);
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
		hr->own = own_rack(t, o->bind);
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
		rc = parse_host_arg(o->xlists[i], &ex, &err);
	if (rc == -EINVAL && err.code == 0) {
		hostlist_clear(&ex);
		return rc;	/* said why */
	}
	if (rc < 0) {
		warnx_("%s", err.code != 0 ? err.msg : strerror(-rc));
		hostlist_clear(&ex);
		return rc == -ENOMEM ? rc : -EINVAL;
	}
	rc = leave_out(o, hl, &ex);
	hostlist_clear(&ex);
	if (rc < 0)
		return rc;
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
