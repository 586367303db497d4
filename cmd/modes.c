/*
 * The three modes of rdmcp: push files, serve (the daemon), plan.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "auth.h"
#include "cmd.h"
#include "hostlist.h"
#include "log.h"
#include "net.h"
#include "path.h"
#include "proto.h"
#include "serve.h"

static void
log_to_stderr(void *ctx, enum log_level level, const char *msg)
{
	static const char *const tags[] = { "error: ", "warning: ", "", "",
					    "" };
	uv_timeval64_t tv;

	if (level >= LOG_DEBUG && uv_gettimeofday(&tv) == 0)
		fprintf(stderr, "rdmcp: %lld.%06d %s\n", (long long)tv.tv_sec,
			tv.tv_usec, msg);
	else
		fprintf(stderr, "rdmcp: %s%s\n", tags[level], msg);
}

static void
setup_logging(int verbose, enum log_level normal)
{
	enum log_level max = verbose < 0 ? LOG_WARN : normal + verbose;

	log_setup(log_to_stderr, NULL, max > LOG_TRACE ? LOG_TRACE : max);
}

/* ---------------------------------------------------------------------
 * The key
 */

/* --key, else $RDMCP_KEY, else the default. */
static const char *
key_path(const struct opts *o)
{
	const char *env = getenv("RDMCP_KEY");

	if (o->key != NULL)
		return o->key;
	return env != NULL && env[0] != '\0' ? env : AUTH_DEFAULT_KEY;
}

static int
load_key(const struct opts *o, struct auth_key *key)
{
	struct rd_err err = { 0 };

	if (auth_load_key(key_path(o), key, &err) < 0) {
		warnx_("%s", err.msg);
		return -1;
	}
	return 0;
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
 * push
 */

/* Where each source lands: DIR/basename with -d, else its own absolute
 * path.  Returns the array (strings owned by it) or NULL after an error. */
static char **
destinations(const struct opts *o, char **sources, size_t n)
{
	char cwd[4096], **dests = calloc(n ? n : 1, sizeof(*dests));
	size_t i, j;

	if (dests == NULL || getcwd(cwd, sizeof(cwd)) == NULL) {
		warnx_("cannot get the current directory: %s",
		       strerror(errno));
		free(dests);
		return NULL;
	}
	if (o->dest_dir != NULL && o->dest_dir[0] != '/') {
		warnx_("destination directory '%s' must be absolute",
		       o->dest_dir);
		goto fail;
	}
	for (i = 0; i < n; i++) {
		char *abs = path_absolute(cwd, sources[i]);

		if (abs != NULL && o->dest_dir != NULL) {
			char *dir = path_absolute("/", o->dest_dir);

			free(abs);
			abs = dir ? path_join(dir, path_base(sources[i])) : NULL;
			free(dir);
		}
		if (abs == NULL || strcmp(abs, "/") == 0) {
			warnx_("no destination for '%s'", sources[i]);
			free(abs);
			goto fail;
		}
		dests[i] = abs;
		for (j = 0; j < i; j++)
			if (strcmp(dests[j], abs) == 0) {
				warnx_("'%s' and '%s' would both land on %s",
				       sources[j], sources[i], abs);
				goto fail;
			}
	}
	return dests;
fail:
	for (i = 0; i < n; i++)
		free(dests[i]);
	free(dests);
	return NULL;
}

/* The failed hosts, compressed, on one line: for a launcher to exclude. */
static void
print_failed(const struct hostlist *hl, const bool *failed)
{
	char *list = hosts_compressed(hl, failed, true);

	if (list != NULL && list[0] != '\0')
		fprintf(stderr, "rdmcp: failed: %s\n", list);
	free(list);
}

/* --ok-file and --failed-file; returns false if one could not be written. */
static bool
write_host_files(const struct opts *o, const struct hostlist *hl,
		 const bool *failed)
{
	bool ok = true;

	if (o->ok_file != NULL)
		ok &= write_host_file(o->ok_file, hl, failed, false) == 0;
	if (o->failed_file != NULL)
		ok &= write_host_file(o->failed_file, hl, failed, true) == 0;
	return ok;
}

static void
json_summary(const struct hostlist *hl, const struct push_summary *sum,
	     const bool *failed, int status)
{
	char *ok = hosts_compressed(hl, failed, false);
	char *bad = hosts_compressed(hl, failed, true);

	report_json_summary(sum, ok, bad, status);
	free(ok);
	free(bad);
}

struct push_ctx {
	const struct opts *o;
	bool *failed;
	bool *ok;
};

static void
on_push_report(void *ctx, const struct push_report *r)
{
	struct push_ctx *pc = ctx;

	if (!r->ok)
		pc->failed[r->index] = true;
	else
		pc->ok[r->index] = true;
	report_replica(pc->o, r);
}

int
run_push(const struct opts *o)
{
	struct hostlist hl = { 0 };
	struct rd_err err = { 0 };
	struct push_summary sum;
	struct push_ctx pc = { o, NULL, NULL };
	struct auth_key key;
	size_t nfiles = 0, i;
	char **dests = NULL;
	int nargs, rc = EXIT_USAGE;

	setup_logging(o->verbose, LOG_WARN);
	if (gather_hosts(o, &hl, &nargs) < 0) {
		fprintf(stderr, "Try 'rdmcp --help'.\n");
		goto out;
	}
	if (load_key(o, &key) < 0) {
		rc = EXIT_SENDER;
		goto out;
	}
	nfiles = (size_t)nargs;
	dests = destinations(o, o->args, nfiles);
	pc.failed = calloc(hl.n, sizeof(bool));
	pc.ok = calloc(hl.n, sizeof(bool));
	if (dests == NULL || pc.failed == NULL || pc.ok == NULL)
		goto out;
	struct push_cfg cfg = {
		.sources = (const char *const *)o->args,
		.dests = (const char *const *)dests, .nfiles = nfiles,
		.hosts = (const char *const *)hl.hosts, .nhosts = hl.n,
		.default_port = o->port, .alg = o->alg,
		.block_size = o->block_size, .verify = o->verify,
		.force = o->force, .timeout_ms = o->timeout_ms,
		.connect_timeout_ms = o->connect_timeout_ms,
		.window = o->window, .report = on_push_report, .ctx = &pc,
		.transport = o->transport, .bind = o->bind,
		.verbs = { .device = o->device, .gid_index = o->gid_index,
			   .interrupts = o->interrupts },
		.key = &key,
	};
	if (push_run(&cfg, &sum, &err) < 0) {
		warnx_("%s", err.msg);
		for (i = 0; i < hl.n; i++)
			pc.failed[i] = !pc.ok[i];
		print_failed(&hl, pc.failed);
		write_host_files(o, &hl, pc.failed);
		rc = EXIT_SENDER;
		goto out;
	}
	report_summary(o, &sum);
	print_failed(&hl, pc.failed);
	rc = sum.failed > 0 ? EXIT_REPLICAS : EXIT_ALL_OK;
	if (!write_host_files(o, &hl, pc.failed))
		rc = EXIT_SENDER;
	if (o->json)
		json_summary(&hl, &sum, pc.failed, rc);
out:
	for (i = 0; dests != NULL && i < nfiles; i++)
		free(dests[i]);
	free(dests);
	free(pc.failed);
	free(pc.ok);
	hostlist_clear(&hl);
	return rc;
}

/* ---------------------------------------------------------------------
 * serve
 */

struct daemon {
	struct serve *srv;
	uv_signal_t sigint, sigterm;
};

static void
on_signal(uv_signal_t *sig, int signum)
{
	struct daemon *d = sig->data;

	log_info("caught signal %d, shutting down", signum);
	uv_close((uv_handle_t *)&d->sigint, NULL);
	uv_close((uv_handle_t *)&d->sigterm, NULL);
	serve_shutdown(d->srv);
}

static int
listen_address(const struct opts *o, struct sockaddr_storage *ss)
{
	char host[256];
	uint16_t port;

	if (o->listen == NULL)
		return net_parse_numeric("0.0.0.0", o->port, ss);
	if (net_split_hostport(o->listen, host, sizeof(host), &port,
			       o->port) < 0 ||
	    net_parse_numeric(host, port, ss) < 0)
		return -EINVAL;
	return 0;
}

int
run_serve(const struct opts *o)
{
	struct rd_err err = { 0 };
	struct daemon d = { 0 };
	uv_loop_t loop;
	struct serve_cfg cfg = {
		.loop = &loop, .roots = o->roots, .nroots = o->nroots,
		.prefix = o->prefix, .timeout_ms = o->timeout_ms,
		.connect_timeout_ms = o->connect_timeout_ms,
		.transport = o->transport,
		.verbs = { .device = o->device, .gid_index = o->gid_index,
			   .interrupts = o->interrupts },
	};

	setup_logging(o->verbose, LOG_INFO);
	if (o->nargs > 0) {
		warnx_("--serve takes no FILE or HOSTS arguments");
		return EXIT_USAGE;
	}
	if (listen_address(o, &cfg.listen) < 0) {
		warnx_("bad --listen address '%s' (numeric ADDR[:PORT])",
		       o->listen);
		return EXIT_USAGE;
	}
	if (load_key(o, &cfg.key) < 0)
		return EXIT_DAEMON;
	uv_loop_init(&loop);
	if (serve_new(&cfg, &d.srv, &err) < 0) {
		warnx_("%s", err.msg);
		uv_loop_close(&loop);
		return err.code == -EINVAL ? EXIT_USAGE : EXIT_DAEMON;
	}
	uv_signal_init(&loop, &d.sigint);
	uv_signal_init(&loop, &d.sigterm);
	d.sigint.data = d.sigterm.data = &d;
	uv_signal_start(&d.sigint, on_signal, SIGINT);
	uv_signal_start(&d.sigterm, on_signal, SIGTERM);
	uv_run(&loop, UV_RUN_DEFAULT);
	serve_free(d.srv);
	uv_loop_close(&loop);
	return EXIT_ALL_OK;
}

/* ---------------------------------------------------------------------
 * plan
 */

int
run_plan(const struct opts *o)
{
	struct sched **s;
	struct sched_xfer x;
	uint64_t step, steps;
	uint32_t r, n = o->plan_hosts;
	int rc = EXIT_ALL_OK;

	if (n == 0 || o->nargs > 0) {
		warnx_("--plan needs --hosts N and --blocks K, and no files");
		return EXIT_USAGE;
	}
	s = calloc(n, sizeof(*s));
	if (s == NULL)
		return EXIT_SENDER;
	for (r = 0; r < n; r++)
		if (sched_new(o->alg, n, r, o->plan_blocks, &s[r]) < 0)
			rc = EXIT_USAGE;
	steps = rc == EXIT_ALL_OK ? sched_steps(s[0]) : 0;
	for (step = 0; step < steps; step++)
		for (r = 0; r < n; r++)
			if (sched_send(s[r], step, &x))
				printf("%llu\t%u\t%u\t%llu\n",
				       (unsigned long long)step, r, x.peer,
				       (unsigned long long)x.block);
	if (rc == EXIT_ALL_OK)
		printf("# steps %llu hosts %u blocks %llu algorithm %s\n",
		       (unsigned long long)steps, n,
		       (unsigned long long)o->plan_blocks,
		       sched_alg_name(o->alg));
	for (r = 0; r < n; r++)
		sched_free(s[r]);
	free(s);
	return rc;
}
