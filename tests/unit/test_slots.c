/* SPDX-License-Identifier: MIT */
/*
 * The verbs transport's pure parts: bounce-buffer slots, message credits
 * and immediate values.
 */
#include <arpa/inet.h>
#include <check.h>
#include <stdlib.h>

#include "unit.h"
#include "transport/verbs/slots.h"

START_TEST(slots_hand_out_and_take_back)
{
	struct slots *s = slots_new(4);
	uint32_t a, b, c, d, e;

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(slots_size(s), 4);
	ck_assert(slots_get(s, &a) && slots_get(s, &b) && slots_get(s, &c) &&
		  slots_get(s, &d));
	ck_assert(a != b && b != c && c != d && a != d && a < 4 && d < 4);
	ck_assert(!slots_get(s, &e));		/* exhausted */
	ck_assert_uint_eq(slots_free_count(s), 0);
	ck_assert(slots_put(s, c));
	ck_assert(!slots_put(s, c));		/* double free refused */
	ck_assert(!slots_put(s, 4));		/* out of range */
	ck_assert(slots_get(s, &e));
	ck_assert_uint_eq(e, c);
	slots_free(s);
	slots_free(NULL);
	ck_assert_ptr_null(slots_new(0));
}
END_TEST

/* Random get/put sequences never hand out a slot twice. */
START_TEST(slots_never_share)
{
	struct slots *s = slots_new(16);
	uint8_t held[16] = { 0 };
	uint32_t i, idx, n = 0;

	srand(7);
	for (i = 0; i < 100000; i++) {
		if (rand() % 2 && slots_get(s, &idx)) {
			if (held[idx])
				ck_abort_msg("slot %u handed out twice", idx);
			held[idx] = 1;
			n++;
		} else if (n > 0) {
			do
				idx = (uint32_t)rand() % 16;
			while (!held[idx]);
			if (!slots_put(s, idx))
				ck_abort_msg("slot %u not taken back", idx);
			held[idx] = 0;
			n--;
		}
		if (slots_free_count(s) != 16 - n)
			ck_abort_msg("free count %u, want %u",
				     slots_free_count(s), 16 - n);
	}
	slots_free(s);
}
END_TEST

START_TEST(credits_bound_messages)
{
	struct credit c;
	uint32_t sent = 0;

	slots_credit_init(&c, 8, 2);
	while (slots_credit_take(&c))
		sent++;
	ck_assert_uint_eq(sent, 6);		/* the reserve is kept */
	ck_assert(slots_credit_take_reserved(&c));	/* for a credit message */
	ck_assert(slots_credit_take_reserved(&c));
	ck_assert(!slots_credit_take_reserved(&c));	/* never below zero */
	slots_credit_returned(&c, 3);
	ck_assert(slots_credit_take(&c));
	slots_credit_returned(&c, 100);		/* never above the buffers */
	ck_assert_uint_eq(c.avail, 8);
}
END_TEST

START_TEST(credits_return_in_batches)
{
	struct credit c;
	int i;

	slots_credit_init(&c, 8, 2);
	ck_assert(!slots_credit_update_due(&c));
	for (i = 0; i < 3; i++)
		slots_credit_reposted(&c);
	ck_assert(!slots_credit_update_due(&c));
	slots_credit_reposted(&c);
	ck_assert(slots_credit_update_due(&c));	/* half the buffers owed */
	ck_assert_uint_eq(slots_credit_piggyback(&c), 4);
	ck_assert_uint_eq(slots_credit_piggyback(&c), 0);
	ck_assert(!slots_credit_update_due(&c));
}
END_TEST

/* Two sides exchanging messages under credits never overrun each other's
 * buffers and never deadlock: simulate with random delivery order. */
START_TEST(credits_two_sides)
{
	struct credit side[2];
	uint32_t posted[2], inflight[2] = { 0, 0 }, carried[2][64];
	uint32_t head[2] = { 0, 0 }, want[2] = { 5000, 3000 }, done[2] = { 0 };
	int step, s, o;

	slots_credit_init(&side[0], 8, 2);
	slots_credit_init(&side[1], 8, 2);
	posted[0] = posted[1] = 8;
	srand(11);
	for (step = 0; step < 200000 && (done[0] < want[0] ||
					 done[1] < want[1]); step++) {
		s = rand() % 2;
		o = 1 - s;
		if (rand() % 2 && inflight[s] > 0) {
			/* deliver one of s's messages to o */
			ck_assert_uint_gt(posted[o], 0);	/* a buffer */
			posted[o]--;
			slots_credit_returned(&side[o],
					carried[s][head[s]++ % 64]);
			inflight[s]--;
			posted[o]++;		/* reposted at once */
			slots_credit_reposted(&side[o]);
			continue;
		}
		if (done[s] < want[s] && slots_credit_take(&side[s])) {
			carried[s][(head[s] + inflight[s]) % 64] =
				slots_credit_piggyback(&side[s]);
			inflight[s]++;
			done[s]++;
		} else if (slots_credit_update_due(&side[s]) &&
			   slots_credit_take_reserved(&side[s])) {
			carried[s][(head[s] + inflight[s]) % 64] =
				slots_credit_piggyback(&side[s]);
			inflight[s]++;
		}
	}
	ck_assert_uint_eq(done[0], want[0]);
	ck_assert_uint_eq(done[1], want[1]);
}
END_TEST

START_TEST(immediates)
{
	ck_assert_uint_eq(slots_imm_encode(0x01020304), htonl(0x01020304));
	ck_assert(slots_imm_matches(slots_imm_encode(7), 7));
	ck_assert(!slots_imm_matches(slots_imm_encode(7), 8));
	/* beyond 32 bits: the low bits travel, the receiver knows the rest */
	ck_assert(slots_imm_matches(slots_imm_encode((1ull << 32) + 5), (1ull << 32) + 5));
	ck_assert(slots_imm_matches(slots_imm_encode((1ull << 32) + 5), 5));
}
END_TEST

static Suite *
slots_suite(void)
{
	Suite *s = suite_create("slots");
	TCase *tc = tcase_create("pure");

	tcase_add_test(tc, slots_hand_out_and_take_back);
	tcase_add_test(tc, slots_never_share);
	tcase_add_test(tc, credits_bound_messages);
	tcase_add_test(tc, credits_return_in_batches);
	tcase_add_test(tc, credits_two_sides);
	tcase_add_test(tc, immediates);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(slots_suite());
}
