/* SPDX-License-Identifier: MIT */
/*
 * retry - which hosts a push sends to again, and how patiently (see
 * push.h).  Pure: the sender's command line applies it to each host's
 * report.
 */
#include "send/push.h"

#include <errno.h>

int
push_retry_bound(const struct push_report *r, int retries)
{
	if ((r->error == -ECONNREFUSED || r->error == -ETIME) && retries > 1)
		return 1;	/* no daemon there, or a hung one: once more */
	return retries;
}

bool
push_may_retry(const struct push_report *r, bool last_attempt, int retries,
	       uint8_t *faults)
{
	if (r->ok || last_attempt || r->permanent)
		return false;
	if ((r->casualty && !r->sender_fault) || r->sender_stalled)
		return true;
	if (*faults < UINT8_MAX)
		(*faults)++;
	return *faults <= push_retry_bound(r, retries);
}

bool
push_retry_patient(const struct push_report *r)
{
	if (r->ok)
		return false;
	return r->sender_stalled || (r->error == -ETIMEDOUT && !r->casualty);
}

unsigned
push_retry_timeout(unsigned timeout_ms, int silences)
{
	uint64_t t = timeout_ms;

	while (silences-- > 0 && t < PROTO_MAX_TIMEOUT_MS)
		t *= 2;
	return t < PROTO_MAX_TIMEOUT_MS ? (unsigned)t : PROTO_MAX_TIMEOUT_MS;
}

bool
push_retry_mass_silence(size_t silent, size_t hosts)
{
	return silent >= PUSH_MASS_SILENCE_MIN && silent > hosts / 2;
}

int
push_retry_limit(int retries, bool dry_run)
{
	return dry_run || retries <= 0 ? 1 : 2 * (retries + 1);
}

unsigned
push_retry_wait_ms(int round)
{
	unsigned ms = PUSH_BUSY_WAIT_MS;

	while (round-- > 1 && ms < PUSH_BUSY_WAIT_MAX_MS)
		ms *= 2;
	return ms < PUSH_BUSY_WAIT_MAX_MS ? ms : PUSH_BUSY_WAIT_MAX_MS;
}

unsigned
push_grace_ms(uint64_t others_ms, unsigned scale_ms)
{
	uint64_t ms = others_ms;

	if (ms < scale_ms / 4)
		ms = scale_ms / 4;
	if (ms < PUSH_SUSPECT_GRACE_MS)
		ms = PUSH_SUSPECT_GRACE_MS;
	return ms < scale_ms ? (unsigned)ms : scale_ms;
}
