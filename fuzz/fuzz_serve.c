/* SPDX-License-Identifier: MIT */
/*
 * fuzz_serve - libFuzzer target for the receiving daemon's state machines:
 * one real daemon (serve_new: tcp, 127.0.0.1, a --prefix made with
 * mkdtemp, its state directory in it, the fixed key of harness.h, short
 * timeouts), kept across inputs and run on this loop, which the harness
 * turns itself (UV_RUN_NOWAIT) while it plays senders on real,
 * non-blocking sockets.  Every wait is bounded.
 *
 * Byte 0 of the input picks the mode:
 *
 *   0 raw     the rest is written as it is on a new connection, then the
 *             connection ends: bytes of an endpoint without the key
 *   1 script  the rest is a script (harness.h) on a new connection,
 *             without the key: AUTH, PROOF, JOB, QUERY, HELLO... with
 *             good headers
 *   2 job     an honest AUTH, CHALLENGE checked, PROOF, then JOB: byte 1
 *             flags (TAMPER_*), a u16 length, the JOB body (its token,
 *             the first 16 bytes, made unique by the harness: what the
 *             daemon says of it is of this job); the rest is a script on
 *             that connection, whose SC_X5 asks what became of the job on
 *             a connection of its own (QUERY), SC_X6 sends START with a
 *             member list of n (byte) members, this one rank (byte), and
 *             SC_X7 opens a member's data connection with the job's token
 *             (HELLO, from and to: bytes), where the script goes on
 *             (SIGNAL, BLOCK...) until SC_CLOSE takes it back to the
 *             job's connection
 *   3 query   the same with a QUERY: byte 1 flags, a byte of length, the
 *             body (a job token)
 *
 * SC_CLOSE ends the script; SC_WAIT also ends once the daemon has nothing
 * to do but wait (for us, or a later timer), SC_WAIT_MS at most; the
 * SC_PAUSEs of an input wait PAUSE_MAX_MS in all (enough for the gate's
 * deadline), none once the daemon holds nothing of ours; SC_X5 asks
 * QUERIES_MAX times at most.  The
 * root holds, from the start, a directory "have" with a file and a link
 * to it (for HAVE, REPLACE, --force and merged directories).  Whatever
 * the daemon answers must keep to:
 *
 *   - without the key (0, 1, and a tampered 2 or 3) only CHALLENGE
 *     (whose proof must be right, and only for an AUTH coming first),
 *     REFUSE (EACCES, the last word) and NOP come back, never OUTCOME or
 *     ACCEPT, and nothing changes under the root;
 *   - a JOB is answered within seconds, with ACCEPT, HAVE, REFUSE or FAIL
 *     (REFUSE if it does not decode); COMPLETE, or an OUTCOME "landed",
 *     only after this sender gave the go (CRC); an OUTCOME on its own
 *     connection only after an ABORT; a job the daemon took is known to
 *     a QUERY; a job given the go is asked after, once gone, and the disk
 *     must agree with the answer;
 *   - once the harness has closed its connections and the job is gone
 *     (bounded), the daemon holds as many descriptors and loop handles as
 *     before the input; its state directory is empty; nothing appeared
 *     next to the root; and below it every entry is as it was (type,
 *     mode, files' size, time and content, links' target), unless the
 *     job landed (then the root is put back as it was).
 *
 * Member lists (START) are rewritten, whatever bytes carry them, to name
 * this daemon's own address only: a job connects nowhere else.  A job
 * whose files hold more than FUZZ_JOB_BYTES is not sent (-1: not kept).
 *
 *   make fuzz                      (FUZZ_SECONDS, split between targets)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "harness.h"
#include "daemon/serve.h"

#define FUZZ_JOB_BYTES (4u << 20)
#define PAUSE_MAX_MS 600	/* SC_PAUSEs of one input, in all */
#define QUERIES_MAX 4		/* SC_X5s of one input */
#define ANSWER_MS 10000		/* a JOB's answer, a close after ours */
#define SETTLE_MS 10000		/* everything released after an input */

#define TAMPER_SENDER 0x1u	/* the sender's MAC in PROOF */
#define TAMPER_REQUEST 0x2u	/* the request's MAC */
#define TAMPER_TYPE 0x4u	/* the request's MAC made for the other type */
#define TAMPER_BODY 0x8u	/* ... over another body */
#define TAMPER_ANY 0xfu

static uv_loop_t loop;
static struct serve *srv;
static struct sockaddr_in dmn;	/* the daemon */
static struct auth_key key;
static char base[PATH_MAX - 64];
static char root[PATH_MAX], state[PATH_MAX];
static int base_fds;
static unsigned base_handles;
static unsigned paused;		/* ms of SC_PAUSE in this input */

/* Tokens of jobs this harness gave the go: the only ones that may land. */
static uint8_t (*gone)[PROTO_TOKEN_LEN];
static size_t ngone, capgone;
static bool gone_full;	/* GONE_MAX of them: no longer checked */
#define GONE_MAX 65536

/* ---------------------------------------------------------------------
 * Clients
 */

#define MAX_SEEN 64

struct seen {
	struct frame f;
	uint8_t body[2 * AUTH_NONCE_LEN];
	unsigned aborts;	/* ours before it came */
};

/* What goes out on a job's connection, followed as the daemon will read
 * it: a START is held until it is whole, to rewrite its member list. */
struct gatekeeper {
	bool on, broken;
	uint8_t hdr[PROTO_FRAME_LEN];
	size_t hlen;		/* of a header not sent yet */
	uint64_t left;		/* body bytes of a frame passing through */
	uint8_t *held;		/* a START's header and body so far */
	size_t nheld, need;
};

struct peer {
	int fd;
	uint8_t *tx;
	size_t txlen, txoff, txcap;
	bool eof, txdead;
	struct fstream rx;	/* what the daemon says */
	struct fstream txs;	/* what we said, as the daemon reads it */
	struct seen seen[MAX_SEEN];
	size_t nseen;		/* frames but NOPs */
	size_t cursor;		/* those up to here a wait consumed */
	size_t nops;
	bool first_known;	/* our first frame */
	struct frame first;
	uint8_t first_body[AUTH_NONCE_LEN];
	unsigned gos, aborts;	/* CRC and ABORT frames we sent */
	bool completed;		/* COMPLETE or OUTCOME landed came */
	struct gatekeeper gk;
	const uint8_t *token;	/* its job's, or NULL */
	bool job;		/* a job's connection */
};

static void
on_rx(void *ctx, const struct frame *f, const uint8_t *body, size_t kept)
{
	struct peer *p = ctx;
	struct seen *s;

	if (f->type == MSG_NOP) {
		p->nops++;
		return;
	}
	if (p->job && (f->type == MSG_COMPLETE ||
		       (f->type == MSG_OUTCOME && f->val == OUTCOME_LANDED))) {
		if (p->gos == 0)
			FUZZ_FAIL("the daemon said %s (val %llu) of a job "
				  "its sender never gave the go",
				  proto_type_name(f->type),
				  (unsigned long long)f->val);
		p->completed = true;
	}
	if (p->nseen++ >= MAX_SEEN)
		return;
	s = &p->seen[p->nseen - 1];
	s->f = *f;
	s->aborts = p->aborts;
	memcpy(s->body, body, kept < sizeof(s->body) ? kept : sizeof(s->body));
}

static bool
was_given_go(const uint8_t *token)
{
	size_t i;

	for (i = 0; i < ngone; i++)
		if (memcmp(gone[i], token, PROTO_TOKEN_LEN) == 0)
			return true;
	return false;
}

static void
on_tx(void *ctx, const struct frame *f, const uint8_t *body, size_t kept)
{
	struct peer *p = ctx;

	if (!p->first_known) {
		p->first_known = true;
		p->first = *f;
		memcpy(p->first_body, body, kept < sizeof(p->first_body)
					    ? kept : sizeof(p->first_body));
	}
	p->gos += f->type == MSG_CRC;
	p->aborts += f->type == MSG_ABORT;
	if (f->type == MSG_CRC && p->token != NULL && !was_given_go(p->token)) {
		if (ngone == GONE_MAX) {
			gone_full = true;
			return;
		}
		if (ngone == capgone) {
			capgone = capgone ? capgone * 2 : 64;
			gone = realloc(gone, capgone * sizeof(*gone));
			if (gone == NULL)
				abort();
		}
		memcpy(gone[ngone++], p->token, PROTO_TOKEN_LEN);
	}
}

static struct peer *
peer_open(void)
{
	struct peer *p = calloc(1, sizeof(*p));

	if (p == NULL)
		abort();
	p->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (p->fd < 0)
		abort();
	if (connect(p->fd, (struct sockaddr *)&dmn, sizeof(dmn)) < 0 &&
	    errno != EINPROGRESS)
		abort();
	fs_init(&p->rx, on_rx, p);
	fs_init(&p->txs, on_tx, p);
	return p;
}

static void
peer_free(struct peer *p)
{
	if (p == NULL)
		return;
	if (p->fd >= 0)
		close(p->fd);
	free(p->tx);
	free(p->gk.held);
	free(p);
}

static void
tx_append(struct peer *p, const void *data, size_t n)
{
	if (p->txlen + n > p->txcap) {
		p->txcap = (p->txlen + n) * 2;
		p->tx = realloc(p->tx, p->txcap);
		if (p->tx == NULL)
			abort();
	}
	memcpy(p->tx + p->txlen, data, n);
	p->txlen += n;
}

/* Every peer of a member list names this daemon. */
static void
emit_start(struct peer *p, const uint8_t *frame, size_t n)
{
	struct roster *ro = NULL;
	struct rd_err err = { 0 };
	struct frame f;
	uint8_t hdr[PROTO_FRAME_LEN];
	struct wbuf w;
	uint32_t i;

	if (roster_decode(frame + PROTO_FRAME_LEN, n - PROTO_FRAME_LEN, &ro,
			  &err) < 0) {
		tx_append(p, frame, n);	/* refused as it is */
		return;
	}
	for (i = 0; i < ro->npeers; i++)
		if (ro->peers[i].rank > 0) {
			memset(&ro->peers[i].addr, 0,
			       sizeof(ro->peers[i].addr));
			memcpy(&ro->peers[i].addr, &dmn, sizeof(dmn));
		}
	wbuf_init(&w);
	if (roster_encode(ro, &w) < 0)
		abort();
	frame_decode(frame, &f);
	f.len = w.len;
	frame_encode(&f, hdr);
	tx_append(p, hdr, sizeof(hdr));
	tx_append(p, w.data, w.len);
	wbuf_free(&w);
	roster_free(ro);
}

/* Queue bytes; on a gatekept connection a START is held until whole and
 * goes out with its member list rewritten, the rest as it is. */
static void
peer_send(struct peer *p, const void *data, size_t n)
{
	struct gatekeeper *g = &p->gk;
	const uint8_t *b = data;
	struct frame f;
	size_t step;

	while (n > 0) {
		if (!g->on || g->broken) {
			tx_append(p, b, n);
			return;
		}
		if (g->held != NULL) {
			step = g->need - g->nheld < n ? g->need - g->nheld : n;
			memcpy(g->held + g->nheld, b, step);
			g->nheld += step;
			if (g->nheld == g->need) {
				emit_start(p, g->held, g->nheld);
				free(g->held);
				g->held = NULL;
			}
		} else if (g->left > 0) {
			step = g->left < n ? (size_t)g->left : n;
			tx_append(p, b, step);
			g->left -= step;
		} else {
			step = PROTO_FRAME_LEN - g->hlen < n
				       ? PROTO_FRAME_LEN - g->hlen : n;
			memcpy(g->hdr + g->hlen, b, step);
			g->hlen += step;
			if (g->hlen == PROTO_FRAME_LEN) {
				g->hlen = 0;
				if (frame_decode(g->hdr, &f) < 0) {
					g->broken = true;	/* dropped there */
					tx_append(p, g->hdr, PROTO_FRAME_LEN);
				} else if (f.type == MSG_START && f.len > 0 &&
					   f.len <= proto_max_len(MSG_START)) {
					g->need = PROTO_FRAME_LEN + (size_t)f.len;
					g->held = malloc(g->need);
					if (g->held == NULL)
						abort();
					memcpy(g->held, g->hdr, PROTO_FRAME_LEN);
					g->nheld = PROTO_FRAME_LEN;
				} else {
					tx_append(p, g->hdr, PROTO_FRAME_LEN);
					g->left = f.len;
				}
			}
		}
		b += step;
		n -= step;
	}
}

/* What is held at the end goes out as it is: half a frame, which the
 * daemon never acts on. */
static void
peer_flush_held(struct peer *p)
{
	struct gatekeeper *g = &p->gk;

	if (g->held != NULL)
		tx_append(p, g->held, g->nheld);
	else if (g->hlen > 0)
		tx_append(p, g->hdr, g->hlen);
	free(g->held);
	g->held = NULL;
	g->hlen = 0;
}

static void
peer_frame(struct peer *p, uint8_t type, uint32_t arg, uint64_t val,
	   const void *body, size_t len)
{
	struct frame f = { .type = type, .arg = arg, .val = val, .len = len };
	uint8_t hdr[PROTO_FRAME_LEN];

	frame_encode(&f, hdr);
	peer_send(p, hdr, sizeof(hdr));
	if (len > 0)
		peer_send(p, body, len);
}

/* Move what can move without blocking; true if anything did. */
static bool
peer_io(struct peer *p)
{
	uint8_t buf[16384];
	bool moved = false;
	ssize_t n;

	while (p->txoff < p->txlen && !p->txdead) {
		n = send(p->fd, p->tx + p->txoff, p->txlen - p->txoff,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			fs_feed(&p->txs, p->tx + p->txoff, (size_t)n);
			p->txoff += (size_t)n;
			moved = true;
		} else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			break;
		} else {
			p->txdead = true;	/* the daemon closed */
		}
	}
	while (!p->eof) {
		n = recv(p->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0) {
			fs_feed(&p->rx, buf, (size_t)n);
			moved = true;
		} else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			break;
		} else {
			p->eof = true;
			moved = true;
		}
	}
	return moved;
}

#define MAX_PEERS 8

static struct peer *peers[MAX_PEERS];

/* One turn of the daemon's loop and of every client; if nothing moved,
 * sleep until something may, wait_ms at most.  True if anything moved. */
static bool
pump(int wait_ms)
{
	struct pollfd pf[MAX_PEERS + 1];
	bool moved = false;
	int i, n = 1, t;

	uv_run(&loop, UV_RUN_NOWAIT);
	for (i = 0; i < MAX_PEERS; i++)
		if (peers[i] != NULL)
			moved |= peer_io(peers[i]);
	if (moved || wait_ms <= 0)
		return moved;
	pf[0] = (struct pollfd){ .fd = uv_backend_fd(&loop), .events = POLLIN };
	for (i = 0; i < MAX_PEERS; i++) {
		struct peer *p = peers[i];

		if (p == NULL || (p->eof && (p->txdead || p->txoff == p->txlen)))
			continue;
		pf[n++] = (struct pollfd){
			.fd = p->fd,
			.events = (short)((p->eof ? 0 : POLLIN) |
				  (p->txoff < p->txlen && !p->txdead ? POLLOUT
								     : 0)),
		};
	}
	t = uv_backend_timeout(&loop);
	if (t < 0 || t > wait_ms)
		t = wait_ms;
	poll(pf, (nfds_t)n, t);
	return false;
}

/* Is the daemon waiting for nothing but a client or a later timer: no
 * I/O ready, no timer due, no set-up in the thread pool?  (libuv's count
 * of requests in flight is a field of the loop, not a function.) */
static bool
daemon_quiet(void)
{
	struct pollfd pf = { .fd = uv_backend_fd(&loop), .events = POLLIN };

	return !pump(0) && loop.active_reqs.count == 0 &&
	       uv_backend_timeout(&loop) != 0 && poll(&pf, 1, 0) == 0 &&
	       !pump(0);
}

static uint64_t
now_ms(void)
{
	return uv_hrtime() / 1000000;
}

static struct peer *
peer_new(void)
{
	int i;

	for (i = 0; i < MAX_PEERS; i++)
		if (peers[i] == NULL)
			return peers[i] = peer_open();
	return NULL;
}

static int
peer_slots(void)
{
	int i, n = 0;

	for (i = 0; i < MAX_PEERS; i++)
		n += peers[i] == NULL;
	return n;
}

static void
peer_drop(struct peer *p)
{
	int i;

	for (i = 0; i < MAX_PEERS; i++)
		if (peers[i] == p)
			peers[i] = NULL;
	peer_free(p);
}

/* Until p has seen `frames` frames but NOPs, or the daemon closed, or
 * ms passed; true if they came. */
static bool
wait_frames(struct peer *p, size_t frames, unsigned ms)
{
	uint64_t end = now_ms() + ms;

	while (p->nseen < frames && !p->eof && now_ms() < end)
		pump((int)(end - now_ms()));
	pump(0);
	return p->nseen >= frames;
}

/* Until the daemon said a frame of `type` (0: any but NOP) that no wait
 * before consumed, or closed, or it has nothing left to do but wait (for
 * a client or a later timer), or ms. */
static void
wait_type(struct peer *p, uint8_t type, unsigned ms)
{
	uint64_t end = now_ms() + ms;
	size_t i;

	for (;;) {
		for (i = p->cursor; i < p->nseen && i < MAX_SEEN; i++)
			if (type == 0 || p->seen[i].f.type == type) {
				p->cursor = i + 1;
				return;
			}
		if (p->eof || now_ms() >= end || daemon_quiet())
			return;
		pump(2);
	}
}

/* End our side once what we queued is out, then wait for the daemon's
 * close: it must come. */
static void
peer_finish(struct peer *p)
{
	uint64_t end = now_ms() + ANSWER_MS;

	peer_flush_held(p);
	while (p->txoff < p->txlen && !p->txdead && !p->eof &&
	       now_ms() < end)
		pump((int)(end - now_ms()));
	shutdown(p->fd, SHUT_WR);
	while (!p->eof && now_ms() < end)
		pump((int)(end - now_ms()));
	if (!p->eof)
		FUZZ_FAIL("the daemon kept a connection %d ms after the "
			  "client's end", ANSWER_MS);
}

/* ---------------------------------------------------------------------
 * Authentication
 */

static const uint8_t nonce_s[AUTH_NONCE_LEN] = "fuzz_serve nonce of the sender!";

/* AUTH, and the daemon's CHALLENGE, checked; its nonce to nonce_d. */
static void
handshake(struct peer *p, uint8_t nonce_d[AUTH_NONCE_LEN])
{
	uint8_t want[AUTH_MAC_LEN];
	const struct seen *s;

	peer_frame(p, MSG_AUTH, 0, 0, nonce_s, AUTH_NONCE_LEN);
	if (!wait_frames(p, 1, ANSWER_MS))
		FUZZ_FAIL("no CHALLENGE to an AUTH (%s)",
			  p->eof ? "closed" : "silent");
	s = &p->seen[0];
	if (s->f.type != MSG_CHALLENGE || s->f.len != 2 * AUTH_NONCE_LEN)
		FUZZ_FAIL("%s (len %llu) to an AUTH",
			  proto_type_name(s->f.type),
			  (unsigned long long)s->f.len);
	memcpy(nonce_d, s->body, AUTH_NONCE_LEN);
	auth_daemon_mac(&key, nonce_s, nonce_d, want);
	if (!auth_mac_equal(want, s->body + AUTH_NONCE_LEN))
		FUZZ_FAIL("the daemon's proof in CHALLENGE is wrong");
}

/* PROOF for a request of `type`, then the request; `tamper` spoils it. */
static void
prove_and_ask(struct peer *p, const uint8_t nonce_d[AUTH_NONCE_LEN],
	      uint8_t type, const uint8_t *body, size_t len, unsigned tamper)
{
	uint8_t proof[AUTH_PROOF_LEN], other[PROTO_MAX_TEXT + 1];
	uint8_t mtype = type;
	const uint8_t *mbody = body;
	size_t mlen = len;

	if (tamper & TAMPER_TYPE)
		mtype = type == MSG_JOB ? MSG_QUERY : MSG_JOB;
	if (tamper & TAMPER_BODY) {
		mlen = len < sizeof(other) - 1 ? len : sizeof(other) - 1;
		memcpy(other, body, mlen);
		other[mlen] = 0x5a;
		if (mlen > 0 && len < sizeof(other) - 1)
			other[0] ^= 1;	/* the same length, another byte */
		else
			mlen++;
		mbody = other;
	}
	auth_sender_mac(&key, nonce_s, nonce_d, proof);
	auth_request_mac(&key, nonce_s, nonce_d, mtype, mbody, mlen,
			 proof + AUTH_MAC_LEN);
	if (tamper & TAMPER_SENDER)
		proof[3] ^= 0x10;
	if (tamper & TAMPER_REQUEST)
		proof[AUTH_MAC_LEN + 7] ^= 0x01;
	peer_frame(p, MSG_PROOF, 0, 0, proof, sizeof(proof));
	peer_frame(p, type, 0, 0, body, len);
}

/* ---------------------------------------------------------------------
 * Properties
 */

/* What an endpoint without the key may hear: one CHALLENGE (right, and
 * only to an AUTH that came first), a REFUSE for its proof, NOPs. */
static void
check_unproved(const struct peer *p, size_t from)
{
	uint8_t want[AUTH_MAC_LEN];
	bool challenged = false;
	size_t i;

	for (i = from; i < p->nseen && i < MAX_SEEN; i++) {
		const struct seen *s = &p->seen[i];

		switch (s->f.type) {
		case MSG_CHALLENGE:
			if (challenged || i != 0 || !p->first_known ||
			    p->first.type != MSG_AUTH ||
			    p->first.len != AUTH_NONCE_LEN)
				FUZZ_FAIL("CHALLENGE but to a first AUTH");
			auth_daemon_mac(&key, p->first_body, s->body, want);
			if (!auth_mac_equal(want, s->body + AUTH_NONCE_LEN))
				FUZZ_FAIL("a wrong proof in CHALLENGE");
			challenged = true;
			break;
		case MSG_REFUSE:
			if (s->f.val != EACCES || i + 1 != p->nseen)
				FUZZ_FAIL("REFUSE %llu (frame %zu of %zu) to "
					  "an endpoint without the key",
					  (unsigned long long)s->f.val, i,
					  p->nseen);
			break;
		default:
			FUZZ_FAIL("%s to an endpoint without the key",
				  proto_type_name(s->f.type));
		}
	}
	if (p->nseen > MAX_SEEN)
		FUZZ_FAIL("%zu frames to an endpoint without the key",
			  p->nseen);
}

static void
count_handle(uv_handle_t *h, void *arg)
{
	(*(unsigned *)arg)++;
}

static unsigned
count_handles(void)
{
	unsigned n = 0;

	uv_walk(&loop, count_handle, &n);
	return n;
}

static int
open_up(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	if (flag == FTW_D)
		chmod(path, 0700);	/* a landed directory may be 0555 */
	return 0;
}

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	if (ftw->level > 0 && strcmp(path, state) != 0 && remove(path) < 0)
		FUZZ_FAIL("cannot remove %s: %s", path, strerror(errno));
	return 0;
}

/* Remove what is below dir but the state directory. */
static void
empty_dir(const char *dir)
{
	nftw(dir, open_up, 16, FTW_PHYS);
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* What was in the root before the daemon ran: a directory, a file and a
 * link that jobs may find there (HAVE, --force, merged directories). */
#define FIXTURE_MTIME 1500000000

static void
make_fixtures(void)
{
	char path[PATH_MAX];
	struct timespec t[2] = { { FIXTURE_MTIME, 0 }, { FIXTURE_MTIME, 0 } };
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/have", root);
	if (mkdir(path, 0755) < 0)
		abort();
	snprintf(path, sizeof(path), "%s/have/file", root);
	f = fopen(path, "w");
	if (f == NULL)
		abort();
	for (i = 0; i < 100; i++)
		fputc('a' + i % 26, f);
	fclose(f);
	if (chmod(path, 0644) < 0 || utimensat(AT_FDCWD, path, t, 0) < 0)
		abort();
	snprintf(path, sizeof(path), "%s/have/link", root);
	if (symlink("file", path) < 0)
		abort();
}

/* The tree below the root but the state directory, one sorted line an
 * entry: path, type, mode, and for files size, mtime and a checksum of
 * the content; for links the target (directories' times change as
 * temporaries come and go). */
struct tree {
	char **line;
	size_t n, cap;
	char *text;
};

static struct tree *walking;

static int
walk_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	char line[PATH_MAX + 200], to[PATH_MAX] = "";
	unsigned long sum = 0;
	ssize_t n;
	int c;

	if (ftw->level == 0 || (strncmp(path, state, strlen(state)) == 0 &&
				(path[strlen(state)] == '\0' ||
				 path[strlen(state)] == '/')))
		return 0;
	if (S_ISREG(sb->st_mode)) {
		FILE *f = fopen(path, "r");

		while (f != NULL && (c = fgetc(f)) != EOF)
			sum = sum * 31 + (unsigned long)c;
		if (f != NULL)
			fclose(f);
	}
	if (S_ISLNK(sb->st_mode)) {
		n = readlink(path, to, sizeof(to) - 1);
		to[n > 0 ? n : 0] = '\0';
	}
	snprintf(line, sizeof(line), "%s %o %lld %lld %lx %s\n",
		 path + strlen(root), (unsigned)sb->st_mode,
		 S_ISREG(sb->st_mode) ? (long long)sb->st_size : 0,
		 S_ISREG(sb->st_mode) ? (long long)sb->st_mtime : 0, sum, to);
	if (walking->n == walking->cap) {
		walking->cap = walking->cap ? 2 * walking->cap : 16;
		walking->line = realloc(walking->line,
					walking->cap * sizeof(char *));
		if (walking->line == NULL)
			abort();
	}
	walking->line[walking->n++] = strdup(line);
	return 0;
}

static int
cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
snapshot(struct tree *t)
{
	size_t i, len = 1;

	memset(t, 0, sizeof(*t));
	walking = t;
	nftw(root, walk_entry, 16, FTW_PHYS);
	qsort(t->line, t->n, sizeof(char *), cmp_line);
	for (i = 0; i < t->n; i++)
		len += strlen(t->line[i]);
	t->text = calloc(1, len);
	if (t->text == NULL)
		abort();
	for (i = 0; i < t->n; i++) {
		strcat(t->text, t->line[i]);
		free(t->line[i]);
	}
	free(t->line);
}

static struct tree fixtures;

/* Run the daemon until every client connection is gone on its side and
 * every job ended: as many descriptors and loop handles as before the
 * input (bounded). */
static void
settle_handles(void)
{
	uint64_t end = now_ms() + SETTLE_MS;
	int fds = -1;
	unsigned handles = 0;

	for (;;) {
		pump(0);
		fds = count_fds();
		handles = count_handles();
		if ((fds == base_fds && handles == base_handles) ||
		    now_ms() >= end)
			break;
		pump(5);
	}
	if (fds != base_fds || handles != base_handles) {
		dump_fds();
		FUZZ_FAIL("%d descriptors and %u loop handles %d ms after the "
			  "input (%d and %u before): not released", fds,
			  handles, SETTLE_MS, base_fds, base_handles);
	}
}

/* ... then look at the disk: only a job that landed changes it. */
static void
settle(bool landed)
{
	struct tree now = { 0 };

	settle_handles();
	if (count_entries(base, "root") != 0)
		FUZZ_FAIL("something appeared next to the root, in %s", base);
	if (count_entries(state, NULL) != 0)
		FUZZ_FAIL("a job's record is left in %s", state);
	snapshot(&now);
	if (landed) {
		empty_dir(root);	/* the state directory stays */
		make_fixtures();
	} else if (strcmp(now.text, fixtures.text) != 0) {
		fprintf(stderr, "before:\n%safter:\n%s", fixtures.text,
			now.text);
		FUZZ_FAIL("a job that did not land changed %s", root);
	}
	free(now.text);
}

/* ---------------------------------------------------------------------
 * Modes
 */

static void
fuzz_raw(struct in *in)
{
	struct peer *p = peer_new();

	peer_send(p, in->p, in->n);
	peer_finish(p);
	check_unproved(p, 0);
	peer_drop(p);
	settle(false);
}

/* A script's generic ops; false once it ends. */
static bool
script_op(struct peer *p, uint8_t op, struct in *in)
{
	uint8_t hdr[PROTO_FRAME_LEN];
	const uint8_t *body;
	struct frame f;
	size_t n;

	switch (op & 7) {
	case SC_FRAME:
		n = in_frame(in, hdr, &f, &body);
		peer_send(p, hdr, sizeof(hdr));
		if (n > 0)
			peer_send(p, body, n);
		return true;
	case SC_RAW:
		n = in_take(in, (size_t)in_be(in, 2), &body);
		peer_send(p, body, n);
		return true;
	case SC_WAIT:
		wait_type(p, in_u8(in), SC_WAIT_MS);
		return true;
	case SC_CLOSE:
		return false;
	case SC_PAUSE: {
		unsigned ms = in_u8(in) % SC_PAUSE_MS;
		uint64_t end;

		/* nothing comes of waiting once the daemon holds nothing
		 * of ours (no connection, no job: only its own handles),
		 * and an input waits PAUSE_MAX_MS in all (the gate's
		 * deadline and more) */
		if (count_handles() == base_handles ||
		    paused + ms > PAUSE_MAX_MS)
			return true;
		paused += ms;
		end = now_ms() + ms;
		while (now_ms() < end)
			pump((int)(end - now_ms()));
		return true;
	}
	default:
		return true;
	}
}

static void
fuzz_script(struct in *in)
{
	struct peer *p = peer_new();

	while (in->n > 0 && script_op(p, in_u8(in), in))
		pump(0);
	peer_finish(p);
	check_unproved(p, 0);
	peer_drop(p);
	settle(false);
}

/* After a tampered request: REFUSE (EACCES), nothing else, nothing made. */
static void
check_refused(struct peer *p)
{
	wait_frames(p, 2, ANSWER_MS);
	if (p->nseen < 2)
		FUZZ_FAIL("a tampered request was not refused");
	check_unproved(p, 1);
}

/* What became of the job with `token`: an honest QUERY on a connection
 * of its own; OUTCOME_* (the daemon must answer). */
static uint64_t
ask_outcome(const uint8_t *token)
{
	struct peer *q = peer_new();
	uint8_t nonce_d[AUTH_NONCE_LEN];
	uint64_t o;

	if (q == NULL)
		abort();
	handshake(q, nonce_d);
	prove_and_ask(q, nonce_d, MSG_QUERY, token, PROTO_TOKEN_LEN, 0);
	if (!wait_frames(q, 2, ANSWER_MS))
		FUZZ_FAIL("a QUERY was not answered");
	o = q->seen[1].f.val;
	if (q->seen[1].f.type != MSG_OUTCOME || o > OUTCOME_DISCARDED)
		FUZZ_FAIL("%s %llu to a QUERY", proto_type_name(q->seen[1].f.type),
			  (unsigned long long)o);
	peer_finish(q);
	if (q->nseen > 2)
		FUZZ_FAIL("%s after the answer to a QUERY",
			  proto_type_name(q->seen[2].f.type));
	peer_drop(q);
	return o;
}

/* Did the daemon take the job (it answered as only a job does)? */
static bool
taken(const struct peer *jp)
{
	size_t i;

	for (i = 0; i < jp->nseen && i < MAX_SEEN; i++)
		if (jp->seen[i].f.type == MSG_ACCEPT ||
		    jp->seen[i].f.type == MSG_HAVE ||
		    jp->seen[i].f.type == MSG_FAIL)
			return true;
	return false;
}

/* SC_X5: what became of the job, asked while it may run (which ends it
 * unless it landed). */
static void
query_own(struct peer *jp)
{
	uint64_t o;

	if (peer_slots() < 1)
		return;
	o = ask_outcome(jp->token);
	if (taken(jp) && o == OUTCOME_UNKNOWN)
		FUZZ_FAIL("a job the daemon took is unknown to a QUERY");
	if (o == OUTCOME_LANDED && jp->gos == 0)
		FUZZ_FAIL("a QUERY says landed of a job never given the go");
}

/* SC_X6: START with a member list of n members, this one of rank r, every
 * other at this daemon's address (rank 0 has none). */
static void
start_struct(struct peer *p, struct in *in)
{
	uint32_t n = 2 + in_u8(in) % 15, r = 1 + in_u8(in) % (n - 1), i, k;
	struct roster_peer peers_[16];
	struct roster ro = { .rank = r, .n = n, .transport = TRANSPORT_TCP,
			     .peers = peers_ };
	struct wbuf w;

	for (i = 0, k = 0; i < n; i++) {
		if (i == r)
			continue;
		memset(&peers_[k], 0, sizeof(peers_[k]));
		peers_[k].rank = i;
		if (i > 0)
			memcpy(&peers_[k].addr, &dmn, sizeof(dmn));
		k++;
	}
	ro.npeers = k;
	wbuf_init(&w);
	if (roster_encode(&ro, &w) < 0)
		abort();
	peer_frame(p, MSG_START, 0, 0, w.data, w.len);
	wbuf_free(&w);
}

/* SC_X7: a member's data connection for the job (HELLO), kept open. */
static struct peer *
hello_data(struct peer *jp, struct in *in)
{
	struct hello h = { .from = in_u8(in), .to = in_u8(in) };
	struct peer *d = peer_new();
	struct wbuf w;

	if (d == NULL)
		return NULL;
	memcpy(h.token, jp->token, PROTO_TOKEN_LEN);
	wbuf_init(&w);
	hello_encode(&h, &w);
	peer_frame(d, MSG_HELLO, 0, 0, w.data, w.len);
	wbuf_free(&w);
	return d;
}

static int
fuzz_job(struct in *in)
{
	static uint64_t jobs;
	unsigned tamper = in_u8(in) & TAMPER_ANY;
	const uint8_t *in_body;
	size_t len = in_take(in, (size_t)in_be(in, 2), &in_body), i;
	struct job *job = NULL;
	struct rd_err err = { 0 };
	uint8_t nonce_d[AUTH_NONCE_LEN], token[PROTO_TOKEN_LEN], *body;
	struct peer *p, *cur, *d;
	const struct seen *a;
	unsigned queries = 0;
	bool landed, go;

	/* a token of its own (the job's first bytes): what the daemon says
	 * of it is of this job, not of one of an earlier input */
	body = malloc(len ? len : 1);
	if (body == NULL)
		abort();
	memcpy(body, in_body, len);
	if (len >= PROTO_TOKEN_LEN) {
		memcpy(body, "fuzzjob#", 8);
		be_put64(body + 8, ++jobs);
	}
	if (job_decode(body, len, &job, &err) == 0 &&
	    job->total > FUZZ_JOB_BYTES) {
		job_free(job);
		free(body);
		return -1;	/* not on this disk */
	}
	cur = p = peer_new();
	p->job = true;
	if (job != NULL) {
		memcpy(token, job->token, sizeof(token));
		p->token = token;
	}
	handshake(p, nonce_d);
	p->gk.on = true;	/* from here on, STARTs are rewritten */
	prove_and_ask(p, nonce_d, MSG_JOB, body, len, tamper);
	if (tamper) {
		check_refused(p);
	} else {
		if (!wait_frames(p, 2, ANSWER_MS))
			FUZZ_FAIL("a JOB was not answered within %d ms (%s)",
				  ANSWER_MS, p->eof ? "closed" : "silent");
		a = &p->seen[1];
		if (a->f.type != MSG_ACCEPT && a->f.type != MSG_HAVE &&
		    a->f.type != MSG_REFUSE && a->f.type != MSG_FAIL)
			FUZZ_FAIL("%s to a JOB", proto_type_name(a->f.type));
		if (job == NULL && a->f.type != MSG_REFUSE)
			FUZZ_FAIL("%s to a JOB that does not decode (%s)",
				  proto_type_name(a->f.type), err.msg);
		p->cursor = 2;	/* CHALLENGE and the answer */
		while (in->n > 0) {
			uint8_t op = in_u8(in);

			if ((op & 7) == SC_X5 && job != NULL &&
			    queries++ < QUERIES_MAX)
				query_own(p);
			else if ((op & 7) == SC_X5)
				continue;
			else if ((op & 7) == SC_X6)
				start_struct(p, in);
			else if ((op & 7) == SC_X7 && job != NULL)
				cur = (d = hello_data(p, in)) != NULL ? d : cur;
			else if ((op & 7) == SC_CLOSE && cur != p)
				cur = p;	/* back to the job's connection */
			else if (!script_op(cur, op, in))
				break;
			pump(0);
		}
	}
	peer_finish(p);
	for (i = 0; i < p->nseen && i < MAX_SEEN; i++)
		if (p->seen[i].f.type == MSG_OUTCOME && p->seen[i].aborts == 0)
			FUZZ_FAIL("OUTCOME on a job's connection before ABORT");
	for (i = 0; i < MAX_PEERS; i++)
		if (peers[i] != NULL && peers[i] != p)
			peer_drop(peers[i]);
	landed = p->completed;
	go = p->gos > 0;
	peer_drop(p);
	if (go && job != NULL) {
		/* given the go, it may have landed as we left: its daemon
		 * says, and the disk must agree */
		settle_handles();
		if (ask_outcome(token) == OUTCOME_LANDED)
			landed = true;
		else if (landed)
			FUZZ_FAIL("COMPLETE, then a QUERY says it did not land");
	}
	job_free(job);
	free(body);
	settle(landed);
	return 0;
}

static void
fuzz_query(struct in *in)
{
	unsigned tamper = in_u8(in) & TAMPER_ANY;
	const uint8_t *body;
	size_t len = in_take(in, in_u8(in), &body);
	uint8_t nonce_d[AUTH_NONCE_LEN];
	struct peer *p = peer_new();

	handshake(p, nonce_d);
	prove_and_ask(p, nonce_d, MSG_QUERY, body, len, tamper);
	if (tamper & TAMPER_SENDER || (tamper && len == PROTO_TOKEN_LEN)) {
		check_refused(p);
	} else if (len != PROTO_TOKEN_LEN) {
		peer_finish(p);	/* dropped, unanswered */
		if (p->nseen > 1)
			FUZZ_FAIL("%s to a QUERY of %zu bytes",
				  proto_type_name(p->seen[1].f.type), len);
	} else {
		if (!wait_frames(p, 2, ANSWER_MS))
			FUZZ_FAIL("a QUERY was not answered");
		if (p->seen[1].f.type != MSG_OUTCOME || p->seen[1].f.val > 2)
			FUZZ_FAIL("%s %llu to a QUERY",
				  proto_type_name(p->seen[1].f.type),
				  (unsigned long long)p->seen[1].f.val);
		if (p->seen[1].f.val == OUTCOME_LANDED && !gone_full &&
		    !was_given_go(body))
			FUZZ_FAIL("a QUERY says landed of a job never given "
				  "the go");
	}
	peer_finish(p);
	if (p->nseen > 2)
		FUZZ_FAIL("%s after the answer to a QUERY",
			  proto_type_name(p->seen[2].f.type));
	peer_drop(p);
	settle(false);
}

/* ---------------------------------------------------------------------
 * libFuzzer
 */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
cleanup_dirs(void)
{
	fuzz_rm_tree(base);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct serve_cfg cfg = {
		.loop = &loop, .timeout_ms = 300, .connect_timeout_ms = 200,
		.transport = TRANSPORT_TCP, .owner_uid = (uid_t)-1,
		.owner_gid = (gid_t)-1, .state_in_prefix = true,
		.max_blocks = SERVE_DEFAULT_MAX_BLOCKS,
		.job_idle_ms = 2000,
	};
	struct sockaddr_storage bound;
	struct rd_err err = { 0 };
	struct sockaddr_in *sin = (struct sockaddr_in *)&cfg.listen;
	uint64_t end;

	signal(SIGPIPE, SIG_IGN);
	fuzz_logs();
	fuzz_key(&key);
	fuzz_tmpdir("serve", base, sizeof(base));
	atexit(cleanup_dirs);
	snprintf(root, sizeof(root), "%s/root", base);
	snprintf(state, sizeof(state), "%s/%s", root, SERVE_PREFIX_STATE);
	if (mkdir(root, 0755) < 0)
		abort();
	make_fixtures();
	cfg.prefix = root;
	cfg.key = key;
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (uv_loop_init(&loop) < 0 || serve_new(&cfg, &srv, &err) < 0) {
		fprintf(stderr, "fuzz_serve: %s\n", err.msg);
		abort();
	}
	serve_address(srv, &bound);
	memcpy(&dmn, &bound, sizeof(dmn));
	/* the thread pool warmed up, the state directory made */
	end = now_ms() + 500;
	while (now_ms() < end)
		pump(10);
	base_fds = count_fds();
	base_handles = count_handles();
	if (count_entries(state, NULL) != 0)
		abort();
	snapshot(&fixtures);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data + 1, size - 1 };
	int rc = 0;

	if (size < 1)
		return 0;
	paused = 0;
	switch (data[0] % 4) {
	case 0:
		fuzz_raw(&in);
		break;
	case 1:
		fuzz_script(&in);
		break;
	case 2:
		rc = fuzz_job(&in);
		break;
	default:
		fuzz_query(&in);
		break;
	}
	return rc;
}
