/* SPDX-License-Identifier: MIT */
/*
 * fresh - a daemon's connections before it knows what they are (see
 * serve_int.h): a sender's handshake (AUTH, CHALLENGE, PROOF, checked
 * before anything else is read) and its request (a JOB, refused or handed
 * to a new transfer; a QUERY, answered), or a member's HELLO, routed to
 * its transfer; bounded all along by the gate.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "daemon/gate.h"
#include "daemon/serve_int.h"
#include "daemon/transfer.h"
#include "proto/auth.h"
#include "proto/proto.h"
#include "transport/tcp/conn.h"

/* A connection before it is known to be a job or a data connection.  A
 * sender's must authenticate (auth.h) before its JOB is even decoded. */
enum fresh_state {
	FR_NEW,		/* expecting AUTH (a sender) or HELLO (a member) */
	FR_CHALLENGED,	/* CHALLENGE sent, expecting PROOF */
	FR_PROVED,	/* proof checked; expecting the JOB (or QUERY) whose
			 * MAC came with it */
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
	enum proto_outcome o = serve_outcome_of(fr->s, token);

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
		rc = serve_job_add(s, c, job);
	else
		rc = serve_route_hello(s, c, f, body);
	if (rc < 0)
		conn_free(c);	/* the connection was ours alone */
	if (rc < 0 && f->type == MSG_JOB)
		serve_idle_arm(s);
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

void
serve_on_incoming(void *ctx, int fd)
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
int
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

void
serve_fresh_close_all(struct serve *s)
{
	struct fresh *fr, *fn;

	for (fr = s->fresh; fr != NULL; fr = fn) {
		fn = fr->next;
		gate_leave(s->gate, &fr->ge);
		conn_free(fr->c);
		free(fr);
	}
	s->fresh = NULL;
}
