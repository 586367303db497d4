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

#include "wire.h"

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

/* Wire form: u64 the sender's clock at encoding, u64 dropped, u32 count,
 * then count × (u64 t0, u64 t1, u64 block, u32 peer, u32 kind). */
int trace_encode(const struct trace *t, struct wbuf *w);

/* Decode into a new trace; *clock is the encoder's clock when it encoded.
 * 0, or -EPROTO on a malformed body. */
int trace_decode(const uint8_t *body, size_t len, uint64_t *clock,
		 struct trace **out);

/* "recv", "send", ... */
const char *trace_kind_name(enum trace_kind kind);

#endif
