/* SPDX-License-Identifier: MIT */
/*
 * The gate of unauthenticated connections, on a real libuv loop: its
 * limits, its deadline, and that it holds no timer when nothing waits (an
 * idle daemon must not wake).
 */
#include <arpa/inet.h>
#include <check.h>
#include <string.h>
#include <uv.h>

#include "unit.h"
#include "daemon/gate.h"

struct owner {
	struct gate *g;
	unsigned evicted;
	struct gate_entry *last;
};

static void
on_evict(void *ctx, struct gate_entry *e)
{
	struct owner *o = ctx;

	o->evicted++;
	o->last = e;
	gate_leave(o->g, e);
}

static struct sockaddr_storage
addr(const char *ip, unsigned port)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;

	memset(&ss, 0, sizeof(ss));
	in->sin_family = AF_INET;
	in->sin_port = htons(port);
	inet_pton(AF_INET, ip, &in->sin_addr);
	return ss;
}

static void
open_gate(uv_loop_t *loop, struct owner *o, unsigned max_total,
	  unsigned max_per_host, unsigned deadline_ms)
{
	struct gate_cfg cfg = {
		.loop = loop, .max_total = max_total,
		.max_per_host = max_per_host, .deadline_ms = deadline_ms,
		.evict = on_evict, .ctx = o,
	};

	memset(o, 0, sizeof(*o));
	uv_loop_init(loop);
	ck_assert_int_eq(gate_new(&cfg, &o->g), 0);
}

static void
close_gate(uv_loop_t *loop, struct owner *o)
{
	gate_close(o->g);
	ck_assert_int_eq(uv_run(loop, UV_RUN_DEFAULT), 0);
	ck_assert_int_eq(uv_loop_close(loop), 0);
}

/* No connection waiting, no drop to report: nothing keeps the loop alive,
 * so a daemon's loop sleeps until a connection comes. */
START_TEST(gate_idle_holds_no_timer)
{
	uv_loop_t loop;
	struct owner o;
	struct gate_entry e;
	struct sockaddr_storage from = addr("127.0.0.7", 4000);

	open_gate(&loop, &o, 8, 2, 60000);
	ck_assert(!uv_loop_alive(&loop));
	gate_admit(o.g, &e, &from);
	ck_assert(uv_loop_alive(&loop));	/* its deadline is armed */
	gate_leave(o.g, &e);
	ck_assert(!uv_loop_alive(&loop));
	ck_assert_uint_eq(o.evicted, 0);
	close_gate(&loop, &o);
}
END_TEST

/* A connection that never leaves is dropped at its deadline, not before;
 * then the drop is reported and the loop has nothing left to wait for
 * (uv_run returns: with a periodic timer this test would never end). */
START_TEST(gate_drops_at_deadline_then_sleeps)
{
	uv_loop_t loop;
	struct owner o;
	struct gate_entry a, b;
	struct sockaddr_storage from = addr("127.0.0.7", 4000);
	uint64_t start;

	open_gate(&loop, &o, 8, 4, 80);
	start = uv_now(&loop);
	gate_admit(o.g, &a, &from);
	gate_admit(o.g, &b, &from);
	gate_leave(o.g, &b);
	ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
	ck_assert_uint_eq(o.evicted, 1);
	ck_assert_ptr_eq(o.last, &a);
	ck_assert_uint_ge(uv_now(&loop) - start, 80);
	ck_assert(!uv_loop_alive(&loop));
	close_gate(&loop, &o);
}
END_TEST

/* An address at its limit evicts its own oldest; a full gate evicts the
 * oldest of all; others stay. */
START_TEST(gate_limits_evict_the_oldest)
{
	uv_loop_t loop;
	struct owner o;
	struct gate_entry e[5];
	struct sockaddr_storage x = addr("127.0.0.7", 4000);
	struct sockaddr_storage y = addr("127.0.0.8", 4001);
	struct sockaddr_storage z = addr("127.0.0.9", 4002);

	open_gate(&loop, &o, 3, 2, 60000);
	gate_admit(o.g, &e[0], &y);
	gate_admit(o.g, &e[1], &x);
	gate_admit(o.g, &e[2], &x);
	ck_assert_uint_eq(o.evicted, 0);
	gate_admit(o.g, &e[3], &x);		/* x at 2: x's oldest goes */
	ck_assert_uint_eq(o.evicted, 1);
	ck_assert_ptr_eq(o.last, &e[1]);
	gate_admit(o.g, &e[4], &z);		/* 3 in all: the oldest goes */
	ck_assert_uint_eq(o.evicted, 2);
	ck_assert_ptr_eq(o.last, &e[0]);
	gate_leave(o.g, &e[2]);
	gate_leave(o.g, &e[3]);
	gate_leave(o.g, &e[4]);
	/* what is left to do is the report of the two drops */
	ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
	ck_assert(!uv_loop_alive(&loop));
	close_gate(&loop, &o);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("gate");
	TCase *tc = tcase_create("gate");

	tcase_add_test(tc, gate_idle_holds_no_timer);
	tcase_add_test(tc, gate_drops_at_deadline_then_sleeps);
	tcase_add_test(tc, gate_limits_evict_the_oldest);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
