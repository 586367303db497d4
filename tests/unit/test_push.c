/* SPDX-License-Identifier: MIT */
/*
 * The sender's outcome rules, pure: what a lost connection or an OUTCOME
 * means for a host in each state (ok, failed, a casualty, failed but
 * perhaps landed, or ask its daemon), and which failed hosts are sent to
 * again, with what timeout and in how many attempts at most.  The
 * integration tests (report_truth, retry_again, sender_stalled,
 * kill_daemon...) check the same rules against real daemons' disks.
 */
#include <check.h>
#include <stdint.h>

#include "send/push_int.h"
#include "unit.h"

static const enum hstate all_states[] = {
	HS_RESOLVING, HS_CONNECTING, HS_AUTH, HS_OFFERED, HS_HAVE,
	HS_ACCEPTED, HS_RUNNING, HS_ABORTING, HS_QUERY, HS_DONE, HS_FAILED,
	HS_ALIAS,
};
#define NSTATES (sizeof(all_states) / sizeof(all_states[0]))

/* Lost before its go, a host failed and holds nothing; lost after it,
 * its daemon is asked; lost while being asked, nobody can say; a host
 * with an outcome keeps it. */
START_TEST(loss_before_and_after_the_go)
{
	size_t i;
	int go;

	for (i = 0; i < NSTATES; i++) {
		enum hstate st = all_states[i];

		for (go = 0; go <= 1; go++) {
			enum push_fate f = push_fate_of_loss(st, go);

			if (st == HS_DONE || st == HS_FAILED || st == HS_ALIAS)
				ck_assert_int_eq(f, PF_NONE);
			else if (st == HS_QUERY)
				ck_assert_int_eq(f, PF_FAILED_MAYBE_LANDED);
			else if ((st == HS_RUNNING || st == HS_ABORTING) && go)
				ck_assert_int_eq(f, PF_ASK);
			else
				ck_assert_int_eq(f, PF_FAILED);
		}
	}
}
END_TEST

/* LANDED is ok whenever it comes; asked after a loss, DISCARDED is a
 * failure and UNKNOWN may have landed; in an abort, the member whose
 * loss broke the group failed for itself, the others are casualties. */
START_TEST(answers)
{
	size_t i;

	for (i = 0; i < NSTATES; i++)
		ck_assert_int_eq(push_fate_of_answer(all_states[i], i % 2,
						     OUTCOME_LANDED), PF_DONE);
	ck_assert_int_eq(push_fate_of_answer(HS_QUERY, false,
					     OUTCOME_DISCARDED), PF_FAILED);
	ck_assert_int_eq(push_fate_of_answer(HS_QUERY, true,
					     OUTCOME_DISCARDED), PF_FAILED);
	ck_assert_int_eq(push_fate_of_answer(HS_QUERY, false, OUTCOME_UNKNOWN),
			 PF_FAILED_MAYBE_LANDED);
	ck_assert_int_eq(push_fate_of_answer(HS_ABORTING, true,
					     OUTCOME_DISCARDED), PF_FAILED);
	ck_assert_int_eq(push_fate_of_answer(HS_ABORTING, false,
					     OUTCOME_DISCARDED), PF_CASUALTY);
	ck_assert_int_eq(push_fate_of_answer(HS_ABORTING, false,
					     OUTCOME_UNKNOWN), PF_CASUALTY);
}
END_TEST

static struct push_report
failed(void)
{
	struct push_report r = { .ok = false, .error = -ECONNRESET };

	return r;
}

/* A host that failed for its own reasons is sent to again `retries`
 * times; a casualty and a host the sender was silent to always, without
 * using one; a refusal, an ok host and the last attempt never. */
START_TEST(who_is_sent_to_again)
{
	struct push_report r = failed();
	uint8_t faults = 0;
	int i;

	for (i = 0; i < 2; i++)
		ck_assert(push_may_retry(&r, false, 2, &faults));
	ck_assert(!push_may_retry(&r, false, 2, &faults));	/* third */
	ck_assert_uint_eq(faults, 3);
	faults = 0;
	r.casualty = true;
	for (i = 0; i < 10; i++)
		ck_assert(push_may_retry(&r, false, 1, &faults));
	ck_assert_uint_eq(faults, 0);	/* casualties use no retry */
	r.sender_fault = true;		/* the sender's own failure: counted */
	ck_assert(push_may_retry(&r, false, 1, &faults));
	ck_assert(!push_may_retry(&r, false, 1, &faults));
	r = failed();
	r.sender_stalled = true;
	faults = 0;
	for (i = 0; i < 10; i++)
		ck_assert(push_may_retry(&r, false, 0, &faults));
	ck_assert(!push_may_retry(&r, true, 5, &faults));	/* last attempt */
	r = failed();
	r.permanent = true;
	ck_assert(!push_may_retry(&r, false, 5, &faults));
	r = failed();
	r.ok = true;
	ck_assert(!push_may_retry(&r, false, 5, &faults));
	r = failed();			/* no daemon there: once at most */
	r.error = -ECONNREFUSED;
	faults = 0;
	ck_assert_int_eq(push_retry_bound(&r, 5), 1);
	ck_assert_int_eq(push_retry_bound(&r, 0), 0);
	r.error = -ETIME;		/* a handshake a hung daemon let lapse */
	ck_assert_int_eq(push_retry_bound(&r, 5), 1);
	r.error = -ECONNREFUSED;
	ck_assert(push_may_retry(&r, false, 5, &faults));
	ck_assert(!push_may_retry(&r, false, 5, &faults));
	r = failed();
	ck_assert_int_eq(push_retry_bound(&r, 5), 5);
	faults = UINT8_MAX;		/* saturates, never wraps to 0 */
	ck_assert(!push_may_retry(&r, false, 5, &faults));
	ck_assert_uint_eq(faults, UINT8_MAX);
}
END_TEST

/* Only a silence makes the next attempts more patient. */
START_TEST(patience_after_silence)
{
	struct push_report r = failed();

	r.error = -ETIMEDOUT;			/* it went silent itself */
	ck_assert(push_retry_patient(&r));
	r.casualty = true;			/* a neighbour of a silent one */
	ck_assert(!push_retry_patient(&r));
	r = failed();
	r.error = -ECONNRESET;			/* killed: says nothing */
	ck_assert(!push_retry_patient(&r));
	r.sender_stalled = true;		/* the sender was starved */
	ck_assert(push_retry_patient(&r));
	r = failed();
	r.error = -ETIME;			/* hung at the handshake */
	ck_assert(!push_retry_patient(&r));
	r.error = -ETIMEDOUT;
	r.ok = true;
	ck_assert(!push_retry_patient(&r));
}
END_TEST

/* Most of a big group silent at once is overload, not hung hosts. */
START_TEST(mass_silence_is_overload)
{
	ck_assert(push_retry_mass_silence(213, 250));
	ck_assert(push_retry_mass_silence(126, 250));
	ck_assert(!push_retry_mass_silence(125, 250));	/* half: not most */
	ck_assert(!push_retry_mass_silence(3, 250));	/* a few hung */
	ck_assert(!push_retry_mass_silence(1, 1));	/* one host alone */
	ck_assert(!push_retry_mass_silence(PUSH_MASS_SILENCE_MIN - 1,
					   PUSH_MASS_SILENCE_MIN));
	ck_assert(push_retry_mass_silence(PUSH_MASS_SILENCE_MIN,
					  PUSH_MASS_SILENCE_MIN));
	ck_assert(!push_retry_mass_silence(0, 0));
}
END_TEST

/* Silent hosts get as long again as the others took, a quarter of the
 * wait they would cost, 250 ms at least, never more than that wait. */
START_TEST(grace_for_silent_hosts)
{
	ck_assert_uint_eq(push_grace_ms(0, 5000), 1250);
	ck_assert_uint_eq(push_grace_ms(2000, 5000), 2000);
	ck_assert_uint_eq(push_grace_ms(9000, 5000), 5000);
	ck_assert_uint_eq(push_grace_ms(10, 400), PUSH_SUSPECT_GRACE_MS);
	ck_assert_uint_eq(push_grace_ms(10, 100), 100);
	ck_assert_uint_eq(push_grace_ms(UINT64_MAX, 30000), 30000);
}
END_TEST

START_TEST(timeouts_and_attempts)
{
	ck_assert_uint_eq(push_retry_timeout(30000, 0), 30000);
	ck_assert_uint_eq(push_retry_timeout(30000, 1), 60000);
	ck_assert_uint_eq(push_retry_timeout(30000, 3), 240000);
	ck_assert_uint_eq(push_retry_timeout(30000, 40), PROTO_MAX_TIMEOUT_MS);
	ck_assert_uint_eq(push_retry_timeout(PROTO_MAX_TIMEOUT_MS, 2),
			  PROTO_MAX_TIMEOUT_MS);
	ck_assert_int_eq(push_retry_limit(0, false), 1);
	ck_assert_int_eq(push_retry_limit(1, false), 4);
	ck_assert_int_eq(push_retry_limit(3, false), 8);
	ck_assert_int_eq(push_retry_limit(3, true), 1);	/* --dry-run */
	/* a busy host is sent to again after a second, then longer */
	ck_assert_uint_eq(push_retry_wait_ms(1), 1000);
	ck_assert_uint_eq(push_retry_wait_ms(2), 2000);
	ck_assert_uint_eq(push_retry_wait_ms(4), 8000);
	ck_assert_uint_eq(push_retry_wait_ms(60), PUSH_BUSY_WAIT_MAX_MS);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("push");
	TCase *tc = tcase_create("outcomes");

	tcase_add_test(tc, loss_before_and_after_the_go);
	tcase_add_test(tc, answers);
	tcase_add_test(tc, who_is_sent_to_again);
	tcase_add_test(tc, patience_after_silence);
	tcase_add_test(tc, mass_silence_is_overload);
	tcase_add_test(tc, grace_for_silent_hosts);
	tcase_add_test(tc, timeouts_and_attempts);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
