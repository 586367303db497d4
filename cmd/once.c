/* SPDX-License-Identifier: MIT */
/*
 * rdmcp --serve --once on the command line (see rsh.h): the key from
 * standard input, the port line, the end of standard input.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "util/log.h"
#include "util/net.h"
#include "rsh.h"

#define KEY_LINE (2 * AUTH_KEY_LEN + 1)

/* One byte from fd 0 within the time left; 1, 0 at end of file, -errno. */
static int
read_byte(char *c, int timeout_ms)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };
	int rc;

	do {
		rc = poll(&p, 1, timeout_ms);
	} while (rc < 0 && errno == EINTR);
	if (rc == 0)
		return -ETIMEDOUT;
	if (rc < 0)
		return -errno;
	do {
		rc = (int)read(0, c, 1);
	} while (rc < 0 && errno == EINTR);
	return rc < 0 ? -errno : rc;
}

int
once_read_key(unsigned timeout_ms, struct auth_key *key)
{
	char line[KEY_LINE + 1];
	size_t n = 0;
	int rc = 0;

	/* one byte at a time: nothing after the newline is consumed */
	while (n < KEY_LINE && (n == 0 || line[n - 1] != '\n')) {
		rc = read_byte(&line[n], (int)timeout_ms);
		if (rc <= 0)
			break;
		n++;
	}
	if (rc == 0 && n == 0)
		warnx_("--key -: standard input is empty");
	else if (rc < 0)
		warnx_("--key -: cannot read the key from standard input: %s",
		       strerror(-rc));
	else if (auth_parse_key(line, n, key) < 0)
		warnx_("--key -: standard input does not start with a key "
		       "(64 hex digits and a newline)");
	else
		return 0;
	return rc < 0 ? rc : -EINVAL;
}

void
once_announce(const struct serve *srv)
{
	struct sockaddr_storage ss;

	serve_address(srv, &ss);
	printf("%s %u\n", RSH_PORT_TAG, (unsigned)net_port(&ss));
	fflush(stdout);
}

static void
on_stdin(uv_poll_t *h, int status, int events)
{
	struct serve *srv = h->data;
	char buf[256];
	ssize_t n = 0;

	if (status == 0) {
		n = read(0, buf, sizeof(buf));
		if (n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN)))
			return;		/* anything else is ignored */
	}
	log_info("standard input closed: the sender is gone; stopping");
	uv_poll_stop(h);
	serve_shutdown(srv);
}

int
once_watch(uv_loop_t *loop, uv_poll_t *h, struct serve *srv)
{
	struct stat st;
	int rc;

	if (fstat(0, &st) < 0)
		return -errno;
	if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode) && !isatty(0))
		return -ENOTSUP;
	rc = uv_poll_init(loop, h, 0);
	if (rc < 0)
		return rc;
	h->data = srv;
	uv_poll_start(h, UV_READABLE | UV_DISCONNECT, on_stdin);
	uv_unref((uv_handle_t *)h);
	return 0;
}

void
once_unwatch(uv_poll_t *h)
{
	if (!uv_is_closing((uv_handle_t *)h))
		uv_close((uv_handle_t *)h, NULL);
}
