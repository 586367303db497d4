/* SPDX-License-Identifier: MIT */
/*
 * rdmcp - copy files to many hosts at once with the RDMC binomial pipeline.
 *
 * This file parses the command line and dispatches to a mode (modes.c).
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/auth.h"
#include "cmd.h"
#include "util/log.h"
#include "proto/proto.h"
#include "daemon/serve.h"

#ifndef RDMCP_VERSION
#define RDMCP_VERSION "dev"
#endif

enum {
	OPT_ALLOW_SETID = 256,
	OPT_BIND,
	OPT_FAILED_FILE,
	OPT_GENKEY,
	OPT_JSON,
	OPT_KEEP_OWNERS,
	OPT_KEY,
	OPT_OK_FILE,
	OPT_OWNER,
	OPT_PROGRESS,
	OPT_RETRIES,
	OPT_BLOCKS,
	OPT_CONNECT_TIMEOUT,
	OPT_DEVICE,
	OPT_FORCE,
	OPT_GID_INDEX,
	OPT_HOSTS,
	OPT_INTERRUPTS,
	OPT_LISTEN,
	OPT_PLAN,
	OPT_PREFIX,
	OPT_ROOT,
	OPT_SEND_LIBS,
	OPT_SERVE,
	OPT_STATE_DIR,
	OPT_TRANSPORT,
	OPT_VERIFY,
	OPT_WINDOW,
	OPT_ONCE,
	OPT_RSH,
	OPT_REMOTE_PATH,
	OPT_REMOTE_OPTS,
	OPT_FANOUT,
	OPT_TRACE,
	OPT_SIZE,
	OPT_NAME,
	OPT_BWLIMIT,
	OPT_MAX_JOBS,
	OPT_MAX_BLOCKS,
	OPT_TOPOLOGY,
	OPT_SLOW,
	OPT_RACKS,
	OPT_JOB_IDLE_TIMEOUT,
	OPT_KEEP_PARTIAL,
	OPT_LOG_TIME,
};

/* Sorted by long name (make check-docs checks). */
static const struct option long_options[] = {
	{ "algorithm", required_argument, NULL, 'a' },
	{ "allow-setid", no_argument, NULL, OPT_ALLOW_SETID },
	{ "bind", required_argument, NULL, OPT_BIND },
	{ "block-size", required_argument, NULL, 'b' },
	{ "blocks", required_argument, NULL, OPT_BLOCKS },
	{ "bwlimit", required_argument, NULL, OPT_BWLIMIT },
	{ "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
	{ "dest", required_argument, NULL, 'd' },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "exclude", required_argument, NULL, 'x' },
	{ "failed-file", required_argument, NULL, OPT_FAILED_FILE },
	{ "fanout", required_argument, NULL, OPT_FANOUT },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "genkey", required_argument, NULL, OPT_GENKEY },
	{ "gid-index", required_argument, NULL, OPT_GID_INDEX },
	{ "help", no_argument, NULL, 'h' },
	{ "hostfile", required_argument, NULL, 'f' },
	{ "hosts", required_argument, NULL, OPT_HOSTS },
	{ "interrupts", no_argument, NULL, OPT_INTERRUPTS },
	{ "job-idle-timeout", required_argument, NULL, OPT_JOB_IDLE_TIMEOUT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "keep-owners", no_argument, NULL, OPT_KEEP_OWNERS },
	{ "keep-partial", required_argument, NULL, OPT_KEEP_PARTIAL },
	{ "key", required_argument, NULL, OPT_KEY },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "log-time", required_argument, NULL, OPT_LOG_TIME },
	{ "max-blocks", required_argument, NULL, OPT_MAX_BLOCKS },
	{ "max-jobs", required_argument, NULL, OPT_MAX_JOBS },
	{ "name", required_argument, NULL, OPT_NAME },
	{ "nodes", required_argument, NULL, 'w' },
	{ "ok-file", required_argument, NULL, OPT_OK_FILE },
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "owner", required_argument, NULL, OPT_OWNER },
	{ "plan", no_argument, NULL, OPT_PLAN },
	{ "port", required_argument, NULL, 'P' },
	{ "prefix", required_argument, NULL, OPT_PREFIX },
	{ "preserve", no_argument, NULL, 'p' },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "racks", required_argument, NULL, OPT_RACKS },
	{ "recursive", no_argument, NULL, 'r' },
	{ "remote-opts", required_argument, NULL, OPT_REMOTE_OPTS },
	{ "remote-path", required_argument, NULL, OPT_REMOTE_PATH },
	{ "retries", required_argument, NULL, OPT_RETRIES },
	{ "root", required_argument, NULL, OPT_ROOT },
	{ "rsh", required_argument, NULL, OPT_RSH },
	{ "send-libs", no_argument, NULL, OPT_SEND_LIBS },
	{ "serve", no_argument, NULL, OPT_SERVE },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "slow", required_argument, NULL, OPT_SLOW },
	{ "sparse", no_argument, NULL, 'S' },
	{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
	{ "timeout", required_argument, NULL, 't' },
	{ "topology", required_argument, NULL, OPT_TOPOLOGY },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "transport", required_argument, NULL, OPT_TRANSPORT },
	{ "verbose", no_argument, NULL, 'v' },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "version", no_argument, NULL, 'V' },
	{ "whole-file", no_argument, NULL, 'W' },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ NULL, 0, NULL, 0 },
};

/* The variable whose value is being parsed (env_defaults), or NULL. */
static const char *env_source;

/* parse_option: --help or --version is done, exit 0. */
#define PARSE_STOP 1

static int bad_usage(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* Say what is wrong with the command line; returns -EINVAL. */
static int
bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rdmcp: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (env_source != NULL)
		fprintf(stderr, " (from %s in the environment)", env_source);
	fprintf(stderr, "\nTry 'rdmcp --help'.\n");
	return -EINVAL;
}

/* An unsigned number with an optional K/M/G (binary) suffix. */
static int
parse_size(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	uint64_t mul = 1;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': mul = 1ull << 10; end++; break;
	case 'm': case 'M': mul = 1ull << 20; end++; break;
	case 'g': case 'G': mul = 1ull << 30; end++; break;
	default: break;
	}
	if (mul > 1 && (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0))
		end += strlen(end);
	if (*end != '\0' || v > max / mul)
		return -EINVAL;
	*out = v * mul;
	return 0;
}

/* --bwlimit: a number, with a fraction if need be, of KiB/s (as rsync's)
 * or with K, M or G of bytes/s ("1.5m"); 0 is no cap, and a rate above
 * 0 is at least 1 byte/s. */
static int
parse_rate(const char *s, uint64_t *out)
{
	size_t n = strspn(s, "0123456789.");
	uint64_t mul = 1ull << 10;
	const char *end = s + n;
	char num[32];
	double v;

	if (n == 0 || n >= sizeof(num) || strchr(s, '.') != strrchr(s, '.'))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = '\0';
	v = strtod(num, NULL);
	switch (*end) {
	case 'k': case 'K': mul = 1ull << 10; end++; break;
	case 'm': case 'M': mul = 1ull << 20; end++; break;
	case 'g': case 'G': mul = 1ull << 30; end++; break;
	default: break;
	}
	if (end > s + n && (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0))
		end += strlen(end);
	if (*end != '\0' || (n == 1 && *s == '.') || v * (double)mul >
	    (double)(1ull << 50))
		return -EINVAL;
	*out = (uint64_t)(v * (double)mul + 0.5);
	if (*out == 0 && v > 0)
		*out = 1;
	return 0;
}

/* A user or group: a name, or a number. */
static int
parse_id(const char *s, bool group, unsigned *out)
{
	struct passwd *pw;
	struct group *gr;
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s >= '0' && *s <= '9' && *end == '\0' && v < UINT_MAX) {
		*out = (unsigned)v;
		return 0;
	}
	if (group) {
		gr = getgrnam(s);
		*out = gr ? gr->gr_gid : 0;
		return gr ? 0 : -ENOENT;
	}
	pw = getpwnam(s);
	*out = pw ? pw->pw_uid : 0;
	return pw ? 0 : -ENOENT;
}

/* --owner USER[:GROUP]; without a group, the user's own group. */
static int
parse_owner(const char *arg, uid_t *uid, gid_t *gid)
{
	char user[256];
	const char *colon = strchr(arg, ':');
	size_t len = colon ? (size_t)(colon - arg) : strlen(arg);
	struct passwd *pw;
	unsigned u, g;

	if (len == 0 || len >= sizeof(user))
		return -EINVAL;
	memcpy(user, arg, len);
	user[len] = '\0';
	if (parse_id(user, false, &u) < 0)
		return -ENOENT;
	if (colon != NULL && parse_id(colon + 1, true, &g) < 0)
		return -ENOENT;
	if (colon == NULL) {
		pw = getpwuid(u);
		if (pw == NULL)
			return -ENOENT;
		g = pw->pw_gid;
	}
	*uid = u;
	*gid = g;
	return 0;
}

static int
parse_seconds(const char *s, unsigned *ms)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || end == s || v <= 0 || v > 86400)
		return -EINVAL;
	*ms = (unsigned)(v * 1000 + 0.5);
	return *ms > 0 ? 0 : -EINVAL;
}

/* parse_seconds, or 0 (as "0" or "0.0"): none. */
static int
parse_seconds_or_0(const char *s, unsigned *ms)
{
	char *end;

	if (strtod(s, &end) == 0 && end != s && *end == '\0' && *s == '0') {
		*ms = 0;
		return 0;
	}
	return parse_seconds(s, ms);
}

/* Another value of a repeatable option (--root, -w, -x) appended to *list.
 * Returns 0 or -ENOMEM after a message. */
static int
add_value(const char ***list, size_t *n, const char *opt, const char *arg)
{
	const char **grown = realloc(*list, (*n + 1) * sizeof(*grown));

	if (grown == NULL) {
		warnx_("%s %s: out of memory", opt, arg);
		return -ENOMEM;
	}
	*list = grown;
	(*list)[(*n)++] = arg;
	return 0;
}

/* v appended to the array *list of *n; 0 or -ENOMEM. */
static int
add_u32(uint32_t **list, size_t *n, uint32_t v)
{
	uint32_t *grown = realloc(*list, (*n + 1) * sizeof(*grown));

	if (grown == NULL)
		return -ENOMEM;
	*list = grown;
	(*list)[(*n)++] = v;
	return 0;
}

/* --racks S1,S2,...: the racks' sizes for --plan, rank by rank. */
static int
parse_racks(struct opts *o, const char *arg)
{
	const char *p = arg;
	uint64_t sum = 0;
	char *end;
	unsigned long v;

	free(o->plan_racks);
	o->plan_racks = NULL;
	o->plan_nracks = 0;
	while (*p != '\0') {
		errno = 0;
		v = strtoul(p, &end, 10);
		if (end == p || errno != 0 || v == 0 || v > SCHED_MAX_MEMBERS ||
		    (*end != ',' && *end != '\0') ||
		    (sum += v) > SCHED_MAX_MEMBERS ||
		    add_u32(&o->plan_racks, &o->plan_nracks, (uint32_t)v) < 0)
			return bad_usage("bad rack sizes '%s' (e.g. 8,8,16)",
					 arg);
		p = *end == ',' ? end + 1 : end;
	}
	return o->plan_nracks > 0 ? 0 : bad_usage("no rack sizes in '%s'",
						   arg);
}

/* Apply option c (with its argument).  Returns 0 to go on, PARSE_STOP
 * once --help or --version has printed what it asks for (rdmcp then exits
 * 0), or -errno after a message (-EINVAL: a bad option or value). */
static int
parse_option(struct opts *o, int c, const char *arg)
{
	uint64_t v;

	switch (c) {
	case 'a':
		if (sched_alg_parse(arg, &o->alg) < 0)
			return bad_usage("unknown algorithm '%s' (binomial, "
					 "chain, tree, sequential)", arg);
		o->alg_set = true;
		return 0;
	case 'b':
		if (parse_size(arg, PROTO_MAX_BLOCK, &v) < 0 ||
		    v < PROTO_MIN_BLOCK)
			return bad_usage("bad block size '%s' (512 to 1G)",
					 arg);
		o->block_size = (uint32_t)v;
		return 0;
	case 'd':
		o->dest_dir = arg;
		return 0;
	case 'f':
		o->hostfile = arg;
		return 0;
	case 'w':
		return add_value(&o->wlists, &o->nwlists, "-w", arg);
	case 'x':	/* repeatable: every list is left out */
		return add_value(&o->xlists, &o->nxlists, "-x", arg);
	case OPT_GENKEY:
		o->mode = MODE_GENKEY;
		o->genkey = arg;
		return 0;
	case OPT_KEY:
		o->key = arg;
		return 0;
	case OPT_PROGRESS:
		o->progress = true;
		return 0;
	case OPT_RETRIES:
		if (parse_size(arg, 100, &v) < 0)
			return bad_usage("bad retry count '%s' (0 to 100)", arg);
		o->retries = (int)v;
		return 0;
	case OPT_JSON:
		o->json = true;
		return 0;
	case OPT_TRACE:
		o->trace_file = arg;
		return 0;
	case OPT_TOPOLOGY:
		o->topology = arg;
		return 0;
	case OPT_SLOW:
		if (strcmp(arg, "last") != 0 && strcmp(arg, "wait") != 0)
			return bad_usage("unknown --slow '%s' (last, wait)", arg);
		o->slow_wait = strcmp(arg, "wait") == 0;
		return 0;
	case OPT_NAME:
		o->name = arg;
		return 0;
	case 'S':
		o->sparse = true;
		return 0;
	case 'W':
		o->whole_file = true;
		return 0;
	case 'n':
		o->dry_run = true;
		return 0;
	case OPT_MAX_JOBS:
		if (parse_size(arg, 100000, &v) < 0)
			return bad_usage("bad job count '%s' (0 to 100000)", arg);
		o->max_jobs = (unsigned)v;
		return 0;
	case OPT_KEEP_PARTIAL:
		if (parse_seconds_or_0(arg, &o->keep_partial_ms) < 0)
			return bad_usage("bad --keep-partial '%s' (seconds, "
					 "0 or from 0.001 to 86400)", arg);
		return 0;
	case OPT_JOB_IDLE_TIMEOUT:
		if (parse_seconds_or_0(arg, &o->job_idle_ms) < 0)
			return bad_usage("bad job idle timeout '%s' (seconds, "
					 "0 or from 0.001 to 86400)", arg);
		return 0;
	case OPT_MAX_BLOCKS:
		if (parse_size(arg, SERVE_MAX_BLOCKS, &o->max_blocks) < 0)
			return bad_usage("bad block count '%s' (0 to %llu, or "
					 "with K, M or G suffix)", arg,
					 (unsigned long long)SERVE_MAX_BLOCKS);
		return 0;
	case OPT_BWLIMIT:
		return parse_rate(arg, &o->bwlimit) < 0
			       ? bad_usage("bad rate '%s' (KiB/s, or with K, M "
					   "or G suffix: bytes/s)", arg)
			       : 0;
	case OPT_OK_FILE:
		o->ok_file = arg;
		return 0;
	case OPT_FAILED_FILE:
		o->failed_file = arg;
		return 0;
	case 'p':
		o->preserve = true;
		return 0;
	case 'r':
		o->recursive = true;
		return 0;
	case OPT_SEND_LIBS:
		o->send_libs = true;
		return 0;
	case OPT_ALLOW_SETID:
		o->allow_setid = true;
		return 0;
	case OPT_KEEP_OWNERS:
		o->keep_owners = true;
		return 0;
	case OPT_STATE_DIR:
		o->state_dir = arg;
		return 0;
	case OPT_OWNER:
		return parse_owner(arg, &o->owner_uid, &o->owner_gid) < 0
			       ? bad_usage("unknown user or group in '%s'", arg)
			       : 0;
	case 'P':
		if (parse_size(arg, 65535, &v) < 0 || v == 0)
			return bad_usage("bad port '%s'", arg);
		o->port = (uint16_t)v;
		return 0;
	case 'q':
		o->verbose = -1;
		return 0;
	case 't':
		if (parse_seconds(arg, &o->timeout_ms) < 0)
			return bad_usage("bad timeout '%s' (seconds, from 0.001 "
					 "to 86400)", arg);
		return 0;
	case 'v':
		o->verbose = o->verbose < 0 ? 1 : o->verbose + 1;
		return 0;
	case 'V':
		printf("rdmcp %s\n", RDMCP_VERSION);
		return PARSE_STOP;
	case 'h':
		usage(stdout);
		return PARSE_STOP;
	case OPT_BIND:
		o->bind = arg;
		return 0;
	case OPT_DEVICE:
		o->device = arg;
		return 0;
	case OPT_GID_INDEX:
		if (parse_size(arg, 1024, &v) < 0)
			return bad_usage("bad GID index '%s'", arg);
		o->gid_index = (int)v;
		return 0;
	case OPT_INTERRUPTS:
		o->interrupts = true;
		return 0;
	case OPT_TRANSPORT:
		if (strcmp(arg, "tcp") == 0)
			o->transport = TRANSPORT_TCP;
		else if (strcmp(arg, "verbs") == 0 || strcmp(arg, "rdma") == 0)
			o->transport = TRANSPORT_VERBS;
		else if (strcmp(arg, "auto") == 0)
			o->transport = TRANSPORT_AUTO;
		else
			return bad_usage("unknown transport '%s' (auto, verbs, "
					 "tcp)", arg);
		return 0;
	case OPT_SIZE:
		if (parse_size(arg, 1ull << 50, &o->plan_size) < 0)
			return bad_usage("bad size '%s'", arg);
		return 0;
	case OPT_BLOCKS:
		if (parse_size(arg, 1ull << 40, &o->plan_blocks) < 0)
			return bad_usage("bad block count '%s'", arg);
		return 0;
	case OPT_CONNECT_TIMEOUT:
		if (parse_seconds(arg, &o->connect_timeout_ms) < 0)
			return bad_usage("bad connect timeout '%s' (seconds, "
					 "from 0.001 to 86400)", arg);
		return 0;
	case OPT_FORCE:
		o->force = true;
		return 0;
	case OPT_HOSTS:
		if (parse_size(arg, SCHED_MAX_MEMBERS, &v) < 0 || v == 0)
			return bad_usage("bad group size '%s'", arg);
		o->plan_hosts = (uint32_t)v;
		return 0;
	case OPT_RACKS:
		return parse_racks(o, arg);
	case OPT_LISTEN:
		o->listen = arg;
		return 0;
	case OPT_LOG_TIME:
		if (strcmp(arg, "iso") != 0 && strcmp(arg, "epoch") != 0)
			return bad_usage("unknown --log-time '%s' (iso, epoch)",
					 arg);
		o->log_epoch = strcmp(arg, "epoch") == 0;
		return 0;
	case OPT_PLAN:
		o->mode = MODE_PLAN;
		return 0;
	case OPT_PREFIX:
		o->prefix = arg;
		return 0;
	case OPT_ROOT:
		return add_value(&o->roots, &o->nroots, "--root", arg);
	case OPT_SERVE:
		o->mode = MODE_SERVE;
		return 0;
	case OPT_VERIFY:
		o->verify = true;
		return 0;
	case OPT_ONCE:
		o->once = true;
		return 0;
	case OPT_RSH:
		o->rsh = arg;
		return 0;
	case OPT_REMOTE_PATH:
		o->remote_path = arg;
		return 0;
	case OPT_REMOTE_OPTS:
		o->remote_opts = arg;
		return 0;
	case OPT_FANOUT:
		if (parse_size(arg, 65536, &v) < 0 || v == 0)
			return bad_usage("bad fanout '%s' (1 to 65536)", arg);
		o->fanout = (unsigned)v;
		o->fanout_given = env_source == NULL;
		return 0;
	case OPT_WINDOW:
		if (parse_size(arg, 1024, &v) < 0 || v == 0)
			return bad_usage("bad window '%s' (1 to 1024)", arg);
		o->window = (unsigned)v;
		return 0;
	default:	/* main: getopt_long's '?' and ':' are said there */
		return bad_usage("unknown option");
	}
}

static void
defaults(struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->alg = SCHED_BINOMIAL;
	o->block_size = 0;	/* chosen per push (sched_auto_block) */
	o->port = PROTO_DEFAULT_PORT;
	o->timeout_ms = 30000;
	o->connect_timeout_ms = 5000;
	o->transport = TRANSPORT_AUTO;
	o->gid_index = -1;
	o->retries = 1;
	o->owner_uid = (uid_t)-1;
	o->owner_gid = (gid_t)-1;
	o->fanout = 32;
	o->max_jobs = 64;
	o->max_blocks = SERVE_DEFAULT_MAX_BLOCKS;
	o->job_idle_ms = SERVE_DEFAULT_JOB_IDLE_MS;
	o->keep_partial_ms = SERVE_DEFAULT_KEEP_PARTIAL_MS;
	o->remote_path = "rdmcp";
	o->rsh = getenv("RDMCP_RSH");
}

/* Option defaults from the environment, in the spirit of sbcast's
 * SBCAST_*: the command line overrides them. */
static const struct env_opt {
	const char *var;
	int opt;
	bool flag;	/* yes/no, else a value */
} env_opts[] = {
	{ "RDMCP_ALGORITHM", 'a', false },
	{ "RDMCP_BLOCK_SIZE", 'b', false },
	{ "RDMCP_CONNECT_TIMEOUT", OPT_CONNECT_TIMEOUT, false },
	{ "RDMCP_DEVICE", OPT_DEVICE, false },
	{ "RDMCP_FANOUT", OPT_FANOUT, false },
	{ "RDMCP_FORCE", OPT_FORCE, true },
	{ "RDMCP_PORT", 'P', false },
	{ "RDMCP_PRESERVE", 'p', true },
	{ "RDMCP_RETRIES", OPT_RETRIES, false },
	{ "RDMCP_SEND_LIBS", OPT_SEND_LIBS, true },
	{ "RDMCP_SLOW", OPT_SLOW, false },
	{ "RDMCP_TIMEOUT", 't', false },
	{ "RDMCP_TRANSPORT", OPT_TRANSPORT, false },
	{ "RDMCP_VERIFY", OPT_VERIFY, true },
};

/* Apply the RDMCP_* variables set.  Returns 0 to go on, or -errno after a
 * message (as parse_option). */
static int
env_defaults(struct opts *o)
{
	const struct env_opt *e;
	const char *v;
	int rc;

	for (e = env_opts; e < env_opts + sizeof(env_opts) / sizeof(*e); e++) {
		v = getenv(e->var);
		if (v == NULL || v[0] == '\0')
			continue;
		if (e->flag && (strcmp(v, "0") == 0 || strcmp(v, "no") == 0))
			continue;
		if (e->flag && strcmp(v, "1") != 0 && strcmp(v, "yes") != 0)
			return bad_usage("%s must be 1 or 0, yes or no, not '%s'",
					 e->var, v);
		env_source = e->var;
		rc = parse_option(o, e->opt, e->flag ? NULL : v);
		env_source = NULL;
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* Run the mode the options chose; its exit status. */
static int
run_mode(const struct opts *o)
{
	switch (o->mode) {
	case MODE_SERVE:
		return run_serve(o);
	case MODE_PLAN:
		return run_plan(o);
	case MODE_GENKEY:
		return run_genkey(o);
	default:
		return run_push(o);
	}
}

int
main(int argc, char **argv)
{
	struct opts o;
	int c, rc, status;

	signal(SIGPIPE, SIG_IGN);
	defaults(&o);
	rc = env_defaults(&o);
	opterr = 0;	/* said as rdmcp says it: usage_bad_option */
	while (rc == 0 && (c = getopt_long(argc, argv, ":a:b:d:f:hnpP:qrSt:vVw:Wx:",
					   long_options, NULL)) != -1) {
		if (c == '?' || c == ':') {
			usage_bad_option(c, optopt, optind > 0 ?
					 argv[optind - 1] : NULL, long_options);
			rc = -EINVAL;
		} else {
			rc = parse_option(&o, c, optarg);
		}
	}
	o.args = argv + optind;
	o.nargs = argc - optind;
	/* one crossing per rack; --plan --racks shows what --topology does */
	if ((o.topology != NULL || o.plan_nracks > 0) && !o.alg_set)
		o.alg = SCHED_CHAIN;
	if (rc == PARSE_STOP)
		status = EXIT_ALL_OK;
	else if (rc < 0)
		status = exit_status(rc);
	else
		status = run_mode(&o);
	free(o.roots);
	free(o.wlists);
	free(o.xlists);
	free(o.plan_racks);
	return status;
}
