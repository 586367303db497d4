/* SPDX-License-Identifier: MIT */
/*
 * auth - shared key and challenge-response (see auth.h).
 */
#include "proto/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nettle/hmac.h>
#include <nettle/memops.h>

#define KEY_HEX (2 * AUTH_KEY_LEN)

static int
hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
auth_parse_key(const char *text, size_t n, struct auth_key *key)
{
	size_t i;
	int hi, lo;

	if (n == KEY_HEX + 1 && text[KEY_HEX] == '\n')
		n--;
	if (n != KEY_HEX)
		return -EINVAL;
	for (i = 0; i < AUTH_KEY_LEN; i++) {
		hi = hex_value(text[2 * i]);
		lo = hex_value(text[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		key->k[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

static int
check_key_file(int fd, const char *path, struct rd_err *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return rd_errf(err, -errno, "key %s: %s", path,
			       strerror(errno));
	if (!S_ISREG(st.st_mode))
		return rd_errf(err, -EINVAL, "key %s is not a regular file",
			       path);
	if (st.st_mode & (S_IRWXG | S_IRWXO))
		return rd_errf(err, -EPERM, "key %s is accessible to other "
			       "users (mode %03o); 'chmod 600 %s'", path,
			       (unsigned)(st.st_mode & 0777), path);
	return 0;
}

int
auth_load_key(const char *path, struct auth_key *key, struct rd_err *err)
{
	char text[KEY_HEX + 2];
	ssize_t n;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return rd_errf(err, -errno, "cannot read the key %s: %s "
			       "(create one with 'rdmcp --genkey %s' and copy "
			       "it to every host, or give --key)", path,
			       strerror(errno), path);
	rc = check_key_file(fd, path, err);
	if (rc == 0) {
		do
			n = read(fd, text, sizeof(text));
		while (n < 0 && errno == EINTR);
		if (n < 0)
			rc = rd_errf(err, -errno, "key %s: %s", path,
				     strerror(errno));
		else if (auth_parse_key(text, (size_t)n, key) < 0)
			rc = rd_errf(err, -EINVAL, "key %s: not a key (64 hex "
				     "digits, as 'rdmcp --genkey' writes)",
				     path);
	}
	explicit_bzero(text, sizeof(text));
	close(fd);
	return rc;
}

int
auth_write_key(const char *path, struct rd_err *err)
{
	uint8_t raw[AUTH_KEY_LEN];
	char text[KEY_HEX + 2];
	size_t i;
	int fd, rc = 0;

	if (auth_nonce(raw) < 0)
		return rd_errf(err, -EIO, "no random bytes for a key");
	for (i = 0; i < AUTH_KEY_LEN; i++)
		snprintf(text + 2 * i, 3, "%02x", raw[i]);
	text[KEY_HEX] = '\n';
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		rc = rd_errf(err, -errno, "cannot create the key %s: %s", path,
			     strerror(errno));
	else if (write(fd, text, KEY_HEX + 1) != KEY_HEX + 1 || fsync(fd) < 0)
		rc = rd_errf(err, -EIO, "cannot write the key %s: %s", path,
			     strerror(errno));
	if (fd >= 0 && close(fd) < 0 && rc == 0)
		rc = rd_errf(err, -errno, "key %s: %s", path, strerror(errno));
	if (rc < 0 && fd >= 0)
		unlink(path);
	explicit_bzero(raw, sizeof(raw));
	explicit_bzero(text, sizeof(text));
	return rc;
}

int
auth_nonce(uint8_t nonce[AUTH_NONCE_LEN])
{
	ssize_t n;

	do
		n = getrandom(nonce, AUTH_NONCE_LEN, 0);
	while (n < 0 && errno == EINTR);
	return n == AUTH_NONCE_LEN ? 0 : -EIO;
}

int
auth_hmac(const uint8_t *key, size_t keylen, const void *const *piece,
	  const size_t *len, int n, uint8_t mac[AUTH_MAC_LEN])
{
	struct hmac_sha256_ctx ctx;
	int i;

	hmac_sha256_set_key(&ctx, keylen, key);
	for (i = 0; i < n; i++)
		hmac_sha256_update(&ctx, len[i], piece[i]);
	hmac_sha256_digest(&ctx, AUTH_MAC_LEN, mac);
	explicit_bzero(&ctx, sizeof(ctx));
	return 0;
}

int
auth_daemon_mac(const struct auth_key *key,
		const uint8_t nonce_s[AUTH_NONCE_LEN],
		const uint8_t nonce_d[AUTH_NONCE_LEN], uint8_t mac[AUTH_MAC_LEN])
{
	static const char label[] = "rdmcp daemon";
	const void *piece[] = { label, nonce_s, nonce_d };
	const size_t len[] = { sizeof(label), AUTH_NONCE_LEN,
			       AUTH_NONCE_LEN };

	return auth_hmac(key->k, AUTH_KEY_LEN, piece, len, 3, mac);
}

int
auth_sender_mac(const struct auth_key *key,
		const uint8_t nonce_s[AUTH_NONCE_LEN],
		const uint8_t nonce_d[AUTH_NONCE_LEN], uint8_t mac[AUTH_MAC_LEN])
{
	static const char label[] = "rdmcp sender";
	const void *piece[] = { label, nonce_s, nonce_d };
	const size_t len[] = { sizeof(label), AUTH_NONCE_LEN,
			       AUTH_NONCE_LEN };

	return auth_hmac(key->k, AUTH_KEY_LEN, piece, len, 3, mac);
}

int
auth_request_mac(const struct auth_key *key,
		 const uint8_t nonce_s[AUTH_NONCE_LEN],
		 const uint8_t nonce_d[AUTH_NONCE_LEN], uint8_t type,
		 const void *req, size_t reqlen, uint8_t mac[AUTH_MAC_LEN])
{
	static const char label[] = "rdmcp request";
	const void *piece[] = { label, nonce_s, nonce_d, &type, req };
	const size_t len[] = { sizeof(label), AUTH_NONCE_LEN,
			       AUTH_NONCE_LEN, 1, reqlen };

	return auth_hmac(key->k, AUTH_KEY_LEN, piece, len, 5, mac);
}

bool
auth_mac_equal(const uint8_t a[AUTH_MAC_LEN], const uint8_t b[AUTH_MAC_LEN])
{
	return memeql_sec(a, b, AUTH_MAC_LEN) != 0;
}

/* A burst of this many failure lines, then one a second. */
#define AUTH_LOG_BURST 10

void
auth_log_failure(const char *peer, const char *why)
{
	static double budget = AUTH_LOG_BURST, last;
	static unsigned left_out;
	struct timespec ts;
	double now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	budget += last > 0 ? now - last : 0;
	budget = budget > AUTH_LOG_BURST ? AUTH_LOG_BURST : budget;
	last = now;
	if (budget < 1) {
		left_out++;
		return;
	}
	budget -= 1;
	if (left_out > 0)
		log_warn("authentication failed with the sender at %s: %s (and "
			 "%u more failures before, not logged)", peer, why,
			 left_out);
	else
		log_warn("authentication failed with the sender at %s: %s",
			 peer, why);
	left_out = 0;
}
