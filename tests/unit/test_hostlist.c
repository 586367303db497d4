/* SPDX-License-Identifier: MIT */
/*
 * Host list expressions: expansion, errors that point at the offending
 * character, host files, exclusion, de-duplication, and compression that
 * expands back to the same set.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "hosts/hostlist.h"

/* The expansion of spec, joined with spaces. */
static const char *
expand(const char *spec)
{
	static char out[8192];
	struct hostlist hl = { 0 };
	struct rd_err err = { 0 };
	size_t i, at = 0;

	ck_assert_msg(hostlist_parse(&hl, spec, &err) == 0, "%s: %s", spec,
		      err.msg);
	out[0] = '\0';
	for (i = 0; i < hl.n; i++)
		at += (size_t)snprintf(out + at, sizeof(out) - at, "%s%s",
				       i ? " " : "", hl.hosts[i]);
	hostlist_clear(&hl);
	return out;
}

/* The error for spec (which must fail with `code`). */
static const char *
error_of(const char *spec, int code)
{
	static struct rd_err err;
	struct hostlist hl = { 0 };
	int rc;

	memset(&err, 0, sizeof(err));
	rc = hostlist_parse(&hl, spec, &err);
	ck_assert_msg(rc == code, "%s: got %d, want %d", spec, rc, code);
	hostlist_clear(&hl);
	return err.msg;
}

START_TEST(plain_lists)
{
	ck_assert_str_eq(expand("a"), "a");
	ck_assert_str_eq(expand(" a , b:7000 ,c "), "a b:7000 c");
	ck_assert_str_eq(expand("10.0.0.1,10.0.0.2:99"), "10.0.0.1 10.0.0.2:99");
	ck_assert_str_eq(expand("[fe80::1]:7000,[::1]"), "[fe80::1]:7000 [::1]");
	ck_assert_str_eq(expand("fe80::1"), "fe80::1");
}
END_TEST

START_TEST(ranges)
{
	ck_assert_str_eq(expand("node[1-3]"), "node1 node2 node3");
	ck_assert_str_eq(expand("node[01-03,7]"), "node01 node02 node03 node7");
	ck_assert_str_eq(expand("node[08-11]"), "node08 node09 node10 node11");
	ck_assert_str_eq(expand("n[9-10]x"), "n9x n10x");
	ck_assert_str_eq(expand("n[007]"), "n007");
	ck_assert_str_eq(expand("rack[1-2]n[01-02]"),
			 "rack1n01 rack1n02 rack2n01 rack2n02");
	ck_assert_str_eq(expand("[1-2]a,b[3]"), "1a 2a b3");
	ck_assert_str_eq(expand("10.0.0.[1-3]:7000"),
			 "10.0.0.1:7000 10.0.0.2:7000 10.0.0.3:7000");
	ck_assert_str_eq(expand("a[1-2],b,c[0-1]:5"), "a1 a2 b c0:5 c1:5");
	ck_assert_str_eq(expand("x[5-5]"), "x5");
}
END_TEST

/* clush's steps: lo-hi/step, the last number the last one at or below
 * hi, even at the top of the numbers (no wrap past hi). */
START_TEST(step_ranges)
{
	ck_assert_str_eq(expand("node[1-30/4]"),
			 "node1 node5 node9 node13 node17 node21 node25 node29");
	ck_assert_str_eq(expand("n[01-10/3,20]"), "n01 n04 n07 n10 n20");
	ck_assert_str_eq(expand("n[1-2/5]"), "n1");
	ck_assert_str_eq(expand("n[999999999999999990-999999999999999999/7]"),
			 "n999999999999999990 n999999999999999997");
	ck_assert_msg(strstr(error_of("n[1-9/0]", -EINVAL),
			     "step '/0' is not a number of 1 or more") != NULL,
		      "%s", error_of("n[1-9/0]", -EINVAL));
	ck_assert_msg(strstr(error_of("n[3/2]", -EINVAL), "a step ('/') needs "
			     "a range (lo-hi/step) at character 4") != NULL,
		      "%s", error_of("n[3/2]", -EINVAL));
	ck_assert_msg(strstr(error_of("n[1-9/]", -EINVAL), "expected a number")
		      != NULL, "%s", error_of("n[1-9/]", -EINVAL));
	/* a million hosts at most, counted with their step */
	ck_assert_str_eq(error_of("n[1-4000000/2]", -E2BIG),
			 "the host list expands to more than 1000000 hosts");
}
END_TEST

START_TEST(errors_point_at_the_character)
{
	const char *m;

	m = error_of("node[1-x]", -EINVAL);
	ck_assert_msg(strstr(m, "'x' is not a number at character 8") != NULL,
		      "%s", m);
	ck_assert_msg(strstr(m, "\n  node[1-x]\n         ^") != NULL, "%s", m);
	m = error_of("node[01-0x]", -EINVAL);
	ck_assert_msg(strstr(m, "'0x' is not a number at character 9") != NULL,
		      "%s", m);
	m = error_of("node[a1-3]", -EINVAL);
	ck_assert_msg(strstr(m, "'a1' is not a number at character 6") != NULL,
		      "%s", m);
	m = error_of("node[1-]", -EINVAL);
	ck_assert_msg(strstr(m, "expected a number at character 8") != NULL,
		      "%s", m);
	m = error_of("node[1-%]", -EINVAL);
	ck_assert_msg(strstr(m, "'%' is not a number at character 8") != NULL,
		      "%s", m);
	m = error_of("node[1-3", -EINVAL);
	ck_assert_msg(strstr(m, "'[' without ']' at character 5") != NULL, "%s",
		      m);
	m = error_of("node1-3]", -EINVAL);
	ck_assert_msg(strstr(m, "']' without '[' at character 8") != NULL, "%s",
		      m);
	m = error_of("node[3-1]", -EINVAL);
	ck_assert_msg(strstr(m, "range '3-1' goes backwards at character 6")
		      != NULL, "%s", m);
	m = error_of("a,,b", -EINVAL);
	ck_assert_msg(strstr(m, "empty entry at character 3") != NULL, "%s", m);
	m = error_of("", -EINVAL);
	ck_assert_msg(strstr(m, "empty entry") != NULL, "%s", m);
	m = error_of("a,b c", -EINVAL);
	ck_assert_msg(strstr(m, "unexpected character at character 4") != NULL,
		      "%s", m);
	m = error_of("n[1;2]", -EINVAL);
	ck_assert_msg(strstr(m, "expected ',', '-' or ']' at character 4")
		      != NULL, "%s", m);
	m = error_of("n[[1]]", -EINVAL);
	ck_assert_msg(strstr(m, "'[' inside '[...]'") != NULL, "%s", m);
	m = error_of("host:99999", -EINVAL);
	ck_assert_msg(strstr(m, "not a host, host:port") != NULL, "%s", m);
	m = error_of("n[1-9999999999999999999]", -EINVAL);
	ck_assert_msg(strstr(m, "number too long") != NULL, "%s", m);
	m = error_of("n[1-2000000]", -E2BIG);
	ck_assert_msg(strstr(m, "more than") != NULL, "%s", m);
	m = error_of("a[1-1000]b[1-1000]c[1-10]", -E2BIG);
}
END_TEST

START_TEST(host_files)
{
	struct hostlist hl = { 0 };
	struct rd_err err = { 0 };
	const char *text = "# the rack\nn[1-2]\n\n  m3 , m4 # two more\n"
			   "last";

	ck_assert_int_eq(hostlist_parse_file(&hl, text, "hosts", &err), 0);
	ck_assert_uint_eq(hl.n, 5);
	ck_assert_str_eq(hl.hosts[0], "n1");
	ck_assert_str_eq(hl.hosts[3], "m4");
	ck_assert_str_eq(hl.hosts[4], "last");
	hostlist_clear(&hl);
	ck_assert_int_eq(hostlist_parse_file(&hl, "a\nb[\n", "f", &err),
			 -EINVAL);
	ck_assert_msg(strncmp(err.msg, "f:2: bad host list", 18) == 0, "%s",
		      err.msg);
	hostlist_clear(&hl);
	rd_err_clear(&err);
	/* several on a line, separated by blanks (and commas) */
	ck_assert_int_eq(hostlist_parse_file(&hl, "a b\tc[1-2] , d,e  f\r\n"
					     "g\n", "hosts", &err), 0);
	ck_assert_uint_eq(hl.n, 8);
	ck_assert_str_eq(hl.hosts[2], "c1");
	ck_assert_str_eq(hl.hosts[4], "d");
	ck_assert_str_eq(hl.hosts[6], "f");
	ck_assert_str_eq(hl.hosts[7], "g");
	hostlist_clear(&hl);
	rd_err_clear(&err);
	ck_assert_int_eq(hostlist_parse_file(&hl, "a , , b\n", "f", &err),
			 -EINVAL);
	ck_assert_msg(strstr(err.msg, "f:1: bad host list: empty entry")
		      != NULL, "%s", err.msg);
	hostlist_clear(&hl);
}
END_TEST

/* -x: by name, ignoring case, and by port only where the entry has one
 * (a host without a port has the default one); which entries named a
 * host. */
START_TEST(leave_out_by_name_and_port)
{
	struct hostlist hl = { 0 }, ex = { 0 };
	struct rd_err err = { 0 };
	bool matched[5] = { false };

	ck_assert_int_eq(hostlist_parse(&hl, "n[1-4]:7000,m1,m2,M3:9", &err),
			 0);
	ck_assert_int_eq(hostlist_parse(&ex, "n2,m1:7471,m2:7000,m3,z9", &err),
			 0);
	ck_assert_int_eq(hostlist_leave_out(&hl, &ex, 7471, matched), 3);
	ck_assert_uint_eq(hl.n, 4);
	ck_assert_str_eq(hl.hosts[0], "n1:7000");
	ck_assert_str_eq(hl.hosts[1], "n3:7000");
	ck_assert_str_eq(hl.hosts[2], "n4:7000");
	ck_assert_str_eq(hl.hosts[3], "m2");	/* at 7471, not 7000 */
	ck_assert(matched[0] && matched[1] && matched[3]);
	ck_assert(!matched[2] && !matched[4]);
	hostlist_clear(&hl);
	hostlist_clear(&ex);
	ck_assert_int_eq(hostlist_parse(&hl, "[::1]:7,::1", &err), 0);
	ck_assert_int_eq(hostlist_parse(&ex, "[::1]", &err), 0);
	ck_assert_int_eq(hostlist_leave_out(&hl, &ex, 7, NULL), 2);
	hostlist_clear(&hl);
	hostlist_clear(&ex);
}
END_TEST

START_TEST(exclude_and_dedupe)
{
	struct hostlist hl = { 0 }, ex = { 0 };
	struct rd_err err = { 0 };

	ck_assert_int_eq(hostlist_parse(&hl, "n[1-6],n2,n1,x,n2", &err), 0);
	ck_assert_uint_eq(hostlist_dedupe(&hl), 3);	/* n2 three times */
	ck_assert_uint_eq(hl.n, 7);
	ck_assert_str_eq(hl.hosts[0], "n1");
	ck_assert_str_eq(hl.hosts[6], "x");
	ck_assert_int_eq(hostlist_parse(&ex, "n[2-3],n9,x", &err), 0);
	hostlist_exclude(&hl, &ex);
	ck_assert_uint_eq(hl.n, 4);
	ck_assert_str_eq(hl.hosts[0], "n1");
	ck_assert_str_eq(hl.hosts[1], "n4");
	ck_assert_str_eq(hl.hosts[3], "n6");
	hostlist_clear(&hl);
	hostlist_clear(&ex);
}
END_TEST

static const char *
compress(const char *spec, const bool *pick)
{
	static char out[4096];
	struct hostlist hl = { 0 };
	struct rd_err err = { 0 };
	long n;

	ck_assert_int_eq(hostlist_parse(&hl, spec, &err), 0);
	n = hostlist_compress(hl.hosts, hl.n, pick, out, sizeof(out));
	ck_assert_int_eq(n, (long)strlen(out));
	hostlist_clear(&hl);
	return out;
}

START_TEST(compression)
{
	static const bool pick[] = { true, false, true, true, false };

	ck_assert_str_eq(compress("node01,node02,node03,node05", NULL),
			 "node[01-03,05]");
	ck_assert_str_eq(compress("n3,n1,n2,other,n2", NULL), "n[1-3],other");
	ck_assert_str_eq(compress("n09,n10,n11", NULL), "n[09-11]");
	ck_assert_str_eq(compress("n9,n10,n010", NULL), "n[9-10,010]");
	ck_assert_str_eq(compress("n7,n07", NULL), "n[7,07]");
	ck_assert_str_eq(compress("rack1n01,rack1n02,rack2n01", NULL),
			 "rack1n[01-02],rack2n01");
	ck_assert_str_eq(compress("10.0.0.[1-4]:7000,10.0.0.9:7001", NULL),
			 "10.0.0.[1-4]:7000,10.0.0.9:7001");
	ck_assert_str_eq(compress("a,[::1]:5", NULL), "[::1]:5,a");
	ck_assert_str_eq(compress("single", NULL), "single");
	ck_assert_str_eq(compress("h[1-5]", pick), "h[1,3-4]");
	ck_assert_str_eq(compress("x", (const bool[]){ false }), "");
}
END_TEST

/* compress(expand(S)) expands back to the same set, for many S. */
START_TEST(compression_round_trips)
{
	static const char *const specs[] = {
		"n[0-200]", "a[001-120,500],b[7-9]x,c",
		"r[1-3]n[08-12]:99,s", "h[1,3,5,7-20,99]", "n[9-12],n[09-12]",
	};
	struct hostlist a = { 0 }, b = { 0 };
	struct rd_err err = { 0 };
	char buf[8192];
	size_t i, j;

	for (i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		ck_assert_int_eq(hostlist_parse(&a, specs[i], &err), 0);
		ck_assert(hostlist_compress(a.hosts, a.n, NULL, buf,
					    sizeof(buf)) < (long)sizeof(buf));
		ck_assert_msg(hostlist_parse(&b, buf, &err) == 0, "%s: %s",
			      buf, err.msg);
		hostlist_dedupe(&a);
		ck_assert_uint_eq(a.n, b.n);
		hostlist_exclude(&a, &b);
		ck_assert_msg(a.n == 0, "%s -> %s lost %s", specs[i], buf,
			      a.hosts[0]);
		hostlist_clear(&a);
		hostlist_clear(&b);
		(void)j;
	}
}
END_TEST

START_TEST(compression_truncates)
{
	char small[12];
	long n;
	struct hostlist hl = { 0 };
	struct rd_err err = { 0 };

	ck_assert_int_eq(hostlist_parse(&hl, "a,bb,ccc,dddd,eeeee", &err), 0);
	n = hostlist_compress(hl.hosts, hl.n, NULL, small, sizeof(small));
	ck_assert_int_eq(n, 19);
	ck_assert_str_eq(small, "a,bb,ccc...");
	hostlist_clear(&hl);
}
END_TEST

/* Hosts go to a remote shell's command line (--rsh): only names and
 * addresses, never shell syntax or an option. */
START_TEST(names_and_addresses_only)
{
	static const char *const bad[][3] = {
		/* spec, the name quoted, why and where */
		{ "h;touch${IFS}x", "h;touch${IFS}x",
		  "(';' cannot be in one) at character 2" },
		{ "a,$(touch${IFS}x)", "$(touch${IFS}x)",
		  "('$' cannot start one) at character 3" },
		{ "`id`", "`id`", "('`' cannot start one) at character 1" },
		{ "n[1-2]|id", "n1|id", "('|' cannot be in one) at character 7" },
		{ "a'b:22", "a'b", "(''' cannot be in one) at character 2" },
		{ "a\"b", "a\"b", "('\"' cannot be in one) at character 2" },
		{ "-oProxyCommand=x", "-oProxyCommand=x",
		  "('-' cannot start one) at character 1" },
		{ "x,-[1-2]", "-1", "('-' cannot start one) at character 3" },
		{ ".a", ".a", "('.' cannot start one) at character 1" },
		{ "user@host", "user@host", "('@' cannot be in one)" },
		{ "a=b", "a=b", "('=' cannot be in one)" },
		{ "a%b", "a%b", "('%' cannot be in one)" },
		{ "[::1;id]:7", "::1;id", "(with a ':' it must be an IPv6 "
		  "address) at character 1" },
		{ "a:b:c", "a:b:c", "must be an IPv6 address" },
		{ "fe80::1%", "fe80::1%", "('%' cannot be in one) at character 8" },
		{ "fe80::1%e$x", "fe80::1%e$x", "('$' cannot be in one) at "
		  "character 10" },
		{ "[fe80::1%e:x]", "fe80::1%e:x", "(':' cannot be in one) at "
		  "character 11" },
	};
	char want[128];
	const char *m;
	size_t i;

	ck_assert_str_eq(expand("n[1-2]x_y-z.example.com,UP9,9lives.,a_"),
			 "n1x_y-z.example.com n2x_y-z.example.com UP9 "
			 "9lives. a_");
	ck_assert_str_eq(expand("10.0.0.1:22,[fe80::1%eth0]:7000,fe80::2%lo,"
				"::ffff:10.0.0.1,[::1]"),
			 "10.0.0.1:22 [fe80::1%eth0]:7000 fe80::2%lo "
			 "::ffff:10.0.0.1 [::1]");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		m = error_of(bad[i][0], -EINVAL);
		snprintf(want, sizeof(want), "'%s' is not a host name or "
			 "address ", bad[i][1]);
		ck_assert_msg(strstr(m, want) != NULL, "%s: %s", bad[i][0], m);
		ck_assert_msg(strstr(m, bad[i][2]) != NULL, "%s: %s", bad[i][0],
			      m);
	}
}
END_TEST

static Suite *
hostlist_suite(void)
{
	Suite *s = suite_create("hostlist");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, plain_lists);
	tcase_add_test(tc, ranges);
	tcase_add_test(tc, step_ranges);
	tcase_add_test(tc, leave_out_by_name_and_port);
	tcase_add_test(tc, errors_point_at_the_character);
	tcase_add_test(tc, names_and_addresses_only);
	tcase_add_test(tc, host_files);
	tcase_add_test(tc, exclude_and_dedupe);
	tcase_add_test(tc, compression);
	tcase_add_test(tc, compression_round_trips);
	tcase_add_test(tc, compression_truncates);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(hostlist_suite());
}
