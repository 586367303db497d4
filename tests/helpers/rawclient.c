/*
 * rawclient - a hand-driven sender, for tests of what the daemon refuses.
 *
 *   rawclient ADDR PORT MODE [KEYFILE]
 *
 * MODE:
 *   badproof   authenticate with a wrong proof, then send a job: the daemon
 *              must answer REFUSE; prints its text
 *   nojob      send a JOB with no authentication: the daemon must drop the
 *              connection without an answer
 *   tamper     authenticate with the right key (KEYFILE) but send a job
 *              other than the one the proof covers: REFUSE
 *   idle       connect and send nothing: the daemon must drop it (prints
 *              how long that took)
 * Prints "refused: TEXT", "dropped" or "answered TYPE"; exits 0 when it
 * could tell, 1 on a local error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "proto.h"
#include "wire.h"

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

static void
a_job(struct wbuf *w, const char *path)
{
	struct job_file file = { .path = (char *)path, .size = 3,
				 .mode = 0644 };
	struct job job = { .alg = SCHED_BINOMIAL, .block_size = 65536,
			   .timeout_ms = 5000, .window = 16, .nfiles = 1,
			   .files = &file, .origin = (char *)"rawclient" };

	wbuf_init(w);
	job_encode(&job, w);
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

static int
authenticate(int fd, const struct auth_key *key, bool honest,
	     const struct wbuf *covered)
{
	uint8_t nonce[AUTH_NONCE_LEN], proof[AUTH_MAC_LEN];
	char body[256];
	struct frame f;

	auth_nonce(nonce);
	if (send_frame(fd, MSG_AUTH, nonce, sizeof(nonce)) < 0 ||
	    read_frame(fd, &f, body, sizeof(body)) < 0 ||
	    f.type != MSG_CHALLENGE || f.len != 2 * AUTH_NONCE_LEN)
		return -1;
	memset(proof, 0x5a, sizeof(proof));
	if (honest)
		auth_sender_mac(key, nonce, (uint8_t *)body, covered->data,
				covered->len, proof);
	return send_frame(fd, MSG_PROOF, proof, sizeof(proof));
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
	a_job(&job, "/rawclient/f");
	a_job(&other, "/rawclient/tampered");
	if (strcmp(argv[3], "idle") == 0) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		result(fd);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("after %ld ms\n", (t1.tv_sec - t0.tv_sec) * 1000 +
		       (t1.tv_nsec - t0.tv_nsec) / 1000000);
		return 0;
	}
	if (strcmp(argv[3], "nojob") != 0 &&
	    authenticate(fd, &key, strcmp(argv[3], "tamper") == 0, &job) < 0) {
		printf("dropped\n");
		return 0;
	}
	if (strcmp(argv[3], "tamper") == 0)
		job = other;	/* not the job the proof covers */
	if (send_frame(fd, MSG_JOB, job.data, job.len) < 0) {
		printf("dropped\n");
		return 0;
	}
	return result(fd);
}
