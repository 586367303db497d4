/* SPDX-License-Identifier: MIT */
/*
 * serve_int - what the parts of the daemon share: serve.c (the daemon,
 * its transfers, what became of them) and fresh.c (connections before
 * they are known: the handshake, the first request).  Not for other
 * folders.
 */
#ifndef RDMCP_SERVE_INT_H
#define RDMCP_SERVE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#include "daemon/serve.h"
#include "daemon/transfer.h"
#include "proto/proto.h"

struct fresh;
struct gate;
struct conn;
struct conn_listener;
struct vb;

/* What became of the jobs that ended lately, for senders that ask
 * (QUERY): a ring of the last OUTCOMES_KEPT. */
#define OUTCOMES_KEPT 1024u

struct outcome {
	uint8_t token[PROTO_TOKEN_LEN];
	bool landed;
};

struct serve {
	struct serve_cfg cfg;
	struct transfer_env env;
	struct vb *vb;
	char **roots;
	size_t nroots;
	char *prefix;
	char *state_dir;	/* real, or NULL: jobs record nothing */
	struct conn_listener *listener;
	struct sockaddr_storage bound;
	struct transfer **jobs;
	size_t njobs, jobcap;
	struct fresh *fresh;
	struct partials *partials;
	struct gate *gate;
	bool stopping;
	uv_timer_t idle;	/* --once: no job for cfg.idle_ms */
	uv_timer_t trim;	/* no job for a while: memory back */
	bool trim_used;
	bool idle_used;
	bool landed;		/* a job landed its files */
	struct outcome *outcomes;	/* OUTCOMES_KEPT, or NULL */
	size_t noutcomes;		/* recorded in all */
};

/* serve.c: --once: (re)start waiting for a job, for cfg.idle_ms at most. */
void serve_idle_arm(struct serve *s);

/* serve.c: what became of the job with `token` (a running job's outcome
 * is made final: transfer_resolve). */
enum proto_outcome serve_outcome_of(struct serve *s, const uint8_t *token);

/* serve.c: a new transfer for `job` (ours to free from now) on control
 * connection c.  0 or -errno. */
int serve_job_add(struct serve *s, struct conn *c, struct job *job);

/* serve.c: a member's data connection, by its HELLO, to its transfer.
 * 0, -EPROTO (a bad HELLO) or -ENOENT (no such transfer here). */
int serve_route_hello(struct serve *s, struct conn *c, const struct frame *f,
		      const uint8_t *body);

/* fresh.c: the gate of unauthenticated connections, sized from this
 * process's descriptor limit.  0 or -errno. */
int serve_gate(struct serve *s);

/* fresh.c: the listener's callback: a new connection's socket (or a
 * negative errno when accepting failed). */
void serve_on_incoming(void *ctx, int fd);

/* fresh.c: drop every connection not yet known (at shutdown). */
void serve_fresh_close_all(struct serve *s);

#endif
