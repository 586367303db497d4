/* SPDX-License-Identifier: MIT */
/*
 * engine - runs one member's block schedule over a transport.
 *
 * The engine moves blocks; it knows neither files nor sockets.  Block memory
 * comes from the owner (struct eng_blocks), connections from the transport
 * (xport.h), the order of transfers from the schedule (schedule.h).
 *
 * Rules, after RDMC:
 *   - a member posts receives in step order, up to `window` ahead, and sends
 *     each source a ready-for-block signal right after posting;
 *   - it sends in step order, each block as soon as it holds it and the
 *     target said it is ready for it, so members run ahead of one another
 *     as far as the window lets them and absorb each other's delays;
 *   - a connection that ends while the schedule still needs it fails the
 *     member; one that ends after its last transfer is fine.
 *
 * Callbacks run on the loop; they must not free the engine (defer that).
 */
#ifndef RDMCP_ENGINE_H
#define RDMCP_ENGINE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>
#include <uv.h>

#include "sched/schedule.h"
#include "proto/trace.h"
#include "transport/xport.h"

struct eng;

/* Where blocks live.  The engine never reads or writes block bytes. */
struct eng_blocks {
	/* Fill `iov` with the memory of block `block`.  Returns the number of
	 * entries the block needs (if more than max, nothing useful was
	 * written and the engine asks again with room), or -errno. */
	int (*iov)(void *ctx, uint64_t block, struct iovec *iov, int max);
	/* Block `block` has arrived in full.  Return 0 or -errno to fail. */
	int (*arrived)(void *ctx, uint64_t block);
	void *ctx;
};

struct eng_cfg {
	uv_loop_t *loop;
	enum sched_alg alg;
	uint32_t n;
	uint32_t rank;
	uint64_t blocks;
	const uint32_t *racks;	/* racks' sizes, rank by rank (schedule.h) */
	size_t nracks;		/* 0: no racks */
	unsigned window;	/* receives posted ahead; 0: default */
	bool link_window;	/* ... fewer on a slow link, once its
				 * blocks' wire times are known
				 * (eng_window_for) */
	/* One block at a time on each of the member's links, as the papers'
	 * schedule has it: at most `max_sends` sends in flight (0: no
	 * limit), and with admit_one a ready-for-block goes out only once
	 * the block before it is nearly in (the transport's recv_nearly), so
	 * that neighbours do not send into one link at once. */
	unsigned max_sends;
	bool admit_one;
	/* With admit_one, a member with one source and one target (a chain's
	 * relay) passes each block on as it lands, where the transport can
	 * (xp_send_landing): a hop then costs a few packets, not a block. */
	bool cut_through;
	/* At most this many bytes per second go out of this member
	 * (--bwlimit), kept block by block: a send waits until the ones
	 * before it took their share of time.  0: no cap. */
	uint64_t rate;
	unsigned connect_wait_ms; /* fail if a neighbour is not connected
				   * this long after eng_start; 0: never */
	struct xp *xp;		/* taken over: eng_free() frees it */
	/* What members hold before the start (a resumed push, a delta):
	 * the blocks this member had, as a bitmap of the schedule's blocks
	 * (bit b of byte b / 8; NULL: none), which it does not receive and
	 * passes on from its own copy; and, asked once per neighbour, the
	 * blocks neighbour `rank` lacks (NULL: all), the only ones sent to
	 * it.  A member's had must be the complement of what its neighbours
	 * are told it lacks, or the two ends of a link disagree.  Both are
	 * copied by eng_new(); both NULL: nothing is left out. */
	const uint8_t *had;
	const uint8_t *(*lacks)(void *ctx, uint32_t rank);
	struct eng_blocks io;
	/* Every block has arrived (never called for rank 0). */
	void (*complete)(void *ctx);
	/* The member is finished: status 0 once it holds every block and its
	 * sends are out, else -errno; `peer` is the rank whose connection
	 * failed, or UINT32_MAX. */
	void (*done)(void *ctx, int status, uint32_t peer);
	void *ctx;
	/* Optional: where to record the spans of blocks received and sent
	 * and of the waits between (trace.h); the owner's, kept until
	 * eng_free(). */
	struct trace *trace;
};

/* Receives posted ahead: small windows tie members in lock-step and pay
 * for every delay of every neighbour; 16 absorbs them
 * (docs/performance.md, "The receive window"). */
#define ENG_DEFAULT_WINDOW 16
#define ENG_NO_PEER UINT32_MAX

/* With link_window a member posts ahead what its link passes in
 * ENG_AHEAD_US, ENG_MIN_WINDOW at least, and that many until its blocks'
 * wire times are known: each receive posted lets its sender queue a
 * block, which an attempt that breaks wastes (on a 5 Mbit/s link 16
 * blocks of 64 KiB are 1.7 s of it; docs/performance.md, "The receive
 * window"). */
#define ENG_AHEAD_US 250000u
#define ENG_MIN_WINDOW 4u

/* done() status when a peer closed its connection in order while the
 * schedule still needed it (e.g. it was killed with nothing in flight). */
#define ENG_CLOSED_EARLY (-ENOTCONN)

/* done() status when neighbour `peer` had not connected connect_wait_ms
 * after the start: connections of lower ranks are the peer's to make, and
 * without this deadline a member would wait for ever on one that could
 * not (its own attempt timed out, or it failed before trying).  Delays
 * of connected peers are not failures: a member may wait legitimately
 * for its turn (sequential, tree); dead peers show up as lost. */
#define ENG_NEVER_CONNECTED (-ETIME)

/* Text for a done() status: strerror, but says what ENG_CLOSED_EARLY
 * means. */
const char *eng_strerror(int status);

/* Create an engine; nothing happens until eng_start().  0 or -errno
 * (-EFBIG: more blocks than the signals can number, 2^48 - 1). */
int eng_new(const struct eng_cfg *cfg, struct eng **out);

/* Connect to the neighbours of higher rank and start moving blocks.
 * Returns 0 or -errno (then no callback follows). */
int eng_start(struct eng *e);

/* Blocks held so far (all of them for rank 0), and of those, the ones
 * received (not had from the start). */
uint64_t eng_held(const struct eng *e);
uint64_t eng_received(const struct eng *e);

/* The median wire time, in microseconds, of the last blocks received
 * (from their first bytes to their last: what the links from this
 * member's senders into it allow), or 0 until 8 are measured or if the
 * transport cannot tell when a block begins (verbs). */
uint64_t eng_block_time_us(const struct eng *e);

/* The receives to post ahead under a configured `window` (0: the
 * default) when blocks take block_us each on the wire: the window, or
 * fewer on a slow link (see ENG_AHEAD_US); not known yet (0),
 * ENG_MIN_WINDOW, so that an attempt broken early wastes little.  Pure. */
unsigned eng_window_for(unsigned window, uint64_t block_us);

/* Bytes of blocks this member has handed to its transport to send. */
uint64_t eng_bytes_sent(const struct eng *e);

/* The transport, e.g. to hand it incoming connections. */
struct xp *eng_xport(const struct eng *e);

/* Stop, close connections, free the transport; NULL is a no-op. */
void eng_free(struct eng *e);

#endif
