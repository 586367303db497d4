/* SPDX-License-Identifier: MIT */
/*
 * Unfinished copies kept for the next job (daemon/partial.c), on a real
 * libuv loop: found again only for the same destination, size and time;
 * taken once; given up when their time is out, with no timer left once
 * nothing is kept (an idle daemon must not wake); closed with the
 * registry.
 */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "unit.h"
#include "daemon/partial.h"

static struct job_file files[2] = {
	{ .path = (char *)"/stage/a", .type = JF_FILE, .size = 100, .mtime_sec = 7 },
	{ .path = (char *)"/stage/b", .type = JF_FILE, .size = 200, .mtime_sec = 7 },
};
static struct job job = { .nfiles = 2, .files = files };

static int
an_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	return fd;
}

static bool
is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

START_TEST(found_by_source)
{
	uv_loop_t loop;
	struct partials *ps;
	int fds[2] = { an_fd(), an_fd() }, got[2], kept0 = fds[0];
	struct bset *goods[2] = { NULL, NULL }, *back[2], *g;
	struct job_file other[2];
	struct job later = job;

	ck_assert_int_eq(uv_loop_init(&loop), 0);
	ck_assert_int_eq(partials_new(&loop, 60000, &ps), 0);
	ck_assert_int_eq(bset_new(&goods[0]), 0);
	ck_assert_int_eq(bset_add(goods[0], 0, 50), 0);	/* half landed */
	g = goods[0];
	partials_keep(ps, &job, fds, goods);
	ck_assert_int_eq(fds[0], -1);	/* taken over */
	ck_assert_ptr_null(goods[0]);
	ck_assert_uint_eq(partials_count(ps), 2);
	/* another time, another size: nothing */
	memcpy(other, files, sizeof(other));
	other[0].mtime_nsec = 1;
	other[1].size = 201;
	later.files = other;
	ck_assert_uint_eq(partials_take(ps, &later, got, back), 0);
	ck_assert_int_eq(got[0], -1);
	ck_assert_int_eq(got[1], -1);
	/* the same sources: both, once */
	ck_assert_uint_eq(partials_take(ps, &job, got, back), 2);
	ck_assert_int_eq(got[0], kept0);
	ck_assert_ptr_eq(back[0], g);	/* its record with it */
	ck_assert_ptr_null(back[1]);
	bset_free(back[0]);
	ck_assert(is_open(got[0]) && is_open(got[1]));
	ck_assert_uint_eq(partials_count(ps), 0);
	ck_assert_uint_eq(partials_take(ps, &job, fds, back), 0);
	close(got[0]);
	close(got[1]);
	partials_close(ps);
	ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
	partials_free(ps);
	ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

START_TEST(given_up_in_time)
{
	uv_loop_t loop;
	struct partials *ps;
	int fds[2] = { an_fd(), -1 }, fd = fds[0];

	ck_assert_int_eq(uv_loop_init(&loop), 0);
	ck_assert_int_eq(partials_new(&loop, 20, &ps), 0);
	partials_keep(ps, &job, fds, NULL);
	ck_assert_uint_eq(partials_count(ps), 1);
	/* the loop runs until the copy is given up, then has nothing to
	 * wait for: no timer is left */
	ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
	ck_assert_uint_eq(partials_count(ps), 0);
	ck_assert(!is_open(fd));
	partials_close(ps);
	uv_run(&loop, UV_RUN_DEFAULT);
	partials_free(ps);
	ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

START_TEST(closed_and_none_kept)
{
	uv_loop_t loop;
	struct partials *ps;
	int fds[2] = { an_fd(), an_fd() }, a = fds[0], b = fds[1];

	ck_assert_int_eq(uv_loop_init(&loop), 0);
	ck_assert_int_eq(partials_new(&loop, 0, &ps), 0);	/* keeps none */
	partials_keep(ps, &job, fds, NULL);
	ck_assert_uint_eq(partials_count(ps), 0);
	ck_assert(!is_open(a) && !is_open(b));
	partials_close(ps);
	fds[0] = an_fd();
	a = fds[0];
	fds[1] = -1;
	partials_keep(ps, &job, fds, NULL);	/* closing: none kept either */
	ck_assert(!is_open(a));
	uv_run(&loop, UV_RUN_DEFAULT);
	partials_free(ps);
	partials_free(NULL);
	ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("partial");
	TCase *tc = tcase_create("partial");

	tcase_add_test(tc, found_by_source);
	tcase_add_test(tc, given_up_in_time);
	tcase_add_test(tc, closed_and_none_kept);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
