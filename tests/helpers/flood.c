/* SPDX-License-Identifier: MIT */
/*
 * flood - hold many unauthenticated connections open against a daemon,
 * for tests of its admission limits.
 *
 *   flood ADDR PORT COUNT SECONDS SOURCE|- reopen|hold
 *
 * Opens COUNT connections to ADDR:PORT (from SOURCE unless "-"), then for
 * SECONDS keeps them open: every second each open connection trickles one
 * byte (never a whole frame header, so none ever authenticates); with
 * "reopen", every 100 ms those the daemon closed are opened again, at most
 * 10 * COUNT opens in all.
 * Prints "opened N dropped M open K" and exits 0; 1 on a local error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 4096

static struct sockaddr_in dst, src;
static int have_src;
static unsigned opened, dropped, max_opens, rounds;
static int reopen;

static int
open_one(void)
{
	int fd;

	if (opened >= max_opens)
		return -1;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (have_src && bind(fd, (struct sockaddr *)&src, sizeof(src)) < 0) {
		close(fd);
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&dst, sizeof(dst)) < 0 &&
	    errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	opened++;
	return fd;
}

/* Has the daemon closed it?  (Reads whatever it sent.) */
static int
closed_by_peer(int fd)
{
	char buf[256];
	ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
			  errno != ENOTCONN);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One round: trickle a byte on each, reopen the dropped. */
static void
round_trip(int *fds, unsigned *sent, unsigned count)
{
	static const char byte = 0;
	unsigned i;

	rounds++;
	for (i = 0; i < count; i++) {
		if (fds[i] >= 0 && closed_by_peer(fds[i])) {
			close(fds[i]);
			fds[i] = -1;
			dropped++;
		}
		if (fds[i] < 0 && reopen) {
			fds[i] = open_one();
			sent[i] = 0;
			continue;
		}
		/* fewer bytes than a frame header: never a frame */
		if (fds[i] >= 0 && rounds % 10 == 0 && sent[i] < 16 &&
		    send(fds[i], &byte, 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1)
			sent[i]++;
	}
}

int
main(int argc, char **argv)
{
	static int fds[MAX_CONNS];
	static unsigned sent[MAX_CONNS];
	unsigned count, i, open_now = 0;
	double end;

	if (argc < 7 || inet_pton(AF_INET, argv[1], &dst.sin_addr) != 1) {
		fprintf(stderr, "usage: flood ADDR PORT COUNT SECONDS "
			"SOURCE|- reopen|hold\n");
		return 1;
	}
	dst.sin_family = AF_INET;
	dst.sin_port = htons((uint16_t)atoi(argv[2]));
	count = (unsigned)atoi(argv[3]);
	if (count == 0 || count > MAX_CONNS)
		return 1;
	max_opens = 10 * count;
	reopen = strcmp(argv[6], "reopen") == 0;
	if (strcmp(argv[5], "-") != 0) {
		if (inet_pton(AF_INET, argv[5], &src.sin_addr) != 1)
			return 1;
		src.sin_family = AF_INET;
		have_src = 1;
	}
	for (i = 0; i < count; i++)
		fds[i] = open_one();
	end = now_s() + atof(argv[4]);
	while (now_s() < end) {
		usleep(100000);
		round_trip(fds, sent, count);
	}
	for (i = 0; i < count; i++) {
		if (fds[i] >= 0 && !closed_by_peer(fds[i]))
			open_now++;
		if (fds[i] >= 0)
			close(fds[i]);
	}
	printf("opened %u dropped %u open %u\n", opened, dropped, open_now);
	return 0;
}
