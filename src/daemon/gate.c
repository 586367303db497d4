/* SPDX-License-Identifier: MIT */
/*
 * gate - admission of unauthenticated connections (see gate.h).
 */
#include "daemon/gate.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "util/log.h"
#include "util/net.h"

#define GATE_LOG_MS 1000	/* report drops at most this often */

static void on_due(uv_timer_t *t);

struct gate {
	struct gate_cfg cfg;
	uv_timer_t timer;
	struct gate_entry *head, *tail;	/* oldest first */
	unsigned n;
	/* drops since the last report, by cause */
	unsigned by_host, by_total, by_deadline, accept_errors;
	int accept_status;
	char last_host[NET_ADDRSTRLEN];
	uint64_t logged_at;
};

static void
unlink_entry(struct gate *g, struct gate_entry *e)
{
	if (e->prev != NULL)
		e->prev->next = e->next;
	else
		g->head = e->next;
	if (e->next != NULL)
		e->next->prev = e->prev;
	else
		g->tail = e->prev;
	e->prev = e->next = NULL;
	g->n--;
}

/* Say what was dropped since the last report, if anything. */
static void
gate_report(struct gate *g)
{
	if (g->by_host + g->by_total + g->by_deadline > 0)
		log_warn("dropped unauthenticated connections: %u over %u from "
			 "one address (last %s), %u over %u in all, %u not "
			 "authenticated within %u ms", g->by_host,
			 g->cfg.max_per_host, g->last_host, g->by_total,
			 g->cfg.max_total, g->by_deadline, g->cfg.deadline_ms);
	if (g->accept_errors > 0)
		log_warn("%u connections could not be accepted: %s",
			 g->accept_errors, uv_strerror(g->accept_status));
	g->by_host = g->by_total = g->by_deadline = g->accept_errors = 0;
	g->logged_at = uv_now(g->cfg.loop);
}

static void
maybe_report(struct gate *g)
{
	if (uv_now(g->cfg.loop) - g->logged_at >= GATE_LOG_MS)
		gate_report(g);
}

static void
evict(struct gate *g, struct gate_entry *e, unsigned *cause)
{
	net_format_host(&e->host, g->last_host, sizeof(g->last_host));
	(*cause)++;
	g->cfg.evict(g->cfg.ctx, e);	/* calls gate_leave(e) */
}

static bool
drops_unreported(const struct gate *g)
{
	return g->by_host + g->by_total + g->by_deadline +
	       g->accept_errors > 0;
}

/* Arm the timer for the next thing due, the oldest entry's deadline or
 * the next report of drops, or stop it: an idle daemon never wakes. */
static void
rearm(struct gate *g)
{
	uint64_t now = uv_now(g->cfg.loop), due = UINT64_MAX;

	if (g->head != NULL)
		due = g->head->since + g->cfg.deadline_ms;
	if (drops_unreported(g) && g->logged_at + GATE_LOG_MS < due)
		due = g->logged_at + GATE_LOG_MS;
	if (due == UINT64_MAX)
		uv_timer_stop(&g->timer);
	else
		uv_timer_start(&g->timer, on_due, due > now ? due - now : 0, 0);
}

/* Drop those past the deadline, report drops, arm for the next. */
static void
on_due(uv_timer_t *t)
{
	struct gate *g = t->data;
	uint64_t now = uv_now(g->cfg.loop);

	while (g->head != NULL && now - g->head->since >= g->cfg.deadline_ms)
		evict(g, g->head, &g->by_deadline);
	maybe_report(g);
	rearm(g);
}

int
gate_new(const struct gate_cfg *cfg, struct gate **out)
{
	struct gate *g = calloc(1, sizeof(*g));

	*out = NULL;
	if (g == NULL)
		return -ENOMEM;
	g->cfg = *cfg;
	uv_timer_init(cfg->loop, &g->timer);
	g->timer.data = g;
	*out = g;
	return 0;
}

static bool
same_host(const struct gate_entry *e, const struct sockaddr_storage *host)
{
	return net_equal(&e->host, host);
}

/* The oldest entry from host, and how many there are. */
static struct gate_entry *
oldest_from(struct gate *g, const struct sockaddr_storage *host,
	    unsigned *count)
{
	struct gate_entry *e, *first = NULL;

	*count = 0;
	for (e = g->head; e != NULL; e = e->next) {
		if (!same_host(e, host))
			continue;
		if (first == NULL)
			first = e;
		(*count)++;
	}
	return first;
}

void
gate_admit(struct gate *g, struct gate_entry *e,
	   const struct sockaddr_storage *from)
{
	struct gate_entry *old;
	unsigned count;

	net_without_port(from, &e->host);
	old = oldest_from(g, &e->host, &count);
	if (count >= g->cfg.max_per_host)
		evict(g, old, &g->by_host);
	else if (g->n >= g->cfg.max_total)
		evict(g, g->head, &g->by_total);
	e->since = uv_now(g->cfg.loop);
	e->next = NULL;
	e->prev = g->tail;
	if (g->tail != NULL)
		g->tail->next = e;
	else
		g->head = e;
	g->tail = e;
	g->n++;
	maybe_report(g);
	rearm(g);
}

void
gate_leave(struct gate *g, struct gate_entry *e)
{
	unlink_entry(g, e);
	rearm(g);
}

void
gate_accept_failed(struct gate *g, int status)
{
	g->accept_errors++;
	g->accept_status = status;
	maybe_report(g);
	rearm(g);
}

static void
on_timer_closed(uv_handle_t *h)
{
	free(h->data);
}

void
gate_close(struct gate *g)
{
	if (g == NULL)
		return;
	gate_report(g);
	uv_close((uv_handle_t *)&g->timer, on_timer_closed);
}
