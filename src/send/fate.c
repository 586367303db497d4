/* SPDX-License-Identifier: MIT */
/*
 * fate - what became of each host of a push (see push_int.h).
 *
 * The report is the disk: a host is reported ok only once it said its
 * files are in place (COMPLETE, or an OUTCOME "landed"), and failed only
 * once it cannot land anything of this push: it refused or failed and
 * discarded, it never got the final go, or its daemon said so when asked.
 * A member whose connection is lost after its go is asked again, on a new
 * connection; when a group breaks, every member still running is asked
 * to stop and answers with what it did.
 *
 * Hosts that failed only because the group broke (they lost a neighbour,
 * or were stopped) are reported last, naming the hosts that broke it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "send/push_int.h"

/* After the first failure inside the group, wait this long before asking
 * the others to stop, so that each host that really failed (a dead daemon,
 * a lost link) is reported with its own reason rather than as a casualty. */
#define ABORT_GRACE_MS 300

/* ---------------------------------------------------------------------
 * Progress
 */

static uint64_t held_bytes(const struct push *p, const struct phost *h);

/* What h holds now: the blocks it reported, and those it held already
 * (a delta, a resumed push), which no PROGRESS counts. */
static uint64_t
bytes_held(const struct push *p, const struct phost *h)
{
	uint64_t got = h->held * p->block_size + held_bytes(p, h);

	return got < p->sum->bytes ? got : p->sum->bytes;
}

static void
progress(struct push *p)
{
	struct push_progress pr = {
		.hosts = p->nh, .seconds = push_elapsed(p),
		.bytes_total = p->sum->bytes * p->nh,
		.bytes_done = p->bytes_done,
		.done = p->ndone, .failed = p->nfailed,
	};

	if (p->cfg->progress != NULL)
		p->cfg->progress(p->cfg->ctx, &pr);
}

static void maybe_regroup(struct push *p);

void
push_host_progress(struct phost *h, uint64_t blocks, uint64_t block_us)
{
	struct push *p = h->p;
	uint64_t before = bytes_held(p, h);

	if (h->held_at > 0) {
		h->held_before = h->held;
		h->held_before_at = h->held_at;
	}
	h->held = blocks;
	h->held_at = push_elapsed(p);
	h->block_us = block_us == PROTO_NO_PEER ||
		      block_us == PROTO_BT_SHARED ? 0 : block_us;
	if (block_us == PROTO_BT_SHARED)
		p->shared = true;	/* nobody is judged (daemon/run.c) */
	p->bytes_done += bytes_held(p, h) - before;
	progress(p);
	maybe_regroup(p);
}

static uint64_t
rate_of(const struct push *p, uint64_t block_us)
{
	return block_us > 0 ? (uint64_t)((double)p->block_size * 1e6 /
					 (double)block_us) : 0;
}

/* ---------------------------------------------------------------------
 * Reports
 */

/* Did h fail only because the group broke (it lost a neighbour, or was
 * stopped), rather than being the member rank 0 itself lost? */
static bool
only_a_casualty(const struct push *p, const struct phost *h)
{
	return h->casualty && h != p->suspect;
}

/* The bytes of the stream h held already (the blocks it did not lack). */
static uint64_t
held_bytes(const struct push *p, const struct phost *h)
{
	uint64_t nb = store_stream_blocks(p->st), held;

	if (h->need == NULL || nb == 0)
		return 0;
	held = (nb - bset_count(h->need)) * p->block_size;
	if (!bset_has(h->need, nb - 1))	/* the last block is shorter */
		held -= nb * p->block_size - p->sum->bytes;
	return held;
}

static void
emit(struct push *p, const struct phost *h, const struct phost *as,
     const char *reason, bool sender_fault)
{
	/* what it held, and of that what it took from unfinished copies
	 * (its word, at most what it held) */
	uint64_t held = held_bytes(p, h),
		 resumed = h->resumed < held ? h->resumed : held;
	struct push_report r = {
		.index = as->idx, .host = as->name, .addr = h->addrstr,
		.ok = h->st == HS_DONE, .error = h->error,
		.reason = reason, .seconds = push_elapsed(p),
		.rank = h->rank, .bytes = p->sum->bytes,
		.reused = held - resumed,
		.resumed = resumed,
		.permanent = h->refused, .identical = h->identical,
		.verified = h->st == HS_DONE && p->cfg->verify,
		.sender_fault = sender_fault, .maybe_landed = h->maybe_landed,
		.sender_stalled = h->st == HS_FAILED && h->stalled,
		.dry_run = h->dry, .slow = h->slow,
		.link_rate = rate_of(p, h->block_us),
		.casualty = h->st == HS_FAILED && only_a_casualty(p, h) &&
			    !h->maybe_landed,
	};

	r.regroup = p->regrouping && r.casualty;

	if (p->cfg->slow != NULL && p->cfg->slow[h->idx])
		r.slow = slow_confirm(r.seconds, p->others_done);
	else if (r.ok && r.seconds > p->others_done)
		p->others_done = r.seconds;

	if (r.ok) {
		if (p->sum->ok == 0)
			p->sum->first_ok = r.seconds;
		p->sum->last_ok = r.seconds;
		p->sum->ok++;
		p->sum->reused += r.reused;
		p->sum->resumed += r.resumed;
	} else {
		p->sum->failed++;
	}
	p->sum->seconds = r.seconds;
	if (p->cfg->report != NULL)
		p->cfg->report(p->cfg->ctx, &r);
}

/* Report h, and its other names, once. */
static void
report(struct push *p, struct phost *h, const char *reason,
       bool sender_fault)
{
	const struct phost *a;

	if (h->reported)
		return;
	h->reported = true;
	emit(p, h, h, reason, sender_fault);
	for (a = h->aliases; a != NULL; a = a->next_alias)
		emit(p, h, a, reason, sender_fault);
}

/* The hosts that broke the group: failed members that were not its
 * casualties, and the one rank 0 itself lost. */
static size_t
name_culprits(const struct push *p, char *out, size_t len)
{
	size_t i, n = 0, at = 0;
	const struct phost *h;

	out[0] = '\0';
	for (i = 0; i < p->nh; i++) {
		h = &p->h[i];
		if (h->st != HS_FAILED || h->rank == 0 ||
		    only_a_casualty(p, h))
			continue;
		if (n++ < 3 && at < len)
			at += (size_t)snprintf(out + at, len - at, "%s%s",
					       n > 1 ? ", " : "", h->name);
	}
	if (n > 3 && at < len)
		snprintf(out + at, len - at, " and %zu more", n - 3);
	return n;
}

/* The casualties, last: "aborted: the group lost X" when the hosts that
 * broke it are known; else, when a member broke it without failing (it
 * landed, then could not relay), why we stopped the group; else what they
 * said themselves.  (A casualty may have lost a neighbour that we had
 * just stopped before our word reached it.) */
static void
report_casualties(struct push *p)
{
	char culprits[300], reason[sizeof(p->abort_why) + 16];
	bool named = name_culprits(p, culprits, sizeof(culprits)) > 0;
	bool stopped = p->aborting && !p->sender_fault;
	bool known = named || stopped;
	size_t i;

	if (named)
		snprintf(reason, sizeof(reason), "aborted: the group lost %s",
			 culprits);
	else if (stopped)
		snprintf(reason, sizeof(reason), "aborted: %s", p->abort_why);
	for (i = 0; i < p->nh; i++) {
		struct phost *h = &p->h[i];

		if (h->st != HS_FAILED || h->reported)
			continue;
		report(p, h, known ? reason : h->reason,
		       !known && p->sender_fault);
	}
}

/* ---------------------------------------------------------------------
 * Outcomes
 */

void
push_host_done(struct phost *h)
{
	struct push *p = h->p;

	if (h->st == HS_DONE || h->st == HS_FAILED || h->st == HS_ALIAS)
		return;
	if (HS_UNDECIDED(h->st))
		p->undecided--;
	h->st = HS_DONE;
	p->unfinished--;
	p->ndone += 1;
	p->bytes_done += p->sum->bytes - bytes_held(p, h);
	report(p, h, NULL, false);
	progress(p);
	push_wait_last(p);
	if (p->undecided == 0)
		push_maybe_start(p);
	push_maybe_finish(p);
}

/* Had we been silent to h's daemon for nearly the timeout when it
 * failed?  Then it may have given up on us (this sender was frozen or
 * starved: the lease rule, conn_lease_lost(), seen from this side), and
 * its failure says nothing of its own.  Says so in its reason. */
static bool
note_our_silence(struct phost *h)
{
	uint64_t silence;
	size_t at = strlen(h->reason);

	if (h->c == NULL ||
	    !conn_lease_lost(h->c, h->p->cfg->timeout_ms, &silence))
		return false;
	snprintf(h->reason + at, sizeof(h->reason) - at, "; this sender had "
		 "been silent to it for %llu ms (timeout %u ms): it may have "
		 "given up on the sender", (unsigned long long)silence,
		 h->p->cfg->timeout_ms);
	return true;
}

/* The one way a host fails.  Casualties are reported at the end. */
static void
host_fail(struct phost *h, int error, bool casualty, const char *reason)
{
	struct push *p = h->p;
	enum hstate was = h->st;

	if (was == HS_DONE || was == HS_FAILED || was == HS_ALIAS)
		return;
	if (reason != h->reason)
		snprintf(h->reason, sizeof(h->reason), "%s", reason);
	h->stalled = !casualty && note_our_silence(h);
	h->st = HS_FAILED;
	h->error = error;
	h->casualty = casualty;
	conn_free(h->c);
	h->c = NULL;
	if (HS_UNDECIDED(was))
		p->undecided--;
	p->unfinished--;
	p->nfailed++;
	if (!casualty)
		report(p, h, h->reason, false);
	progress(p);
	if (was >= HS_RUNNING)
		push_abort_group(p, h, h->reason);
	if (was == HS_ABORTING)
		push_wait_stragglers(p);
	if (HS_UNDECIDED(was))
		push_maybe_start(p);
	push_maybe_finish(p);
}

void
push_host_failed(struct phost *h, int error, uint32_t blames,
		 const char *fmt, ...)
{
	char reason[sizeof(h->reason)];
	bool casualty = blames != PROTO_NO_PEER && blames != 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (casualty && h == h->p->suspect)
		h->p->suspect = NULL;	/* it lost a neighbour first */
	host_fail(h, error, casualty, reason);
}

enum push_fate
push_fate_of_loss(enum hstate st, bool got_go)
{
	if (st == HS_DONE || st == HS_FAILED || st == HS_ALIAS)
		return PF_NONE;
	if (st == HS_QUERY)
		return PF_FAILED_MAYBE_LANDED;
	if ((st != HS_RUNNING && st != HS_ABORTING) || !got_go)
		return PF_FAILED;
	return PF_ASK;
}

void
push_host_lost(struct phost *h, int error, const char *why)
{
	char reason[sizeof(h->reason)];

	switch (push_fate_of_loss(h->st, h->got_go)) {
	case PF_NONE:
		conn_free(h->c);	/* it said all it will say */
		h->c = NULL;
		push_maybe_finish(h->p);
		return;
	case PF_FAILED_MAYBE_LANDED:
		snprintf(reason, sizeof(reason), "%.200s; then its daemon "
			 "could not be asked whether its copy landed (%.200s)",
			 h->reason, why);
		h->maybe_landed = true;
		host_fail(h, h->error, false, reason);
		return;
	case PF_ASK:	/* it may have landed, and its word be lost */
		snprintf(h->reason, sizeof(h->reason), "%s", why);
		h->error = error;
		conn_free(h->c);
		h->c = NULL;
		h->st = HS_QUERY;
		push_abort_group(h->p, h, why);
		push_host_connect(h);
		return;
	default:
		host_fail(h, error, false, why);
	}
}

enum push_fate
push_fate_of_answer(enum hstate st, bool suspect, uint64_t outcome)
{
	if (outcome == OUTCOME_LANDED)
		return PF_DONE;
	if (st == HS_QUERY)
		return outcome == OUTCOME_DISCARDED ? PF_FAILED
						    : PF_FAILED_MAYBE_LANDED;
	return suspect ? PF_FAILED : PF_CASUALTY;
}

void
push_host_outcome(struct phost *h, uint64_t outcome)
{
	struct push *p = h->p;
	char reason[sizeof(h->reason)];
	enum push_fate f = push_fate_of_answer(h->st, h == p->suspect,
					       outcome);

	if (f == PF_DONE) {
		push_host_done(h);
	} else if (h->st == HS_QUERY) {
		snprintf(reason, sizeof(reason), "%.300s%s", h->reason,
			 f == PF_FAILED ? ""
			 : " (its daemon does not know the job now)");
		h->maybe_landed = f == PF_FAILED_MAYBE_LANDED;
		host_fail(h, h->error, false, reason);
	} else if (f == PF_FAILED) {
		host_fail(h, -ECONNRESET, false, p->suspect_why);
	} else {
		snprintf(reason, sizeof(reason), "aborted: %.400s",
			 p->abort_why);
		host_fail(h, -ECANCELED, true, reason);
	}
	push_wait_stragglers(p);
}

void
push_host_alias(struct phost *h, struct phost *first)
{
	struct push *p = h->p;

	log_warn("%s and %s are the same host (%s): copied to once, "
		 "reported under both names", first->name, h->name,
		 first->addrstr);
	if (HS_UNDECIDED(h->st))
		p->undecided--;
	p->unfinished--;
	h->st = HS_ALIAS;
	h->alias_of = first;
	h->next_alias = first->aliases;
	first->aliases = h;
	if (first->reported)	/* its outcome is known: say it again */
		emit(p, first, h, first->st == HS_DONE ? NULL : first->reason,
		     false);
	push_maybe_start(p);
	push_maybe_finish(p);
}

/* ---------------------------------------------------------------------
 * A broken group
 */

static void
send_abort(struct phost *h, const char *text)
{
	struct frame f = { .type = MSG_ABORT, .len = strlen(text) };

	if (h->c == NULL || conn_send_copy(h->c, &f, text) < 0) {
		push_host_lost(h, -EPIPE, "cannot ask it to stop");
		return;
	}
	h->st = HS_ABORTING;
}

/* Ask every member still running to stop; each answers with what it did
 * (push_host_outcome). */
static void
abort_now(uv_timer_t *t)
{
	struct push *p = t->data;
	char culprits[300], text[sizeof(p->abort_why)];
	size_t i;

	if (name_culprits(p, culprits, sizeof(culprits)) > 0)
		snprintf(text, sizeof(text), "the group lost %s", culprits);
	else
		snprintf(text, sizeof(text), "%s", p->abort_why);
	snprintf(p->abort_why, sizeof(p->abort_why), "%s", text);
	p->abort_sent = uv_hrtime();
	for (i = 0; i < p->nh; i++)
		if (p->h[i].st == HS_RUNNING)
			send_abort(&p->h[i], text);
	push_wait_stragglers(p);
}

void
push_abort_group(struct push *p, const struct phost *cause, const char *why)
{
	if (p->aborting)
		return;
	p->aborting = true;
	p->sender_fault = cause == NULL && p->suspect == NULL;
	snprintf(p->abort_why, sizeof(p->abort_why), "%s", why);
	log_info("group broken (%s: %s); stopping it in %d ms",
		 cause != NULL ? cause->name : "sender", why, ABORT_GRACE_MS);
	uv_timer_start(&p->aborter, abort_now, ABORT_GRACE_MS, 0);
}

/* ---------------------------------------------------------------------
 * The end
 */

static void
on_timer_closed(uv_handle_t *h)
{
}

static void
finish_now(uv_timer_t *t)
{
	struct push *p = t->data;
	size_t i;

	if (p->trace != NULL)	/* ours, last */
		p->cfg->trace(p->cfg->ctx, SIZE_MAX, 0, p->trace, 0, 0);
	for (i = 0; i < p->nh; i++) {
		conn_free(p->h[i].c);
		p->h[i].c = NULL;
	}
	if (p->eng != NULL)
		p->sum->sent += eng_bytes_sent(p->eng);
	eng_free(p->eng);
	p->eng = NULL;
	vb_free(p->vb);
	p->vb = NULL;
	uv_close((uv_handle_t *)&p->finisher, on_timer_closed);
	uv_close((uv_handle_t *)&p->aborter, on_timer_closed);
	uv_close((uv_handle_t *)&p->grace, on_timer_closed);
	uv_close((uv_handle_t *)&p->tracer, on_timer_closed);
	uv_close((uv_handle_t *)&p->starter, on_timer_closed);
}

/* Members' timelines come when asked: wait for those of the members
 * still connected while they come, this long at most without one. */
#define TRACE_WAIT_MS 3000
#define TRACE_ASKS 4

static void
on_trace_wait(uv_timer_t *t)
{
	struct push *p = t->data;

	log_warn("--trace: some members sent no timeline within %d ms",
		 TRACE_WAIT_MS);
	p->tracer_on = false;
	p->trace_given_up = true;
	push_maybe_finish(p);
}

static bool
trace_due(const struct phost *h)
{
	return h->rank > 0 && h->c != NULL && !h->traced;
}

/* Ask members for their timelines until TRACE_ASKS are asked and not
 * yet heard (all at once, the timelines of a large group met on our
 * link and overflowed its queue). */
static void
ask_traces(struct push *p, size_t asked)
{
	struct frame ask = { .type = MSG_TRACE };
	size_t i;

	for (i = 0; i < p->nh && asked < TRACE_ASKS; i++) {
		if (trace_due(&p->h[i]) && !p->h[i].trace_asked) {
			p->h[i].trace_asked = true;
			asked++;
			conn_send_copy(p->h[i].c, &ask, NULL);
		}
	}
}

/* Every member is done: ask those that may still send a timeline (not
 * before, see TRACE in proto.h), and wait for them while they come, up
 * to TRACE_WAIT_MS without one. */
static bool
traces_due(struct push *p)
{
	size_t i, due = 0, asked = 0;

	if (p->cfg->trace == NULL || p->trace_given_up)
		return false;
	for (i = 0; i < p->nh; i++) {
		due += trace_due(&p->h[i]);
		asked += trace_due(&p->h[i]) && p->h[i].trace_asked;
	}
	if (due == 0)
		return false;
	ask_traces(p, asked);
	if (!p->tracer_on || due < p->traces_due) {
		p->tracer_on = true;
		p->traces_due = due;
		uv_timer_start(&p->tracer, on_trace_wait, TRACE_WAIT_MS, 0);
	}
	return true;
}

void
push_maybe_finish(struct push *p)
{
	if (p->finishing || p->unfinished > 0 || p->sums_busy ||
	    p->digest_busy)
		return;
	if (p->eng != NULL && !p->eng_done && !p->aborting)
		return;
	if (traces_due(p))
		return;
	report_casualties(p);
	p->finishing = true;
	uv_timer_stop(&p->tracer);
	uv_timer_start(&p->finisher, finish_now, 0, 0);
}

/* ---------------------------------------------------------------------
 * Slow members (cfg.regroup)
 */

/* Look at the members' block times at most every n ms in a group of n,
 * and at least this often (as PROGRESS comes). */
#define REGROUP_LOOK_MS 100

static bool
may_regroup(const struct push *p)
{
	return p->cfg->regroup && !p->aborting && !p->finishing &&
	       !p->shared &&
	       p->started && p->cfg->racks == NULL &&
	       p->group == TRANSPORT_TCP &&
	       (p->cfg->alg == SCHED_BINOMIAL || p->cfg->alg == SCHED_CHAIN);
}

/* Stop the group at once (nothing failed: no grace) for the caller to
 * start again with the slow members last. */
static void
regroup(struct push *p, ssize_t nslow, uint64_t median_us)
{
	p->regrouping = true;
	p->aborting = true;
	p->sender_fault = false;
	p->sum->link_rate = rate_of(p, median_us);
	snprintf(p->abort_why, sizeof(p->abort_why), "stopped to send again "
		 "with the %zd slow host%s last", nslow, nslow > 1 ? "s" : "");
	log_info("%zd slow member%s after %.3f s (the median block took "
		 "%llu us): %s", nslow, nslow > 1 ? "s" : "", push_elapsed(p),
		 (unsigned long long)median_us, p->abort_why);
	uv_timer_start(&p->aborter, abort_now, 0, 0);
}

/* Blocks per second h took between its last two reports (so that the
 * wait for its first block does not count); 0 if not known. */
static double
eng_pace_of(const struct phost *h)
{
	double s = h->held_at - h->held_before_at;

	return h->held_before_at > 0 && s > 0 ?
	       (double)(h->held - h->held_before) / s : 0;
}

/* The members still running, in rank order, into g's arrays (n of them:
 * phosts in m), and in a chain those done too (done[i]: their times are
 * the group's before the slow one, whom the members behind it cannot
 * tell apart from themselves); false if one is neither running nor done,
 * or fewer than 3 run. */
static bool
running_members(struct push *p, struct slow_group *g, struct phost **m,
		uint64_t *bt, uint64_t *held, double *pace, bool *done)
{
	size_t running = 0;
	uint32_t r;

	g->n = 0;
	for (r = 1; r < p->members; r++) {
		struct phost *h = p->by_rank[r];

		if (h == NULL || (h->st == HS_DONE && !g->chain))
			continue;
		if (h->st != HS_RUNNING && h->st != HS_DONE)
			return false;
		if (h->st == HS_DONE && h->block_us == 0)
			continue;	/* done before it measured */
		done[g->n] = h->st == HS_DONE;
		running += !done[g->n];
		m[g->n] = h;
		bt[g->n] = h->block_us;
		pace[g->n] = eng_pace_of(h);
		held[g->n++] = h->held;
	}
	return running >= 3;
}

/* The rank that sends `rank` half its blocks or more under this push's
 * schedule of k blocks (sched_main_source), or UINT32_MAX. */
static uint32_t
main_feeder(const struct push *p, uint32_t rank, uint64_t k)
{
	struct sched *s = NULL;
	uint32_t peer;

	if (sched_new(p->cfg->alg, p->members, rank, k, &s) < 0 ||
	    !sched_main_source(s, &peer))
		peer = UINT32_MAX;
	sched_free(s);
	return peer;
}

/* The index of `rank` in m[0..n), which is in rank order, or
 * SLOW_NO_FEEDER. */
static size_t
index_of_rank(struct phost *const *m, size_t n, uint32_t rank)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (m[mid]->rank < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && m[lo]->rank == rank ? lo : SLOW_NO_FEEDER;
}

/* For each of the g->n members in m (rank order), the index of the one
 * that feeds it half its blocks or more in the binomial pipeline (slow.h),
 * into f; worked out once per push.  False if it is not known (another
 * schedule: the chain has its own rule; out of memory). */
static bool
feeders_of(struct push *p, const struct slow_group *g, struct phost **m,
	   size_t *f)
{
	uint32_t r;
	size_t i;

	if (p->cfg->alg != SCHED_BINOMIAL)
		return false;
	if (p->feeders == NULL) {
		p->feeders = malloc(p->members * sizeof(*p->feeders));
		if (p->feeders == NULL)
			return false;
		for (r = 0; r < p->members; r++)
			p->feeders[r] = main_feeder(p, r, g->blocks);
	}
	for (i = 0; i < g->n; i++)
		f[i] = index_of_rank(m, g->n, p->feeders[m[i]->rank]);
	return true;
}

static void
judge_members(struct push *p, struct phost **m, uint64_t *bt,
	      uint64_t *held, double *pace, bool *done, enum slow_verdict *v)
{
	uint64_t bs = p->block_size, median;
	struct slow_group g = {
		.block_us = bt, .held = held, .pace = pace,
		.blocks = bs ? (p->sum->bytes + bs - 1) / bs : 0,
		.restart_us = (uint64_t)(p->sum->setup * 1e6),
		.chain = p->cfg->alg == SCHED_CHAIN,
	};
	ssize_t nslow;
	size_t i, *f;

	if (!running_members(p, &g, m, bt, held, pace, done))
		return;
	g.done = done;
	g.head = g.chain && m[0]->rank == 1 && !done[0];
	f = malloc(g.n * sizeof(*f));
	if (f != NULL && feeders_of(p, &g, m, f))
		g.feeder = f;
	nslow = slow_find(&g, v, &median);
	free(f);
	if (nslow <= 0)
		return;
	for (i = 0; i < g.n; i++) {
		if (done[i])
			continue;
		m[i]->slow = v[i];
		if (v[i] != SLOW_NO)
			log_debug("%s %s: blocks of %llu us, %llu held, "
				  "%.0f a second", m[i]->name,
				  v[i] == SLOW_YES ? "slow" : "may be slow",
				  (unsigned long long)bt[i],
				  (unsigned long long)held[i], pace[i]);
	}
	regroup(p, nslow, median);
}

static void
maybe_regroup(struct push *p)
{
	uint64_t now = uv_now(&p->loop);
	size_t n = p->members;
	struct phost **m;
	uint64_t *bt, *held;
	double *pace;
	bool *done;
	enum slow_verdict *v;

	if (!may_regroup(p) || now - p->regroup_checked <
	    (n < REGROUP_LOOK_MS ? n : REGROUP_LOOK_MS))
		return;
	p->regroup_checked = now;
	m = malloc(n * sizeof(*m));
	bt = malloc(n * sizeof(*bt));
	held = malloc(n * sizeof(*held));
	pace = malloc(n * sizeof(*pace));
	done = malloc(n * sizeof(*done));
	v = malloc(n * sizeof(*v));
	if (m != NULL && bt != NULL && held != NULL && pace != NULL &&
	    done != NULL && v != NULL)
		judge_members(p, m, bt, held, pace, done, v);
	free(v);
	free(done);
	free(pace);
	free(held);
	free(bt);
	free(m);
}
