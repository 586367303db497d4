/* SPDX-License-Identifier: MIT */
/*
 * auth: HMAC-SHA-256 against RFC 4231, key files (format, permissions,
 * never overwritten), and proofs that depend on every input.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "proto/auth.h"
#include "proto/proto.h"

START_TEST(hmac_rfc4231)
{
	/* RFC 4231, test case 2 */
	static const uint8_t want[AUTH_MAC_LEN] = {
		0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e, 0x6a, 0x04,
		0x24, 0x26, 0x08, 0x95, 0x75, 0xc7, 0x5a, 0x00, 0x3f, 0x08,
		0x9d, 0x27, 0x39, 0x83, 0x9d, 0xec, 0x58, 0xb9, 0x64, 0xec,
		0x38, 0x43,
	};
	const void *piece[] = { "what do ya want ", "for nothing?" };
	const size_t len[] = { 16, 12 };
	uint8_t mac[AUTH_MAC_LEN];

	ck_assert_int_eq(auth_hmac((const uint8_t *)"Jefe", 4, piece, len, 2,
				   mac), 0);
	ck_assert(memcmp(mac, want, sizeof(mac)) == 0);
	ck_assert(auth_mac_equal(mac, want));
	mac[31] ^= 1;
	ck_assert(!auth_mac_equal(mac, want));
}
END_TEST

static char dir[] = "/tmp/rdmcp-test-auth.XXXXXX";

static const char *
file(const char *name)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void
write_file(const char *name, const char *text, mode_t mode)
{
	FILE *f = fopen(file(name), "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	chmod(file(name), mode);
}

START_TEST(key_files)
{
	struct auth_key a, b;
	struct rd_err err = { 0 };
	struct stat st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(auth_write_key(file("k"), &err), 0);
	ck_assert_int_eq(stat(file("k"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	ck_assert_uint_eq(st.st_size, 65);
	ck_assert_int_eq(auth_write_key(file("k"), &err), -EEXIST);
	rd_err_clear(&err);
	ck_assert_int_eq(auth_load_key(file("k"), &a, &err), 0);
	ck_assert_int_eq(auth_write_key(file("k2"), &err), 0);
	ck_assert_int_eq(auth_load_key(file("k2"), &b, &err), 0);
	ck_assert(memcmp(a.k, b.k, AUTH_KEY_LEN) != 0);

	write_file("hex", "000102030405060708090a0b0c0d0e0f"
		   "101112131415161718191A1B1C1D1E1F", 0400);
	ck_assert_int_eq(auth_load_key(file("hex"), &a, &err), 0);
	ck_assert_uint_eq(a.k[0], 0);
	ck_assert_uint_eq(a.k[31], 0x1f);
	write_file("short", "0001\n", 0600);
	ck_assert_int_eq(auth_load_key(file("short"), &a, &err), -EINVAL);
	ck_assert_msg(strstr(err.msg, "not a key") != NULL, "%s", err.msg);
	rd_err_clear(&err);
	write_file("open", "000102030405060708090a0b0c0d0e0f"
		   "101112131415161718191a1b1c1d1e1f\n", 0640);
	ck_assert_int_eq(auth_load_key(file("open"), &a, &err), -EPERM);
	ck_assert_msg(strstr(err.msg, "chmod 600") != NULL, "%s", err.msg);
	rd_err_clear(&err);
	ck_assert_int_eq(auth_load_key(file("none"), &a, &err), -ENOENT);
	ck_assert_msg(strstr(err.msg, "--genkey") != NULL, "%s", err.msg);
	rd_err_clear(&err);
	ck_assert_int_eq(auth_load_key(dir, &a, &err), -EINVAL);	/* a dir */
	for (const char *n = "k\0k2\0hex\0short\0open\0"; *n; n += strlen(n) + 1)
		unlink(file(n));
	rmdir(dir);
}
END_TEST

START_TEST(proofs_depend_on_everything)
{
	struct auth_key k1 = { { 1 } }, k2 = { { 2 } };
	uint8_t ns[AUTH_NONCE_LEN] = { 3 }, nd[AUTH_NONCE_LEN] = { 4 };
	uint8_t d1[AUTH_MAC_LEN], d2[AUTH_MAC_LEN], s1[AUTH_MAC_LEN],
		s2[AUTH_MAC_LEN];

	ck_assert_int_eq(auth_daemon_mac(&k1, ns, nd, d1), 0);
	ck_assert_int_eq(auth_sender_mac(&k1, ns, nd, s1), 0);
	ck_assert(!auth_mac_equal(d1, s1));		/* roles differ */
	ck_assert_int_eq(auth_daemon_mac(&k2, ns, nd, d2), 0);
	ck_assert(!auth_mac_equal(d1, d2));		/* keys differ */
	ck_assert_int_eq(auth_daemon_mac(&k1, nd, ns, d2), 0);
	ck_assert(!auth_mac_equal(d1, d2));		/* nonces swapped */
	ck_assert_int_eq(auth_request_mac(&k1, ns, nd, MSG_JOB, "job", 3, s1),
			 0);
	ck_assert_int_eq(auth_request_mac(&k1, ns, nd, MSG_JOB, "jo", 2, s2),
			 0);
	ck_assert(!auth_mac_equal(s1, s2));		/* job differs */
	ck_assert_int_eq(auth_request_mac(&k1, ns, nd, MSG_QUERY, "job", 3,
					  s2), 0);
	ck_assert(!auth_mac_equal(s1, s2));		/* type differs */
	ck_assert_int_eq(auth_sender_mac(&k1, ns, nd, s2), 0);
	ck_assert(!auth_mac_equal(s1, s2));		/* proof != request */
	ck_assert_int_eq(auth_request_mac(&k1, ns, nd, MSG_JOB, "job", 3, s2),
			 0);
	ck_assert(auth_mac_equal(s1, s2));
	ck_assert_int_eq(auth_nonce(ns), 0);
	ck_assert_int_eq(auth_nonce(nd), 0);
	ck_assert(memcmp(ns, nd, AUTH_NONCE_LEN) != 0);
}
END_TEST

static int failure_lines;
static char last_line[1024];

static void
count_lines(void *ctx, enum log_level level, const char *msg)
{
	ck_assert_int_eq(level, LOG_WARN);
	failure_lines++;
	snprintf(last_line, sizeof(last_line), "%s", msg);
}

/* A burst of failures is logged, then at most one a second; the next line
 * counts those left out. */
START_TEST(failures_logged_within_a_budget)
{
	int i;

	log_setup(count_lines, NULL, LOG_INFO);
	for (i = 0; i < 25; i++)
		auth_log_failure("192.0.2.1:5000", "wrong key");
	ck_assert_int_eq(failure_lines, 10);
	ck_assert_str_eq(last_line, "authentication failed with the sender "
			 "at 192.0.2.1:5000: wrong key");
	usleep(1100 * 1000);
	auth_log_failure("192.0.2.2:5000", "wrong key");
	ck_assert_int_eq(failure_lines, 11);
	ck_assert_msg(strstr(last_line, "192.0.2.2:5000: wrong key (and 15 "
			     "more failures before, not logged)") != NULL, "%s",
		      last_line);
	auth_log_failure("192.0.2.3:5000", "wrong key");
	ck_assert_int_eq(failure_lines, 11);
	log_setup(NULL, NULL, LOG_WARN);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("auth");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, hmac_rfc4231);
	tcase_add_test(tc, key_files);
	tcase_add_test(tc, proofs_depend_on_everything);
	tcase_add_test(tc, failures_logged_within_a_budget);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
