/* SPDX-License-Identifier: MIT */
/*
 * fakepeer - an endpoint that is not an honest rdmcp daemon, for tests of
 * what a sender believes before a daemon has authenticated.
 *
 *   fakepeer nop ADDR PORT SECS
 *       answers every AUTH with a keepalive NOP every 100 ms, and never
 *       with a CHALLENGE: a sender must give up on it after its
 *       --connect-timeout, keepalives or not
 *   fakepeer proxy ADDR PORT TADDR TPORT SECS
 *       passes connections on to the daemon at TADDR:TPORT, but cuts the
 *       one that carries the go (CRC) instead of passing it on; then it
 *       answers the next AUTH itself with OUTCOME=LANDED, as a proxy
 *       without the key could: a sender must not believe it
 *   fakepeer hang ADDR PORT KEYFILE SECS
 *       holds the key: a right CHALLENGE, then takes the PROOF and the
 *       JOB and says nothing more, not even a keepalive, as a daemon that
 *       hung in its set-up: a sender must give up on it after its
 *       --connect-timeout, not its -t
 *   fakepeer rechallenge ADDR PORT KEYFILE SECS
 *       holds the key: answers AUTH with a right CHALLENGE, then at once
 *       with a second CHALLENGE without a body; a sender must drop the
 *       connection for it (a body-less frame once read past its NULL
 *       body: undefined behaviour, caught under make check-asan)
 *
 * Prints "listening" once it accepts, and for each connection what it did
 * ("auth", "cut at the go", "answered landed", "rechallenged", "job").  Ends after SECS seconds
 * at most; each connection is served by a child of its own.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/auth.h"
#include "proto/proto.h"

static struct sockaddr_in target;
static struct auth_key key;	/* rechallenge */
/* Set once a go was cut: shared by the children, which serve one
 * connection each.  Not a file: a file named by our pid outlived us and
 * made a later fakepeer that got the same pid forge from its first AUTH. */
static volatile sig_atomic_t *go_cut;

static int
write_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = write(fd, (const char *)buf + done, len - done);
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
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

static int
send_frame(int fd, uint8_t type, uint64_t val)
{
	struct frame f = { .type = type, .val = val };
	uint8_t hdr[PROTO_FRAME_LEN];

	frame_encode(&f, hdr);
	return write_full(fd, hdr, sizeof(hdr));
}

/* AUTH read, a right CHALLENGE written (it holds the key): 0 or -1. */
static int
challenge(int c)
{
	uint8_t buf[PROTO_FRAME_LEN + AUTH_NONCE_LEN];
	uint8_t reply[PROTO_FRAME_LEN + 2 * AUTH_NONCE_LEN];
	struct frame f = { .type = MSG_CHALLENGE, .len = 2 * AUTH_NONCE_LEN };
	uint8_t *nonce_d = reply + PROTO_FRAME_LEN;

	if (read_full(c, buf, sizeof(buf)) < 0 || auth_nonce(nonce_d) < 0)
		return -1;
	frame_encode(&f, reply);
	auth_daemon_mac(&key, buf + PROTO_FRAME_LEN, nonce_d,
			nonce_d + AUTH_NONCE_LEN);
	return write_full(c, reply, sizeof(reply));
}

/* hang: the handshake, then the PROOF and the JOB taken, and never a
 * word more, not even a keepalive: a daemon that hung once it had the
 * job (stopped, or stuck in its set-up). */
static void
serve_hang(int c)
{
	uint8_t hdr[PROTO_FRAME_LEN], buf[1 << 12];
	struct frame f;
	uint64_t left;
	int i;

	if (challenge(c) < 0)
		return;
	for (i = 0; i < 2; i++) {	/* PROOF, then the JOB */
		if (read_full(c, hdr, sizeof(hdr)) < 0 ||
		    frame_decode(hdr, &f) < 0)
			return;
		for (left = f.len; left > 0; left -= f.len) {
			f.len = left < sizeof(buf) ? left : sizeof(buf);
			if (read_full(c, buf, (size_t)f.len) < 0)
				return;
		}
	}
	printf("job\n");
	fflush(stdout);
	while (read(c, buf, sizeof(buf)) > 0)
		;
}

/* rechallenge: a right CHALLENGE, then one without a body. */
static void
serve_rechallenge(int c)
{
	uint8_t buf[PROTO_FRAME_LEN + AUTH_NONCE_LEN];

	if (challenge(c) < 0 || send_frame(c, MSG_CHALLENGE, 0) < 0)
		return;
	printf("rechallenged\n");
	fflush(stdout);
	while (read(c, buf, sizeof(buf)) > 0)
		;
}

/* nop: keepalives until the peer leaves. */
static void
serve_nop(int c)
{
	uint8_t buf[PROTO_FRAME_LEN + 32];
	struct pollfd p = { .fd = c, .events = POLLIN };

	if (read_full(c, buf, sizeof(buf)) < 0)
		return;
	printf("auth\n");
	fflush(stdout);
	while (send_frame(c, MSG_NOP, 0) == 0)
		if (poll(&p, 1, 100) == 1 && read(c, buf, sizeof(buf)) <= 0)
			return;
}

/* The client's stream, frame by frame, on to the daemon; a CRC frame is
 * kept back and both connections cut.  -1 when the stream ends. */
struct parse {
	uint8_t hdr[PROTO_FRAME_LEN];
	size_t hdr_got;
	uint64_t left;		/* payload bytes still to pass */
};

static int
pass_on(struct parse *ps, const uint8_t *p, size_t n, int t)
{
	struct frame f;
	size_t take;

	while (n > 0) {
		if (ps->left > 0) {
			take = ps->left < n ? (size_t)ps->left : n;
			if (write_full(t, p, take) < 0)
				return -1;
			ps->left -= take;
		} else {
			take = PROTO_FRAME_LEN - ps->hdr_got;
			take = take < n ? take : n;
			memcpy(ps->hdr + ps->hdr_got, p, take);
			ps->hdr_got += take;
			if (ps->hdr_got == PROTO_FRAME_LEN) {
				ps->hdr_got = 0;
				if (frame_decode(ps->hdr, &f) < 0)
					return -1;
				if (f.type == MSG_CRC) {
					*go_cut = 1;
					printf("cut at the go\n");
					return -1;
				}
				ps->left = f.len;
				if (write_full(t, ps->hdr, sizeof(ps->hdr)) < 0)
					return -1;
			}
		}
		p += take;
		n -= take;
	}
	return 0;
}

static void
relay(int c, int t, const uint8_t first[PROTO_FRAME_LEN])
{
	struct pollfd p[2] = { { .fd = c, .events = POLLIN },
			       { .fd = t, .events = POLLIN } };
	struct parse ps = { .hdr_got = 0 };
	static uint8_t buf[1 << 16];
	ssize_t n;

	if (pass_on(&ps, first, PROTO_FRAME_LEN, t) < 0)
		return;
	while (poll(p, 2, -1) > 0) {
		if (p[0].revents) {
			n = read(c, buf, sizeof(buf));
			if (n <= 0 || pass_on(&ps, buf, (size_t)n, t) < 0)
				return;
		}
		if (p[1].revents) {
			n = read(t, buf, sizeof(buf));
			if (n <= 0 || write_full(c, buf, (size_t)n) < 0)
				return;
		}
	}
}

/* proxy: see the top. */
static void
serve_proxy(int c)
{
	uint8_t hdr[PROTO_FRAME_LEN], nonce[32];
	struct frame f;
	int t;

	if (read_full(c, hdr, sizeof(hdr)) < 0 || frame_decode(hdr, &f) < 0)
		return;
	if (f.type == MSG_AUTH && *go_cut) {
		if (read_full(c, nonce, sizeof(nonce)) == 0 &&
		    send_frame(c, MSG_OUTCOME, OUTCOME_LANDED) == 0)
			printf("answered landed\n");
		fflush(stdout);
		while (read(c, nonce, sizeof(nonce)) > 0)
			;
		return;
	}
	t = socket(AF_INET, SOCK_STREAM, 0);
	if (t < 0 || connect(t, (struct sockaddr *)&target,
			     sizeof(target)) < 0)
		return;
	relay(c, t, hdr);
	fflush(stdout);
	close(t);
}

static int
listen_on(const char *addr, const char *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	sa.sin_port = htons((uint16_t)atoi(port));
	if (fd < 0 || inet_pton(AF_INET, addr, &sa.sin_addr) != 1 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 64) < 0)
		return -1;
	return fd;
}

int
main(int argc, char **argv)
{
	bool proxy = argc == 7 && strcmp(argv[1], "proxy") == 0;
	bool rechallenge = argc == 6 && strcmp(argv[1], "rechallenge") == 0;
	bool hang = argc == 6 && strcmp(argv[1], "hang") == 0;
	struct rd_err err = { 0 };
	int l, c;

	if (!proxy && !rechallenge && !hang &&
	    !(argc == 5 && strcmp(argv[1], "nop") == 0))
		return 2;
	if ((rechallenge || hang) && auth_load_key(argv[4], &key, &err) < 0) {
		fprintf(stderr, "fakepeer: %s\n", err.msg);
		return 2;
	}
	if (proxy) {
		target.sin_family = AF_INET;
		target.sin_port = htons((uint16_t)atoi(argv[5]));
		if (inet_pton(AF_INET, argv[4], &target.sin_addr) != 1)
			return 2;
	}
	go_cut = mmap(NULL, sizeof(*go_cut), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (go_cut == MAP_FAILED)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_IGN);	/* children reap themselves */
	setpgid(0, 0);		/* the children end with us */
	alarm((unsigned)atoi(argv[proxy ? 6 : rechallenge || hang ? 5 : 4]));
	l = listen_on(argv[2], argv[3]);
	if (l < 0)
		return 1;
	printf("listening\n");
	fflush(stdout);
	while ((c = accept(l, NULL, NULL)) >= 0) {
		if (fork() == 0) {
			close(l);
			if (proxy)
				serve_proxy(c);
			else if (rechallenge)
				serve_rechallenge(c);
			else if (hang)
				serve_hang(c);
			else
				serve_nop(c);
			_exit(0);
		}
		close(c);
	}
	return 0;
}
