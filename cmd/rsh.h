/* SPDX-License-Identifier: MIT */
/*
 * Receivers without a daemon (--rsh).
 *
 * Sender side (rsh.c): on every host, run a one-shot receiver through a
 * remote shell,
 *
 *   RSH... [--] HOST 'REMOTE-RDMCP' --serve --once --key - -t T
 *        --connect-timeout C [--root DIR...] REMOTE-OPTS
 *
 * ("--" when RSH is ssh, which takes it), at most `fanout` of them
 * starting at once.  The hosts are names or addresses (hostlist.h): none
 * starts with '-' or holds anything a shell would act on, and every
 * substitution into the command line is quoted for the remote shell all
 * the same.  Each gets a one-time key on its standard input (never on a
 * command line) and answers with one line "RDMCP-PORT n" on its standard
 * output; the push then goes to HOST:n.
 * Their standard input stays open until rsh_finish(): its end of file (or
 * the sender's death, which closes it too) makes every receiver stop.
 *
 * Receiver side (once.c): the pieces of --serve --once on the command
 * line: the key from standard input, the port line, the watch on standard
 * input.
 */
#ifndef RDMCP_RSH_H
#define RDMCP_RSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "proto/auth.h"
#include "hosts/hostlist.h"
#include "daemon/serve.h"

/* The line a one-shot receiver prints: "RDMCP-PORT 41234". */
#define RSH_PORT_TAG "RDMCP-PORT"

struct rsh_cfg {
	const char *rsh;		/* remote shell command, split in words */
	const char *remote_path;	/* rdmcp on the hosts */
	const char *remote_opts;	/* appended as they are; %h: the
					 * host, quoted */
	unsigned fanout;		/* commands starting at once, >= 1 */
	unsigned connect_timeout_ms;	/* to report a port; also passed */
	unsigned timeout_ms;		/* passed as -t */
	const char *const *roots;	/* passed as --root unless remote_opts
					 * has --root or --prefix */
	size_t nroots;
	int verbose;
};

struct rsh;

/* Split a command into words as a shell would, without expansions:
 * blanks separate words, '...' and "..." quote, backslash escapes.  On
 * success *words is a NULL-terminated array (free with rsh_free_words)
 * and *n its length (0 for a blank command).  Returns 0 or -EINVAL for an
 * unterminated quote, -ENOMEM. */
int rsh_split(const char *s, char ***words, size_t *n);
void rsh_free_words(char **words);

/* Start a receiver on every host of hl (names without ports) and wait
 * until each has reported its port or failed (each within
 * cfg->connect_timeout_ms of its start).  Installs SIGINT, SIGTERM and
 * SIGHUP handlers that stop the receivers before the sender dies.
 * Returns 0 with *out set (then rsh_free it), or -errno after a message
 * on stderr (-EINVAL: bad --rsh or a host with a port). */
int rsh_start(const struct rsh_cfg *cfg, const struct hostlist *hl,
	      const struct auth_key *key, struct rsh **out);

/* Host i's "host:port" to push to, or NULL if its receiver failed. */
const char *rsh_target(const struct rsh *r, size_t i);

/* Why host i's receiver failed (its remote command's last error line). */
const char *rsh_reason(const struct rsh *r, size_t i);

/* Seconds from rsh_start() until every receiver had reported or failed. */
double rsh_seconds(const struct rsh *r);

/* Close every receiver's standard input, wait for the remote commands to
 * end (5 s at most, then they are killed) and reap them; restore the
 * signal handlers.  Idempotent. */
void rsh_finish(struct rsh *r);

/* rsh_finish, then release; NULL is a no-op. */
void rsh_free(struct rsh *r);

/* --serve --once --key -: read the key (64 hex digits and a newline) from
 * standard input, waiting timeout_ms at most.  Returns 0 or -errno after
 * a message. */
int once_read_key(unsigned timeout_ms, struct auth_key *key);

/* Print "RDMCP-PORT n" for the daemon's bound port on stdout, flushed. */
void once_announce(const struct serve *srv);

/* Watch standard input, if it is a pipe, socket or terminal: at its end
 * of file, serve_shutdown(srv).  The handle is unreferenced (it keeps no
 * loop alive); close it with once_unwatch.  Returns 0, or -errno if
 * standard input cannot be watched (then nothing was set up). */
int once_watch(uv_loop_t *loop, uv_poll_t *h, struct serve *srv);
void once_unwatch(uv_poll_t *h);

#endif
