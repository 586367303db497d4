/* SPDX-License-Identifier: MIT */
/*
 * serve - the receiving daemon (see serve.h).
 */
#include "daemon/serve.h"

#include <errno.h>
#include <malloc.h>
#include <limits.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "transport/tcp/conn.h"
#include "daemon/gate.h"
#include "daemon/partial.h"
#include "util/net.h"
#include "util/path.h"
#include "dest/pending.h"
#include "proto/proto.h"
#include "daemon/transfer.h"
#include "transport/verbs/verbs.h"
#include "transport/verbs/xv.h"
#include "daemon/serve_int.h"

/* Connections the kernel holds for us until we accept them: a sender
 * contacts every daemon at once, but members of a large group connect to
 * their neighbours at once too. */
#define SERVE_BACKLOG 4096

/* ---------------------------------------------------------------------
 * Jobs
 */

/* RDMA goes last, once the jobs (and their queue pairs) are gone. */
static void
serve_close_verbs(struct serve *s)
{
	vb_free(s->vb);
	s->vb = NULL;
	s->env.vb = NULL;
}

static void
on_idle(uv_timer_t *t)
{
	struct serve *s = t->data;

	log_warn("no transfer came within %.1f s; stopping",
		 s->cfg.idle_ms / 1000.0);
	serve_shutdown(s);
}

/* A daemon waits most of its life: what its jobs freed goes back to the
 * system once none has run for TRIM_MS (malloc keeps it otherwise;
 * docs/performance.md, its constants). */
#define TRIM_MS 1000

static void
on_trim(uv_timer_t *t)
{
	(void)t;
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

/* --once: (re)start waiting for a job, for cfg.idle_ms at most. */
void
serve_idle_arm(struct serve *s)
{
	if (s->idle_used && !s->stopping)
		uv_timer_start(&s->idle, on_idle, s->cfg.idle_ms, 0);
}

/* --once: a job ended; stop if it landed, else wait for another. */
static void
once_job_ended(struct serve *s, bool landed)
{
	if (!s->cfg.once || s->stopping)
		return;
	if (landed) {
		log_info("one-shot receiver: the transfer is complete");
		serve_shutdown(s);
	} else {
		serve_idle_arm(s);
	}
}

static void
outcome_record(struct serve *s, const struct transfer *j, bool landed)
{
	struct outcome *o;

	if (s->outcomes == NULL)
		return;
	o = &s->outcomes[s->noutcomes++ % OUTCOMES_KEPT];
	transfer_token(j, o->token);
	o->landed = landed;
}

/* What became of the job with `token`: a running job's outcome is made
 * final (transfer_resolve), an ended one's looked up. */
enum proto_outcome
serve_outcome_of(struct serve *s, const uint8_t *token)
{
	size_t i, n = s->noutcomes < OUTCOMES_KEPT ? s->noutcomes
						  : OUTCOMES_KEPT;

	for (i = 0; i < s->njobs; i++)
		if (transfer_has_token(s->jobs[i], token))
			return transfer_resolve(s->jobs[i]) ? OUTCOME_LANDED
							: OUTCOME_DISCARDED;
	for (i = 0; i < n; i++)
		if (memcmp(s->outcomes[i].token, token, PROTO_TOKEN_LEN) == 0)
			return s->outcomes[i].landed ? OUTCOME_LANDED
						     : OUTCOME_DISCARDED;
	return OUTCOME_UNKNOWN;
}

static void
job_gone(void *ctx, struct transfer *j)
{
	struct serve *s = ctx;
	bool landed = transfer_landed(j);
	size_t i;

	s->landed |= landed;
	outcome_record(s, j, landed);
	for (i = 0; i < s->njobs; i++) {
		if (s->jobs[i] == j) {
			s->jobs[i] = s->jobs[--s->njobs];
			break;
		}
	}
	if (s->njobs == 0 && s->stopping)
		serve_close_verbs(s);
	if (s->njobs == 0 && s->trim_used && !s->stopping)
		uv_timer_start(&s->trim, on_trim, TRIM_MS, 0);
	if (s->njobs == 0)
		once_job_ended(s, landed);
}

int
serve_job_add(struct serve *s, struct conn *c, struct job *job)
{
	struct transfer **grown;
	int rc;

	if (s->njobs == s->jobcap) {
		size_t cap = s->jobcap ? s->jobcap * 2 : 16;

		grown = realloc(s->jobs, cap * sizeof(*grown));
		if (grown == NULL)
			return -ENOMEM;
		s->jobs = grown;
		s->jobcap = cap;
	}
	rc = transfer_new(&s->env, c, job, &s->jobs[s->njobs]);
	if (rc < 0) {
		job_free(job);
		return rc;
	}
	s->njobs++;
	return 0;
}

/* ---------------------------------------------------------------------
 * Data connections
 */

/* An RDMA connection request: to the job its private data names. */
static int
route_rdma(void *ctx, struct rdma_cm_id *id, const void *pdata, uint8_t len)
{
	struct serve *s = ctx;
	struct xv_hello h;
	size_t i;

	if (xv_parse_hello(pdata, len, &h) < 0)
		return -EPROTO;
	for (i = 0; i < s->njobs; i++)
		if (transfer_matches(s->jobs[i], h.token))
			return transfer_add_rdma(s->jobs[i], id, &h);
	return -ENOENT;
}

int
serve_route_hello(struct serve *s, struct conn *c, const struct frame *f,
	    const uint8_t *body)
{
	struct hello h;
	size_t i;

	if (hello_decode(body, f->len, &h) < 0)
		return -EPROTO;
	for (i = 0; i < s->njobs; i++)
		if (transfer_matches(s->jobs[i], h.token))
			return transfer_add_data(s->jobs[i], c, h.from, h.to);
	return -ENOENT;
}

/* ---------------------------------------------------------------------
 * Daemon
 */

static int
add_root(struct serve *s, const char *dir, struct rd_err *err)
{
	char real[PATH_MAX];
	struct statvfs vfs;
	struct stat sb;

	if (realpath(dir, real) == NULL)
		return rd_errf(err, -errno, "root %s: %s", dir,
			       strerror(errno));
	if (stat(real, &sb) < 0 || !S_ISDIR(sb.st_mode))
		return rd_errf(err, -ENOTDIR, "root %s is not a directory",
			       dir);
	if (statvfs(real, &vfs) == 0 && (vfs.f_flag & ST_RDONLY))
		log_warn("root %s is read-only here: nothing can land there "
			 "(under systemd, the unit's ReadWritePaths= must list "
			 "it too)", dir);
	s->roots[s->nroots] = strdup(real);
	if (s->roots[s->nroots] == NULL)
		return -ENOMEM;
	s->nroots++;
	return 0;
}

static int
serve_setup_paths(struct serve *s, struct rd_err *err)
{
	char real[PATH_MAX];
	size_t i;
	int rc = 0;

	s->roots = calloc(s->cfg.nroots + 1, sizeof(*s->roots));
	if (s->roots == NULL)
		return -ENOMEM;
	if (s->cfg.prefix != NULL) {
		if (realpath(s->cfg.prefix, real) == NULL)
			return rd_errf(err, -errno, "prefix %s: %s",
				       s->cfg.prefix, strerror(errno));
		s->prefix = strdup(real);
		if (s->prefix == NULL)
			return -ENOMEM;
		if (s->cfg.nroots == 0)
			rc = add_root(s, real, err);
	}
	for (i = 0; i < s->cfg.nroots && rc == 0; i++)
		rc = add_root(s, s->cfg.roots[i], err);
	if (rc == 0 && s->nroots == 0)
		rc = rd_errf(err, -EINVAL, "no --root directory to write to");
	return rc;
}

static int
serve_listen(struct serve *s, struct rd_err *err)
{
	char addr[NET_ADDRSTRLEN];
	int rc;

	net_format(&s->cfg.listen, addr, sizeof(addr));
	rc = conn_listen(s->cfg.loop, (struct sockaddr *)&s->cfg.listen,
			 SERVE_BACKLOG, serve_on_incoming, s, &s->listener);
	if (rc < 0)
		return rd_errf(err, rc, "cannot listen on %s: %s", addr,
			       strerror(-rc));
	conn_listener_address(s->listener, &s->bound);
	net_format(&s->bound, addr, sizeof(addr));
	log_info("serving on %s", addr);
	return 0;
}

/* RDMA on this daemon: the connection manager and a listener on the same
 * address as the TCP one, on a port of its own. */
static int
serve_verbs(struct serve *s, struct rd_err *err)
{
	struct sockaddr_storage addr = s->bound;
	struct vb_cfg vc = { .loop = s->cfg.loop, .opts = s->cfg.verbs };
	struct rd_err why = { 0 };
	char host[NET_ADDRSTRLEN];
	int rc;

	if (s->cfg.transport == TRANSPORT_TCP)
		return 0;
	rc = vb_new(&vc, &s->vb, &why);
	if (rc == 0) {
		net_without_port(&s->bound, &addr);
		rc = vb_listen(s->vb, &addr, route_rdma, s, &why);
	}
	if (rc < 0) {
		vb_free(s->vb);
		s->vb = NULL;
		if (s->cfg.transport == TRANSPORT_VERBS)
			return rd_errf(err, rc, "%s", why.msg);
		log_info("no RDMA, serving over TCP only: %s", why.msg);
		return 0;
	}
	s->env.vb = s->vb;
	s->env.rdma_port = net_port(&addr);
	net_format(&addr, host, sizeof(host));
	log_info("RDMA connections on %s", host);
	return 0;
}

/* The state directory: made if missing, and what jobs of a daemon that
 * was killed left behind removed.  Without one, jobs record nothing. */
static void
serve_sweep(struct serve *s)
{
	const char *dir = s->cfg.state_dir;
	char *own = NULL;

	if (dir == NULL && s->cfg.state_in_prefix && s->prefix != NULL)
		dir = own = path_join(s->prefix, SERVE_PREFIX_STATE);
	if (dir != NULL &&
	    pending_start(dir, own != NULL, (const char *const *)s->roots,
			  s->nroots, &s->state_dir) == 0)
		s->env.state_dir = s->state_dir;
	free(own);
}

/* Files a root daemon creates belong to --owner, else to the owner of
 * the root they land under; others keep the daemon's own. */
static int
serve_ownership(struct serve *s, struct rd_err *err)
{
	bool set = s->cfg.owner_uid != (uid_t)-1 ||
		   s->cfg.owner_gid != (gid_t)-1;

	s->env.set_owner = set;
	s->env.uid = s->cfg.owner_uid;
	s->env.gid = s->cfg.owner_gid;
	s->env.allow_setid = s->cfg.allow_setid;
	s->env.keep_owners = s->cfg.keep_owners;
	if (geteuid() != 0 && s->cfg.keep_owners)
		return rd_errf(err, -EPERM, "--keep-owners needs the daemon "
			       "to run as root");
	if (geteuid() != 0)
		return set ? rd_errf(err, -EPERM, "--owner needs the daemon "
				     "to run as root") : 0;
	s->env.owner_of_root = !set;
	return 0;
}

static void
warm_run(uv_work_t *w)
{
}

static void
warm_done(uv_work_t *w, int status)
{
}

/* libuv starts its thread pool when the first work is queued: at a job's
 * set-up (setup.c), in the daemon's first job.  Start it now.  The request
 * lives as long as the process (one serve per daemon: cmd/modes.c), as
 * the daemon may end before it is done. */
static void
warm_thread_pool(uv_loop_t *loop)
{
	static uv_work_t warm;

	uv_queue_work(loop, &warm, warm_run, warm_done);
}

int
serve_new(const struct serve_cfg *cfg, struct serve **out,
	  struct rd_err *err)
{
	struct serve *s;
	int rc;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->cfg = *cfg;
	s->outcomes = calloc(OUTCOMES_KEPT, sizeof(*s->outcomes));
	rc = s->outcomes != NULL ? serve_setup_paths(s, err) : -ENOMEM;
	s->env = (struct transfer_env){
		.loop = cfg->loop, .roots = (const char *const *)s->roots,
		.nroots = s->nroots, .prefix = s->prefix,
		.connect_timeout_ms = cfg->connect_timeout_ms,
		.jobs_running = &s->njobs, .max_blocks = cfg->max_blocks,
		.job_idle_ms = cfg->job_idle_ms,
		.gone = job_gone, .ctx = s,
	};
	if (rc == 0)
		rc = partials_new(cfg->loop, cfg->keep_partial_ms, &s->partials);
	s->env.partials = s->partials;
	if (rc == 0)
		rc = serve_ownership(s, err);
	if (rc == 0)
		serve_sweep(s);
	if (rc == 0)
		rc = serve_gate(s);
	if (rc == 0)
		rc = serve_listen(s, err);
	if (rc == 0)
		rc = serve_verbs(s, err);
	if (rc == 0) {
		uv_timer_init(cfg->loop, &s->trim);
		s->trim_used = true;
		warm_thread_pool(cfg->loop);
	}
	if (rc == 0 && cfg->once && cfg->idle_ms > 0) {
		uv_timer_init(cfg->loop, &s->idle);
		s->idle.data = s;
		s->idle_used = true;
		serve_idle_arm(s);
	}
	if (rc < 0) {
		serve_shutdown(s);
		uv_run(cfg->loop, UV_RUN_DEFAULT);
		serve_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void
serve_address(const struct serve *s, struct sockaddr_storage *out)
{
	*out = s->bound;
}

bool
serve_landed(const struct serve *s)
{
	return s->landed;
}

void
serve_shutdown(struct serve *s)
{
	size_t i;

	if (s->stopping)
		return;
	s->stopping = true;
	if (s->idle_used)
		uv_close((uv_handle_t *)&s->idle, NULL);
	if (s->trim_used)
		uv_close((uv_handle_t *)&s->trim, NULL);
	conn_listener_close(s->listener);
	s->listener = NULL;
	serve_fresh_close_all(s);
	gate_close(s->gate);
	s->gate = NULL;
	partials_close(s->partials);
	for (i = 0; i < s->njobs; i++)
		transfer_stop(s->jobs[i]);
	if (s->njobs == 0)
		serve_close_verbs(s);
}

void
serve_free(struct serve *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nroots; i++)
		free(s->roots[i]);
	free(s->roots);
	free(s->prefix);
	free(s->state_dir);
	free(s->jobs);
	free(s->outcomes);
	partials_free(s->partials);
	free(s);
}
