/* SPDX-License-Identifier: MIT */
/*
 * push - the sending side of a transfer (see push.h).
 */
#include "send/push_int.h"

#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <uv.h>

#include "proto/auth.h"
#include "transport/tcp/conn.h"
#include "engine/engine.h"
#include "util/net.h"
#include "proto/proto.h"
#include "store/store.h"

static const struct conn_ops ctl_ops;

double
push_elapsed(const struct push *p)
{
	return (double)(uv_hrtime() - p->t0) / 1e9;
}

void
push_bound_setup(struct phost *h, unsigned ms)
{
	conn_keepalive_tune(h->c, 0, ms > PROTO_SETUP_SILENCE_MIN_MS
					     ? ms : PROTO_SETUP_SILENCE_MIN_MS);
}

void
push_await_setup(struct phost *h)
{
	push_bound_setup(h, h->p->cfg->connect_timeout_ms);
}

/* h's daemon answered: from now on a silence is bounded by -t again. */
static void
setup_answered(struct phost *h)
{
	conn_keepalive_tune(h->c, 0, h->p->cfg->timeout_ms);
}

/* ---------------------------------------------------------------------
 * Control connection
 */

/* A frame before the daemon proved it holds the key: nothing it says is
 * believed (an OUTCOME would make a copy that is not there "ok"), and the
 * host fails as one that did not authenticate. */
static void
unproved_frame(struct phost *h, const struct frame *f)
{
	char why[300];

	h->refused = true;
	snprintf(why, sizeof(why), "the endpoint at %s sent %s before it "
		 "proved it holds the key: not believed (not an rdmcp daemon "
		 "of this cluster?)", h->addrstr, proto_type_name(f->type));
	push_host_lost(h, -EPROTO, why);
}

static int
ctl_header(void *ctx, struct conn *c, const struct frame *f,
	   const struct conn_seg **segs, int *nseg)
{
	struct phost *h = ctx;

	if (!h->authed && (f->type != MSG_CHALLENGE ||
			   f->len != 2 * AUTH_NONCE_LEN)) {
		unproved_frame(h, f);
		return 0;
	}
	if (f->len > proto_max_len(f->type))
		return -EMSGSIZE;
	return 0;
}

static void
copy_text(char *dst, size_t len, const uint8_t *body, uint64_t n)
{
	size_t i, m = n < len - 1 ? (size_t)n : len - 1;

	for (i = 0; i < m; i++)
		dst[i] = (body[i] >= 0x20 && body[i] < 0x7f) ? (char)body[i]
							      : '?';
	dst[m] = '\0';
}

/* A host holds its copy but could not pass blocks on: those it was to
 * feed cannot finish, so the group is broken. */
static void
relay_failed(struct phost *h, const char *text)
{
	char why[400];

	snprintf(why, sizeof(why), "%s could not relay: %.300s", h->name,
		 text);
	push_abort_group(h->p, h, why);
}

static int
on_complete_msg(struct phost *h, const struct frame *f)
{
	struct push *p = h->p;

	if (h->st != HS_RUNNING && h->st != HS_ABORTING)
		return -EPROTO;
	if (p->cfg->verify && (!p->sums_ready || f->val != p->crc))
		log_warn("%s: landed with crc %08llx, the sources' is %08x",
			 h->name, (unsigned long long)f->val, p->crc);
	push_host_done(h);
	return 0;
}

/* h wants our block digests: computed (once for all hosts) if they are
 * not, sent when they are. */
static void
want_digests(struct phost *h)
{
	h->wants_digests = true;
	h->p->digests_wanted = true;
	push_start_sums(h->p);
}

/* HAVE: the daemon holds the job's entries already, all identical
 * (HAVE_SAME), or files that may be, to compare with our sums (HAVE_ASK,
 * once: REPLACE answers it), and their blocks with our digests (asked
 * with HAVE_ASK, or once REPLACE showed files that differ:
 * HAVE_DIGESTS). */
static int
on_have(struct phost *h, const struct frame *f)
{
	if (h->st != HS_OFFERED || f->arg > HAVE_DIGESTS ||
	    (f->arg == HAVE_ASK && h->compared) ||
	    (f->arg == HAVE_DIGESTS &&
	     (!h->compared || h->wants_digests || !h->p->delta)))
		return -EPROTO;
	if (f->arg == HAVE_SAME) {
		h->identical = true;
		push_host_done(h);
		return 0;
	}
	setup_answered(h);	/* it waits for us now */
	if (f->arg == HAVE_ASK)
		h->st = HS_HAVE;
	if (f->arg == HAVE_DIGESTS ||
	    (h->p->delta && (f->val & HAVE_WANT_DIGESTS)))
		want_digests(h);
	else
		push_start_sums(h->p);
	push_settle_haves(h->p);	/* at once if what it needs is known */
	return 0;
}

/* ACCEPT's body, after our DIGESTS: the blocks h lacks.  0 or -errno. */
static int
take_need(struct phost *h, const struct frame *f, const uint8_t *body)
{
	struct rbuf r;

	if (f->len == 0)
		return 0;
	if (h->need != NULL || !h->p->delta || !h->compared ||
	    !h->digests_sent)
		return -EPROTO;
	rbuf_init(&r, body, f->len);
	if (bset_decode(&r, PROTO_MAX_RUNS, store_stream_blocks(h->p->st),
			&h->need) < 0 || rget_u64(&r, &h->resumed) < 0 ||
	    h->resumed > h->p->sum->bytes)
		return -EPROTO;
	return rbuf_done(&r);
}

/* REFUSE or FAIL: the host discarded what it had of this push. */
static void
on_fail_msg(struct phost *h, const struct frame *f, const uint8_t *body)
{
	char text[PROTO_MAX_TEXT + 1];

	copy_text(text, sizeof(text), body, f->len);
	/* refused for good, but for being busy (--max-jobs); no space is
	 * no better the next time either */
	h->refused = (f->type == MSG_REFUSE && (f->val & 0xffff) != EBUSY) ||
		     (f->val & 0xffff) == ENOSPC || (f->val & 0xffff) == EDQUOT;
	if (h->st == HS_DONE)
		relay_failed(h, text);
	else
		push_host_failed(h, -(int)(f->val & 0xffff), f->arg, "%s",
				 text);
}

static int on_challenge(struct phost *h, const struct frame *f,
			const uint8_t *body);

/* TRACE: a member's timeline, on our clock (by the round trip of its
 * JOB and ACCEPT), to whoever asked. */
static int
on_trace(struct phost *h, const struct frame *f, const uint8_t *body)
{
	struct push *p = h->p;
	struct trace_sync sync;
	struct trace *t;
	uint64_t error_us;
	int64_t offset;

	if (p->cfg->trace == NULL || h->traced ||
	    trace_decode(body, f->len, &sync, &t) < 0)
		return -EPROTO;
	h->traced = true;
	offset = trace_offset(&sync, h->job_sent_us, h->accepted_us,
			      trace_now(), &error_us);
	p->cfg->trace(p->cfg->ctx, h->idx, h->rank, t, offset, error_us);
	trace_free(t);
	push_maybe_finish(p);
	return 0;
}

static int
ctl_frame(void *ctx, struct conn *c, const struct frame *f,
	  const uint8_t *body)
{
	struct phost *h = ctx;

	switch (f->type) {
	case MSG_CHALLENGE:
		return on_challenge(h, f, body);
	case MSG_ACCEPT:
		if (h->st != HS_OFFERED || take_need(h, f, body) < 0)
			return -EPROTO;
		setup_answered(h);
		h->st = HS_ACCEPTED;
		h->accepted_us = trace_now();
		h->rdma_port = (uint16_t)f->val;
		h->p->undecided--;
		push_maybe_start(h->p);
		return 0;
	case MSG_HAVE:
		return on_have(h, f);
	case MSG_REFUSE:
	case MSG_FAIL:
		on_fail_msg(h, f, body);
		return 0;
	case MSG_COMPLETE:
		return on_complete_msg(h, f);
	case MSG_OUTCOME:
		if (h->st != HS_ABORTING && h->st != HS_QUERY)
			return 0;	/* the answer of one that finished */
		push_host_outcome(h, f->val);
		return 0;
	case MSG_PROGRESS:
		if (h->st == HS_RUNNING)	/* may cross an abort */
			push_host_progress(h, f->val, f->arg);
		return 0;
	case MSG_TRACE:
		return on_trace(h, f, body);
	default:
		return -EPROTO;
	}
}

/* Is h waiting for its daemon to set a job up, or to answer a QUERY
 * (push_await_setup's bound)? */
static bool
awaiting_setup(const struct phost *h)
{
	return h->st == HS_OFFERED ||
	       (h->st == HS_QUERY && h->qstep == QS_ASKED);
}

/* How long h's daemon has to take the connection and prove itself:
 * --connect-timeout; but a quarter of it (push_grace_ms(0, ...)) when it
 * is asked whether its copy landed after it went silent (for -t, or to
 * an ABORT): a hung daemon would hold the retry of every other host for
 * all of it, and one that does not answer so soon fails with its copy
 * maybe in place, which the retry, if there is one, asks again. */
static unsigned
handshake_ms(const struct phost *h)
{
	unsigned ms = h->p->cfg->connect_timeout_ms;

	if (h->st == HS_QUERY && h->error == -ETIMEDOUT)
		return push_grace_ms(0, ms);
	return ms;
}

static void
ctl_close(void *ctx, struct conn *c, int status)
{
	struct phost *h = ctx;
	char why[300];
	int error = status < 0 ? status : -ECONNRESET;
	unsigned bound = handshake_ms(h);

	if (status == -ETIME && !h->authed)
		snprintf(why, sizeof(why), "the daemon at %s did not prove it "
			 "holds the key within %u ms (%s): not an rdmcp "
			 "daemon, or a hung one", h->addrstr, bound,
			 bound < h->p->cfg->connect_timeout_ms
			 ? "a quarter of --connect-timeout, 250 ms at least, "
			   "as it had gone silent" : "--connect-timeout");
	else if (status == -ETIMEDOUT && !h->authed)
		snprintf(why, sizeof(why), "the daemon at %s said nothing for "
			 "%u ms (--timeout) before it proved it holds the key: "
			 "a hung daemon, or one starved of CPU", h->addrstr,
			 h->p->cfg->timeout_ms);
	else if (status == -ETIMEDOUT && awaiting_setup(h)) {
		snprintf(why, sizeof(why), "the daemon at %s said nothing for "
			 "%u ms while it set the job up (%s): a hung daemon, or "
			 "one starved of CPU", h->addrstr,
			 conn_keepalive_timeout(c),
			 h->st == HS_OFFERED && h->p->grace_late ? "the "
			 "other hosts were ready; left for the next attempt"
			 : "--connect-timeout");
		error = -ETIME;	/* --connect-timeout's, not -t's */
	} else if (status == -ETIMEDOUT)
		snprintf(why, sizeof(why), "the daemon at %s said nothing for "
			 "%u ms (--timeout): a hung daemon, or one starved of "
			 "CPU, or its network", h->addrstr,
			 conn_keepalive_timeout(c));
	else if (status < 0)
		snprintf(why, sizeof(why), "connection to %s lost: %s",
			 h->addrstr, strerror(-status));
	else
		snprintf(why, sizeof(why), "the daemon at %s went away",
			 h->addrstr);
	push_host_lost(h, error, why);
}

static void
ctl_connect(void *ctx, struct conn *c, int status)
{
	struct phost *h = ctx;
	struct push *p = h->p;
	struct frame f = { .type = MSG_AUTH, .len = AUTH_NONCE_LEN };
	char why[300];

	if (status == 0)
		status = auth_nonce(h->nonce);
	if (status == 0)
		status = conn_send_copy(c, &f, h->nonce);
	if (status < 0) {
		h->c = NULL;
		conn_free(c);
		snprintf(why, sizeof(why), "cannot connect to %s: %s",
			 h->addrstr, status == -ETIMEDOUT ? "timed out"
							  : strerror(-status));
		push_host_lost(h, status, why);
		return;
	}
	/* a member's timeline (--trace) may be large */
	conn_set_body_limit(c, p->cfg->trace != NULL ? PROTO_MAX_BODY
						   : 4 + PROTO_MAX_TEXT);
	conn_keepalive(c, 0, p->cfg->timeout_ms);
	/* the handshake is bounded on its own: keepalives do not extend it */
	conn_set_deadline(c, handshake_ms(h));
	if (h->st == HS_QUERY)
		h->qstep = QS_AUTH;
	else
		h->st = HS_AUTH;
}

/* After the daemon's proof: ours, with the MAC of what follows it, the
 * JOB or the QUERY (the job's token). */
static int
send_proved(struct phost *h, const uint8_t *nonce_d)
{
	struct push *p = h->p;
	bool query = h->st == HS_QUERY;
	const uint8_t *body = query ? p->token : p->jobmsg.data;
	size_t len = query ? sizeof(p->token) : p->jobmsg.len;
	uint8_t proof[AUTH_PROOF_LEN];
	struct frame pf = { .type = MSG_PROOF, .len = AUTH_PROOF_LEN };
	struct frame jf = { .type = query ? MSG_QUERY : MSG_JOB, .len = len };
	struct iovec iov = { (void *)body, len };
	int rc;

	rc = auth_sender_mac(p->cfg->key, h->nonce, nonce_d, proof);
	if (rc == 0)
		rc = auth_request_mac(p->cfg->key, h->nonce, nonce_d, jf.type,
				      body, len, proof + AUTH_MAC_LEN);
	if (rc == 0)
		rc = conn_send_copy(h->c, &pf, proof);
	if (rc == 0)
		rc = conn_send(h->c, &jf, &iov, 1, 0);
	if (rc == 0 && query)
		h->qstep = QS_ASKED;
	else if (rc == 0) {
		h->st = HS_OFFERED;
		h->job_sent_us = trace_now();
	}
	if (rc == 0)	/* it answers, or sends keepalives as it works */
		push_await_setup(h);
	return rc;
}

/* CHALLENGE: check the daemon's proof, then send ours and what it
 * covers. */
static int
on_challenge(struct phost *h, const struct frame *f, const uint8_t *body)
{
	struct push *p = h->p;
	const uint8_t *nonce_d, *theirs;
	uint8_t want[AUTH_MAC_LEN];
	bool expected = h->st == HS_AUTH ||
			(h->st == HS_QUERY && h->qstep == QS_AUTH);
	int rc;

	/* the length first: a CHALLENGE after the handshake may have no
	 * body at all (body NULL) */
	if (!expected || f->len != 2 * AUTH_NONCE_LEN)
		return -EPROTO;
	nonce_d = body;
	theirs = body + AUTH_NONCE_LEN;
	rc = auth_daemon_mac(p->cfg->key, h->nonce, nonce_d, want);
	if (rc == 0 && !auth_mac_equal(want, theirs)) {
		h->refused = true;
		push_host_failed(h, -EACCES, PROTO_NO_PEER, "authentication "
				 "failed with the daemon at %s: %s is not the "
				 "one it holds (check that both are the "
				 "cluster's key)", h->addrstr, p->cfg->key_name
				 ? p->cfg->key_name : "our key");
		return 0;
	}
	if (rc < 0)
		return rc;
	h->authed = true;
	conn_set_deadline(h->c, 0);
	return send_proved(h, nonce_d);
}

static const struct conn_ops ctl_ops = {
	.on_header = ctl_header,
	.on_frame = ctl_frame,
	.on_connect = ctl_connect,
	.on_close = ctl_close,
};

static const char *
family_name(int family)
{
	return family == AF_INET6 ? "IPv6" : family == AF_INET ? "IPv4"
							  : "another family";
}

/* --bind gives an address of another family than h's: no connection
 * from it can reach h, now or on a retry.  True once h failed, saying
 * so. */
static bool
bind_mismatch(struct phost *h)
{
	const struct push *p = h->p;

	if (!p->has_src || p->src.ss_family == h->addr.ss_family)
		return false;
	h->refused = true;
	push_host_failed(h, -EAFNOSUPPORT, PROTO_NO_PEER, "cannot reach %s "
			 "(%s) from --bind %s (%s): give --bind an address of "
			 "its family, or none", h->addrstr,
			 family_name(h->addr.ss_family), p->cfg->bind,
			 family_name(p->src.ss_family));
	return true;
}

void
push_host_connect(struct phost *h)
{
	struct push *p = h->p;
	char why[300];
	int rc;

	if (h->st != HS_QUERY)
		h->st = HS_CONNECTING;
	h->qstep = QS_CONNECTING;
	h->authed = false;
	if (bind_mismatch(h))
		return;
	rc = conn_connect(&p->loop, (struct sockaddr *)&h->addr,
			  p->has_src ? (struct sockaddr *)&p->src : NULL,
			  handshake_ms(h), &ctl_ops, h, &h->c);
	if (rc < 0 && p->has_src && (rc == UV_EADDRNOTAVAIL ||
				     rc == UV_EAFNOSUPPORT || rc == UV_EINVAL)) {
		h->refused = true;	/* the same again: no retry helps */
		snprintf(why, sizeof(why), "cannot connect to %s from --bind "
			 "%s: %s (an address of this machine, of the host's "
			 "family, or no --bind)", h->addrstr, p->cfg->bind,
			 uv_strerror(rc));
		push_host_lost(h, rc, why);
	} else if (rc < 0) {
		snprintf(why, sizeof(why), "cannot connect to %s: %s",
			 h->addrstr, uv_strerror(rc));
		push_host_lost(h, rc, why);
	}
}

/* ---------------------------------------------------------------------
 * Hosts: resolving, and the same host under two names
 */

/* A hash of the address and port, for the table of resolved hosts. */
static size_t
addr_hash(const struct sockaddr_storage *a)
{
	const uint8_t *b = (const uint8_t *)a;
	size_t i, len = a->ss_family == AF_INET6
				? sizeof(struct sockaddr_in6)
				: sizeof(struct sockaddr_in);
	uint64_t x = 1469598103934665603ull;

	for (i = 0; i < len; i++) {
		x ^= b[i];
		x *= 1099511628211ull;
	}
	return (size_t)x;
}

static bool
same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	size_t len = a->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					      : sizeof(struct sockaddr_in);

	return a->ss_family == b->ss_family && memcmp(a, b, len) == 0;
}

/* h has its address: on to its daemon, unless a host resolved before it
 * has the same one. */
static void
host_resolved(struct phost *h)
{
	struct push *p = h->p;
	size_t mask = p->addr_slots - 1, i = addr_hash(&h->addr) & mask;
	struct phost *first;

	net_format(&h->addr, h->addrstr, sizeof(h->addrstr));
	for (; p->by_addr[i] != NULL; i = (i + 1) & mask) {
		first = p->by_addr[i];
		if (same_addr(&first->addr, &h->addr)) {
			push_host_alias(h, first);
			return;
		}
	}
	if (p->by_addr[i] == NULL)
		p->by_addr[i] = h;
	push_host_connect(h);
}

static void
on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
	struct phost *h = req->data;

	if (status < 0 || res == NULL) {
		/* no such name: asking again cannot help; a resolver that
		 * could not answer (UV_EAI_AGAIN...) may next time */
		h->refused = status == UV_EAI_NONAME || status == UV_EAI_NODATA;
		push_host_failed(h, -EHOSTUNREACH, PROTO_NO_PEER,
				 "cannot resolve %s: %s", h->host,
				 uv_strerror(status));
	} else {
		memset(&h->addr, 0, sizeof(h->addr));
		memcpy(&h->addr, res->ai_addr, res->ai_addrlen);
		net_set_port(&h->addr, h->port);
		host_resolved(h);
	}
	uv_freeaddrinfo(res);
}

static void
host_begin(struct phost *h)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	int rc;

	if (net_split_hostport(h->name, h->host, sizeof(h->host), &h->port,
			       h->p->cfg->default_port) < 0) {
		push_host_failed(h, -EINVAL, PROTO_NO_PEER, "bad host '%s'",
				 h->name);
		return;
	}
	if (net_parse_numeric(h->host, h->port, &h->addr) == 0) {
		host_resolved(h);
		return;
	}
	h->gai.data = h;
	rc = uv_getaddrinfo(&h->p->loop, &h->gai, on_resolved, h->host, NULL,
			    &hints);
	if (rc < 0)
		push_host_failed(h, rc, PROTO_NO_PEER, "cannot resolve %s: %s",
				 h->host, uv_strerror(rc));
}

/* ---------------------------------------------------------------------
 * Setup
 */

/* Should the members' receive windows follow their links
 * (JOB_LINK_WINDOW)?  In a chain over a network: there it costs nothing
 * and a broken attempt wastes a few blocks, not the 16 of the window.
 * Not in the binomial pipeline, whose members take blocks from every
 * neighbour in turn and lost speed to it, nor between processes of one
 * machine, where a block's wire time is the CPU's (docs/performance.md,
 * "The receive window that follows the link"). */
static bool
link_window(const struct push_cfg *cfg)
{
	return cfg->alg == SCHED_CHAIN &&
	       push_link(cfg->transport, cfg->hosts, cfg->nhosts) !=
		       SCHED_LINK_LOOPBACK;
}

static int
build_job(struct push *p, struct rd_err *err)
{
	const struct push_cfg *cfg = p->cfg;
	struct job job = {
		.alg = cfg->alg, .block_size = p->block_size,
		.timeout_ms = cfg->timeout_ms,
		.window = cfg->window ? cfg->window : ENG_DEFAULT_WINDOW,
		.transport = cfg->transport,
		.flags = (cfg->verify ? JOB_VERIFY : 0) |
			 (cfg->force ? JOB_FORCE : 0) |
			 (cfg->times ? JOB_TIMES | JOB_OWNERS : 0) |
			 (cfg->trace ? JOB_TRACE : 0) |
			 (cfg->sparse ? JOB_SPARSE : 0) |
			 (cfg->dry_run ? JOB_DRY_RUN : 0) |
			 (p->delta ? JOB_DELTA : 0) |
			 (cfg->parents ? JOB_PARENTS : 0) |
			 (link_window(cfg) ? JOB_LINK_WINDOW : 0),
		.bwlimit = cfg->bwlimit,
		.nfiles = (uint32_t)cfg->nfiles,
	};
	char host[256] = "";
	size_t i;
	int rc;

	if (getrandom(p->token, sizeof(p->token), 0) != sizeof(p->token))
		return rd_errf(err, -EIO, "no random bytes for the job token");
	memcpy(job.token, p->token, sizeof(p->token));
	gethostname(host, sizeof(host) - 1);
	job.origin = host;
	job.files = calloc(cfg->nfiles ? cfg->nfiles : 1, sizeof(*job.files));
	if (job.files == NULL)
		return -ENOMEM;
	for (i = 0; i < cfg->nfiles; i++) {
		job.files[i] = cfg->files[i];
		if (cfg->sources[i] != NULL)	/* as opened, not as listed */
			store_file(p->st, i, &job.files[i].size,
				   &job.files[i].mode);
	}
	wbuf_init(&p->jobmsg);
	rc = job_encode(&job, &p->jobmsg);
	free(job.files);
	if (rc == 0 && p->jobmsg.len > PROTO_MAX_BODY)
		rc = rd_errf(err, -E2BIG, "the file list is too long");
	return rc;
}

static int
push_init(struct push *p, const struct push_cfg *cfg,
	  struct push_summary *sum, struct rd_err *err)
{
	size_t i;
	int rc;

	p->cfg = cfg;
	p->sum = sum;
	memset(sum, 0, sizeof(*sum));
	sum->attempts = 1;
	sum->hosts = cfg->nhosts;
	sum->transport = "tcp";
	p->t0 = uv_hrtime();
	rc = store_open_sources(cfg->sources, cfg->nfiles, PROTO_MIN_BLOCK,
				&p->st, err);
	if (rc < 0)
		return rc;
	sum->bytes = store_total(p->st);
	p->block_size = cfg->block_size ? cfg->block_size
			: sched_auto_block(cfg->alg, sum->bytes,
					   (uint32_t)(cfg->nhosts + 1),
					   push_link(cfg->transport, cfg->hosts,
						     cfg->nhosts));
	store_set_block_size(p->st, p->block_size);
	sum->block_size = p->block_size;
	/* what hosts hold is compared block by block, unless told not to,
	 * or the blocks are too many for their digests to go in a frame */
	p->delta = !cfg->whole_file &&
		   store_blocks(p->st) <= PROTO_MAX_DIGESTS;
	rc = build_job(p, err);
	if (rc < 0)
		return rc;
	store_seed_digests(p->st, p->token);
	p->h = calloc(cfg->nhosts ? cfg->nhosts : 1, sizeof(*p->h));
	if (p->h == NULL)
		return -ENOMEM;
	p->nh = p->undecided = p->unfinished = cfg->nhosts;
	for (p->addr_slots = 16; p->addr_slots < 2 * p->nh;)
		p->addr_slots *= 2;
	p->by_addr = calloc(p->addr_slots, sizeof(*p->by_addr));
	if (p->by_addr == NULL)
		return -ENOMEM;
	if (cfg->bind != NULL) {
		if (net_parse_numeric(cfg->bind, 0, &p->src) < 0)
			return rd_errf(err, -EINVAL, "bad source address '%s' "
				       "(numeric)", cfg->bind);
		p->has_src = true;
	}
	for (i = 0; i < p->nh; i++) {
		p->h[i].p = p;
		p->h[i].idx = i;
		p->h[i].name = cfg->hosts[i];
	}
	rc = uv_loop_init(&p->loop);
	if (rc < 0)
		return rc;
	uv_timer_init(&p->loop, &p->finisher);
	uv_timer_init(&p->loop, &p->aborter);
	uv_timer_init(&p->loop, &p->grace);
	uv_timer_init(&p->loop, &p->tracer);
	uv_idle_init(&p->loop, &p->starter);
	p->finisher.data = p->aborter.data = p->tracer.data = p;
	p->grace.data = p;
	p->starter.data = p;
	p->t0_us = trace_now();
	if (cfg->trace != NULL && (p->trace = trace_new(1u << 20)) == NULL)
		return -ENOMEM;
	p->sums_work.data = p;
	p->sums = calloc(cfg->nfiles + 1, sizeof(*p->sums));
	return p->sums != NULL ? 0 : -ENOMEM;
}

int
push_run(const struct push_cfg *cfg, struct push_summary *sum,
	 struct rd_err *err)
{
	struct push p;
	size_t i;
	int rc;

	memset(&p, 0, sizeof(p));
	rc = push_init(&p, cfg, sum, err);
	if (rc < 0) {
		if (err != NULL && err->code == 0)
			rd_errf(err, rc, "%s", strerror(-rc));
		goto out;
	}
	for (i = 0; i < p.nh; i++)
		host_begin(&p.h[i]);
	push_maybe_start(&p);
	push_maybe_finish(&p);
	uv_run(&p.loop, UV_RUN_DEFAULT);
	rc = uv_loop_close(&p.loop);
	if (rc < 0)	/* a handle left open: a bug, never to pass unseen */
		rd_errf(&p.fatal, rc, "internal error: the event loop did not "
			"close (%s)", uv_strerror(rc));
	rc = p.fatal.code;
	if (rc < 0 && err != NULL)
		*err = p.fatal;
out:
	wbuf_free(&p.jobmsg);
	wbuf_free(&p.summsg);
	free(p.sums);
	free(p.digests);
	bset_free(p.map);
	for (i = 0; p.h != NULL && i < p.nh; i++) {
		bset_free(p.h[i].need);
		bset_free(p.h[i].link);
	}
	free(p.lack_bits);
	trace_free(p.trace);
	free(p.by_addr);
	free(p.by_rank);
	free(p.all);
	free(p.racks);
	free(p.feeders);
	free(p.h);
	store_free(p.st);
	return rc;
}

enum sched_link
push_link(enum proto_transport transport, const char *const *hosts,
	  size_t nhosts)
{
	size_t i;

	if (transport == TRANSPORT_VERBS)
		return SCHED_LINK_VERBS;
	for (i = 0; i < nhosts; i++)
		if (!net_hostport_is_loopback(hosts[i]))
			return SCHED_LINK_NET;
	return nhosts > 0 ? SCHED_LINK_LOOPBACK : SCHED_LINK_NET;
}
