/*
 * push_int - what the two halves of the sender share: push.c (hosts,
 * control connections, outcomes, the end) and pgroup.c (the group: its
 * transport, START, rank 0's engine, the final go).  Not for other
 * modules.
 */
#ifndef RDMCP_PUSH_INT_H
#define RDMCP_PUSH_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "auth.h"
#include "conn.h"
#include "engine.h"
#include "net.h"
#include "proto.h"
#include "push.h"
#include "store.h"
#include "verbs.h"
#include "wire.h"

enum hstate {
	HS_RESOLVING,
	HS_CONNECTING,
	HS_AUTH,	/* AUTH sent, waiting for CHALLENGE */
	HS_OFFERED,	/* JOB sent, waiting for ACCEPT */
	HS_ACCEPTED,
	HS_RUNNING,	/* START sent */
	HS_DONE,
	HS_FAILED,
};

struct phost {
	struct push *p;
	size_t idx;
	const char *name;
	char host[256];
	uint16_t port;
	struct sockaddr_storage addr;
	char addrstr[NET_ADDRSTRLEN];
	uv_getaddrinfo_t gai;
	struct conn *c;
	enum hstate st;
	uint32_t rank;
	uint16_t rdma_port;	/* offered in ACCEPT, 0: no RDMA */
	uint8_t nonce[AUTH_NONCE_LEN];	/* ours, for this daemon */
	bool refused;			/* it turned the job down */
	uint64_t held;			/* blocks it reported holding */
};


struct push {
	const struct push_cfg *cfg;
	uv_loop_t loop;
	uv_timer_t finisher;
	uv_timer_t aborter;
	uint64_t t0;
	struct store *st;
	struct wbuf jobmsg;
	uint8_t token[PROTO_TOKEN_LEN];
	struct phost *h;
	size_t nh;
	size_t undecided;	/* hosts not yet accepted or failed */
	size_t unfinished;	/* hosts not yet done or failed */
	uint32_t members;
	struct phost **by_rank;
	struct eng *eng;
	bool started, aborting, finishing, eng_done;
	uv_work_t crc_work;
	bool crc_busy, crc_ready;
	uint32_t crc;
	bool sent_all;		/* rank 0's engine sent every block */
	bool go_sent;		/* the final CRC frame went to the members */
	struct phost *suspect;	/* the peer rank 0's engine lost */
	char suspect_why[300];
	char abort_why[512];		/* what broke the group first */
	enum proto_transport group;	/* the transport the group uses */
	struct sockaddr_storage src;	/* our address towards the hosts */
	bool has_src;
	struct vb *vb;
	struct vb_dev *dev;
	struct rd_err fatal;		/* the sender itself failed */
	struct push_summary *sum;
};

/* Seconds since the push started. */
double push_elapsed(const struct push *p);

/* Host h failed (reported once); a running group is aborted. */
void push_host_fail(struct phost *h, int error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The group cannot finish: abort its members after a grace period, with
 * `why`, blaming `cause` (NULL: the sender). */
void push_abort_group(struct push *p, const struct phost *cause,
		      const char *why);

/* End the push once every host's outcome is known. */
void push_maybe_finish(struct push *p);

/* Once every host has accepted or failed: rank the members, choose the
 * transport, send START and run rank 0's engine (pgroup.c). */
void pg_maybe_start(struct push *p);

#endif
