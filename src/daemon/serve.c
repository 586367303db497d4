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
#include <unistd.h>

#include "transport/tcp/conn.h"
#include "daemon/gate.h"
#include "util/net.h"
#include "util/path.h"
#include "dest/pending.h"
#include "proto/proto.h"
#include "daemon/transfer.h"
#include "transport/verbs/verbs.h"
#include "transport/verbs/xv.h"

/* A connection before it is known to be a job or a data connection.  A
 * sender's must authenticate (auth.h) before its JOB is even decoded. */
enum fresh_state {
	FR_NEW,		/* expecting AUTH (a sender) or HELLO (a member) */
	FR_CHALLENGED,	/* CHALLENGE sent, expecting PROOF */
	FR_PROVED,	/* proof checked; expecting the JOB (or QUERY) whose
			 * MAC came with it */
};

/* Connections the kernel holds for us until we accept them: a sender
 * contacts every daemon at once, but members of a large group connect to
 * their neighbours at once too. */
#define SERVE_BACKLOG 4096

/* What became of the jobs that ended lately, for senders that ask
 * (QUERY): a ring of the last OUTCOMES_KEPT. */
#define OUTCOMES_KEPT 1024u

struct outcome {
	uint8_t token[PROTO_TOKEN_LEN];
	bool landed;
};

struct fresh {
	struct serve *s;
	struct conn *c;
	enum fresh_state st;
	bool refused;	/* a bad JOB was answered; waiting for the close */
	uint8_t nonce_s[AUTH_NONCE_LEN], nonce_d[AUTH_NONCE_LEN];
	uint8_t request_mac[AUTH_MAC_LEN];
	struct gate_entry ge;	/* counted until it proves itself */
	struct fresh *prev, *next;
};

struct serve {
	struct serve_cfg cfg;
	struct transfer_env env;
	struct vb *vb;
	char **roots;
	size_t nroots;
	char *prefix;
	char *state_dir;	/* real, or NULL: jobs record nothing */
	struct conn_listener *listener;
	struct sockaddr_storage bound;
	struct transfer **jobs;
	size_t njobs, jobcap;
	struct fresh *fresh;
	struct gate *gate;
	bool stopping;
	uv_timer_t idle;	/* --once: no job for cfg.idle_ms */
	uv_timer_t trim;	/* no job for a while: memory back */
	bool trim_used;
	bool idle_used;
	bool landed;		/* a job landed its files */
	struct outcome *outcomes;	/* OUTCOMES_KEPT, or NULL */
	size_t noutcomes;		/* recorded in all */
};

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
static void
idle_arm(struct serve *s)
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
		idle_arm(s);
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
static enum proto_outcome
outcome_of(struct serve *s, const uint8_t *token)
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

static int
job_add(struct serve *s, struct conn *c, struct job *job)
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

static int
route_hello(struct serve *s, struct conn *c, const struct frame *f,
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
 * Fresh connections
 */

static void
fresh_unlink(struct fresh *fr)
{
	if (fr->prev != NULL)
		fr->prev->next = fr->next;
	else
		fr->s->fresh = fr->next;
	if (fr->next != NULL)
		fr->next->prev = fr->prev;
	gate_leave(fr->s->gate, &fr->ge);
}

/* Which frame may come next on a fresh connection; anything else, or a
 * wrong length, drops it. */
static int
fresh_header(void *ctx, struct conn *c, const struct frame *f,
	     const struct conn_seg **segs, int *nseg)
{
	struct fresh *fr = ctx;
	bool ok;

	switch (fr->st) {
	case FR_NEW:
		ok = (f->type == MSG_AUTH && f->len == AUTH_NONCE_LEN) ||
		     f->type == MSG_HELLO;
		break;
	case FR_CHALLENGED:
		ok = f->type == MSG_PROOF && f->len == AUTH_PROOF_LEN;
		break;
	default:	/* proved: what the request needs, no more */
		ok = f->type == MSG_JOB ||
		     (f->type == MSG_QUERY && f->len == PROTO_TOKEN_LEN);
		break;
	}
	if (!ok)
		return -EPROTO;
	return f->len <= proto_max_len(f->type) ? 0 : -EMSGSIZE;
}

/* Answer with one last frame, then close once it is out (the fresh
 * record keeps owning the connection until then). */
static int
answer_and_close(struct fresh *fr, uint8_t type, uint64_t val,
		 const char *text)
{
	struct frame f = { .type = type, .val = val };

	f.len = text != NULL ? strlen(text) : 0;
	conn_send_copy(fr->c, &f, text);
	conn_shutdown(fr->c);
	fr->refused = true;
	return 0;
}

/* Refuse a job: say why, and close. */
static int
refuse_job(struct fresh *fr, int error, const char *why)
{
	log_info("refused a job from %s: %s", conn_peer(fr->c), why);
	return answer_and_close(fr, MSG_REFUSE, (uint64_t)error, why);
}

/* A JOB beyond --max-jobs: refused, as busy, before anything is made. */
static int
refuse_busy(struct serve *s, struct fresh *fr)
{
	char why[160];

	snprintf(why, sizeof(why), "busy: %u transfer%s running there "
		 "(its --max-jobs); try again later", s->cfg.max_jobs,
		 s->cfg.max_jobs == 1 ? " is" : "s are");
	return refuse_job(fr, EBUSY, why);
}

/* QUERY: what became of a job of ours (authenticated like a JOB). */
static int
on_query(struct fresh *fr, const uint8_t *token)
{
	enum proto_outcome o = outcome_of(fr->s, token);

	log_info("%s asked what became of job %02x%02x%02x%02x: %s",
		 conn_peer(fr->c), token[0], token[1], token[2], token[3],
		 o == OUTCOME_LANDED ? "landed"
		 : o == OUTCOME_DISCARDED ? "discarded" : "unknown here");
	return answer_and_close(fr, MSG_OUTCOME, o, NULL);
}

/* A JOB of more blocks than --max-blocks: refused for good, with the
 * block size that would do, before anything is made (its temporaries,
 * the schedule and the bitmaps of its blocks).  True if so; the job is
 * freed then. */
static bool
refuse_big_job(struct serve *s, struct fresh *fr, struct job *job)
{
	char why[PROTO_MAX_TEXT];

	if (!transfer_over_cap(job, 1, s->cfg.max_blocks, why, sizeof(why)))
		return false;
	job_free(job);
	refuse_job(fr, EFBIG, why);
	return true;
}

static int
refuse_bad_job(struct fresh *fr, const char *why)
{
	char msg[PROTO_MAX_TEXT];

	snprintf(msg, sizeof(msg), "bad job: %s", why);
	return refuse_job(fr, EBADMSG, msg);
}

/* AUTH: answer with our nonce and our proof. */
static int
on_auth(struct fresh *fr, const uint8_t *body)
{
	struct frame f = { .type = MSG_CHALLENGE, .len = 2 * AUTH_NONCE_LEN };
	uint8_t reply[2 * AUTH_NONCE_LEN];

	memcpy(fr->nonce_s, body, AUTH_NONCE_LEN);
	if (auth_nonce(fr->nonce_d) < 0 ||
	    auth_daemon_mac(&fr->s->cfg.key, fr->nonce_s, fr->nonce_d,
			    reply + AUTH_NONCE_LEN) < 0)
		return -EIO;
	memcpy(reply, fr->nonce_d, AUTH_NONCE_LEN);
	fr->st = FR_CHALLENGED;
	return conn_send_copy(fr->c, &f, reply);
}

/* A sender that does not hold our key: refused before anything of its
 * request is read, let alone created. */
static int
refuse_unproved(struct fresh *fr, const char *why)
{
	auth_log_failure(conn_peer(fr->c), why);
	return refuse_job(fr, EACCES, "authentication failed: the sender "
			  "does not hold this daemon's key");
}

/* PROOF: the sender's MAC is checked now, before a request body may come
 * (the limit rises only then); the request's MAC is kept for it. */
static int
on_proof(struct fresh *fr, const uint8_t *body)
{
	uint8_t want[AUTH_MAC_LEN];

	if (auth_sender_mac(&fr->s->cfg.key, fr->nonce_s, fr->nonce_d,
			    want) < 0)
		return -EIO;
	if (!auth_mac_equal(want, body))
		return refuse_unproved(fr, "its proof does not match this "
				       "daemon's key; refused before its "
				       "request was read");
	memcpy(fr->request_mac, body + AUTH_MAC_LEN, AUTH_MAC_LEN);
	fr->st = FR_PROVED;
	conn_set_body_limit(fr->c, PROTO_MAX_BODY);
	return 0;
}

static bool
request_authentic(struct fresh *fr, const struct frame *f,
		  const uint8_t *body)
{
	uint8_t want[AUTH_MAC_LEN];

	return auth_request_mac(&fr->s->cfg.key, fr->nonce_s, fr->nonce_d,
				f->type, body, (size_t)f->len, want) == 0 &&
	       auth_mac_equal(want, fr->request_mac);
}

static int
fresh_frame(void *ctx, struct conn *c, const struct frame *f,
	    const uint8_t *body)
{
	struct fresh *fr = ctx;
	struct serve *s = fr->s;
	struct rd_err err = { 0 };
	struct job *job;
	int rc;

	if (fr->refused)
		return -EPROTO;
	if (f->type == MSG_AUTH)
		return on_auth(fr, body);
	if (f->type == MSG_PROOF)
		return on_proof(fr, body);
	if ((f->type == MSG_JOB || f->type == MSG_QUERY) &&
	    !request_authentic(fr, f, body))
		return refuse_unproved(fr, "its request is not the one its "
				       "proof covers (changed in flight?); "
				       "refused before anything was created");
	if (f->type == MSG_QUERY)
		return f->len == PROTO_TOKEN_LEN ? on_query(fr, body) : -EPROTO;
	if (f->type == MSG_JOB && s->cfg.once && s->njobs > 0)
		return refuse_job(fr, EBUSY, "busy: this one-shot receiver "
				  "already runs a transfer");
	if (f->type == MSG_JOB && s->cfg.max_jobs > 0 &&
	    s->njobs >= s->cfg.max_jobs)
		return refuse_busy(s, fr);
	if (f->type == MSG_JOB && job_decode(body, f->len, &job, &err) < 0)
		return refuse_bad_job(fr, err.msg);
	if (f->type == MSG_JOB && refuse_big_job(s, fr, job))
		return 0;
	if (f->type == MSG_JOB && s->idle_used)
		uv_timer_stop(&s->idle);
	fresh_unlink(fr);
	free(fr);
	if (f->type == MSG_JOB)
		rc = job_add(s, c, job);
	else
		rc = route_hello(s, c, f, body);
	if (rc < 0)
		conn_free(c);	/* the connection was ours alone */
	if (rc < 0 && f->type == MSG_JOB)
		idle_arm(s);
	return 0;
}

static void
fresh_close(void *ctx, struct conn *c, int status)
{
	struct fresh *fr = ctx;

	if (fr->st == FR_CHALLENGED)	/* it found our proof wrong */
		auth_log_failure(conn_peer(c), "it left after our challenge: "
				 "its key is not the one this daemon holds "
				 "(check that both are the cluster's key)");
	fresh_unlink(fr);
	conn_free(c);
	free(fr);
}

static const struct conn_ops fresh_ops = {
	.on_header = fresh_header,
	.on_frame = fresh_frame,
	.on_close = fresh_close,
};

static void
on_incoming(void *ctx, int fd)
{
	struct serve *s = ctx;
	struct sockaddr_storage from;
	struct fresh *fr;

	if (fd < 0) {	/* e.g. EMFILE: it waits in the kernel */
		gate_accept_failed(s->gate, fd);
		return;
	}
	fr = calloc(1, sizeof(*fr));
	if (fr == NULL) {
		close(fd);
		return;
	}
	fr->s = s;
	if (conn_adopt(s->cfg.loop, fd, &fresh_ops, fr, &fr->c) < 0) {
		free(fr);
		return;
	}
	/* small until the sender has proved itself */
	conn_set_body_limit(fr->c, 64);
	conn_keepalive(fr->c, 0, s->cfg.timeout_ms);
	fr->next = s->fresh;
	if (s->fresh != NULL)
		s->fresh->prev = fr;
	s->fresh = fr;
	if (conn_remote(fr->c, &from) < 0)
		memset(&from, 0, sizeof(from));
	gate_admit(s->gate, &fr->ge, &from);
}

/* The gate evicts a connection that has not proved itself. */
static void
fresh_evict(void *ctx, struct gate_entry *e)
{
	struct fresh *fr = (struct fresh *)((char *)e -
					    offsetof(struct fresh, ge));

	fresh_unlink(fr);
	conn_free(fr->c);
	free(fr);
}

/* Unauthenticated connections: a quarter of the descriptors this process
 * may open, at most 256, a quarter of those from one address; each gets
 * the daemon's --timeout to prove itself. */
static int
serve_gate(struct serve *s)
{
	struct rlimit rl = { .rlim_cur = 1024 };
	struct gate_cfg gc = {
		.loop = s->cfg.loop, .deadline_ms = s->cfg.timeout_ms,
		.evict = fresh_evict, .ctx = s,
	};
	rlim_t total;

	getrlimit(RLIMIT_NOFILE, &rl);
	total = rl.rlim_cur / 4;
	gc.max_total = total > 256 ? 256 : total < 4 ? 4 : (unsigned)total;
	gc.max_per_host = gc.max_total / 4 < 2 ? 2 : gc.max_total / 4;
	log_info("at most %u unauthenticated connections, %u from one "
		 "address (open files: %llu)", gc.max_total, gc.max_per_host,
		 (unsigned long long)rl.rlim_cur);
	return gate_new(&gc, &s->gate);
}

/* ---------------------------------------------------------------------
 * Daemon
 */

static int
add_root(struct serve *s, const char *dir, struct rd_err *err)
{
	char real[PATH_MAX];
	struct stat sb;

	if (realpath(dir, real) == NULL)
		return rd_errf(err, -errno, "root %s: %s", dir,
			       strerror(errno));
	if (stat(real, &sb) < 0 || !S_ISDIR(sb.st_mode))
		return rd_errf(err, -ENOTDIR, "root %s is not a directory",
			       dir);
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
			 SERVE_BACKLOG, on_incoming, s, &s->listener);
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
 * set-up (transfer.c), in the daemon's first job.  Start it now.  The request
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
		idle_arm(s);
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
	struct fresh *fr, *fn;
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
	for (fr = s->fresh; fr != NULL; fr = fn) {
		fn = fr->next;
		gate_leave(s->gate, &fr->ge);
		conn_free(fr->c);
		free(fr);
	}
	s->fresh = NULL;
	gate_close(s->gate);
	s->gate = NULL;
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
	free(s);
}
