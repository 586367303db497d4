/* SPDX-License-Identifier: MIT */
/*
 * Records of temporaries and the sweep at start: a recorded temporary
 * file and a recorded temporary tree are removed; a recorded path that is
 * not one of our temporaries, or lies outside the roots, or is reached
 * through a link, is left alone; the record of a job still running (its
 * lock held) is passed over; finished records vanish.  A daemon's own
 * state directory (a --prefix daemon's default) is made 0700 and must be
 * a directory of its user alone, not a link; one named on the command
 * line is taken as it is.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dest/pending.h"
#include "unit.h"

static char top[128];
static char root[160], state[160], outside[160];

static void
setup(void)
{
	char made[64] = "/tmp/rdmcp-test-pending.XXXXXX", real[PATH_MAX];

	ck_assert_ptr_nonnull(mkdtemp(made));
	ck_assert_ptr_nonnull(realpath(made, real));
	ck_assert_uint_lt(strlen(real), sizeof(top));
	memcpy(top, real, strlen(real) + 1);
	snprintf(root, sizeof(root), "%s/root", top);
	snprintf(state, sizeof(state), "%s/state", top);
	snprintf(outside, sizeof(outside), "%s/outside", top);
	ck_assert_int_eq(mkdir(root, 0755), 0);
	ck_assert_int_eq(mkdir(state, 0700), 0);
	ck_assert_int_eq(mkdir(outside, 0755), 0);
}

static void
teardown(void)
{
	char cmd[sizeof(top) + 32];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	ck_assert_int_eq(system(cmd), 0);
}

static char *
in(const char *dir, const char *name)
{
	static char buf[8][512];
	static int next;
	char *p = buf[next++ % 8];

	snprintf(p, sizeof(buf[0]), "%s/%s", dir, name);
	return p;
}

static void
touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0600);

	ck_assert_int_ge(fd, 0);
	close(fd);
}

static const uint8_t tok1[16] = { 1 }, tok2[16] = { 2 };

START_TEST(sweeps_what_the_dead_left)
{
	const char *roots[] = { root };
	struct pending *p;
	size_t removed;

	touch(in(root, ".f.rdmcp-0123abcd"));
	ck_assert_int_eq(mkdir(in(root, ".t.rdmcp-89abcdef"), 0700), 0);
	ck_assert_int_eq(mkdir(in(root, ".t.rdmcp-89abcdef/sub"), 0700), 0);
	/* a link inside a temporary tree is removed, never followed */
	ck_assert_int_eq(symlink(outside, in(root, ".t.rdmcp-89abcdef/sub/out")),
			 0);
	ck_assert_int_eq(chmod(in(root, ".t.rdmcp-89abcdef/sub"), 0500), 0);
	touch(in(outside, "kept"));
	touch(in(outside, ".o.rdmcp-0123abcd"));
	touch(in(root, "precious"));
	ck_assert_int_eq(symlink(outside, in(root, "link")), 0);
	ck_assert_int_eq(pending_open(state, tok1, 16, &p), 0);
	ck_assert_int_eq(pending_add(p, in(root, ".f.rdmcp-0123abcd")), 0);
	ck_assert_int_eq(pending_add(p, in(root, ".t.rdmcp-89abcdef")), 0);
	ck_assert_int_eq(pending_add(p, in(outside, ".o.rdmcp-0123abcd")), 0);
	ck_assert_int_eq(pending_add(p, in(root, "link/.o.rdmcp-0123abcd")), 0);
	ck_assert_int_eq(pending_add(p, in(root, "precious")), 0);
	ck_assert_int_eq(pending_sweep(state, roots, 1, &removed), 0);
	ck_assert_uint_eq(removed, 0);		/* still locked: alive */
	pending_done(p);	/* (a clean end removes the record) */
	ck_assert_int_ne(access(in(state, "job-01000000000000000000000000000000"),
				F_OK), 0);
	ck_assert_int_eq(pending_open(state, tok2, 16, &p), 0);
	ck_assert_int_eq(pending_add(p, in(root, ".f.rdmcp-0123abcd")), 0);
	ck_assert_int_eq(pending_add(p, in(root, ".t.rdmcp-89abcdef")), 0);
	ck_assert_int_eq(pending_add(p, in(outside, ".o.rdmcp-0123abcd")), 0);
	ck_assert_int_eq(pending_add(p, in(root, "link/.o.rdmcp-0123abcd")), 0);
	ck_assert_int_eq(pending_add(p, in(root, "precious")), 0);
	/* a record whose daemon died: copy it, unlocked, and forget p */
	{
		char cmd[1024];

		snprintf(cmd, sizeof(cmd), "cp '%s' '%s'",
			 in(state, "job-02000000000000000000000000000000"),
			 in(state, "job-dead"));
		ck_assert_int_eq(system(cmd), 0);
	}
	ck_assert_int_eq(pending_sweep(state, roots, 1, &removed), 0);
	ck_assert_uint_eq(removed, 2);
	ck_assert_int_ne(access(in(root, ".f.rdmcp-0123abcd"), F_OK), 0);
	ck_assert_int_ne(access(in(root, ".t.rdmcp-89abcdef"), F_OK), 0);
	ck_assert_int_eq(access(in(outside, ".o.rdmcp-0123abcd"), F_OK), 0);
	ck_assert_int_eq(access(in(outside, "kept"), F_OK), 0);
	ck_assert_int_eq(access(in(root, "precious"), F_OK), 0);
	ck_assert_int_ne(access(in(state, "job-dead"), F_OK), 0);
	/* the live one's record stays until its job ends */
	ck_assert_int_eq(access(in(state, "job-02000000000000000000000000000000"),
			 F_OK), 0);
	pending_done(p);
}
END_TEST

START_TEST(own_state_directory)
{
	const char *roots[] = { root };
	char *real = NULL, want[PATH_MAX];
	struct stat sb;

	ck_assert_int_eq(pending_start(in(root, ".rdmcp-state"), true, roots,
				       1, &real), 0);
	ck_assert_ptr_nonnull(realpath(in(root, ".rdmcp-state"), want));
	ck_assert_str_eq(real, want);
	ck_assert_int_eq(lstat(want, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 0777, 0700);
	free(real);
	/* a link, or a directory others may write to: not ours */
	ck_assert_int_eq(symlink(outside, in(root, "linked")), 0);
	ck_assert_int_eq(pending_start(in(root, "linked"), true, roots, 1,
				       &real), -ENOTDIR);
	ck_assert_ptr_null(real);
	ck_assert_int_eq(chmod(outside, 0777), 0);
	ck_assert_int_eq(pending_start(outside, true, roots, 1, &real),
			 -EPERM);
	ck_assert_ptr_null(real);
	/* --state-dir names it: the administrator's choice */
	ck_assert_int_eq(pending_start(in(root, "linked"), false, roots, 1,
				       &real), 0);
	ck_assert_str_eq(real, outside);
	free(real);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("pending");
	TCase *tc = tcase_create("pending");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sweeps_what_the_dead_left);
	tcase_add_test(tc, own_state_directory);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
