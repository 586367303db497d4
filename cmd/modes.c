/* SPDX-License-Identifier: MIT */
/*
 * The modes of rdmcp but the push (send.c): serve (the daemon), plan and
 * genkey; and what the modes share: logging, the key, exit_status().
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "proto/auth.h"
#include "cmd.h"
#include "hosts/hostlist.h"
#include "util/log.h"
#include "util/net.h"
#include "util/path.h"
#include "proto/proto.h"
#include "rsh.h"
#include "daemon/serve.h"

/* --log-time epoch: seconds since the epoch, else ISO 8601 local time. */
static bool stamp_epoch;

/* The time now as a line's stamp, with a blank after it; "" if the clock
 * cannot be read. */
static void
format_stamp(char *buf, size_t len)
{
	uv_timeval64_t tv;
	char day[32];
	struct tm tm;
	time_t t;
	long off;

	buf[0] = '\0';
	if (uv_gettimeofday(&tv) != 0)
		return;
	if (stamp_epoch) {
		snprintf(buf, len, "%lld.%06d ", (long long)tv.tv_sec,
			 tv.tv_usec);
		return;
	}
	t = (time_t)tv.tv_sec;
	if (localtime_r(&t, &tm) == NULL ||
	    strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		return;
	off = tm.tm_gmtoff / 60;
	snprintf(buf, len, "%s.%06d%c%02ld:%02ld ", day, tv.tv_usec,
		 off < 0 ? '-' : '+', labs(off) / 60, labs(off) % 60);
}

/* Debug lines carry the time; so does every line of the daemon (ctx
 * non-NULL), whose log says when each job failed or was discarded. */
static void
log_to_stderr(void *ctx, enum log_level level, const char *msg)
{
	static const char *const tags[] = { "error: ", "warning: ", "", "",
					    "" };
	char stamp[64] = "";

	progress_clear();
	if (ctx != NULL || level >= LOG_DEBUG)
		format_stamp(stamp, sizeof(stamp));
	fprintf(stderr, "rdmcp: %s%s%s\n", stamp, tags[level], msg);
}

void
setup_logging(int verbose, enum log_level normal, bool stamp_all,
	      bool epoch)
{
	static int stamp;
	enum log_level max = verbose < 0 ? LOG_WARN : normal + verbose;

	stamp_epoch = epoch;
	log_setup(log_to_stderr, stamp_all ? &stamp : NULL,
		  max > LOG_TRACE ? LOG_TRACE : max);
}

/* ---------------------------------------------------------------------
 * The key
 */

const char *
key_path(const struct opts *o)
{
	const char *env = getenv("RDMCP_KEY");

	if (o->key != NULL)
		return o->key;
	return env != NULL && env[0] != '\0' ? env : AUTH_DEFAULT_KEY;
}

int
load_key(const struct opts *o, struct auth_key *key)
{
	struct rd_err err = { 0 };
	int rc = auth_load_key(key_path(o), key, &err);

	if (rc < 0)
		warnx_("%s", err.code != 0 ? err.msg : strerror(-rc));
	return rc;
}

int
exit_status(int err)
{
	return err == -EINVAL ? EXIT_USAGE : EXIT_SENDER;
}

int
run_genkey(const struct opts *o)
{
	struct rd_err err = { 0 };

	if (o->nargs > 0) {
		warnx_("--genkey takes no other arguments");
		return EXIT_USAGE;
	}
	if (auth_write_key(o->genkey, &err) < 0) {
		warnx_("%s", err.msg);
		return EXIT_SENDER;
	}
	if (o->verbose >= 0)
		warnx_("wrote a new key to %s; copy it (mode 0600) to every "
		       "host that sends or serves", o->genkey);
	return EXIT_ALL_OK;
}

/* ---------------------------------------------------------------------
 * serve
 */

struct daemon {
	struct serve *srv;
	uv_signal_t sigint, sigterm;
	uv_poll_t in;		/* --once: standard input */
	bool watching;
};

static void
on_signal(uv_signal_t *sig, int signum)
{
	struct daemon *d = sig->data;

	log_info("caught signal %d, shutting down", signum);
	if (d->srv != NULL)	/* else serve_new failed: exiting anyway */
		serve_shutdown(d->srv);
}

/* A daemon may hold many connections and files: the soft limit on open
 * files up to the hard one (the daemon sizes its limits from it). */
static void
raise_nofile(void)
{
	struct rlimit rl;

	rlim_t want;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	want = rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
	if (want > rl.rlim_cur) {
		rl.rlim_cur = want;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			log_info("cannot raise the open file limit: %s",
				 strerror(errno));
	}
}

/* --listen, else 0.0.0.0 and -p; with --once the port defaults to 0 (the
 * system picks one), and ADDR:0 asks for that too. */
static int
listen_address(const struct opts *o, struct sockaddr_storage *ss)
{
	uint16_t port, dflt = o->once ? 0 : o->port;
	char spec[256], host[256];
	size_t len;

	if (o->listen == NULL)
		return net_parse_numeric("0.0.0.0", dflt, ss);
	len = strlen(o->listen);
	if (len >= sizeof(spec))
		return -EINVAL;
	memcpy(spec, o->listen, len + 1);
	if (o->once && len > 2 && strcmp(spec + len - 2, ":0") == 0 &&
	    (spec[0] == '[' || strchr(spec, ':') == spec + len - 2))
		spec[len - 2] = '\0';	/* net_split_hostport refuses port 0 */
	if (net_split_hostport(spec, host, sizeof(host), &port, dflt) < 0 ||
	    net_parse_numeric(host, port, ss) < 0)
		return -EINVAL;
	return 0;
}

/* The key: from standard input with --key -, else the usual file.
 * Returns 0 or -errno after a message. */
static int
serve_key(const struct opts *o, struct auth_key *key)
{
	if (o->key != NULL && strcmp(o->key, "-") == 0)
		return once_read_key(o->timeout_ms, key);
	return load_key(o, key);
}

/* SIGINT and SIGTERM shut the daemon down cleanly, from before it listens:
 * whoever can reach it may stop it.  The handles keep no loop alive (the
 * daemon stops when its listener and its last job are gone); a signal
 * that comes before the loop runs is handled when it does. */
static void
daemon_signals(uv_loop_t *loop, struct daemon *d)
{
	uv_signal_init(loop, &d->sigint);
	uv_signal_init(loop, &d->sigterm);
	d->sigint.data = d->sigterm.data = d;
	uv_signal_start(&d->sigint, on_signal, SIGINT);
	uv_signal_start(&d->sigterm, on_signal, SIGTERM);
	uv_unref((uv_handle_t *)&d->sigint);
	uv_unref((uv_handle_t *)&d->sigterm);
}

/* --once: the port line and the watch on standard input (which, like the
 * signals, keeps no loop alive). */
static void
daemon_once(uv_loop_t *loop, struct daemon *d)
{
	once_announce(d->srv);
	d->watching = once_watch(loop, &d->in, d->srv) == 0;
	if (!d->watching)
		log_info("standard input is not a pipe: not watched");
}

static void
daemon_stop(uv_loop_t *loop, struct daemon *d)
{
	uv_close((uv_handle_t *)&d->sigint, NULL);
	uv_close((uv_handle_t *)&d->sigterm, NULL);
	if (d->watching)
		once_unwatch(&d->in);
	uv_run(loop, UV_RUN_DEFAULT);
}

static void
log_open_handle(uv_handle_t *h, void *arg)
{
	if (!uv_is_closing(h))
		log_err("shutdown: a %s handle is still open (%s)",
			uv_handle_type_name(uv_handle_get_type(h)),
			uv_is_active(h) ? "active" : "inactive");
}

/* Close the daemon's loop.  Every handle and request must be gone by now;
 * one left is a bug (a leak at shutdown): say which, and return -EBUSY. */
static int
close_loop(uv_loop_t *loop)
{
	int rc = uv_loop_close(loop);

	if (rc == 0)
		return 0;
	uv_walk(loop, log_open_handle, NULL);
	log_err("shutdown: the event loop did not close: %s", uv_strerror(rc));
	return rc;
}

/* --state-dir ("" turns it off), else /var/lib/rdmcp for a daemon that
 * runs as root and is neither one of several on a machine (--prefix: its
 * own, in the prefix, see state_in_prefix) nor one-shot. */
static const char *
state_dir(const struct opts *o)
{
	if (o->state_dir != NULL)
		return o->state_dir[0] != '\0' ? o->state_dir : NULL;
	if (geteuid() != 0 || o->prefix != NULL || o->once)
		return NULL;
	return "/var/lib/rdmcp";
}

/* The daemon's settings from the options.  Returns 0 or -EINVAL after a
 * message. */
static int
serve_settings(const struct opts *o, uv_loop_t *loop, struct serve_cfg *cfg)
{
	*cfg = (struct serve_cfg){
		.loop = loop, .roots = o->roots, .nroots = o->nroots,
		.prefix = o->prefix, .timeout_ms = o->timeout_ms,
		.connect_timeout_ms = o->connect_timeout_ms,
		.transport = o->transport,
		.verbs = { .device = o->device, .gid_index = o->gid_index,
			   .interrupts = o->interrupts },
		.owner_uid = o->owner_uid, .owner_gid = o->owner_gid,
		.allow_setid = o->allow_setid, .keep_owners = o->keep_owners,
		.state_dir = state_dir(o),
		/* a daemon of its own tree, started again on it, sweeps it */
		.state_in_prefix = o->state_dir == NULL && o->prefix != NULL &&
				   !o->once,
		.once = o->once, .idle_ms = o->once ? o->timeout_ms : 0,
		.max_jobs = o->max_jobs, .max_blocks = o->max_blocks,
		.job_idle_ms = o->job_idle_ms,
		.keep_partial_ms = o->keep_partial_ms,
	};
	if (o->nargs > 0) {
		warnx_("--serve takes no FILE or HOSTS arguments");
		return -EINVAL;
	}
	if (listen_address(o, &cfg->listen) < 0) {
		warnx_("bad --listen address '%s' (numeric ADDR[:PORT])",
		       o->listen);
		return -EINVAL;
	}
	return 0;
}

/* Run the daemon until it is stopped.  Returns its exit status: a daemon
 * that does not shut down cleanly (a handle left open) fails too. */
int
run_serve(const struct opts *o)
{
	struct rd_err err = { 0 };
	struct daemon d = { 0 };
	struct serve_cfg cfg;
	uv_loop_t loop;
	int rc, status;

	setup_logging(o->verbose, LOG_INFO, true, o->log_epoch);
	if (serve_settings(o, &loop, &cfg) < 0)
		return EXIT_USAGE;
	status = EXIT_DAEMON;
	if (serve_key(o, &cfg.key) < 0)
		return status;
	raise_nofile();
	rc = uv_loop_init(&loop);
	if (rc < 0) {
		warnx_("cannot start the event loop: %s", uv_strerror(rc));
		return status;
	}
	daemon_signals(&loop, &d);
	rc = serve_new(&cfg, &d.srv, &err);
	if (rc < 0) {
		warnx_("%s", err.code != 0 ? err.msg : strerror(-rc));
		if (err.code == -EINVAL)
			status = EXIT_USAGE;
		goto out;
	}
	if (o->once)
		daemon_once(&loop, &d);
	uv_run(&loop, UV_RUN_DEFAULT);
	/* --once: whether a transfer landed its files */
	status = !o->once || serve_landed(d.srv) ? EXIT_ALL_OK : EXIT_REPLICAS;
out:
	daemon_stop(&loop, &d);
	serve_free(d.srv);
	if (close_loop(&loop) < 0)
		status = EXIT_DAEMON;
	return status;
}

/* ---------------------------------------------------------------------
 * plan
 */

/* Print the transfers of every member's schedule, step by step. */
static void
plan_print(const struct opts *o, enum sched_alg alg, struct sched **s,
	   uint32_t n, uint64_t blocks)
{
	uint64_t step, steps = sched_steps(s[0]);
	struct sched_xfer x;
	uint32_t r;
	size_t i;

	for (step = 0; step < steps; step++)
		for (r = 0; r < n; r++)
			if (sched_send(s[r], step, &x))
				printf("%llu\t%u\t%u\t%llu\n",
				       (unsigned long long)step, r, x.peer,
				       (unsigned long long)x.block);
	printf("# steps %llu hosts %u blocks %llu algorithm %s",
	       (unsigned long long)steps, n,
	       (unsigned long long)blocks, sched_alg_name(alg));
	for (i = 0; i < o->plan_nracks; i++)
		printf("%s%u", i ? "," : " racks ", o->plan_racks[i]);
	printf("\n");
}

/* With --racks, the group is their members: *n (--hosts) is their sum,
 * or must be.  0, or -EINVAL after a message. */
static int
plan_racked_size(const struct opts *o, uint32_t *n)
{
	uint32_t sum = 0;
	size_t i;

	if (o->plan_nracks == 0)
		return 0;
	for (i = 0; i < o->plan_nracks; i++)
		sum += o->plan_racks[i];	/* parse_racks bounded it */
	if (*n != 0 && *n != sum) {
		warnx_("--racks: the racks hold %u members, --hosts says %u",
		       sum, *n);
		return -EINVAL;
	}
	*n = sum;
	return 0;
}

/* --plan --blocks K without -b: the schedule is chosen as for a file of
 * K blocks of this size. */
#define PLAN_BLOCK (128u << 10)

/* --plan shows the choices for a network (or verbs, if asked). */
static enum sched_link
plan_link(const struct opts *o)
{
	return o->transport == TRANSPORT_VERBS ? SCHED_LINK_VERBS
					       : SCHED_LINK_NET;
}

bool
alg_is_chosen(const struct opts *o)
{
	return !o->alg_set && o->topology == NULL && o->plan_nracks == 0;
}

enum sched_alg
chosen_alg(const struct opts *o, uint64_t bytes, uint32_t members,
	   enum sched_link link)
{
	if (!alg_is_chosen(o))
		return o->alg;
	return sched_auto_alg(bytes, members, link);
}

int
run_plan(const struct opts *o)
{
	struct sched **s;
	uint32_t r, n = o->plan_hosts, bs;
	uint64_t blocks = o->plan_blocks;
	enum sched_alg alg;
	int rc = 0;

	if (plan_racked_size(o, &n) < 0)
		return EXIT_USAGE;
	if (n == 0 || o->nargs > 0 || (blocks == 0) == (o->plan_size == 0)) {
		warnx_("--plan needs --hosts N and --blocks K or --size SIZE, "
		       "and no files");
		return EXIT_USAGE;
	}
	if (o->plan_size > 0) {
		alg = chosen_alg(o, o->plan_size, n, plan_link(o));
		bs = o->block_size ? o->block_size
			: sched_auto_block(alg, o->plan_size, n, plan_link(o));
		blocks = (o->plan_size + bs - 1) / bs;
		printf("# block size %u for %llu bytes to %u hosts%s, %s%s\n",
		       bs, (unsigned long long)o->plan_size, n,
		       o->block_size ? " (-b)" : " (chosen)",
		       sched_alg_name(alg), alg_is_chosen(o) ? " (chosen)" : "");
	} else {
		alg = chosen_alg(o, blocks * (o->block_size ? o->block_size
							  : PLAN_BLOCK), n,
				 plan_link(o));
	}
	s = calloc(n, sizeof(*s));
	if (s == NULL) {
		warnx_("--plan: out of memory");
		return EXIT_SENDER;
	}
	for (r = 0; r < n && rc == 0; r++)
		rc = sched_new_racks(alg, n, r, blocks, o->plan_racks,
				     o->plan_nracks, &s[r]);
	if (rc == 0)
		plan_print(o, alg, s, n, blocks);
	else
		warnx_("--plan: no %s schedule for %u hosts and %llu blocks: "
		       "%s", sched_alg_name(alg), n,
		       (unsigned long long)blocks, strerror(-rc));
	for (r = 0; r < n; r++)
		sched_free(s[r]);
	free(s);
	return rc < 0 ? exit_status(rc) : EXIT_ALL_OK;
}
