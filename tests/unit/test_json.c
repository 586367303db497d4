/* SPDX-License-Identifier: MIT */
/*
 * JSON string literals: escapes, control characters, UTF-8 kept when
 * valid and replaced when not.
 */
#include <check.h>
#include <stdlib.h>

#include "unit.h"
#include "util/json.h"

static void
quoted(const char *in, const char *want)
{
	char *got = json_quote(in);

	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(escapes)
{
	quoted("", "\"\"");
	quoted("node01", "\"node01\"");
	quoted("a\"b\\c", "\"a\\\"b\\\\c\"");
	quoted("l1\nl2\r\t", "\"l1\\nl2\\r\\t\"");
	quoted("\x01\x1f", "\"\\u0001\\u001f\"");
	quoted(NULL, "null");
}
END_TEST

START_TEST(utf8)
{
	quoted("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	       "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	quoted("bad\xff", "\"bad\xef\xbf\xbd\"");
	quoted("\xc3", "\"\xef\xbf\xbd\"");			/* truncated */
	quoted("\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\"");	/* overlong */
	quoted("\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
	quoted("\xf4\x90\x80\x80x",
	       "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx\"");
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, escapes);
	tcase_add_test(tc, utf8);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
