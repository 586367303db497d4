/* SPDX-License-Identifier: MIT */
/*
 * auth - the shared key and the mutual challenge-response of a push.
 *
 * Every host of a cluster holds the same secret key file (32 random bytes,
 * written as 64 hex digits, mode 0600; see auth_write_key).  A sender and
 * a daemon prove to each other that they hold it before the daemon looks
 * at a job, with HMAC-SHA-256 (Nettle) over fresh nonces from
 * both sides:
 *
 *   sender -> daemon   AUTH       nonce_s
 *   daemon -> sender   CHALLENGE  nonce_d, HMAC(K, "rdmcp daemon" nonce_s nonce_d)
 *   sender -> daemon   PROOF      HMAC(K, "rdmcp sender" nonce_s nonce_d),
 *                                 HMAC(K, "rdmcp request" nonce_s nonce_d
 *                                      type REQUEST)
 *   sender -> daemon   REQUEST    (a JOB or a QUERY, of that type)
 *
 * Each side checks the other's proof before it believes or keeps anything
 * else from it: the daemon checks the first half of PROOF as soon as it
 * arrives, before it lets a request body in (an endpoint without the key
 * cannot make it hold more than a few bytes), and the sender accepts no
 * frame but CHALLENGE before it has checked the daemon's.  The second half
 * covers the request itself, so that it cannot be changed in flight.
 * Nothing else is protected: data is neither encrypted nor authenticated
 * beyond --verify's crc32 (see rdmcp(1)).
 */
#ifndef RDMCP_AUTH_H
#define RDMCP_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/log.h"

#define AUTH_KEY_LEN 32
#define AUTH_NONCE_LEN 32
#define AUTH_MAC_LEN 32
#define AUTH_DEFAULT_KEY "/etc/rdmcp/key"

struct auth_key {
	uint8_t k[AUTH_KEY_LEN];
};

/* Load the key at `path`: a regular file holding 64 hex digits (and an
 * optional newline), readable and writable by its owner only.  Returns 0
 * or -errno with a reason that says how to fix it. */
int auth_load_key(const char *path, struct auth_key *key, struct rd_err *err);

/* Parse a key written as 64 hex digits followed by at most a newline
 * (n counts both).  Returns 0 or -EINVAL. */
int auth_parse_key(const char *text, size_t n, struct auth_key *key);

/* Create `path` with a new random key, mode 0600; never replaces a file.
 * Returns 0 or -errno with a reason. */
int auth_write_key(const char *path, struct rd_err *err);

/* Fresh random bytes.  Returns 0 or -errno. */
int auth_nonce(uint8_t nonce[AUTH_NONCE_LEN]);

/* The daemon's answer to nonce_s. */
int auth_daemon_mac(const struct auth_key *key,
		    const uint8_t nonce_s[AUTH_NONCE_LEN],
		    const uint8_t nonce_d[AUTH_NONCE_LEN],
		    uint8_t mac[AUTH_MAC_LEN]);

/* The sender's proof that it holds the key. */
int auth_sender_mac(const struct auth_key *key,
		    const uint8_t nonce_s[AUTH_NONCE_LEN],
		    const uint8_t nonce_d[AUTH_NONCE_LEN],
		    uint8_t mac[AUTH_MAC_LEN]);

/* The sender's MAC of the request (frame `type`, body `req` of `len`
 * bytes) that follows its proof. */
int auth_request_mac(const struct auth_key *key,
		     const uint8_t nonce_s[AUTH_NONCE_LEN],
		     const uint8_t nonce_d[AUTH_NONCE_LEN], uint8_t type,
		     const void *req, size_t len, uint8_t mac[AUTH_MAC_LEN]);

/* PROOF's body: the sender's MAC, then the request's. */
#define AUTH_PROOF_LEN (2 * AUTH_MAC_LEN)

/* HMAC-SHA-256 of the concatenation of n pieces into mac (exposed for
 * tests); 0. */
int auth_hmac(const uint8_t *key, size_t keylen, const void *const *piece,
	      const size_t *len, int n, uint8_t mac[AUTH_MAC_LEN]);

/* Log (a warning) that the sender at `peer` failed to authenticate, and
 * why: a burst of 10 lines, then at most one a second, so that failing on
 * purpose cannot flood the log; the next line counts those left out. */
void auth_log_failure(const char *peer, const char *why);

/* Constant-time comparison of two MACs. */
bool auth_mac_equal(const uint8_t a[AUTH_MAC_LEN],
		    const uint8_t b[AUTH_MAC_LEN]);

#endif
