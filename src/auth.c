/*
 * auth - shared key and challenge-response (see auth.h).
 */
#include "auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#define KEY_HEX (2 * AUTH_KEY_LEN)

/* OpenSSL's HMAC, fetched once: the first fetch sets up its provider
 * tables, which costs a daemon about a millisecond of CPU; done when the
 * key is loaded, that is not in a push's path (1,024 daemons doing it at
 * once, in their first job, took 0.6 s of a push).  Kept for the life of
 * the process. */
static EVP_MAC *
hmac_method(void)
{
	static EVP_MAC *m;

	if (m == NULL)
		m = EVP_MAC_fetch(NULL, "HMAC", NULL);
	return m;
}

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
	uint8_t mac[AUTH_MAC_LEN];
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
	OPENSSL_cleanse(text, sizeof(text));
	close(fd);
	if (rc == 0 && auth_hmac(key->k, AUTH_KEY_LEN, NULL, NULL, 0,
				 mac) < 0)	/* and ready for use */
		rc = rd_errf(err, -EIO, "no HMAC-SHA256 in this OpenSSL");
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
	OPENSSL_cleanse(raw, sizeof(raw));
	OPENSSL_cleanse(text, sizeof(text));
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

/* A context with the key set, copied for each MAC: setting the key up
 * looks the digest up again (a few microseconds each time; a sender
 * computes two MACs per host).  One key per process, so one is kept. */
static EVP_MAC_CTX *
keyed_ctx(const uint8_t *key, size_t keylen)
{
	static EVP_MAC_CTX *keyed;
	static uint8_t keyed_with[AUTH_KEY_LEN];
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
						 (char *)"SHA256", 0),
		OSSL_PARAM_construct_end(),
	};
	EVP_MAC *m = hmac_method();
	EVP_MAC_CTX *ctx;

	if (keyed != NULL && keylen == AUTH_KEY_LEN &&
	    CRYPTO_memcmp(key, keyed_with, keylen) == 0)
		return EVP_MAC_CTX_dup(keyed);
	ctx = m != NULL ? EVP_MAC_CTX_new(m) : NULL;
	if (ctx == NULL || !EVP_MAC_init(ctx, key, keylen, params)) {
		EVP_MAC_CTX_free(ctx);
		return NULL;
	}
	if (keylen == AUTH_KEY_LEN) {
		EVP_MAC_CTX_free(keyed);
		keyed = EVP_MAC_CTX_dup(ctx);
		memcpy(keyed_with, key, keylen);
	}
	return ctx;
}

int
auth_hmac(const uint8_t *key, size_t keylen, const void *const *piece,
	  const size_t *len, int n, uint8_t mac[AUTH_MAC_LEN])
{
	EVP_MAC_CTX *ctx = keyed_ctx(key, keylen);
	size_t out = 0;
	int i, ok = ctx != NULL;

	for (i = 0; ok && i < n; i++)
		ok = EVP_MAC_update(ctx, piece[i], len[i]);
	ok = ok && EVP_MAC_final(ctx, mac, &out, AUTH_MAC_LEN) &&
	     out == AUTH_MAC_LEN;
	EVP_MAC_CTX_free(ctx);
	return ok ? 0 : -EIO;
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
		const uint8_t nonce_d[AUTH_NONCE_LEN], const void *job,
		size_t joblen, uint8_t mac[AUTH_MAC_LEN])
{
	static const char label[] = "rdmcp sender";
	const void *piece[] = { label, nonce_s, nonce_d, job };
	const size_t len[] = { sizeof(label), AUTH_NONCE_LEN,
			       AUTH_NONCE_LEN, joblen };

	return auth_hmac(key->k, AUTH_KEY_LEN, piece, len, 4, mac);
}

bool
auth_mac_equal(const uint8_t a[AUTH_MAC_LEN], const uint8_t b[AUTH_MAC_LEN])
{
	return CRYPTO_memcmp(a, b, AUTH_MAC_LEN) == 0;
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
