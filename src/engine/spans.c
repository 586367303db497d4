/* SPDX-License-Identifier: MIT */
/*
 * spans - the engine's spans for --trace: each send, from its start to
 * the transport's word that it is out, and the waits before sends (state
 * in engine_int.h; receives are traced in engine.c, where they end).
 */
#include <errno.h>
#include <stdlib.h>

#include "engine/engine_int.h"
#include "proto/trace.h"

/* A send to p begins now: its start, in p's ring of sends in flight. */
int
eng_span_send_begins(struct eng *e, struct epeer *p)
{
	uint64_t *grown;
	uint32_t i;

	if (e->cfg.trace == NULL)
		return 0;
	if (p->inflight == p->scap) {
		grown = malloc((p->scap ? p->scap * 2 : 8) * sizeof(*grown));
		if (grown == NULL)
			return -ENOMEM;
		for (i = 0; i < p->inflight; i++)
			grown[i] = p->sent_at[(p->shead + i) % p->scap];
		free(p->sent_at);
		p->sent_at = grown;
		p->scap = p->scap ? p->scap * 2 : 8;
		p->shead = 0;
	}
	p->sent_at[(p->shead + p->inflight) % p->scap] = trace_now();
	return 0;
}

/* The oldest send in flight to p is out. */
void
eng_span_send_ends(struct eng *e, struct epeer *p, uint64_t block)
{
	if (e->cfg.trace == NULL || p->scap == 0)
		return;
	trace_add(e->cfg.trace, TR_SEND, p->sent_at[p->shead], trace_now(),
		  p->rank, block);
	p->shead = (p->shead + 1) % p->scap;
}

/* The next send cannot go yet (kind says why): a wait begins, if none
 * was under way. */
void
eng_span_wait(struct eng *e, enum trace_kind kind)
{
	if (e->cfg.trace != NULL && e->wait_since == 0) {
		e->wait_since = trace_now();
		e->wait_kind = kind;
	}
}

/* A send goes: the wait before it, if any, ends. */
void
eng_span_wait_ends(struct eng *e, uint32_t peer, uint64_t block)
{
	if (e->cfg.trace == NULL || e->wait_since == 0)
		return;
	trace_add(e->cfg.trace, e->wait_kind, e->wait_since, trace_now(), peer,
		  block);
	e->wait_since = 0;
}
