/* SPDX-License-Identifier: MIT */
/*
 * fuzz_push - libFuzzer target for the sending side's state machine:
 * push_run() of a small real file to one host, 127.0.0.1:PORT, where a
 * thread of the harness plays the daemon on a real listener (kept across
 * inputs) with the fixed key of harness.h.  The sender's timeouts are
 * short (connect_timeout_ms FUZZ_CONNECT_MS, timeout_ms FUZZ_TIMEOUT_MS),
 * so that every push ends soon.
 *
 * Input: byte 0 says which of the control connections the fake answers
 * with the key (bit k: the k-th; the second is the one a sender opens
 * after its go to ask what became of its job, QUERY); byte 1 the push's
 * options (OPT_*); the rest is a script (harness.h), which the fake plays
 * on the control connections one after the other: SC_CLOSE closes one
 * (so does the sender's close), and the script goes on on the next.
 * SC_WAIT waits FAKE_WAIT_MS at most; the fake's own ops: SC_X5 shuts its
 * side only, SC_X6 closes the sender's data connections, SC_X7 sends a
 * NOP.  With the key, the fake answers AUTH with a right CHALLENGE and
 * checks the sender's PROOF and the JOB or QUERY it covers before it runs
 * the script; without it, it runs the script as soon as AUTH came (a
 * CHALLENGE in it is a wrong one).  After FAKE_SCRIPT_MS the fake closes
 * whatever it still holds.  FUZZ_LOG=1: the sender's log, what the fake
 * hears and does, the report.
 *
 * An input whose push opened more than one control connection (the
 * QUERY after a lost go) and played any after the first with the key is
 * pushed again, those without it: the same answer (OUTCOME "landed"...)
 * from an endpoint without the key must not count.
 *
 * Properties:
 *   - the push ends (libFuzzer's -timeout) and push_run returns 0;
 *   - the host counts as ok only if the fake said COMPLETE, OUTCOME
 *     "landed", HAVE (which the sender checks against its crc) or, to a
 *     dry run, ACCEPT on a connection where it had proved the key: an
 *     endpoint without the key never makes it ok;
 *   - to an endpoint that has not proved the key the sender says nothing
 *     but AUTH and NOPs (never its PROOF, its JOB, a QUERY);
 *   - the sender's PROOF is right and covers its request, its JOB
 *     decodes, a QUERY names the job;
 *   - no leak, and as many descriptors after each push as before.
 *
 *   make fuzz                      (FUZZ_SECONDS, split between targets)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "send/push.h"

#define FUZZ_CONNECT_MS 50
#define FUZZ_TIMEOUT_MS 200
#define FAKE_SCRIPT_MS 2000	/* the fake holds its connections this long */
#define FAKE_WAIT_MS 60	/* an SC_WAIT, at most */
#define HANDSHAKE_MS 1000	/* the sender's AUTH, PROOF and request */
#define SMALL_FILE 3000

/* byte 1 */
#define OPT_SMALL 0x01u		/* SMALL_FILE bytes, else an empty file */
#define OPT_VERIFY 0x02u
#define OPT_TRACE 0x04u
#define OPT_FORCE 0x08u
#define OPT_DRY_RUN 0x10u
#define OPT_TIMES 0x20u
#define OPT_ALG_SHIFT 6		/* 2 bits: the schedule */

static struct auth_key key;
static int lfd = -1;		/* the fake daemon's listener */
static int wake = -1;		/* an eventfd: the push is over */
static char host[64];
static char dir[PATH_MAX - 16];
static char empty_path[PATH_MAX], small_path[PATH_MAX];
static int base_fds = -1;
static bool verbose;		/* FUZZ_LOG: what the fake hears, too */

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---------------------------------------------------------------------
 * The fake daemon
 */

#define MAX_CONNS 16

/* A connection from the sender not known yet (its first frame tells), or
 * a data connection (HELLO), read and dropped. */
struct sconn {
	int fd;
	bool data;
	uint8_t buf[PROTO_FRAME_LEN + AUTH_NONCE_LEN];
	size_t got;
};

/* The control connection being played. */
struct ctl {
	int fd;
	int k;			/* which one */
	bool honest;		/* answers with the key */
	bool proved;		/* the sender has our right CHALLENGE */
	bool eof;
	uint8_t nonce_s[AUTH_NONCE_LEN], nonce_d[AUTH_NONCE_LEN];
	struct fstream rx;	/* what the sender says */
	struct fstream tx;	/* what we say, as the sender reads it */
	int step;		/* honest: 0 PROOF next, 1 request, 2 done */
	uint8_t request_mac[AUTH_MAC_LEN];
	uint64_t frames;	/* from the sender, NOPs too */
	uint8_t heard[256];	/* the types of the others, in order */
	size_t nheard;		/* (up to 256 of them) */
	size_t cursor;		/* those up to here an SC_WAIT consumed */
	struct fake *fk;
};

struct fake {
	struct in script;
	uint8_t honest;		/* bit k: control connection k */
	bool dry_run;
	atomic_bool stop;
	uint64_t t0, deadline;	/* the start; FAKE_SCRIPT_MS after */
	struct sconn conns[MAX_CONNS];
	int nconns;
	/* control connections whose AUTH came, in order */
	int ctlq[MAX_CONNS];
	uint8_t ctlnonce[MAX_CONNS][AUTH_NONCE_LEN];
	int nctlq;
	int nctl;		/* played so far */
	bool won;		/* said what may make the host ok, proved */
	uint8_t token[PROTO_TOKEN_LEN];
	bool have_token;
	struct ctl *cur;
};

static void
sconn_drop(struct fake *fk, int i)
{
	close(fk->conns[i].fd);
	fk->conns[i] = fk->conns[--fk->nconns];
}

/* Read what the connection says first: AUTH makes it a control
 * connection (queued), HELLO a data connection; anything else is
 * closed (the sender says nothing else first). */
static void
sconn_read(struct fake *fk, int i)
{
	struct sconn *s = &fk->conns[i];
	struct frame f;
	uint8_t sink[16384];
	size_t want;
	ssize_t n;

	if (s->data) {
		n = recv(s->fd, sink, sizeof(sink), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			sconn_drop(fk, i);
		return;
	}
	want = s->got < PROTO_FRAME_LEN ? PROTO_FRAME_LEN
					: PROTO_FRAME_LEN + AUTH_NONCE_LEN;
	n = recv(s->fd, s->buf + s->got, want - s->got, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		sconn_drop(fk, i);
		return;
	}
	s->got += (size_t)n;
	if (s->got < PROTO_FRAME_LEN)
		return;
	if (frame_decode(s->buf, &f) < 0)
		FUZZ_FAIL("the sender's first frame has a bad header");
	if (f.type == MSG_HELLO) {
		s->data = true;
		return;
	}
	if (f.type != MSG_AUTH || f.len != AUTH_NONCE_LEN)
		FUZZ_FAIL("the sender opened a connection with %s (len %llu)",
			  proto_type_name(f.type), (unsigned long long)f.len);
	if (s->got < PROTO_FRAME_LEN + AUTH_NONCE_LEN)
		return;
	if (fk->nctlq == MAX_CONNS)
		abort();
	fk->ctlq[fk->nctlq] = s->fd;
	memcpy(fk->ctlnonce[fk->nctlq++], s->buf + PROTO_FRAME_LEN,
	       AUTH_NONCE_LEN);
	fk->conns[i] = fk->conns[--fk->nconns];
}

static void
ctl_read(struct ctl *c)
{
	uint8_t buf[16384];
	ssize_t n;

	while (!c->eof) {
		n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0)
			fs_feed(&c->rx, buf, (size_t)n);
		else if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		else
			c->eof = true;
	}
}

/* Everything the fake does waits here: new connections, what they say,
 * what the control connection says; ms at most. */
static void
fake_poll(struct fake *fk, int ms)
{
	struct pollfd pf[MAX_CONNS + 3];
	int i, n = 0, nconns = fk->nconns;

	pf[n++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
	pf[n++] = (struct pollfd){ .fd = wake, .events = POLLIN };
	for (i = 0; i < nconns; i++)
		pf[n++] = (struct pollfd){ .fd = fk->conns[i].fd,
					   .events = POLLIN };
	if (fk->cur != NULL && !fk->cur->eof)
		pf[n++] = (struct pollfd){ .fd = fk->cur->fd, .events = POLLIN };
	if (poll(pf, (nfds_t)n, ms) <= 0)
		return;
	if (fk->cur != NULL && !fk->cur->eof && pf[n - 1].revents)
		ctl_read(fk->cur);
	for (i = nconns - 1; i >= 0; i--)
		if (pf[2 + i].revents)
			sconn_read(fk, i);
	if (pf[0].revents) {
		int fd;

		while ((fd = accept4(lfd, NULL, NULL,
				     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
			if (fk->nconns == MAX_CONNS) {
				close(fd);
				continue;
			}
			fk->conns[fk->nconns++] = (struct sconn){ .fd = fd };
		}
	}
}

static bool
fake_over(struct fake *fk)
{
	return atomic_load(&fk->stop) || now_ms() >= fk->deadline;
}

/* Frames we said, as the sender reads them. */
static void
on_said(void *ctx, const struct frame *f, const uint8_t *body, size_t kept)
{
	struct ctl *c = ctx;

	if (!c->proved)
		return;
	if (f->type == MSG_COMPLETE || f->type == MSG_HAVE ||
	    (f->type == MSG_OUTCOME && f->val == OUTCOME_LANDED) ||
	    (f->type == MSG_ACCEPT && c->fk->dry_run))
		c->fk->won = true;
}

static void
say(struct ctl *c, const void *p, size_t n)
{
	const uint8_t *b = p;
	ssize_t w;
	uint64_t end = now_ms() + FAKE_WAIT_MS;

	while (n > 0 && !c->eof) {
		w = send(c->fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			fs_feed(&c->tx, b, (size_t)w);
			b += w;
			n -= (size_t)w;
		} else if (w < 0 && (errno == EAGAIN || errno == EINTR) &&
			   now_ms() < end) {
			struct pollfd pf = { .fd = c->fd, .events = POLLOUT };

			poll(&pf, 1, 10);
		} else {
			return;	/* gone, or not reading */
		}
	}
}

static void
say_frame(struct ctl *c, uint8_t type, uint64_t val, const void *body,
	  size_t len)
{
	struct frame f = { .type = type, .val = val, .len = len };
	uint8_t hdr[PROTO_FRAME_LEN];

	frame_encode(&f, hdr);
	say(c, hdr, sizeof(hdr));
	if (len > 0)
		say(c, body, len);
}

/* What the sender says on a control connection. */
static void
on_heard(void *ctx, const struct frame *f, const uint8_t *body, size_t kept)
{
	struct ctl *c = ctx;
	struct fake *fk = c->fk;
	uint8_t want[AUTH_MAC_LEN];
	struct job *job = NULL;
	struct rd_err err = { 0 };

	c->frames++;
	if (verbose)
		fprintf(stderr, "fake %d: heard %s (len %llu) at %llu ms\n",
			c->k, proto_type_name(f->type),
			(unsigned long long)f->len,
			(unsigned long long)(now_ms() - fk->t0));
	if (f->type == MSG_NOP)
		return;
	if (c->nheard < sizeof(c->heard))
		c->heard[c->nheard++] = f->type;
	if (!c->proved)
		FUZZ_FAIL("the sender said %s to an endpoint that had not "
			  "proved the key", proto_type_name(f->type));
	if (c->step == 0) {
		if (f->type != MSG_PROOF || f->len != AUTH_PROOF_LEN)
			FUZZ_FAIL("%s, not PROOF, after a right CHALLENGE",
				  proto_type_name(f->type));
		auth_sender_mac(&key, c->nonce_s, c->nonce_d, want);
		if (!auth_mac_equal(want, body))
			FUZZ_FAIL("the sender's proof is wrong");
		memcpy(c->request_mac, body + AUTH_MAC_LEN, AUTH_MAC_LEN);
		c->step = 1;
		return;
	}
	if (c->step != 1)
		return;
	c->step = 2;
	if (f->len > kept)
		FUZZ_FAIL("a request of %llu bytes", (unsigned long long)f->len);
	auth_request_mac(&key, c->nonce_s, c->nonce_d, f->type, body,
			 (size_t)f->len, want);
	if (!auth_mac_equal(want, c->request_mac))
		FUZZ_FAIL("the sender's %s is not the one its PROOF covers",
			  proto_type_name(f->type));
	if (f->type == MSG_JOB) {
		if (job_decode(body, (size_t)f->len, &job, &err) < 0)
			FUZZ_FAIL("the sender's JOB does not decode: %s",
				  err.msg);
		memcpy(fk->token, job->token, PROTO_TOKEN_LEN);
		fk->have_token = true;
		job_free(job);
	} else if (f->type == MSG_QUERY) {
		if (!fk->have_token || f->len != PROTO_TOKEN_LEN ||
		    memcmp(body, fk->token, PROTO_TOKEN_LEN) != 0)
			FUZZ_FAIL("a QUERY that does not name the job");
	} else {
		FUZZ_FAIL("%s after PROOF", proto_type_name(f->type));
	}
}

/* Until the sender said a frame of `type` (0: any but NOP) that no
 * SC_WAIT before consumed, or closed, or ms. */
static void
wait_heard(struct fake *fk, struct ctl *c, uint8_t type, int ms)
{
	uint64_t end = now_ms() + (uint64_t)ms;
	size_t i;

	for (;;) {
		for (i = c->cursor; i < c->nheard; i++)
			if (type == 0 || c->heard[i] == type) {
				c->cursor = i + 1;
				return;
			}
		if (c->eof || fake_over(fk) || now_ms() >= end)
			return;
		fake_poll(fk, 5);
	}
}

static void
close_data(struct fake *fk)
{
	int i;

	for (i = fk->nconns - 1; i >= 0; i--)
		if (fk->conns[i].data)
			sconn_drop(fk, i);
}

/* Play control connection k: the handshake, then the script until
 * SC_CLOSE (or its end, or the deadline). */
static void
play(struct fake *fk, int fd, const uint8_t *nonce_s, int k)
{
	struct ctl *c = calloc(1, sizeof(*c));
	uint8_t hdr[PROTO_FRAME_LEN], reply[2 * AUTH_NONCE_LEN];
	const uint8_t *body;
	struct frame f;
	bool more = true;
	size_t n;
	int i;

	if (c == NULL)
		abort();
	c->fd = fd;
	c->k = k;
	c->fk = fk;
	c->honest = k < 8 && (fk->honest >> k & 1);
	memcpy(c->nonce_s, nonce_s, AUTH_NONCE_LEN);
	fs_init(&c->rx, on_heard, c);
	fs_init(&c->tx, on_said, c);
	fk->cur = c;
	if (c->honest) {
		for (i = 0; i < AUTH_NONCE_LEN; i++)
			c->nonce_d[i] = (uint8_t)(i * 13 + k);
		memcpy(reply, c->nonce_d, AUTH_NONCE_LEN);
		auth_daemon_mac(&key, c->nonce_s, c->nonce_d,
				reply + AUTH_NONCE_LEN);
		c->proved = true;
		say_frame(c, MSG_CHALLENGE, 0, reply, sizeof(reply));
		{
			uint64_t end = now_ms() + HANDSHAKE_MS;

			while (c->step < 2 && !c->eof && !fake_over(fk) &&
			       now_ms() < end)
				fake_poll(fk, 5);
		}
	}
	while (more && !c->eof && fk->script.n > 0 && !fake_over(fk)) {
		uint8_t op = in_u8(&fk->script);

		if (verbose)
			fprintf(stderr, "fake %d: op %d at %llu ms\n", k, op & 7,
				(unsigned long long)(now_ms() - fk->t0));

		switch (op & 7) {
		case SC_FRAME:
			n = in_frame(&fk->script, hdr, &f, &body);
			say(c, hdr, sizeof(hdr));
			say(c, body, n);
			break;
		case SC_RAW:
			n = in_take(&fk->script, (size_t)in_be(&fk->script, 2),
				    &body);
			say(c, body, n);
			break;
		case SC_WAIT:
			wait_heard(fk, c, in_u8(&fk->script), FAKE_WAIT_MS);
			break;
		case SC_CLOSE:
			more = false;
			break;
		case SC_PAUSE: {
			uint64_t end = now_ms() +
				       in_u8(&fk->script) % SC_PAUSE_MS;

			while (now_ms() < end && !fake_over(fk))
				fake_poll(fk, (int)(end - now_ms()));
			break;
		}
		case SC_X5:
			shutdown(c->fd, SHUT_WR);
			break;
		case SC_X6:
			close_data(fk);
			break;
		default:
			say_frame(c, MSG_NOP, 0, NULL, 0);
			break;
		}
		fake_poll(fk, 0);
	}
	fk->cur = NULL;
	close(c->fd);
	free(c);
}

static void *
fake_main(void *arg)
{
	struct fake *fk = arg;
	int fd, i;

	while (!atomic_load(&fk->stop)) {
		if (fk->nctlq > 0) {
			fd = fk->ctlq[0];
			play(fk, fd, fk->ctlnonce[0], fk->nctl++);
			fk->nctlq--;
			memmove(fk->ctlq, fk->ctlq + 1,
				fk->nctlq * sizeof(fk->ctlq[0]));
			memmove(fk->ctlnonce, fk->ctlnonce + 1,
				fk->nctlq * sizeof(fk->ctlnonce[0]));
			continue;
		}
		if (fake_over(fk))
			close_data(fk);
		fake_poll(fk, 5);
	}
	for (i = 0; i < fk->nctlq; i++)
		close(fk->ctlq[i]);
	while (fk->nconns > 0)
		sconn_drop(fk, 0);
	return NULL;
}

/* ---------------------------------------------------------------------
 * The sender
 */

struct outcome {
	size_t reports, ok;
};

static void
on_report(void *ctx, const struct push_report *r)
{
	struct outcome *o = ctx;

	o->reports++;
	o->ok += r->ok;
	if (verbose)
		fprintf(stderr, "report: %s %s after %.3f s%s%s\n", r->host,
			r->ok ? "ok" : "FAILED", r->seconds,
			r->reason != NULL ? ": " : "",
			r->reason != NULL ? r->reason : "");
}

static void
on_trace(void *ctx, size_t index, uint32_t rank, const struct trace *t,
	 int64_t offset, uint64_t error_us)
{
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
cleanup(void)
{
	fuzz_rm_tree(dir);
}

static void
write_file(const char *path, size_t n)
{
	FILE *f = fopen(path, "wb");
	size_t i;

	if (f == NULL)
		abort();
	for (i = 0; i < n; i++)
		fputc((int)(i * 31 % 251), f);
	fclose(f);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);

	signal(SIGPIPE, SIG_IGN);
	fuzz_logs();
	verbose = getenv("FUZZ_LOG") != NULL;
	fuzz_key(&key);
	fuzz_tmpdir("push", dir, sizeof(dir));
	snprintf(empty_path, sizeof(empty_path), "%s/empty", dir);
	snprintf(small_path, sizeof(small_path), "%s/small", dir);
	write_file(empty_path, 0);
	write_file(small_path, SMALL_FILE);
	atexit(cleanup);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (wake < 0 || lfd < 0 || bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    listen(lfd, 64) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&sin, &len) < 0)
		abort();
	snprintf(host, sizeof(host), "127.0.0.1:%u", ntohs(sin.sin_port));
	return 0;
}

/* What a push left in the listener's queue (connections it gave up on
 * before the fake took them). */
static void
drain_listener(void)
{
	int fd;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
		close(fd);
}

/* One push of the input, the fake answering with the key on the control
 * connections whose bit `honest` has; the properties checked.  Returns
 * the bits of the connections it played with the key after the first. */
static uint8_t
push_once(const uint8_t *data, size_t size, uint8_t honest)
{
	struct fake *fk;
	struct outcome out = { 0 };
	struct job_file file = { .path = (char *)"/fuzz/file",
				 .type = JF_FILE, .mode = 0644,
				 .mtime_sec = 1700000000 };
	const char *sources[1], *hosts[1] = { host };
	struct push_cfg cfg;
	struct push_summary sum;
	struct rd_err err = { 0 };
	pthread_t th;
	uint8_t opts = data[1], later;
	int rc, fds;

	fk = calloc(1, sizeof(*fk));
	if (fk == NULL)
		abort();
	fk->honest = honest;
	fk->dry_run = opts & OPT_DRY_RUN;
	fk->script = (struct in){ data + 2, size - 2 };
	fk->t0 = now_ms();
	fk->deadline = fk->t0 + FAKE_SCRIPT_MS;
	sources[0] = opts & OPT_SMALL ? small_path : empty_path;
	cfg = (struct push_cfg){
		.files = &file, .sources = sources, .nfiles = 1,
		.times = opts & OPT_TIMES, .hosts = hosts, .nhosts = 1,
		.default_port = PROTO_DEFAULT_PORT,
		.alg = (enum sched_alg)(opts >> OPT_ALG_SHIFT),
		.own_rack = -1, .verify = opts & OPT_VERIFY,
		.force = opts & OPT_FORCE, .dry_run = opts & OPT_DRY_RUN,
		.timeout_ms = FUZZ_TIMEOUT_MS,
		.connect_timeout_ms = FUZZ_CONNECT_MS,
		.transport = TRANSPORT_TCP, .key = &key,
		.key_name = "the fuzz key", .report = on_report,
		.trace = opts & OPT_TRACE ? on_trace : NULL, .ctx = &out,
	};
	if (base_fds < 0)
		base_fds = count_fds();
	if (pthread_create(&th, NULL, fake_main, fk) != 0)
		abort();
	rc = push_run(&cfg, &sum, &err);
	atomic_store(&fk->stop, true);
	if (eventfd_write(wake, 1) < 0)
		abort();
	pthread_join(th, NULL);
	eventfd_read(wake, &(eventfd_t){ 0 });
	drain_listener();
	if (rc != 0)
		FUZZ_FAIL("push_run: %s", err.msg);
	if (sum.ok != out.ok || out.reports != 1 || sum.hosts != 1)
		FUZZ_FAIL("%zu ok in the summary, %zu ok of %zu reports",
			  sum.ok, out.ok, out.reports);
	if (sum.ok > 0 && !fk->won)
		FUZZ_FAIL("the host counts as ok, and nothing that could "
			  "make it so came from an endpoint that proved the "
			  "key (control connections with the key: %#x)",
			  honest);
	fds = count_fds();
	if (fds != base_fds) {
		dump_fds();
		FUZZ_FAIL("%d descriptors after a push, %d before", fds,
			  base_fds);
	}
	later = fk->nctl > 1 ? honest & (uint8_t)((1u << fk->nctl) - 2) : 0;
	free(fk);
	return later;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t later;

	if (size < 2)
		return -1;
	later = push_once(data, size, data[0]);
	/* The sender asked again (QUERY, after a lost go) and the fake
	 * answered with the key: the same bytes, from an endpoint without
	 * it, must not make the host ok. */
	if (later != 0)
		push_once(data, size, data[0] & (uint8_t)~later);
	return 0;
}
