/* SPDX-License-Identifier: MIT */
/*
 * unit.h - what the unit tests share: running a Check suite.
 */
#ifndef RDMCP_TEST_UNIT_H
#define RDMCP_TEST_UNIT_H

#include <check.h>
#include <stdlib.h>

/* Run every test of `s`; EXIT_SUCCESS if all passed. */
static inline int
run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
