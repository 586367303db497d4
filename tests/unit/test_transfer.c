/* SPDX-License-Identifier: MIT */
/*
 * A transfer's states on a daemon, pure: which of the sender's control
 * frames each state takes and where it leads, for every state, every
 * frame type and both sides of the go.  A frame a state does not take
 * drops the connection (the integration tests check what that does to
 * the disk).
 */
#include <check.h>
#include <errno.h>

#include "daemon/transfer_int.h"
#include "unit.h"

static const enum jstate states[] = {
	JS_SETUP, JS_HAVE, JS_SAME, JS_READY, JS_DRY, JS_RUNNING, JS_ENDED,
};
#define NSTATES (sizeof(states) / sizeof(states[0]))

/* What the table must say: 0 and the next state, or -EPROTO. */
static int
expected(enum jstate st, bool go, uint8_t type, enum jstate *next)
{
	*next = st;
	if (st == JS_ENDED || type == MSG_TRACE)
		return 0;
	if (type == MSG_START && st == JS_READY)
		return *next = JS_RUNNING, 0;
	if (type == MSG_CRC && st == JS_RUNNING && !go)
		return 0;
	if (type == MSG_ABORT)
		return *next = JS_ENDED, 0;
	if (type == MSG_REPLACE && st == JS_HAVE)
		return *next = JS_SETUP, 0;
	if (type == MSG_DIGESTS && (st == JS_HAVE || st == JS_SETUP))
		return 0;
	return -EPROTO;
}

START_TEST(every_state_every_frame)
{
	enum jstate next, want;
	unsigned type;
	size_t i;
	int go, rc;

	for (i = 0; i < NSTATES; i++)
		for (go = 0; go <= 1; go++)
			for (type = 0; type < 64; type++) {
				rc = transfer_frame_step(states[i], go,
							 (uint8_t)type, &next);
				ck_assert_int_eq(rc, expected(states[i], go,
							      (uint8_t)type,
							      &want));
				if (rc == 0)
					ck_assert_int_eq(next, want);
			}
}
END_TEST

/* The life of a transfer as the sender drives it, and the frames that
 * are refused along the way. */
START_TEST(a_life)
{
	enum jstate st = JS_READY;

	ck_assert_int_eq(transfer_frame_step(st, false, MSG_CRC, &st), -EPROTO);
	ck_assert_int_eq(transfer_frame_step(st, false, MSG_START, &st), 0);
	ck_assert_int_eq(st, JS_RUNNING);
	ck_assert_int_eq(transfer_frame_step(st, false, MSG_START, &st), -EPROTO);
	ck_assert_int_eq(transfer_frame_step(st, false, MSG_CRC, &st), 0);
	ck_assert_int_eq(transfer_frame_step(st, true, MSG_CRC, &st), -EPROTO);
	ck_assert_int_eq(transfer_frame_step(st, true, MSG_REPLACE, &st),
			 -EPROTO);
	ck_assert_int_eq(transfer_frame_step(st, true, MSG_JOB, &st), -EPROTO);
	ck_assert_int_eq(transfer_frame_step(st, true, MSG_ABORT, &st), 0);
	ck_assert_int_eq(st, JS_ENDED);
	ck_assert_int_eq(transfer_frame_step(st, true, MSG_START, &st), 0);
	ck_assert_int_eq(st, JS_ENDED);
	st = JS_HAVE;
	ck_assert_int_eq(transfer_frame_step(st, false, MSG_START, &st), -EPROTO);
	ck_assert_int_eq(transfer_frame_step(st, false, MSG_REPLACE, &st), 0);
	ck_assert_int_eq(st, JS_SETUP);
	ck_assert_int_eq(transfer_frame_step(st, false, MSG_START, &st), -EPROTO);
	st = JS_DRY;
	ck_assert_int_eq(transfer_frame_step(st, false, MSG_START, &st), -EPROTO);
	st = JS_SAME;	/* every entry identical: nothing more is set up */
	ck_assert_int_eq(transfer_frame_step(st, false, MSG_REPLACE, &st),
			 -EPROTO);
	ck_assert_int_eq(transfer_frame_step(st, false, MSG_START, &st), -EPROTO);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("transfer");
	TCase *tc = tcase_create("states");

	tcase_add_test(tc, every_state_every_frame);
	tcase_add_test(tc, a_life);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
