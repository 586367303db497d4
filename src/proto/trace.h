/* SPDX-License-Identifier: MIT */
/*
 * trace - a timeline of one member's part in a push, for --trace.
 *
 * Spans of time (a block received or sent, a wait, the set-up, the
 * commit) recorded as they end, in microseconds of the wall clock, then
 * sent to the sender (wire form below), which lays every member's spans
 * on one timeline.  Pure: no I/O; bounded: past `max` spans it counts
 * what it drops.
 */
#ifndef RDMCP_TRACE_H
#define RDMCP_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "util/wire.h"

enum trace_kind {
	TR_BOOT = 1,	/* job received (daemon) or push begun, until START */
	TR_SETUP,	/* temporaries made and space reserved */
	TR_RECV,	/* ready-for-block sent, until the block is in */
	TR_SEND,	/* a block handed to the transport, until it is out */
	TR_WAIT_READY,	/* a send waits for its target's ready signal */
	TR_WAIT_BLOCK,	/* a send waits for the block to arrive here */
	TR_GO,		/* every block in, until the sender's go */
	TR_COMMIT,	/* modes, times, renames */
	TR_WAIT_SENDER,	/* a block admitted, until its first bytes come */
	TR_NKIND
};

struct trace_span {
	uint64_t t0, t1;	/* microseconds since the epoch */
	uint64_t block;		/* or 0 */
	uint32_t peer;		/* the other rank, or UINT32_MAX */
	uint32_t kind;		/* enum trace_kind */
};

struct trace;

/* A trace of at most `max` spans; NULL if out of memory. */
struct trace *trace_new(size_t max);

/* Free; NULL is a no-op. */
void trace_free(struct trace *t);

/* Microseconds since the epoch, now. */
uint64_t trace_now(void);

/* Record a span; a NULL trace records nothing. */
void trace_add(struct trace *t, enum trace_kind kind, uint64_t t0,
	       uint64_t t1, uint32_t peer, uint64_t block);

/* Spans recorded, and dropped for lack of room. */
size_t trace_count(const struct trace *t);
size_t trace_dropped(const struct trace *t);
const struct trace_span *trace_spans(const struct trace *t);

/* The encoder's clock at three moments, for the decoder to put its times
 * on its own clock: when it encoded, and, of a round trip the decoder
 * began (0: none), when the request arrived and when the answer left. */
struct trace_sync {
	uint64_t now, arrived, answered;
};

/* Wire form: u64 × 3 the sync (now, arrived, answered), u64 dropped, u32
 * count, then count × (u64 t0, u64 t1, u64 block, u32 peer, u32 kind).
 * The sync's `now` is taken here. */
int trace_encode(const struct trace *t, uint64_t arrived, uint64_t answered,
		 struct wbuf *w);

/* Decode into a new trace, with the encoder's sync.  0, or -EPROTO on a
 * malformed body. */
int trace_decode(const uint8_t *body, size_t len, struct trace_sync *sync,
		 struct trace **out);

/* What to add to the encoder's times to put them on our clock, given
 * when we sent the request of the round trip and when its answer came
 * (our clock; 0: not known): the round trip's midpoints matched, as NTP
 * does, and *error_us the half of the round trip spent on the way (the
 * most the offset can be wrong by, links alike both ways or not).  With
 * no round trip, the time the sync took to come (now - sync.now), which
 * is also its transit: *error_us is then 0, not known. */
int64_t trace_offset(const struct trace_sync *sync, uint64_t sent,
		     uint64_t answer_came, uint64_t now, uint64_t *error_us);

/* "recv", "send", ... */
const char *trace_kind_name(enum trace_kind kind);

#endif
