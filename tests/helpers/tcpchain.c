/* SPDX-License-Identifier: MIT */
/*
 * tcpchain - the pipelined TCP chain a user would write instead of rdmcp,
 * the second yardstick of the benchmarks: host 1 sends the file to host 2,
 * every host writes what it receives to its file and at the same time
 * forwards it to the next host, the last host only writes.
 *
 *   tcpchain relay [-t SECS] PORT OUTFILE [NEXT_ADDR NEXT_PORT]
 *       connect to the next host if one is given (retrying until it
 *       listens), then listen on PORT, accept one connection, write what
 *       comes to OUTFILE and forward it to the next host chunk by chunk;
 *       at the end of the data wait for the next host's "done" byte, then
 *       send one upstream: the head learns when the LAST host has it all
 *   tcpchain send [-t SECS] NEXT_ADDR NEXT_PORT FILE
 *       connect (retrying until the next host listens), send FILE with
 *       sendfile(2), print the seconds from the connect until the whole
 *       chain acknowledged
 *
 * A relay listens only once it is connected downstream, so when the head
 * can connect the whole chain is up and the time measures the data alone.
 * Every wait, the retries included, is bounded by SECS (default 600): past
 * it the process exits with status 1.  A host that fails closes its
 * connections without a "done" byte, and so does every host upstream.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (256 << 10)	/* what a relay reads, writes and forwards */
#define DONE 'd'

static int
die(const char *what)
{
	fprintf(stderr, "tcpchain: %s: %s\n", what, strerror(errno));
	return 1;
}

static void
timed_out(int sig)
{
	static const char msg[] = "tcpchain: timed out\n";

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(1);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* connect to ADDR:PORT, every 10 ms until it listens (the alarm bounds it) */
static int
dial(const char *addr, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	int s;

	sa.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		errno = EINVAL;
		return -1;
	}
	for (;;) {
		s = socket(AF_INET, SOCK_STREAM, 0);
		if (s < 0)
			return -1;
		if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return s;
		close(s);
		if (errno != ECONNREFUSED)
			return -1;
		nanosleep(&pause, NULL);
	}
}

static int
write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* the downstream host's "done" byte, or -1 (it failed, or closed) */
static int
await_done(int s)
{
	char c;

	errno = 0;
	if (read(s, &c, 1) != 1 || c != DONE) {
		if (errno == 0)
			errno = EPIPE;
		return -1;
	}
	return 0;
}

static int
do_relay(int port, const char *path, const char *next_addr, int next_port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	static char buf[CHUNK];
	int ls, s, fd, next = -1, one = 1;
	char done = DONE;
	ssize_t n;

	if (next_addr && (next = dial(next_addr, next_port)) < 0)
		return die("connect to the next host");
	sa.sin_port = htons((uint16_t)port);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(ls, 1) < 0)
		return die("listen");
	s = accept(ls, NULL, NULL);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (s < 0 || fd < 0)
		return die("accept/open");
	close(ls);
	/* forward first: the next host waits on us, the file does not */
	while ((n = read(s, buf, sizeof(buf))) > 0) {
		if (next >= 0 && write_all(next, buf, (size_t)n) < 0)
			return die("forward");
		if (write_all(fd, buf, (size_t)n) < 0)
			return die("write");
	}
	if (n < 0)
		return die("read");
	if (close(fd) < 0)
		return die("close");
	if (next >= 0) {
		shutdown(next, SHUT_WR);
		if (await_done(next) < 0)
			return die("the next host");
	}
	if (write_all(s, &done, 1) < 0)
		return die("done");
	close(s);
	return 0;
}

static int
do_send(const char *addr, int port, const char *path)
{
	struct stat sb;
	off_t off = 0;
	double t0;
	int s, fd;

	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &sb) < 0)
		return die(path);
	s = dial(addr, port);
	if (s < 0)
		return die("connect");
	t0 = now();
	while (off < sb.st_size)
		if (sendfile(s, fd, &off, (size_t)(sb.st_size - off)) < 0)
			return die("sendfile");
	shutdown(s, SHUT_WR);
	if (await_done(s) < 0)
		return die("the chain");
	printf("%.3f\n", now() - t0);
	return 0;
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int secs = 600, a = 2, rest;

	if (argc > 3 && strcmp(argv[2], "-t") == 0) {
		secs = atoi(argv[3]);
		a = 4;
	}
	rest = argc - a;
	signal(SIGPIPE, SIG_IGN);	/* a dead peer is an error, not a signal */
	signal(SIGALRM, timed_out);
	alarm((unsigned)secs);
	if (secs > 0 && strcmp(mode, "relay") == 0 && (rest == 2 || rest == 4))
		return do_relay(atoi(argv[a]), argv[a + 1],
		    rest == 4 ? argv[a + 2] : NULL,
		    rest == 4 ? atoi(argv[a + 3]) : 0);
	if (secs > 0 && strcmp(mode, "send") == 0 && rest == 3)
		return do_send(argv[a], atoi(argv[a + 1]), argv[a + 2]);
	fprintf(stderr, "usage: tcpchain relay [-t SECS] PORT OUTFILE "
			"[NEXT_ADDR NEXT_PORT]\n"
			"       tcpchain send [-t SECS] NEXT_ADDR NEXT_PORT FILE\n"
			"SECS > 0 bounds every wait (default 600)\n");
	return 2;
}
