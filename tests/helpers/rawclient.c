/* SPDX-License-Identifier: MIT */
/*
 * rawclient - a hand-driven sender, for tests of what the daemon refuses.
 *
 *   rawclient ADDR PORT MODE [KEYFILE]
 *
 * MODE:
 *   badproof   authenticate with a wrong proof, and send nothing more: the
 *              daemon must answer REFUSE at once, before any request;
 *              prints its text
 *   bigbody    a wrong proof, then a JOB of PROTO_MAX_BODY bytes, sent
 *              whole unless the daemon closes first: it must not take it
 *              in (prints the answer)
 *   nojob      send a JOB with no authentication: the daemon must drop the
 *              connection without an answer
 *   tamper     authenticate with the right key (KEYFILE) but send a job
 *              other than the one the proof covers: REFUSE
 *   idle       connect and send nothing: the daemon must drop it (prints
 *              how long that took)
 *   parked     (KEYFILE) a job with a 300 ms timeout, then, the job
 *              accepted, a member's data connection to the daemon, which
 *              gets no START: for 1.5 s both connections are kept alive
 *              as a sender and a member would; prints "parked: N
 *              keepalives, open" (or "closed"): a connection waiting for
 *              START must go on answering at the job's timeout
 *   hold       (KEYFILE) a job with the longest timeout (24 h), then,
 *              the job accepted, only keepalives, every 100 ms, for 60 s
 *              at most: a sender alive but idle; prints "accepted" once
 *              ACCEPT came, then "failed after N ms: TEXT" (a FAIL),
 *              "dropped after N ms" (closed) or "held N ms"
 *   holdended  (KEYFILE) the same with a traced job (JOB_TRACE) ended by
 *              ABORT once accepted: its TRACE is never asked for; prints
 *              "accepted", "ended" (its OUTCOME came), then as hold
 * Prints "refused: TEXT", "dropped" or "answered TYPE"; exits 0 when it
 * could tell, 1 on a local error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "proto/auth.h"
#include "proto/proto.h"
#include "util/wire.h"

static int
send_frame(int fd, uint8_t type, const void *body, uint64_t len)
{
	struct frame f = { .type = type, .len = len };
	uint8_t hdr[PROTO_FRAME_LEN];

	frame_encode(&f, hdr);
	if (write(fd, hdr, sizeof(hdr)) != (ssize_t)sizeof(hdr))
		return -1;
	return len == 0 || write(fd, body, len) == (ssize_t)len ? 0 : -1;
}

static int
read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read(fd, (char *)buf + got, len - got);
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

/* Read one frame; its body (NUL-terminated) into body.  -1: closed. */
static int
read_frame(int fd, struct frame *f, char *body, size_t max)
{
	uint8_t hdr[PROTO_FRAME_LEN];

	do {
		if (read_full(fd, hdr, sizeof(hdr)) < 0 ||
		    frame_decode(hdr, f) < 0 || f->len >= max ||
		    read_full(fd, body, f->len) < 0)
			return -1;
		body[f->len] = '\0';
	} while (f->type == MSG_NOP);
	return 0;
}

static uint8_t token[PROTO_TOKEN_LEN];

static void
a_job(struct wbuf *w, const char *path, uint32_t timeout_ms, uint32_t flags)
{
	struct job_file file = { .path = (char *)path, .size = 3,
				 .mode = 0644 };
	struct job job = { .alg = SCHED_BINOMIAL, .block_size = 65536,
			   .timeout_ms = timeout_ms, .window = 16, .nfiles = 1,
			   .files = &file, .origin = (char *)"rawclient",
			   .flags = flags };

	memcpy(job.token, token, sizeof(token));
	wbuf_init(w);
	job_encode(&job, w);
}

static long
ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000 +
	       (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Drain what fd has; counts the NOPs.  -1 when it was closed. */
static int
drain(int fd, int *nops)
{
	struct frame f;
	static char body[65536];
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (poll(&p, 1, 0) == 1) {
		uint8_t hdr[PROTO_FRAME_LEN];

		if (read_full(fd, hdr, sizeof(hdr)) < 0 ||
		    frame_decode(hdr, &f) < 0 || f.len >= sizeof(body) ||
		    read_full(fd, body, f.len) < 0)
			return -1;
		*nops += f.type == MSG_NOP;
	}
	return 0;
}

/* The parked mode, once the job is sent on ctl: see the top. */
static int
parked(int ctl, const struct sockaddr_in *sa)
{
	struct hello h = { .from = 0, .to = 1 };
	struct timeval limit = { .tv_sec = 20 };
	struct timespec t0;
	struct wbuf w;
	struct frame f;
	char body[8192];
	int data, ctl_nops = 0, nops = 0, open = 1;

	if (read_frame(ctl, &f, body, sizeof(body)) < 0 || f.type != MSG_ACCEPT) {
		printf("not accepted\n");
		return 0;
	}
	memcpy(h.token, token, sizeof(token));
	wbuf_init(&w);
	data = socket(AF_INET, SOCK_STREAM, 0);
	/* a frame cut short cannot hold us past the 20 s every wait has */
	if (data < 0 || setsockopt(data, SOL_SOCKET, SO_RCVTIMEO, &limit,
				   sizeof(limit)) < 0 ||
	    hello_encode(&h, &w) < 0 ||
	    connect(data, (const struct sockaddr *)sa, sizeof(*sa)) < 0 ||
	    send_frame(data, MSG_HELLO, w.data, w.len) < 0)
		return 1;
	wbuf_free(&w);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (open && ms_since(&t0) < 1500) {
		usleep(50 * 1000);
		if (send_frame(ctl, MSG_NOP, NULL, 0) < 0 ||
		    drain(ctl, &ctl_nops) < 0 ||
		    send_frame(data, MSG_NOP, NULL, 0) < 0 ||
		    drain(data, &nops) < 0)
			open = 0;
	}
	printf("parked: %d keepalives, %s\n", nops, open ? "open" : "closed");
	close(data);
	return 0;
}

/* The hold modes, once the job is sent on ctl: see the top. */
static int
hold(int ctl, bool ended)
{
	struct timespec t0;
	struct frame f;
	static char body[PROTO_MAX_TEXT + 1];
	struct pollfd p = { .fd = ctl, .events = POLLIN };

	if (read_frame(ctl, &f, body, sizeof(body)) < 0 ||
	    f.type != MSG_ACCEPT) {
		printf("not accepted\n");
		return 0;
	}
	printf("accepted\n");
	if (ended && (send_frame(ctl, MSG_ABORT, "held", 4) < 0 ||
		      read_frame(ctl, &f, body, sizeof(body)) < 0 ||
		      f.type != MSG_OUTCOME)) {
		printf("not ended\n");
		return 0;
	}
	if (ended)
		printf("ended\n");
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ms_since(&t0) < 60000) {
		if (send_frame(ctl, MSG_NOP, NULL, 0) < 0 ||
		    (poll(&p, 1, 100) == 1 &&
		     read_frame(ctl, &f, body, sizeof(body)) < 0)) {
			printf("dropped after %ld ms\n", ms_since(&t0));
			return 0;
		}
		if (p.revents != 0 && f.type == MSG_FAIL) {
			printf("failed after %ld ms: %s\n", ms_since(&t0),
			       body);
			return 0;
		}
		p.revents = 0;
	}
	printf("held %ld ms\n", ms_since(&t0));
	return 0;
}

static int
result(int fd)
{
	struct frame f;
	static char body[8192];

	if (read_frame(fd, &f, body, sizeof(body)) < 0) {
		printf("dropped\n");
		return 0;
	}
	if (f.type == MSG_REFUSE)
		printf("refused: %s\n", body);
	else
		printf("answered %u\n", f.type);
	return 0;
}

/* AUTH, CHALLENGE, PROOF: honest, the proof and the MAC of the JOB in
 * `covered`; else bytes that prove nothing. */
static int
authenticate(int fd, const struct auth_key *key, bool honest,
	     const struct wbuf *covered)
{
	uint8_t nonce[AUTH_NONCE_LEN], proof[AUTH_PROOF_LEN];
	char body[256];
	struct frame f;

	auth_nonce(nonce);
	if (send_frame(fd, MSG_AUTH, nonce, sizeof(nonce)) < 0 ||
	    read_frame(fd, &f, body, sizeof(body)) < 0 ||
	    f.type != MSG_CHALLENGE || f.len != 2 * AUTH_NONCE_LEN)
		return -1;
	memset(proof, 0x5a, sizeof(proof));
	if (honest) {
		auth_sender_mac(key, nonce, (uint8_t *)body, proof);
		auth_request_mac(key, nonce, (uint8_t *)body, MSG_JOB,
				 covered->data, covered->len,
				 proof + AUTH_MAC_LEN);
	}
	return send_frame(fd, MSG_PROOF, proof, sizeof(proof));
}

/* A JOB header announcing PROTO_MAX_BODY bytes, and then as many of them
 * as the daemon takes before it closes. */
static void
big_body(int fd)
{
	static uint8_t chunk[1 << 20];
	struct frame f = { .type = MSG_JOB, .len = PROTO_MAX_BODY };
	uint8_t hdr[PROTO_FRAME_LEN];
	uint64_t sent;

	frame_encode(&f, hdr);
	if (write(fd, hdr, sizeof(hdr)) != (ssize_t)sizeof(hdr))
		return;
	for (sent = 0; sent < f.len; sent += sizeof(chunk))
		if (write(fd, chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk))
			return;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct auth_key key = { { 0 } };
	struct rd_err err = { 0 };
	struct wbuf job, other;
	struct timespec t0, t1;
	struct timeval limit = { .tv_sec = 20 };
	uint8_t nonce[AUTH_NONCE_LEN];
	bool holding;
	int fd;

	if (argc < 4 || inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1)
		return 1;
	sa.sin_port = htons((uint16_t)atoi(argv[2]));
	if (argc > 4 && auth_load_key(argv[4], &key, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	/* every wait ends: a daemon that neither answers nor drops us
	 * counts as having dropped us after 20 s */
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit,
				 sizeof(limit)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return 1;
	auth_nonce(nonce);	/* random enough for a token */
	memcpy(token, nonce, sizeof(token));
	holding = strncmp(argv[3], "hold", 4) == 0;
	a_job(&job, holding ? "/rawclient/held" : "/rawclient/f",
	      strcmp(argv[3], "parked") == 0 ? 300
	      : holding ? PROTO_MAX_TIMEOUT_MS : 5000,
	      strcmp(argv[3], "holdended") == 0 ? JOB_TRACE : 0);
	a_job(&other, "/rawclient/tampered", 5000, 0);
	if (strcmp(argv[3], "idle") == 0) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		result(fd);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("after %ld ms\n", (t1.tv_sec - t0.tv_sec) * 1000 +
		       (t1.tv_nsec - t0.tv_nsec) / 1000000);
		return 0;
	}
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(argv[3], "nojob") != 0 &&
	    authenticate(fd, &key, strcmp(argv[3], "tamper") == 0 ||
				   strcmp(argv[3], "parked") == 0 || holding,
			 &job) < 0) {
		printf("dropped\n");
		return 0;
	}
	if (strcmp(argv[3], "badproof") == 0)
		return result(fd);
	if (strcmp(argv[3], "bigbody") == 0) {
		big_body(fd);
		return result(fd);
	}
	if (strcmp(argv[3], "tamper") == 0)
		job = other;	/* not the job the proof covers */
	if (send_frame(fd, MSG_JOB, job.data, job.len) < 0) {
		printf("dropped\n");
		return 0;
	}
	if (strcmp(argv[3], "parked") == 0)
		return parked(fd, &sa);
	if (holding)
		return hold(fd, strcmp(argv[3], "holdended") == 0);
	return result(fd);
}
