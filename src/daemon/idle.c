/* SPDX-License-Identifier: MIT */
/*
 * idle - the idle watch of a job on a daemon (transfer_int.h): a job that
 * makes no progress for the daemon's --job-idle-timeout is dropped, so
 * that a sender (frozen, lost in a bug, or holding the key and nothing
 * else in mind) cannot keep a job's slot and space for its own timeout,
 * up to 24 hours, by answering keepalives.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/engine.h"
#include "util/log.h"
#include "daemon/transfer_int.h"

/* Did the job move since the last look?  The daemon's own set-up counts
 * (its time is not the sender's), and so does every block received or
 * handed on to a neighbour. */
static bool
moved(struct transfer *j)
{
	uint64_t held, sent;

	if (j->work_busy)
		return true;
	if (j->eng == NULL)
		return false;
	held = eng_held(j->eng);
	sent = eng_bytes_sent(j->eng);
	if (held == j->seen_held && sent == j->seen_sent)
		return false;
	j->seen_held = held;
	j->seen_sent = sent;
	return true;
}

/* What a job that made no progress waited for, for its FAIL. */
static const char *
idle_wait(const struct transfer *j)
{
	if (j->state == JS_HAVE)
		return "it held files that may be identical and waited for "
		       "the sender's sums";
	if (j->state == JS_SAME)
		return "it held the files already and waited for its end";
	if (j->state == JS_READY)
		return "it had accepted and waited for START";
	if (j->state == JS_DRY)
		return "a dry run, it waited for its end";
	if (j->landed)
		return "it had landed and waited to pass its last blocks on";
	if (j->complete)
		return "it held every block and waited for the sender's go";
	return "it ran, but no block came or went";
}

/* Idle for idle_ms: dropped as any failure, with a FAIL that names the
 * daemon's option; its temporaries go, its connection lingers (transfer_let_go)
 * and its slot is freed at once.  A job that ended and waits for its
 * sender to close (or to ask for its TRACE) is let go. */
static void
idle_drop(struct transfer *j, uint64_t idle_ms)
{
	double secs = idle_ms / 1000.0, cap = j->env->job_idle_ms / 1000.0;
	char why[400];

	if (j->state != JS_ENDED) {
		snprintf(why, sizeof(why), "no progress for %.1f s: %s, with "
			 "nothing but keepalives from the sender; this daemon "
			 "drops such a job after its --job-idle-timeout "
			 "(%.1f s)", secs, idle_wait(j), cap);
		transfer_idle_fail(j, why);
		return;
	}
	if (!j->reaped || j->ctl == NULL || j->stopping)
		return;		/* released and let go on their own */
	log_info("job %s: over, but its sender neither closed nor said "
		 "anything for %.1f s: let go (--job-idle-timeout %.1f s)",
		 j->tag, secs, cap);
	transfer_let_go(j);
}

static void
on_idle_tick(uv_timer_t *t)
{
	struct transfer *j = t->data;
	uint64_t now = uv_now(t->loop);

	if (moved(j))
		j->idle_from = now;
	if (now - j->idle_from >= j->env->job_idle_ms)
		idle_drop(j, now - j->idle_from);
}

void
transfer_idle_init(struct transfer *j)
{
	unsigned cap = j->env->job_idle_ms, tick = cap / 4;

	uv_timer_init(j->env->loop, &j->idle);
	j->idle.data = j;
	j->idle_from = uv_now(j->env->loop);
	if (cap > 0)	/* found out between cap and 1.25 cap */
		uv_timer_start(&j->idle, on_idle_tick, tick ? tick : 1,
			       tick ? tick : 1);
}

void
transfer_idle_progress(struct transfer *j)
{
	j->idle_from = uv_now(j->env->loop);
}
