/* SPDX-License-Identifier: MIT */
/*
 * tcpcopy - the plainest possible unicast file copy over TCP, the yardstick
 * of the benchmarks.
 *
 *   tcpcopy recv PORT OUTFILE       accept one connection, write what comes
 *                                   to OUTFILE, close
 *   tcpcopy send ADDR PORT FILE     send FILE with sendfile(2); print the
 *                                   seconds from connect until the receiver
 *                                   has written it all and closed
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int
die(const char *what)
{
	fprintf(stderr, "tcpcopy: %s: %s\n", what, strerror(errno));
	return 1;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
do_recv(int port, const char *path)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	static char buf[1 << 20];
	int ls, s, fd, one = 1;
	ssize_t n;

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
	while ((n = read(s, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n)
			return die("write");
	close(fd);
	close(s);
	return n < 0 ? die("read") : 0;
}

static int
do_send(const char *addr, int port, const char *path)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct stat sb;
	off_t off = 0;
	double t0;
	char c;
	int s, fd;

	sa.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		return die("address");
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &sb) < 0)
		return die(path);
	t0 = now();
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return die("connect");
	while (off < sb.st_size)
		if (sendfile(s, fd, &off, (size_t)(sb.st_size - off)) < 0)
			return die("sendfile");
	shutdown(s, SHUT_WR);
	if (read(s, &c, 1) < 0)
		return die("read");
	printf("%.3f\n", now() - t0);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "recv") == 0)
		return do_recv(atoi(argv[2]), argv[3]);
	if (argc == 5 && strcmp(argv[1], "send") == 0)
		return do_send(argv[2], atoi(argv[3]), argv[4]);
	fprintf(stderr, "usage: tcpcopy recv PORT OUTFILE | "
			"tcpcopy send ADDR PORT FILE\n");
	return 2;
}
