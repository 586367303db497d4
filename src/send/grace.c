/* SPDX-License-Identifier: MIT */
/*
 * grace - hosts that fall silent while the others are done (see
 * push_int.h): a suspect (silent in the attempt before) that has not
 * answered when every other host is ready (or, none being ready, whose
 * daemon has not answered the handshake), and a member that has not
 * answered its ABORT when the rest of a broken group has, are waited
 * for push_grace_ms(), then failed, so that a stopped or hung daemon
 * costs the push one -t, not a wait in every attempt after.  In a
 * retry, one or two late handshakes or silent set-ups of hosts a later
 * attempt would send to again (push_cfg.expendable) get the same grace.
 */
#include <errno.h>
#include <stdio.h>

#include "send/push_int.h"

/* ---------------------------------------------------------------------
 * Suspects (push_cfg.suspect): hosts that went silent in the attempt
 * before do not hold the others' set-up up
 */

static bool
is_suspect(const struct push *p, const struct phost *h)
{
	return p->cfg->suspect != NULL && p->cfg->suspect[h->idx];
}

/* Has h's daemon not answered the handshake yet (a stopped daemon's
 * kernel still takes the connection)? */
static bool
in_handshake(const struct phost *h)
{
	return h->st == HS_CONNECTING || h->st == HS_AUTH;
}

/* A host not suspected whose handshake or set-up is late, and that a
 * retry would send to again were it cut short (push_cfg.expendable). */
static bool
is_late(const struct push *p, const struct phost *h)
{
	return p->cfg->expendable != NULL && p->cfg->expendable[h->idx] &&
	       !is_suspect(p, h) && (in_handshake(h) || h->st == HS_OFFERED);
}

/* The late hosts whose daemons set the job up send a keepalive every
 * PROTO_SETUP_NOP_MS as they work: one silent for the grace (since it
 * was last heard) has stopped, and fails so (-ETIME, as a set-up that
 * lapsed).  One that works on, however long, is not cut. */
static void
bound_late_setups(struct push *p, unsigned ms)
{
	size_t i;

	for (i = 0; i < p->nh; i++)
		if (is_late(p, &p->h[i]) && p->h[i].st == HS_OFFERED)
			push_bound_setup(&p->h[i], ms);
}

/* The grace is over: the suspects still undecided fail, and the group
 * starts without them (the last one's failure starts it).  With no other
 * host ready (p->grace_handshake) only those whose daemon has not
 * answered the handshake: one that did is working on its set-up. */
static void
drop_suspects(uv_timer_t *t)
{
	struct push *p = t->data;
	unsigned ms = (unsigned)uv_timer_get_repeat(t);
	size_t i;

	uv_timer_stop(t);
	for (i = 0; i < p->nh && !p->started; i++) {
		struct phost *h = &p->h[i];

		if (p->grace_late && is_late(p, h) && in_handshake(h))
			push_host_failed(h, -ETIME, PROTO_NO_PEER, "its daemon "
					 "had not answered the handshake %u ms "
					 "after the other hosts were ready: "
					 "left for the next attempt", ms);
		if (!HS_UNDECIDED(h->st) || h->st == HS_RESOLVING ||
		    !is_suspect(p, h))
			continue;
		if (!p->grace_handshake)
			push_host_failed(h, -ETIME, PROTO_NO_PEER, "still "
					 "silent: it had not answered %u ms "
					 "after the other hosts were ready, "
					 "and it went silent in the attempt "
					 "before", ms);
		else if (in_handshake(h))
			push_host_failed(h, -ETIME, PROTO_NO_PEER, "still "
					 "silent: its daemon had not answered "
					 "the handshake %u ms into the attempt, "
					 "and it went silent in the attempt "
					 "before", ms);
	}
}

/* Suspects undecided, at most, for a retry with no other host ready to
 * cut their handshakes short. */
#define ALONE_SUSPECTS 2

void
push_wait_suspects(struct push *p)
{
	size_t i, undecided = 0, accepted = 0, suspects = 0, late = 0;
	uint64_t ms = (uv_hrtime() - p->t0) / 1000000;

	if ((p->cfg->suspect == NULL && p->cfg->expendable == NULL) ||
	    p->grace_on)
		return;
	for (i = 0; i < p->nh; i++) {
		if (is_suspect(p, &p->h[i])) {
			suspects += HS_UNDECIDED(p->h[i].st);
			continue;
		}
		late += is_late(p, &p->h[i]);
		undecided += HS_UNDECIDED(p->h[i].st);
		accepted += p->h[i].st == HS_ACCEPTED;
	}
	/* one or two late handshakes among hosts all ready, not more: a
	 * hundred handshakes at once on a loaded machine take their time
	 * (the same with none ready and only a suspect or two; bench-scale:
	 * live daemons cut so) */
	p->grace_late = late > 0 && late == undecided &&
			late <= ALONE_SUSPECTS && accepted > 0;
	if (p->grace_late)
		undecided = 0;
	if (undecided > 0 || (accepted == 0 && suspects > ALONE_SUSPECTS) ||
	    suspects + late == 0)
		return;
	/* none ready (the others failed, or there are none): nobody to
	 * measure by, but a daemon that answers at all answers the
	 * handshake at once */
	p->grace_handshake = accepted == 0;
	/* what a silent handshake costs: the first of its two bounds */
	ms = push_grace_ms(accepted > 0 ? ms : 0,
			   p->cfg->connect_timeout_ms < p->cfg->timeout_ms
			   ? p->cfg->connect_timeout_ms : p->cfg->timeout_ms);
	p->grace_on = true;
	if (p->grace_late)
		bound_late_setups(p, (unsigned)ms);
	/* the repeat only carries the grace to drop_suspects's message */
	uv_timer_start(&p->grace, drop_suspects, ms, ms);
}

/* ---------------------------------------------------------------------
 * Stragglers of a broken group: asked to stop, not answering
 */

/* The grace is over: members asked to stop that still have not answered
 * have gone silent (stopped, hung), and fail so; one that got its go may
 * have landed, and its daemon is asked anew (push_host_lost: QUERY), as
 * when -t finds it out, only sooner. */
static void
cut_stragglers(uv_timer_t *t)
{
	struct push *p = t->data;
	unsigned ms = (unsigned)uv_timer_get_repeat(t);
	char why[256];
	size_t i;

	uv_timer_stop(t);
	for (i = 0; i < p->nh; i++) {
		struct phost *h = &p->h[i];

		if (h->st != HS_ABORTING)
			continue;
		snprintf(why, sizeof(why), "the daemon at %s said nothing for "
			 "%u ms after it was asked to stop, when the other "
			 "members had answered: a hung daemon, or one starved "
			 "of CPU", h->addrstr, ms);
		if (h->got_go)
			push_host_lost(h, -ETIMEDOUT, why);
		else
			push_host_failed(h, -ETIMEDOUT, PROTO_NO_PEER, "%s",
					 why);
	}
}

void
push_wait_stragglers(struct push *p)
{
	size_t i, waiting = 0, group = p->members > 0 ? p->members - 1 : 0;
	uint64_t ms;

	/* a regroup's slow members are slow to answer, not hung */
	if (p->abort_sent == 0 || p->grace_on || p->regrouping)
		return;
	for (i = 0; i < p->nh; i++)
		waiting += p->h[i].st == HS_ABORTING;
	if (waiting == 0 || waiting >= group ||
	    waiting > (group > STRAGGLERS_PART ? group / STRAGGLERS_PART : 1))
		return;
	ms = push_grace_ms((uv_hrtime() - p->abort_sent) / 1000000,
			   p->cfg->timeout_ms);
	p->grace_on = true;
	/* the repeat only carries the grace to cut_stragglers's message */
	uv_timer_start(&p->grace, cut_stragglers, ms, ms);
}

/* ---------------------------------------------------------------------
 * The last members of a group whose others have landed
 */

/* Members still running once the others are done, at most: a chain's
 * tail ends a few blocks after the member before it, and is not judged
 * sooner for that. */
#define LAST_RUNNING 2

void
push_settle_patience(struct push *p)
{
	/* members send keepalives every sixth of the job's -t: three of
	 * them at least */
	unsigned bound = p->cfg->first_timeout_ms > p->cfg->timeout_ms / 2
			 ? p->cfg->first_timeout_ms : p->cfg->timeout_ms / 2;
	size_t i, suspects = 0;

	if (p->cfg->suspect == NULL || p->cfg->first_timeout_ms == 0 ||
	    bound >= p->cfg->timeout_ms)
		return;
	for (i = 0; i < p->nh; i++) {
		const struct phost *h = &p->h[i];

		if (!is_suspect(p, h))
			continue;
		if (h->st != HS_FAILED ||
		    (h->error != -ETIME && h->error != -ETIMEDOUT))
			return;	/* it answered: maybe overloaded */
		suspects++;
	}
	if (suspects == 0)
		return;
	log_info("the %zu host%s silent in the attempt before %s still "
		 "silent: -t back to %u ms", suspects, suspects == 1 ? "" : "s",
		 suspects == 1 ? "is" : "are", bound);
	for (i = 0; i < p->nh; i++)
		if (p->h[i].st == HS_RUNNING)
			conn_keepalive_tune(p->h[i].c, 0, bound);
}

void
push_wait_last(struct push *p)
{
	size_t i, running = 0, group = p->members > 0 ? p->members - 1 : 0;
	unsigned ms;

	if (p->aborting || p->regrouping || p->last_watched)
		return;
	for (i = 0; i < p->nh; i++)
		running += p->h[i].st == HS_RUNNING;
	if (running == 0 || running >= group || running > LAST_RUNNING)
		return;
	p->last_watched = true;
	/* more than a live daemon's keepalive interval (a sixth of -t) */
	ms = (unsigned)push_grace_ms(0, p->cfg->timeout_ms);
	for (i = 0; i < p->nh; i++)
		if (p->h[i].st == HS_RUNNING)
			conn_keepalive_tune(p->h[i].c, 0, ms);
}
