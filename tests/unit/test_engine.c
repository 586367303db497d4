/* SPDX-License-Identifier: MIT */
/*
 * The engine over the real TCP transport on loopback: n members in one
 * process and one event loop, blocks in memory.  Every member must end with
 * the sender's bytes; a member that dies mid-transfer must make the others
 * fail instead of hanging.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "unit.h"
#include "transport/tcp/conn.h"
#include "engine/engine.h"
#include "engine/engine_int.h"	/* the signals, to play a sender */
#include "util/net.h"
#include "transport/tcp/tcp.h"

#define MAXN 16

struct member {
	struct cluster *cl;
	uint32_t rank;
	uint8_t *buf;
	struct eng *eng;
	uv_timer_t reaper;	/* frees a failed engine, as owners do */
	struct conn_listener *listener;
	bool complete, done;
	int status;
	uint32_t peer;
	uint64_t arrived;
	uint8_t *had;		/* holds: blocks held from the start */
	uint8_t *lacks;		/* ... their complement */
};

struct cluster {
	uv_loop_t loop;
	uv_timer_t deadline, killer;
	uint32_t n;
	uint64_t size, bsize;
	enum sched_alg alg;
	struct member m[MAXN];
	struct xp_addr addrs[MAXN];
	uint32_t ndone;
	int kill_rank;		/* member to kill after some blocks, or -1 */
	uint64_t kill_after;
	int frozen_rank;	/* member that accepts but never moves, or -1 */
	int slow_rank;		/* member whose sends are capped, or -1 */
	uint64_t slow_rate;	/* its cap, bytes per second */
	struct conn *frozen_conns[MAXN];
	unsigned nfrozen;
	unsigned timeout_ms;	/* keepalive and connection wait */
	bool paced;		/* admit_one, one send at a time (as daemons) */
	bool holds;		/* members hold some blocks from the start */
	unsigned window;	/* receives posted ahead; 0: the default */
	bool link_window;	/* paced: windows follow the links, whatever
				 * the algorithm (a chain's always do) */
	uint64_t sent0;		/* bytes rank 0 sent, when it was done */
	bool timed_out;
};

static void kill_member(uv_timer_t *t);

static int
blocks_iov(void *ctx, uint64_t b, struct iovec *iov, int max)
{
	struct member *m = ctx;
	uint64_t off = b * m->cl->bsize;
	uint64_t len = m->cl->size - off < m->cl->bsize ? m->cl->size - off
							 : m->cl->bsize;

	if (max < 1)
		return 1;
	iov[0].iov_base = m->buf + off;
	iov[0].iov_len = len;
	return 1;
}

static void
stop_if_all_done(struct cluster *cl)
{
	if (cl->ndone == cl->n) {
		uv_stop(&cl->loop);
	}
}

static int
blocks_arrived(void *ctx, uint64_t b)
{
	struct member *m = ctx;
	struct cluster *cl = m->cl;

	m->arrived++;
	ck_assert_msg(m->had == NULL || !eng_bit_is_set(m->had, b),
		      "member %u was sent block %lu, which it had", m->rank, b);
	if ((int)m->rank == cl->kill_rank && m->arrived == cl->kill_after)
		uv_timer_start(&cl->killer, kill_member, 0, 0);
	return 0;
}

static void
on_complete(void *ctx)
{
	((struct member *)ctx)->complete = true;
}

static void
reap(uv_timer_t *t)
{
	struct member *m = t->data;

	eng_free(m->eng);
	m->eng = NULL;
}

static void
on_done(void *ctx, int status, uint32_t peer)
{
	struct member *m = ctx;

	ck_assert(!m->done);
	m->done = true;
	m->status = status;
	m->peer = peer;
	if (m->rank == 0)
		m->cl->sent0 = eng_bytes_sent(m->eng);
	m->cl->ndone++;
	if (status < 0)
		uv_timer_start(&m->reaper, reap, 0, 0);
	stop_if_all_done(m->cl);
}

/* Incoming connections: read the HELLO, hand the connection over. */
static int
boot_header(void *ctx, struct conn *c, const struct frame *f,
	    const struct conn_seg **segs, int *nseg)
{
	return f->type == MSG_HELLO ? 0 : -EPROTO;
}

static int
boot_frame(void *ctx, struct conn *c, const struct frame *f,
	   const uint8_t *body)
{
	struct cluster *cl = ctx;
	struct hello h;

	if (hello_decode(body, f->len, &h) < 0 || h.to >= cl->n)
		return -EPROTO;
	conn_pause(c);
	if ((int)h.to == cl->frozen_rank) {
		cl->frozen_conns[cl->nfrozen++] = c;	/* alive, silent */
		return 0;
	}
	if (cl->m[h.to].eng == NULL)
		return -EPROTO;
	if (tcp_adopt(eng_xport(cl->m[h.to].eng), c, h.from) < 0)
		return -EPROTO;
	return 0;
}

static void
boot_close(void *ctx, struct conn *c, int status)
{
	conn_free(c);
}

static const struct conn_ops boot_ops = {
	.on_header = boot_header,
	.on_frame = boot_frame,
	.on_close = boot_close,
};

static void
on_incoming(void *ctx, int fd)
{
	struct member *m = ctx;
	struct conn *c;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(conn_adopt(&m->cl->loop, fd, &boot_ops, m->cl, &c),
			 0);
}

static void
on_deadline(uv_timer_t *t)
{
	struct cluster *cl = t->data;

	cl->timed_out = true;
	uv_stop(&cl->loop);
}

static void
kill_member(uv_timer_t *t)
{
	struct cluster *cl = t->data;
	struct member *m = &cl->m[cl->kill_rank];

	eng_free(m->eng);
	m->eng = NULL;
	conn_listener_close(m->listener);
	m->listener = NULL;
	m->done = true;
	m->status = -EINTR;
	cl->ndone++;
	stop_if_all_done(cl);
}

static void
setup_member(struct cluster *cl, uint32_t r)
{
	struct member *m = &cl->m[r];
	struct sockaddr_storage ss;

	m->cl = cl;
	m->rank = r;
	m->buf = malloc(cl->size + 1);
	uv_timer_init(&cl->loop, &m->reaper);
	m->reaper.data = m;
	if (r == 0) {
		for (uint64_t i = 0; i < cl->size; i++)
			m->buf[i] = (uint8_t)(i * 7 + i / 251);
		return;
	}
	memset(m->buf, 0, cl->size + 1);
	net_parse_numeric("127.0.0.1", 0, &ss);
	ck_assert_int_eq(conn_listen(&cl->loop, (struct sockaddr *)&ss, 64,
				     on_incoming, m, &m->listener), 0);
	conn_listener_address(m->listener, &cl->addrs[r].addr);
	cl->addrs[r].rank = r;
}

static const uint8_t *
lacks_of(void *ctx, uint32_t rank)
{
	struct member *m = ctx;

	return m->cl->m[rank].lacks;
}

/* cl->holds: which blocks member r had (deterministic, and varied: one
 * member holds none, one all, the others a prefix, a scatter, or both). */
static bool
had_block(const struct cluster *cl, uint32_t r, uint64_t b, uint64_t k)
{
	if (r == 0 || r == cl->n - 1)
		return r == 0;
	if (r == 1)
		return true;
	if (r % 3 == 0)
		return b < k * r / cl->n;
	return (b * 2654435761u + r) % 5 < 2 || (r % 3 == 2 && b < k / 2);
}

static void
give_had(struct cluster *cl, struct member *m, uint64_t k)
{
	uint64_t b, len;

	m->had = calloc(k / 8 + 1, 1);
	m->lacks = calloc(k / 8 + 1, 1);
	ck_assert(m->had != NULL && m->lacks != NULL);
	for (b = 0; b < k; b++) {
		if (!had_block(cl, m->rank, b, k)) {
			eng_bit_set(m->lacks, b);
			continue;
		}
		eng_bit_set(m->had, b);
		len = cl->size - b * cl->bsize < cl->bsize
			      ? cl->size - b * cl->bsize : cl->bsize;
		memcpy(m->buf + b * cl->bsize, cl->m[0].buf + b * cl->bsize,
		       len);
	}
}

static void
start_member(struct cluster *cl, uint32_t r)
{
	struct member *m = &cl->m[r];
	struct tcp_cfg xc = {
		.loop = &cl->loop, .rank = r, .n = cl->n, .peers = cl->addrs,
		.npeers = cl->n,
		.connect_timeout_ms = 5000, .timeout_ms = cl->timeout_ms,
	};
	struct eng_cfg ec = {
		.loop = &cl->loop, .alg = cl->alg, .n = cl->n, .rank = r,
		.blocks = (cl->size + cl->bsize - 1) / cl->bsize,
		.connect_wait_ms = cl->timeout_ms,
		.admit_one = cl->paced, .max_sends = cl->paced ? 1 : 0,
		.cut_through = cl->paced,
		.window = cl->window,
		.link_window = cl->paced &&
			       (cl->alg == SCHED_CHAIN || cl->link_window),
		.rate = (int)r == cl->slow_rank ? cl->slow_rate : 0,
		.io = { blocks_iov, blocks_arrived, m },
		.complete = on_complete, .done = on_done, .ctx = m,
	};

	if (cl->holds) {
		ec.had = r > 0 ? m->had : NULL;
		ec.lacks = lacks_of;
	}
	if ((int)r == cl->frozen_rank) {
		m->done = true;
		cl->ndone++;
		return;
	}
	ck_assert_int_eq(tcp_new(&xc, &ec.xp), 0);
	ck_assert_int_eq(eng_new(&ec, &m->eng), 0);
}

static void
run_cluster(struct cluster *cl)
{
	uint32_t r;

	uv_loop_init(&cl->loop);
	uv_timer_init(&cl->loop, &cl->deadline);
	uv_timer_init(&cl->loop, &cl->killer);
	cl->deadline.data = cl->killer.data = cl;
	for (r = 0; r < cl->n; r++)
		setup_member(cl, r);
	for (r = 1; r < cl->n && cl->holds; r++)
		give_had(cl, &cl->m[r], (cl->size + cl->bsize - 1) / cl->bsize);
	for (r = 0; r < cl->n; r++)
		start_member(cl, r);
	for (r = 0; r < cl->n; r++)
		if (cl->m[r].eng != NULL)
			ck_assert_int_eq(eng_start(cl->m[r].eng), 0);
	uv_timer_start(&cl->deadline, on_deadline, 30000, 0);
	uv_run(&cl->loop, UV_RUN_DEFAULT);
}

static void
count_open(uv_handle_t *h, void *arg)
{
	unsigned *n = arg;

	if (uv_is_closing(h))
		return;
	fprintf(stderr, "test_engine: a %s handle was left open\n",
		uv_handle_type_name(uv_handle_get_type(h)));
	(*n)++;
}

static void
on_drain_deadline(uv_timer_t *t)
{
	uv_stop(t->loop);
}

/* Free the engines and close the test's own handles, then let the loop
 * run dry: every handle must be closed by its owner, as libuv's own tests
 * demand.  A handle an engine leaked is counted and fails the test (an
 * active one would keep the loop running: the unreferenced deadline stops
 * it after 5 s). */
static void
teardown_cluster(struct cluster *cl)
{
	unsigned left = 0;
	uint32_t r;

	for (r = 0; r < cl->nfrozen; r++)
		conn_free(cl->frozen_conns[r]);
	for (r = 0; r < cl->n; r++) {
		struct member *m = &cl->m[r];

		eng_free(m->eng);
		free(m->buf);
		free(m->had);
		free(m->lacks);
		uv_close((uv_handle_t *)&m->reaper, NULL);
		conn_listener_close(m->listener);
		m->listener = NULL;
	}
	uv_close((uv_handle_t *)&cl->killer, NULL);
	uv_timer_start(&cl->deadline, on_drain_deadline, 5000, 0);
	uv_unref((uv_handle_t *)&cl->deadline);
	uv_run(&cl->loop, UV_RUN_DEFAULT);
	uv_close((uv_handle_t *)&cl->deadline, NULL);
	uv_run(&cl->loop, UV_RUN_NOWAIT);
	uv_walk(&cl->loop, count_open, &left);
	ck_assert_msg(left == 0, "%u handles left open", left);
	ck_assert_int_eq(uv_loop_close(&cl->loop), 0);
}

/* A cluster of n members pushing size bytes in blocks of bsize with
 * alg (paced: as daemons run it over TCP), nobody killed, frozen or
 * slowed yet. */
static struct cluster *
new_cluster(bool paced, enum sched_alg alg, uint32_t n, uint64_t bsize,
	    uint64_t size)
{
	struct cluster *cl = calloc(1, sizeof(*cl));

	ck_assert_ptr_nonnull(cl);
	cl->paced = paced;
	cl->alg = alg;
	cl->n = n;
	cl->bsize = bsize;
	cl->size = size;
	cl->kill_rank = cl->frozen_rank = cl->slow_rank = -1;
	return cl;
}

static struct cluster *
paced_chain(uint32_t n, uint64_t bsize, uint64_t size)
{
	return new_cluster(true, SCHED_CHAIN, n, bsize, size);
}

/* The push ended in time, every member ok with the sender's bytes. */
static void
ck_all_copies(const struct cluster *cl)
{
	const char *alg = sched_alg_name(cl->alg);
	uint32_t r;

	ck_assert_msg(!cl->timed_out, "%s n=%u size=%lu: timed out", alg,
		      cl->n, cl->size);
	for (r = 0; r < cl->n; r++) {
		ck_assert_msg(cl->m[r].done && cl->m[r].status == 0,
			      "%s n=%u size=%lu: member %u status %d", alg,
			      cl->n, cl->size, r, cl->m[r].status);
		ck_assert(r == 0 || cl->m[r].complete);
		ck_assert_msg(memcmp(cl->m[r].buf, cl->m[0].buf,
				     cl->size) == 0,
			      "%s n=%u size=%lu: member %u has other bytes",
			      alg, cl->n, cl->size, r);
	}
}

static void
push_as(bool paced, enum sched_alg alg, uint32_t n, uint64_t size,
	uint64_t bsize)
{
	struct cluster *cl = new_cluster(paced, alg, n, bsize, size);

	run_cluster(cl);
	ck_all_copies(cl);
	teardown_cluster(cl);
	free(cl);
}

static void
push(enum sched_alg alg, uint32_t n, uint64_t size, uint64_t bsize)
{
	push_as(false, alg, n, size, bsize);
}

START_TEST(all_algorithms_and_sizes)
{
	static const uint32_t sizes_n[] = { 1, 2, 3, 5, 8, 13 };
	const uint64_t B = 4096;
	const uint64_t sizes[] = { 0, 1, B - 1, B, B + 1, 37 * B + 5 };
	enum sched_alg alg = (enum sched_alg)_i;
	size_t i, j;

	for (i = 0; i < sizeof(sizes_n) / sizeof(sizes_n[0]); i++)
		for (j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++)
			push(alg, sizes_n[i], sizes[j], B);
}
END_TEST

/* The same with the pacing the daemons use over TCP (offers, grants,
 * declines, one block at a time on each link): every member ends with the
 * sender's bytes. */
START_TEST(all_algorithms_paced)
{
	static const uint32_t sizes_n[] = { 2, 3, 8, 13 };
	const uint64_t B = 4096;
	const uint64_t sizes[] = { 1, B, 37 * B + 5 };
	enum sched_alg alg = (enum sched_alg)_i;
	size_t i, j;

	for (i = 0; i < sizeof(sizes_n) / sizeof(sizes_n[0]); i++)
		for (j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++)
			push_as(true, alg, sizes_n[i], sizes[j], B);
}
END_TEST

/* The receives a member posts ahead: ENG_MIN_WINDOW until its blocks'
 * wire times are known, then what its link passes in ENG_AHEAD_US, never
 * fewer than ENG_MIN_WINDOW, never more than the window. */
START_TEST(window_follows_the_link)
{
	ck_assert_uint_eq(eng_window_for(0, 0), ENG_MIN_WINDOW);
	ck_assert_uint_eq(eng_window_for(32, 0), ENG_MIN_WINDOW);
	ck_assert_uint_eq(eng_window_for(1, 0), 1);
	ck_assert_uint_eq(eng_window_for(32, 1000), 32);
	ck_assert_uint_eq(eng_window_for(0, 1000), ENG_DEFAULT_WINDOW);
	ck_assert_uint_eq(eng_window_for(0, 15625), ENG_DEFAULT_WINDOW);
	/* 1 MiB at 200 Mbit/s: 42 ms a block, 6 in 250 ms */
	ck_assert_uint_eq(eng_window_for(0, 42000), 6);
	/* 64 KiB at 5 Mbit/s, 105 ms: no fewer than ENG_MIN_WINDOW */
	ck_assert_uint_eq(eng_window_for(0, 105000), ENG_MIN_WINDOW);
	ck_assert_uint_eq(eng_window_for(0, 10000000), ENG_MIN_WINDOW);
	/* a window asked smaller stays as asked */
	ck_assert_uint_eq(eng_window_for(1, 105000), 1);
	ck_assert_uint_eq(eng_window_for(2, 1000), 2);
	ck_assert_uint_eq(eng_window_for(8, 42000), 6);
}
END_TEST

/* Run cl with the engine's trace log going to `count` (which counts the
 * lines it looks for in ctx); then every member must hold the sender's
 * bytes. */
static void
run_counting(struct cluster *cl, log_sink_fn count, void *ctx)
{
	log_setup(count, ctx, LOG_TRACE);
	run_cluster(cl);
	log_setup(NULL, NULL, LOG_WARN);
	ck_all_copies(cl);
}

static void
count_runs(void *ctx, enum log_level level, const char *msg)
{
	if (strstr(msg, " at once") != NULL)
		(*(unsigned *)ctx)++;
}

/* A paced chain whose relay sends slower than it receives (a send cap):
 * the blocks it holds go to the next member as runs, granted at once, and
 * every member still ends with the sender's bytes. */
START_TEST(relay_behind_sends_runs)
{
	struct cluster *cl = paced_chain(4, 4096, 64 * 4096 + 5);
	unsigned runs = 0;

	cl->slow_rank = 1;
	cl->slow_rate = 100 * cl->bsize;	/* 0.65 s for the 65 blocks */
	run_counting(cl, count_runs, &runs);
	ck_assert_msg(runs > 0, "no block was granted in a run");
	teardown_cluster(cl);
	free(cl);
}
END_TEST

static void
count_ahead(void *ctx, enum log_level level, const char *msg)
{
	unsigned *n = ctx;

	if (strstr(msg, " at once") != NULL && strstr(msg, " from 0") != NULL)
		n[0]++;
	if (strstr(msg, "still coming in") != NULL)
		n[1]++;
}

/* A paced push to one member: the sender offers its blocks as runs, and
 * the member, whose blocks all come from the sender, grants the next run
 * while the one before is still coming in (the offer passed the blocks
 * queued before it), so the sender's link never waits for a round trip;
 * the member ends with the sender's bytes. */
START_TEST(one_source_grants_ahead)
{
	/* runs of 8 MiB: more than sockets hold */
	struct cluster *cl = new_cluster(true, SCHED_BINOMIAL, 2, 1u << 20,
					 32u << 20);
	unsigned n[2] = { 0, 0 };

	run_counting(cl, count_ahead, n);
	ck_assert_msg(n[0] > 0, "the sender's blocks were not granted in runs");
	ck_assert_msg(n[1] > 0, "no run was granted before the last was in");
	teardown_cluster(cl);
	free(cl);
}
END_TEST

static void
count_landing(void *ctx, enum log_level level, const char *msg)
{
	if (strstr(msg, " goes on as it lands") != NULL)
		(*(unsigned *)ctx)++;
}

/* A paced chain of 1 MiB blocks: the relays pass each block on as it
 * lands (its send issued while its receive is still coming in), not once
 * it is whole, and every member ends with the sender's bytes. */
START_TEST(relays_pass_blocks_as_they_land)
{
	struct cluster *cl = paced_chain(4, 1u << 20, 24 * (1u << 20) + 5);
	unsigned landing = 0;

	run_counting(cl, count_landing, &landing);
	/* 2 relays x 25 blocks; on a loaded machine a relay may fall behind
	 * and send some whole */
	ck_assert_msg(landing >= 10, "only %u blocks went on as they landed",
		      landing);
	teardown_cluster(cl);
	free(cl);
}
END_TEST

static void
count_relay_ahead(void *ctx, enum log_level level, const char *msg)
{
	if (strstr(msg, "rank 2: grant block") != NULL &&
	    strstr(msg, "still coming in") != NULL)
		(*(unsigned *)ctx)++;
}

/* A paced chain of 256 KiB blocks from a sender slower than the relay (a
 * send cap), so that the relay (rank 1) passes each block on as it lands:
 * it offers its next run while the one before is still going, and rank 2
 * grants it before that one is in.  The offer does not wait behind the
 * block going out, nor the relay's link for the grant's round trip, once
 * a run.  Every member ends with the sender's bytes. */
START_TEST(relay_offers_next_run_ahead)
{
	struct cluster *cl = paced_chain(3, 256u << 10, 40 * (256u << 10) + 5);
	unsigned ahead = 0;

	cl->slow_rank = 0;
	cl->slow_rate = 100 * cl->bsize;	/* 0.4 s for the 41 blocks */
	run_counting(cl, count_relay_ahead, &ahead);
	ck_assert_msg(ahead > 0, "rank 2 never granted the relay's next run "
		      "before the last was in");
	teardown_cluster(cl);
	free(cl);
}
END_TEST

/* A paced chain whose relay (_i 0: rank 1, 1: rank 2) dies while it
 * passes blocks on as they land: the members behind it, which had part of
 * a block from it, fail instead of hanging, and no member claims success
 * with other bytes. */
START_TEST(relay_dies_while_passing_on)
{
	struct cluster *cl = paced_chain(5, 256u << 10, 64 * (256u << 10));
	uint32_t r;

	cl->kill_rank = 1 + _i;
	cl->kill_after = 6;
	run_cluster(cl);
	ck_assert_msg(!cl->timed_out, "the chain hung after a relay died");
	for (r = 0; r < cl->n; r++) {
		ck_assert_msg(cl->m[r].done, "member %u never finished", r);
		if ((int)r == cl->kill_rank || cl->m[r].status < 0)
			continue;
		ck_assert_msg(memcmp(cl->m[r].buf, cl->m[0].buf, cl->size) == 0,
			      "member %u claims success with other bytes", r);
	}
	for (r = (uint32_t)cl->kill_rank + 1; r < cl->n; r++)
		ck_assert_msg(cl->m[r].status < 0, "member %u, behind the dead "
			      "relay, did not fail", r);
	teardown_cluster(cl);
	free(cl);
}
END_TEST

/* Members that hold blocks from the start (a resumed push, a delta):
 * every algorithm, paced or not, one member holding nothing, one all, the
 * others prefixes and scatters.  Each member ends with the sender's bytes
 * and receives exactly the blocks it lacked (never one it had: checked as
 * they arrive); in a chain rank 0 sends only what rank 1 lacks (nothing
 * here, unless rank 1 is the last, which holds none), and rank 1 feeds
 * the others from its copy. */
static void
push_to_holders(bool paced, enum sched_alg alg, unsigned window,
		bool link_window)
{
	static const uint32_t sizes_n[] = { 2, 3, 6, 13 };
	const uint64_t B = 4096, size = 37 * B + 5, k = 38;
	struct cluster *cl;
	uint64_t lacked, b;
	size_t i;
	uint32_t r;

	for (i = 0; i < sizeof(sizes_n) / sizeof(sizes_n[0]); i++) {
		cl = new_cluster(paced, alg, sizes_n[i], B, size);
		cl->holds = true;
		cl->window = window;
		cl->link_window = link_window;
		run_cluster(cl);
		ck_all_copies(cl);
		for (r = 1; r < cl->n; r++) {
			for (lacked = 0, b = 0; b < k; b++)
				lacked += eng_bit_is_set(cl->m[r].lacks, b);
			ck_assert_msg(cl->m[r].arrived == lacked,
				      "%s n=%u: member %u received %lu blocks, "
				      "lacked %lu", sched_alg_name(alg), cl->n,
				      r, cl->m[r].arrived, lacked);
		}
		if (alg == SCHED_CHAIN && cl->n > 2)
			ck_assert_uint_eq(cl->sent0, 0);
		teardown_cluster(cl);
		free(cl);
	}
}

START_TEST(members_hold_blocks)
{
	push_to_holders(_i % 2, (enum sched_alg)(_i / 2), 0, false);
}
END_TEST

/* The same, paced, with windows that follow the links in every algorithm
 * (ENG_MIN_WINDOW, then up to 16 once a member has timed 8 blocks, which
 * members that lack few blocks never do), and with fixed windows of 1
 * and 2.  A member that holds a later send's block before the earlier
 * sends' offers it first; its receiver may not post that receive for a
 * long while (its window ends before it), and the offer must not hold
 * back the member's earlier sends: in the binomial pipeline at n=13 their
 * receivers waited on it in a cycle, and the group stalled. */
START_TEST(holders_with_link_window)
{
	push_to_holders(true, (enum sched_alg)_i, 0, true);
}
END_TEST

START_TEST(holders_with_small_windows)
{
	push_to_holders(true, (enum sched_alg)(_i / 2), 1 + _i % 2, false);
}
END_TEST

START_TEST(many_blocks)
{
	/* more blocks than the window, ready queue and 16 bits hold */
	push(SCHED_BINOMIAL, 6, 70000ull * 512 + 3, 512);
}
END_TEST

START_TEST(member_dies_midway)
{
	struct cluster *cl = calloc(1, sizeof(*cl));
	uint32_t r, failed_survivors = 0;

	cl->n = 8;
	cl->size = 200 * 4096;
	cl->bsize = 4096;
	cl->alg = SCHED_BINOMIAL;
	cl->kill_rank = 1 + _i;		/* relays and leaves alike */
	cl->frozen_rank = -1;
	cl->kill_after = 20;
	run_cluster(cl);
	ck_assert_msg(!cl->timed_out, "the group hung after a member died");
	for (r = 0; r < cl->n; r++) {
		ck_assert_msg(cl->m[r].done, "member %u never finished", r);
		if ((int)r == cl->kill_rank || cl->m[r].status < 0)
			continue;
		ck_assert_msg(memcmp(cl->m[r].buf, cl->m[0].buf, cl->size) == 0,
			      "member %u claims success with other bytes", r);
	}
	for (r = 1; r < cl->n; r++)
		if ((int)r != cl->kill_rank && cl->m[r].status < 0)
			failed_survivors++;
	ck_assert_msg(failed_survivors > 0, "nobody noticed member %d die",
		      cl->kill_rank);
	teardown_cluster(cl);
	free(cl);
}
END_TEST

/* A member that takes connections but never moves or answers (frozen):
 * the one it was to connect to must give up after the timeout instead of
 * waiting for ever, the one connected to it finds it silent. */
START_TEST(frozen_member_fails_neighbours)
{
	struct cluster *cl = calloc(1, sizeof(*cl));

	cl->n = 4;
	cl->size = 40 * 4096;
	cl->bsize = 4096;
	cl->alg = SCHED_CHAIN;		/* 0 -> 1 -> 2 -> 3 */
	cl->kill_rank = -1;
	cl->frozen_rank = 2;
	cl->timeout_ms = 300;
	run_cluster(cl);
	ck_assert_msg(!cl->timed_out, "the group hung on a frozen member");
	ck_assert_int_eq(cl->m[0].status, 0);
	ck_assert(cl->m[1].complete);
	ck_assert_int_eq(cl->m[1].status, -ETIMEDOUT);
	ck_assert_int_eq(cl->m[1].peer, 2);
	ck_assert_int_eq(cl->m[3].status, ENG_NEVER_CONNECTED);
	ck_assert_int_eq(cl->m[3].peer, 2);
	teardown_cluster(cl);
	free(cl);
}
END_TEST

/* Rank 0 played by hand: HELLO, an OFFER of block 0 and, once it is
 * granted (the member's receives are posted), every block of the push at
 * once: the first granted, none of the others. */
struct ungranted {
	struct sockaddr_storage to;
	uint64_t blocks, bsize;
};

static int
write_all(int fd, const void *p, size_t n)
{
	ssize_t w;

	for (; n > 0; p = (const char *)p + w, n -= (size_t)w)
		if ((w = write(fd, p, n)) <= 0)
			return -1;
	return 0;
}

static int
read_all(int fd, void *p, size_t n)
{
	ssize_t r;

	for (; n > 0; p = (char *)p + r, n -= (size_t)r)
		if ((r = read(fd, p, n)) <= 0)
			return -1;
	return 0;
}

static int
send_frame(int fd, const struct frame *f, const void *body)
{
	uint8_t hdr[PROTO_FRAME_LEN];

	frame_encode(f, hdr);
	return write_all(fd, hdr, sizeof(hdr)) < 0 ||
	       (f->len > 0 && write_all(fd, body, (size_t)f->len) < 0) ? -1 : 0;
}

/* Until the member grants block 0 (its frames carry no payload). */
static int
await_grant(int fd)
{
	uint8_t hdr[PROTO_FRAME_LEN];
	struct frame f;

	do {
		if (read_all(fd, hdr, sizeof(hdr)) < 0 ||
		    frame_decode(hdr, &f) < 0 || f.len > 0)
			return -1;
	} while (f.type != MSG_SIGNAL || f.val >> SIG_KIND_SHIFT != SIG_GRANT);
	return 0;
}

static void *
send_ungranted(void *arg)
{
	struct ungranted *u = arg;
	struct hello h = { .from = 0, .to = 1 };
	struct frame f = { .type = MSG_HELLO };
	uint8_t *block = calloc(1, u->bsize), sink[256];
	struct wbuf w;
	uint64_t b;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	wbuf_init(&w);
	hello_encode(&h, &w);
	f.len = w.len;
	if (fd < 0 || block == NULL ||
	    connect(fd, (struct sockaddr *)&u->to,
		    sizeof(struct sockaddr_in)) < 0 ||
	    send_frame(fd, &f, w.data) < 0)
		goto out;
	f = (struct frame){ .type = MSG_SIGNAL,
			    .val = SIG_OFFER << SIG_KIND_SHIFT };
	if (send_frame(fd, &f, NULL) < 0 || await_grant(fd) < 0)
		goto out;
	for (b = 0; b < u->blocks; b++) {
		f = (struct frame){ .type = MSG_BLOCK, .arg = (uint32_t)b,
				    .val = b, .len = u->bsize };
		if (send_frame(fd, &f, block) < 0)
			break;	/* dropped */
	}
	while (read(fd, sink, sizeof(sink)) > 0)
		;
out:
	if (fd >= 0)
		close(fd);
	wbuf_free(&w);
	free(block);
	return NULL;
}

/* A paced receiver (admit_one, as daemons run it) whose sender sends
 * blocks it never granted: each left its receive pending while the next
 * was posted, and past the window the pending receives overflowed their
 * array (a heap overflow that fuzz_serve found through a member's data
 * connection, which needs only the job's token).  The member fails at the
 * first such block (block 1: block 0 was granted), blaming the sender. */
START_TEST(block_before_grant)
{
	const uint64_t blocks = 4 * ENG_DEFAULT_WINDOW, bsize = 4096;
	struct cluster *cl = new_cluster(true, SCHED_BINOMIAL, 2, bsize,
					 blocks * bsize);
	struct ungranted u = { .blocks = blocks, .bsize = bsize };
	pthread_t th;

	cl->timeout_ms = 5000;
	uv_loop_init(&cl->loop);
	uv_timer_init(&cl->loop, &cl->deadline);
	uv_timer_init(&cl->loop, &cl->killer);
	cl->deadline.data = cl->killer.data = cl;
	setup_member(cl, 0);
	setup_member(cl, 1);
	cl->m[0].done = true;	/* played by send_ungranted */
	cl->ndone = 1;
	start_member(cl, 1);
	ck_assert_int_eq(eng_start(cl->m[1].eng), 0);
	u.to = cl->addrs[1].addr;
	ck_assert_int_eq(pthread_create(&th, NULL, send_ungranted, &u), 0);
	uv_timer_start(&cl->deadline, on_deadline, 10000, 0);
	uv_run(&cl->loop, UV_RUN_DEFAULT);
	ck_assert_msg(!cl->timed_out, "the member never ended");
	ck_assert_int_eq(cl->m[1].status, -EPROTO);
	ck_assert_int_eq(cl->m[1].peer, 0);
	ck_assert(!cl->m[1].complete);
	teardown_cluster(cl);
	pthread_join(th, NULL);
	free(cl);
}
END_TEST

static int
no_iov(void *ctx, uint64_t b, struct iovec *iov, int max)
{
	return -EIO;
}

static int
no_arrival(void *ctx, uint64_t b)
{
	return -EIO;
}

/* A daemon's engine for a job of 2^32 blocks (2 TiB in 512-byte blocks),
 * as each of its receivers makes it on START: its peers and its last
 * transfer each way with each, for every schedule.  The daemon's loop
 * answers nobody meanwhile; the schedule's queries scanned every step
 * (60 s for rank 1, which never sends to the sender), and the test
 * case's timeout fails the test long before.  Nothing is timed.  The
 * bitmaps of k bits are allocated, not touched, but under ASan their
 * shadow is (0.3 s an engine): a few ranks of each group. */
START_TEST(eng_new_2e32_blocks)
{
	static const uint32_t sizes[] = { 2, 3, 7, 100 };
	enum sched_alg alg = (enum sched_alg)_i;
	struct eng_cfg cfg = {
		.alg = alg, .blocks = 1ull << 32, .admit_one = true,
		.io = { no_iov, no_arrival, NULL },
	};
	uint32_t ranks[4];
	struct eng *e;
	size_t i, r;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		cfg.n = sizes[i];
		/* the sender's neighbour, two in the middle, the last */
		ranks[0] = 1, ranks[1] = cfg.n / 2, ranks[2] = cfg.n / 2 + 1;
		ranks[3] = cfg.n - 1;
		for (r = 0; r < 4; r++) {
			cfg.rank = ranks[r] < cfg.n ? ranks[r] : cfg.n - 1;
			if (r > 0 && cfg.rank <= ranks[r - 1])
				continue;	/* done (small groups) */
			ck_assert_int_eq(eng_new(&cfg, &e), 0);
			ck_assert_uint_eq(eng_held(e), 0);
			eng_free(e);
		}
	}
}
END_TEST

static Suite *
engine_suite(void)
{
	Suite *s = suite_create("engine");
	TCase *tc = tcase_create("tcp-loopback");

	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, all_algorithms_and_sizes, 0, SCHED_NALG);
	tcase_add_loop_test(tc, all_algorithms_paced, 0, SCHED_NALG);
	tcase_add_loop_test(tc, members_hold_blocks, 0, 2 * SCHED_NALG);
	tcase_add_test(tc, many_blocks);
	tcase_add_test(tc, relay_behind_sends_runs);
	tcase_add_test(tc, one_source_grants_ahead);
	tcase_add_test(tc, relays_pass_blocks_as_they_land);
	tcase_add_test(tc, relay_offers_next_run_ahead);
	tcase_add_loop_test(tc, relay_dies_while_passing_on, 0, 2);
	tcase_add_loop_test(tc, member_dies_midway, 0, 7);
	tcase_add_test(tc, frozen_member_fails_neighbours);
	suite_add_tcase(s, tc);
	tc = tcase_create("hostile");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, block_before_grant);
	suite_add_tcase(s, tc);
	tc = tcase_create("window");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, window_follows_the_link);
	tcase_add_loop_test(tc, holders_with_link_window, 0, SCHED_NALG);
	tcase_add_loop_test(tc, holders_with_small_windows, 0, 2 * SCHED_NALG);
	suite_add_tcase(s, tc);
	/* a third of one of the old schedule's scans; ten times what ASan
	 * takes to set up the bitmaps */
	tc = tcase_create("scale");
	tcase_set_timeout(tc, 20);
	tcase_add_loop_test(tc, eng_new_2e32_blocks, 0, SCHED_NALG);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	return run_suite(engine_suite());
}
