/* SPDX-License-Identifier: MIT */
/*
 * trace - one member's timeline (see trace.h).
 */
#include "proto/trace.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#define SPAN_BYTES (8 + 8 + 8 + 4 + 4)
#define FIRST_CAP 1024

struct trace {
	struct trace_span *s;
	size_t n, cap, max;
	size_t dropped;
};

struct trace *
trace_new(size_t max)
{
	struct trace *t = calloc(1, sizeof(*t));

	if (t != NULL)
		t->max = max;
	return t;
}

void
trace_free(struct trace *t)
{
	if (t == NULL)
		return;
	free(t->s);
	free(t);
}

uint64_t
trace_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Room for one more span: 0, or -ENOMEM (full or out of memory). */
static int
grow(struct trace *t)
{
	struct trace_span *s;
	size_t cap;

	if (t->n < t->cap)
		return 0;
	if (t->cap >= t->max)
		return -ENOMEM;
	cap = t->cap ? t->cap * 2 : FIRST_CAP;
	if (cap > t->max)
		cap = t->max;
	s = realloc(t->s, cap * sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	t->s = s;
	t->cap = cap;
	return 0;
}

void
trace_add(struct trace *t, enum trace_kind kind, uint64_t t0, uint64_t t1,
	  uint32_t peer, uint64_t block)
{
	if (t == NULL)
		return;
	if (grow(t) < 0) {
		t->dropped++;
		return;
	}
	t->s[t->n++] = (struct trace_span){ t0, t1 >= t0 ? t1 : t0, block,
					    peer, (uint32_t)kind };
}

size_t
trace_count(const struct trace *t)
{
	return t != NULL ? t->n : 0;
}

size_t
trace_dropped(const struct trace *t)
{
	return t != NULL ? t->dropped : 0;
}

const struct trace_span *
trace_spans(const struct trace *t)
{
	return t != NULL ? t->s : NULL;
}

int
trace_encode(const struct trace *t, uint64_t arrived, uint64_t answered,
	     struct wbuf *w)
{
	size_t i, n = trace_count(t);

	wput_u64(w, trace_now());
	wput_u64(w, arrived);
	wput_u64(w, answered);
	wput_u64(w, trace_dropped(t));
	wput_u32(w, (uint32_t)n);
	for (i = 0; i < n; i++) {
		wput_u64(w, t->s[i].t0);
		wput_u64(w, t->s[i].t1);
		wput_u64(w, t->s[i].block);
		wput_u32(w, t->s[i].peer);
		wput_u32(w, t->s[i].kind);
	}
	return w->err;
}

int64_t
trace_offset(const struct trace_sync *sync, uint64_t sent,
	     uint64_t answer_came, uint64_t now, uint64_t *error_us)
{
	int64_t there, back, away;

	*error_us = 0;
	if (sent == 0 || answer_came < sent || sync->arrived == 0 ||
	    sync->answered < sync->arrived)
		return (int64_t)(now - sync->now);
	there = (int64_t)(sent - sync->arrived);
	back = (int64_t)(answer_came - sync->answered);
	away = (int64_t)((answer_came - sent) -
			 (sync->answered - sync->arrived));
	*error_us = away > 0 ? (uint64_t)away / 2 : 0;
	return (there + back) / 2;
}

int
trace_decode(const uint8_t *body, size_t len, struct trace_sync *sync,
	     struct trace **out)
{
	struct trace_span sp;
	struct rbuf r;
	struct trace *t;
	uint64_t dropped;
	uint32_t n, i;

	*out = NULL;
	rbuf_init(&r, body, len);
	rget_u64(&r, &sync->now);
	rget_u64(&r, &sync->arrived);
	rget_u64(&r, &sync->answered);
	rget_u64(&r, &dropped);
	if (rget_u32(&r, &n) < 0 || (size_t)n * SPAN_BYTES != len - r.off)
		return -EPROTO;
	t = trace_new(n ? n : 1);
	if (t == NULL)
		return -ENOMEM;
	t->dropped = (size_t)dropped;
	for (i = 0; i < n; i++) {
		rget_u64(&r, &sp.t0);
		rget_u64(&r, &sp.t1);
		rget_u64(&r, &sp.block);
		rget_u32(&r, &sp.peer);
		rget_u32(&r, &sp.kind);
		if (r.err < 0 || sp.kind == 0 || sp.kind >= TR_NKIND)
			break;
		trace_add(t, sp.kind, sp.t0, sp.t1, sp.peer, sp.block);
	}
	if (i < n || rbuf_done(&r) < 0 || t->n < n) {
		trace_free(t);
		return -EPROTO;
	}
	*out = t;
	return 0;
}

const char *
trace_kind_name(enum trace_kind kind)
{
	static const char *const names[TR_NKIND] = {
		[TR_BOOT] = "bootstrap", [TR_SETUP] = "setup",
		[TR_RECV] = "recv", [TR_SEND] = "send",
		[TR_WAIT_READY] = "wait for ready",
		[TR_WAIT_BLOCK] = "wait for block", [TR_GO] = "wait for go",
		[TR_COMMIT] = "commit", [TR_WAIT_SENDER] = "wait for sender",
	};

	return kind > 0 && kind < TR_NKIND ? names[kind] : "?";
}
