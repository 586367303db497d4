/* SPDX-License-Identifier: MIT */
/*
 * Topology files: both forms of a rack line, lookups by full and short
 * name with and without a port, errors that name the line, and the rack
 * order of a host list.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "hosts/topo.h"

static struct topo *
parse_ok(const char *text)
{
	struct rd_err err = { 0 };
	struct topo *t = NULL;

	ck_assert_msg(topo_parse(text, "t.conf", &t, &err) == 0, "%s",
		      err.msg);
	ck_assert_ptr_nonnull(t);
	return t;
}

static const char *
parse_error(const char *text)
{
	static struct rd_err err;
	struct topo *t = (struct topo *)&err;	/* must become NULL */

	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(topo_parse(text, "t.conf", &t, &err), -EINVAL);
	ck_assert_ptr_null(t);
	return err.msg;
}

START_TEST(both_forms)
{
	struct topo *t = parse_ok(
		"# racks\n"
		"SwitchName=s1 Nodes=node[01-04] LinkSpeed=100\n"
		"SwitchName=core Switches=s[1-2]\n"
		"\n"
		"s2: node[05-08],gpu1.example.org   # the other rack\n"
		"s1: extra\n");

	ck_assert_uint_eq(topo_racks(t), 2);
	ck_assert_str_eq(topo_rack_name(t, 0), "s1");
	ck_assert_str_eq(topo_rack_name(t, 1), "s2");
	ck_assert_ptr_null(topo_rack_name(t, 2));
	ck_assert_int_eq(topo_rack_of(t, "node03"), 0);
	ck_assert_int_eq(topo_rack_of(t, "extra"), 0);	/* s1 twice: merged */
	ck_assert_int_eq(topo_rack_of(t, "node05:7000"), 1);
	ck_assert_int_eq(topo_rack_of(t, "node06.cluster.local"), 1);
	ck_assert_int_eq(topo_rack_of(t, "gpu1.example.org"), 1);
	ck_assert_int_eq(topo_rack_of(t, "gpu1"), 1);	/* by its short name */
	ck_assert_int_eq(topo_rack_of(t, "gpu1.other.net"), 1);
	ck_assert_int_eq(topo_rack_of(t, "node09"), -1);
	topo_free(t);
}
END_TEST

START_TEST(addresses)
{
	struct topo *t = parse_ok("a: 10.0.0.[1-2]\nb: [fe80::1],10.0.1.1\n");

	ck_assert_int_eq(topo_rack_of(t, "10.0.0.2:17400"), 0);
	ck_assert_int_eq(topo_rack_of(t, "10.0.1.1"), 1);
	ck_assert_int_eq(topo_rack_of(t, "[fe80::1]:9"), 1);
	ck_assert_int_eq(topo_rack_of(t, "10.0.0"), -1);	/* no short name */
	topo_free(t);
}
END_TEST

START_TEST(errors)
{
	ck_assert_str_eq(parse_error("a: n1\nnot a rack\n"),
			 "t.conf, line 2: not 'RACK: HOSTS' nor "
			 "'SwitchName=RACK Nodes=HOSTS'");
	ck_assert_ptr_nonnull(strstr(parse_error("a: n[1-\n"),
				     "t.conf, line 1: "));
	ck_assert_str_eq(parse_error("a: n1\nb: n[0-2]\n"),
			 "t.conf: host n1 is listed twice (racks a and b)");
	ck_assert_ptr_nonnull(strstr(parse_error("# nothing\n"),
				     "no racks in it"));
	ck_assert_ptr_nonnull(strstr(parse_error("SwitchName=x Nodes=\n"),
				     "line 1"));
	ck_assert_ptr_nonnull(strstr(parse_error("a:n1\n"), "line 1"));
}
END_TEST

START_TEST(rack_order)
{
	struct topo *t = parse_ok("r1: n1,n3,n5\nr2: n2,n4\nr3: n6\n");
	char names[8][8] = { "n1", "n2", "x", "n3", "n4", "n5", "n6:9", "y" };
	char *hosts[8], *fresh[8];
	const char *want[] = { "n2", "n4", "n1", "n3", "n5", "n6:9", "x", "y" };
	const char *want2[] = { "n1", "n3", "n5", "n2", "n4", "n6:9", "x", "y" };
	int rack_of[8], want_rack[] = { 1, 1, 0, 0, 0, 2, -1, -1 };
	size_t i;

	for (i = 0; i < 8; i++)
		hosts[i] = fresh[i] = names[i];
	/* this machine in r2: r2 first, then r1, r3 as they appear */
	ck_assert_int_eq(topo_order(t, 1, hosts, 8, rack_of), 0);
	for (i = 0; i < 8; i++) {
		ck_assert_str_eq(hosts[i], want[i]);
		ck_assert_int_eq(rack_of[i], want_rack[i]);
	}
	/* no rack of its own: the racks in the order they appear */
	ck_assert_int_eq(topo_order(t, -1, fresh, 8, rack_of), 0);
	for (i = 0; i < 8; i++)
		ck_assert_str_eq(fresh[i], want2[i]);
	topo_free(t);
	topo_free(NULL);
}
END_TEST

static Suite *
topo_suite(void)
{
	Suite *s = suite_create("topo");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, both_forms);
	tcase_add_test(tc, addresses);
	tcase_add_test(tc, errors);
	tcase_add_test(tc, rack_order);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(topo_suite());
}
