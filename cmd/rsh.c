/* SPDX-License-Identifier: MIT */
/*
 * --rsh: one-shot receivers started through a remote shell (see rsh.h).
 *
 * Plain posix_spawn and poll: the launch happens before the push's event
 * loop exists, and afterwards the remote commands only need their
 * standard input kept open, then closed and the processes reaped.  Each
 * command's standard error goes to an unlinked temporary file, which
 * never fills up and blocks it, and whose last line is the reason given
 * when the command fails.
 */
#include "rsh.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "util/net.h"

extern char **environ;

#define FINISH_GRACE_MS 5000	/* for the remote commands to end */
#define KILL_GRACE_MS 1000	/* after each signal sent to them */

enum rstate { R_WAITING, R_STARTING, R_READY, R_FAILED };

struct remote {
	enum rstate st;
	pid_t pid;		/* 0: not running or reaped */
	int in, out, err;	/* our ends of its stdin and stdout; its stderr */
	uint64_t deadline;	/* ms: to report its port */
	char line[128];		/* stdout line so far */
	size_t len;
	char *target;		/* "host:port" */
	char reason[256];
};

struct rsh {
	struct rsh_cfg cfg;
	const struct hostlist *hl;
	char **words;		/* the remote shell command */
	size_t nwords;
	bool ssh;		/* it is ssh: "--" before the host */
	char key_line[2 * AUTH_KEY_LEN + 2];
	struct remote *rem;
	size_t n, next, starting;
	uint64_t start;
	double seconds;
	bool finished;
	struct sigaction old[3];
};

static const int fatal_signals[3] = { SIGINT, SIGTERM, SIGHUP };
static struct rsh *volatile live;	/* for the signal handler */

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---------------------------------------------------------------------
 * Words
 */

static int
push_word(char ***words, size_t *n, char *w)
{
	char **grown = realloc(*words, (*n + 2) * sizeof(*grown));

	if (grown == NULL) {
		free(w);
		return -ENOMEM;
	}
	grown[(*n)++] = w;
	grown[*n] = NULL;
	*words = grown;
	return 0;
}

/* The next word of *s into w (room for strlen(*s) + 1); 1 if there was
 * one, 0 at the end, -EINVAL for an unterminated quote. */
static int
next_word(const char **s, char *w)
{
	const char *p = *s + strspn(*s, " \t\n");
	char quote = 0;

	if (*p == '\0')
		return 0;
	for (; *p != '\0' && (quote || !strchr(" \t\n", *p)); p++) {
		if (quote == 0 && (*p == '\'' || *p == '"'))
			quote = *p;
		else if (quote == *p)
			quote = 0;
		else if (*p == '\\' && quote != '\'' && p[1] != '\0')
			*w++ = *++p;
		else
			*w++ = *p;
	}
	*w = '\0';
	*s = p;
	return quote ? -EINVAL : 1;
}

int
rsh_split(const char *s, char ***words, size_t *n)
{
	char *w;
	int rc;

	*words = NULL;
	*n = 0;
	rc = push_word(words, n, NULL) < 0 ? -ENOMEM : 0;
	*n = 0;
	while (rc == 0) {
		w = malloc(strlen(s) + 1);
		rc = w == NULL ? -ENOMEM : next_word(&s, w);
		if (rc <= 0) {
			free(w);
			break;
		}
		rc = push_word(words, n, w);
	}
	if (rc < 0) {
		rsh_free_words(*words);
		*words = NULL;
		*n = 0;
	}
	return rc;
}

void
rsh_free_words(char **words)
{
	size_t i;

	for (i = 0; words != NULL && words[i] != NULL; i++)
		free(words[i]);
	free(words);
}

/* ---------------------------------------------------------------------
 * The remote command line
 */

/* Append s to buf (of size len), in single quotes for the remote shell
 * unless it needs none. */
static void
append_quoted(char *buf, size_t len, const char *s)
{
	size_t at = strlen(buf);
	const char *p;

	if (s[0] != '\0' && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijkl"
			"mnopqrstuvwxyz0123456789_./:@%+=,-") == strlen(s)) {
		snprintf(buf + at, len - at, " %s", s);
		return;
	}
	snprintf(buf + at, len - at, " '");
	for (p = s; *p != '\0'; p++) {
		at = strlen(buf);
		snprintf(buf + at, len - at, *p == '\'' ? "'\\''" : "%c", *p);
	}
	at = strlen(buf);
	snprintf(buf + at, len - at, "'");
}

/* Append s to buf (of size len) for the remote shell to take literally
 * where `quote` is open in the command line: in single quotes outside
 * quotes (0), with its single quotes escaped inside '...', with $ ` " \
 * escaped inside "...". */
static void
append_literal(char *buf, size_t len, const char *s, char quote)
{
	size_t at = strlen(buf);
	const char *p;

	if (quote == 0)
		snprintf(buf + at, len - at, "'");
	for (p = s; *p != '\0'; p++) {
		at = strlen(buf);
		if (quote != '"' && *p == '\'')
			snprintf(buf + at, len - at, "'\\''");
		else if (quote == '"' && strchr("$`\"\\", *p) != NULL)
			snprintf(buf + at, len - at, "\\%c", *p);
		else
			snprintf(buf + at, len - at, "%c", *p);
	}
	at = strlen(buf);
	if (quote == 0)
		snprintf(buf + at, len - at, "'");
}

/* --remote-opts with %h replaced by the host, quoted for the remote shell
 * wherever it stands (outside quotes, in '...' or in "..."), and %% by
 * %.  Quotes and backslashes are followed as sh(1) does, without
 * expansions. */
static void
append_opts(char *buf, size_t len, const char *opts, const char *host)
{
	size_t at = strlen(buf);
	const char *p;
	char quote = 0;

	snprintf(buf + at, len - at, " ");
	for (p = opts; *p != '\0'; p++) {
		at = strlen(buf);
		if (p[0] == '%' && p[1] == 'h') {
			append_literal(buf, len, host, quote);
			p++;
			continue;
		}
		if (p[0] == '%' && p[1] == '%') {
			snprintf(buf + at, len - at, "%%");
			p++;
			continue;
		}
		if (*p == '\\' && quote != '\'' && p[1] != '\0') {
			snprintf(buf + at, len - at, "%c%c", p[0], p[1]);
			p++;	/* escaped, a % too: \%h is no host */
			continue;
		}
		if (quote == 0 && (*p == '\'' || *p == '"'))
			quote = *p;
		else if (quote == *p)
			quote = 0;
		snprintf(buf + at, len - at, "%c", *p);
	}
}

/* Does --remote-opts choose where files may land itself? */
static bool
opts_confine(const char *opts)
{
	char **w;
	size_t n, i;
	bool found = false;

	if (opts == NULL || rsh_split(opts, &w, &n) < 0)
		return false;
	for (i = 0; i < n; i++)
		found |= strncmp(w[i], "--root", 6) == 0 ||
			 strncmp(w[i], "--prefix", 8) == 0;
	rsh_free_words(w);
	return found;
}

/* The command the remote shell runs on `host`; malloc'd or NULL. */
static char *
remote_command(const struct rsh_cfg *c, const char *host)
{
	size_t i, len = 256 + strlen(c->remote_path) * 4;
	char *buf;

	for (i = 0; i < c->nroots; i++)
		len += 16 + strlen(c->roots[i]) * 4;
	if (c->remote_opts != NULL)	/* at worst '\'' for every character */
		len += strlen(c->remote_opts) * (4 * strlen(host) + 3);
	buf = calloc(1, len);
	if (buf == NULL)
		return NULL;
	append_quoted(buf, len, c->remote_path);
	snprintf(buf + strlen(buf), len - strlen(buf), " --serve --once "
		 "--key - -t %u.%03u --connect-timeout %u.%03u",
		 c->timeout_ms / 1000, c->timeout_ms % 1000,
		 c->connect_timeout_ms / 1000, c->connect_timeout_ms % 1000);
	for (i = 0; i < c->nroots && !opts_confine(c->remote_opts); i++) {
		snprintf(buf + strlen(buf), len - strlen(buf), " --root");
		append_quoted(buf, len, c->roots[i]);
	}
	if (c->remote_opts != NULL)
		append_opts(buf, len, c->remote_opts, host);
	memmove(buf, buf + 1, strlen(buf));	/* the leading blank */
	return buf;
}

/* ---------------------------------------------------------------------
 * Processes
 */

/* An unlinked temporary file for a command's standard error. */
static int
temp_fd(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (dir == NULL || dir[0] == '\0')
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	snprintf(path, sizeof(path), "%s/rdmcp-rsh.XXXXXX", dir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd < 0 ? -errno : fd;
}

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Run argv with its stdin and stdout on pipes and its stderr in rm->err.
 * Returns 0 or -errno. */
static int
spawn(struct remote *rm, char *const *argv)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, rc;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t dfl;

	rm->err = temp_fd();
	if (rm->err < 0 || pipe2(in, O_CLOEXEC) < 0 ||
	    pipe2(out, O_CLOEXEC) < 0) {
		rc = rm->err < 0 ? rm->err : -errno;
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, rm->err, 2);
	posix_spawnattr_init(&at);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);	/* ignored here, not in the command */
	posix_spawnattr_setsigdefault(&at, &dfl);
	/* a process group of its own, killed as one: helpers of the remote
	 * shell (an ssh ProxyCommand, a shell) go with it */
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF |
				 POSIX_SPAWN_SETPGROUP);
	rc = -posix_spawnp(&rm->pid, argv[0], &fa, &at, argv, environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	if (rc < 0)
		rm->pid = 0;
	else
		rm->in = in[1], rm->out = out[0], in[1] = out[0] = -1;
out:
	close_fd(&in[0]);
	close_fd(&in[1]);
	close_fd(&out[0]);
	close_fd(&out[1]);
	return rc;
}

/* Wait up to grace_ms for rm to end, then TERM, then KILL its process
 * group; returns its wait status, or -ETIMEDOUT if it could not be
 * reaped.
 * Async-signal-safe. */
static int
reap(struct remote *rm, long grace_ms)
{
	static const int sigs[] = { 0, SIGTERM, SIGKILL };
	int status, k;
	long waited;

	for (k = 0; k < 3 && rm->pid > 0; k++) {
		if (sigs[k] != 0)
			kill(-rm->pid, sigs[k]);
		for (waited = 0; waited <= (k ? KILL_GRACE_MS : grace_ms);
		     waited += 10) {
			if (waitpid(rm->pid, &status, WNOHANG) == rm->pid) {
				rm->pid = 0;
				return status;
			}
			sleep_ms(10);
		}
	}
	return -ETIMEDOUT;
}

/* Close every standard input, then reap every command, all within
 * grace_ms and the kill graces.  Async-signal-safe. */
static void
stop_all(struct rsh *r, long grace_ms)
{
	uint64_t end = now_ms() + (uint64_t)grace_ms, t;
	size_t i;

	for (i = 0; i < r->n; i++)
		close_fd(&r->rem[i].in);
	for (i = 0; i < r->n; i++) {
		t = now_ms();
		reap(&r->rem[i], t < end ? (long)(end - t) : 0);
	}
}

/* Stop the receivers, then let the handler there was before ours (the
 * sender's, which says it was interrupted) or the default deal with the
 * signal. */
static void
on_fatal_signal(int sig)
{
	struct rsh *r = live;
	int i;

	if (r != NULL)
		stop_all(r, 2000);
	for (i = 0; i < 3 && fatal_signals[i] != sig; i++)
		;
	if (r != NULL && i < 3 && r->old[i].sa_handler != SIG_IGN)
		sigaction(sig, &r->old[i], NULL);
	else
		signal(sig, SIG_DFL);
	raise(sig);
}

static void
catch_signals(struct rsh *r)
{
	struct sigaction sa;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 3; i++)
		sigaddset(&sa.sa_mask, fatal_signals[i]);
	live = r;
	for (i = 0; i < 3; i++)
		sigaction(fatal_signals[i], &sa, &r->old[i]);
}

static void
release_signals(struct rsh *r)
{
	int i;

	for (i = 0; i < 3; i++)
		sigaction(fatal_signals[i], &r->old[i], NULL);
	live = NULL;
}

/* ---------------------------------------------------------------------
 * Launching
 */

/* The last non-empty line of a command's standard error, into buf. */
static void
last_error_line(int fd, char *buf, size_t len)
{
	char tail[1024], *p;
	struct stat st;
	off_t from;
	ssize_t n;

	buf[0] = '\0';
	if (fstat(fd, &st) < 0)
		return;
	from = st.st_size > (off_t)sizeof(tail) - 1 ?
	       st.st_size - (off_t)sizeof(tail) + 1 : 0;
	n = pread(fd, tail, sizeof(tail) - 1, from);
	if (n <= 0)
		return;
	tail[n] = '\0';
	while (n > 0 && strchr("\r\n \t", tail[n - 1]) != NULL)
		tail[--n] = '\0';
	p = strrchr(tail, '\n');
	p = p != NULL ? p + 1 : tail;
	n = (ssize_t)strlen(p) < (ssize_t)len - 1 ? (ssize_t)strlen(p)
						  : (ssize_t)len - 1;
	memcpy(buf, p, (size_t)n);	/* cut long lines short */
	buf[n] = '\0';
}

/* Host i failed to start: say why, stop and reap its command. */
static void
fail(struct rsh *r, size_t i, const char *why)
{
	struct remote *rm = &r->rem[i];
	char line[200];
	int status;

	r->starting--;
	rm->st = R_FAILED;
	close_fd(&rm->in);
	status = reap(rm, why != NULL ? 0 : KILL_GRACE_MS);
	last_error_line(rm->err, line, sizeof(line));
	if (why != NULL)
		snprintf(rm->reason, sizeof(rm->reason), "%s%s%s", why,
			 line[0] ? ": " : "", line);
	else if (line[0] != '\0')
		snprintf(rm->reason, sizeof(rm->reason), "%s", line);
	else if (status >= 0 && WIFSIGNALED(status))
		snprintf(rm->reason, sizeof(rm->reason), "the remote command "
			 "was killed by signal %d", WTERMSIG(status));
	else
		snprintf(rm->reason, sizeof(rm->reason), "the remote command "
			 "exited %d without reporting a port",
			 status >= 0 ? WEXITSTATUS(status) : -1);
	if (r->cfg.verbose > 0)
		warnx_("%s: no receiver: %s", r->hl->hosts[i], rm->reason);
}

/* A host name without its brackets, into buf (of NET_ADDRSTRLEN+). */
static int
host_name(const char *host, char *buf, size_t len)
{
	uint16_t port = 0;

	if (net_split_hostport(host, buf, len, &port, 0) < 0 || port != 0)
		return -EINVAL;
	return 0;
}

/* Host i reported its port. */
static void
ready(struct rsh *r, size_t i, unsigned port)
{
	struct remote *rm = &r->rem[i];
	char name[256];
	size_t len;

	host_name(r->hl->hosts[i], name, sizeof(name));
	len = strlen(name) + 16;
	rm->target = malloc(len);
	if (rm->target == NULL) {
		fail(r, i, "out of memory");
		return;
	}
	snprintf(rm->target, len, strchr(name, ':') ? "[%s]:%u" : "%s:%u",
		 name, port);
	rm->st = R_READY;
	r->starting--;
	if (r->cfg.verbose > 0)
		warnx_("%s: receiver on port %u after %.3f s", r->hl->hosts[i],
		       port, (double)(now_ms() - r->start) / 1000);
}

/* A complete line from host i's command: its port, or anything else. */
static void
on_line(struct rsh *r, size_t i, const char *line)
{
	size_t tag = strlen(RSH_PORT_TAG);
	char *end;
	unsigned long port;

	if (strncmp(line, RSH_PORT_TAG " ", tag + 1) != 0)
		return;		/* e.g. a login banner */
	errno = 0;
	port = strtoul(line + tag + 1, &end, 10);
	if (errno != 0 || end == line + tag + 1 || *end != '\0' ||
	    port == 0 || port > 65535)
		fail(r, i, "the remote command reported a bad port");
	else
		ready(r, i, (unsigned)port);
}

/* Read what host i's command wrote on its standard output. */
static void
read_out(struct rsh *r, size_t i)
{
	struct remote *rm = &r->rem[i];
	char buf[512];
	ssize_t n, k;

	n = read(rm->out, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		fail(r, i, NULL);
		return;
	}
	for (k = 0; k < n && rm->st == R_STARTING; k++) {
		if (buf[k] == '\n') {
			rm->line[rm->len] = '\0';
			on_line(r, i, rm->line);
			rm->len = 0;
		} else if (buf[k] != '\r' && rm->len < sizeof(rm->line) - 1) {
			rm->line[rm->len++] = buf[k];
		}
	}
}

/* Start host i's command and give it the key. */
static void
start_one(struct rsh *r, size_t i)
{
	struct remote *rm = &r->rem[i];
	static char dashes[] = "--";
	char name[256], *cmd = NULL, **argv = NULL;
	size_t k = r->nwords;
	int rc = -ENOMEM;

	rm->st = R_STARTING;
	rm->deadline = now_ms() + r->cfg.connect_timeout_ms;
	r->starting++;
	host_name(r->hl->hosts[i], name, sizeof(name));
	cmd = remote_command(&r->cfg, name);
	argv = calloc(r->nwords + 4, sizeof(*argv));
	if (cmd != NULL && argv != NULL) {
		memcpy(argv, r->words, r->nwords * sizeof(*argv));
		if (r->ssh)
			argv[k++] = dashes;
		argv[k++] = name;
		argv[k] = cmd;
		rc = spawn(rm, argv);
	}
	if (rc == 0 && write(rm->in, r->key_line, strlen(r->key_line)) < 0)
		rc = 0;		/* it died at once: its stdout tells */
	free(argv);
	free(cmd);
	if (rc < 0) {
		char why[200];

		snprintf(why, sizeof(why), "cannot run '%s': %s", r->words[0],
			 strerror(-rc));
		fail(r, i, why);
	}
}

/* Wait for output from the starting commands, or for the first deadline;
 * fail those past theirs. */
static void
wait_some(struct rsh *r)
{
	struct pollfd *pf = calloc(r->starting, sizeof(*pf));
	size_t *idx = calloc(r->starting, sizeof(*idx));
	uint64_t now = now_ms(), first = UINT64_MAX;
	size_t i, k = 0;

	for (i = 0; pf != NULL && idx != NULL && i < r->next; i++) {
		if (r->rem[i].st != R_STARTING)
			continue;
		pf[k] = (struct pollfd){ .fd = r->rem[i].out, .events = POLLIN };
		idx[k++] = i;
		if (r->rem[i].deadline < first)
			first = r->rem[i].deadline;
	}
	if (k > 0 && poll(pf, k, first > now ? (int)(first - now) : 0) > 0)
		for (i = 0; i < k; i++)
			if (pf[i].revents != 0)
				read_out(r, idx[i]);
	now = now_ms();
	for (i = 0; i < r->next; i++)
		if (r->rem[i].st == R_STARTING && r->rem[i].deadline <= now)
			fail(r, i, "no port reported within --connect-timeout");
	if (pf == NULL || idx == NULL)
		sleep_ms(10);	/* out of memory: the deadlines still hold */
	free(pf);
	free(idx);
}

/* Check the command and the hosts, and make room.  Returns 0 or -errno
 * after a message. */
static int
rsh_setup(struct rsh *r, const struct auth_key *key)
{
	const char *base;
	size_t i;
	int rc;

	rc = rsh_split(r->cfg.rsh, &r->words, &r->nwords);
	if (rc == -ENOMEM)
		goto nomem;
	if (rc < 0 || r->nwords == 0) {
		warnx_("bad --rsh command '%s'", r->cfg.rsh);
		return -EINVAL;
	}
	base = strrchr(r->words[0], '/');
	r->ssh = strcmp(base != NULL ? base + 1 : r->words[0], "ssh") == 0;
	for (i = 0; i < r->hl->n; i++) {
		char name[256];

		if (host_name(r->hl->hosts[i], name, sizeof(name)) < 0) {
			warnx_("with --rsh, hosts take no port: '%s' (the "
			       "receivers report theirs)", r->hl->hosts[i]);
			return -EINVAL;
		}
	}
	for (i = 0; i < AUTH_KEY_LEN; i++)
		snprintf(r->key_line + 2 * i, 3, "%02x", key->k[i]);
	strcat(r->key_line, "\n");
	r->rem = calloc(r->hl->n ? r->hl->n : 1, sizeof(*r->rem));
	if (r->rem == NULL)
		goto nomem;
	for (i = 0; i < r->hl->n; i++)
		r->rem[i].in = r->rem[i].out = r->rem[i].err = -1;
	r->n = r->hl->n;
	return 0;
nomem:
	warnx_("cannot start the receivers: out of memory");
	return -ENOMEM;
}

int
rsh_start(const struct rsh_cfg *cfg, const struct hostlist *hl,
	  const struct auth_key *key, struct rsh **out)
{
	struct rsh *r = calloc(1, sizeof(*r));
	int rc;

	*out = NULL;
	if (r == NULL) {
		warnx_("cannot start the receivers: out of memory");
		return -ENOMEM;
	}
	r->cfg = *cfg;
	r->hl = hl;
	rc = rsh_setup(r, key);
	if (rc < 0)
		goto out;
	r->start = now_ms();
	catch_signals(r);
	while (r->next < r->n || r->starting > 0) {
		while (r->starting < r->cfg.fanout && r->next < r->n)
			start_one(r, r->next++);
		if (r->starting > 0)
			wait_some(r);
	}
	r->seconds = (double)(now_ms() - r->start) / 1000;
	*out = r;
	r = NULL;
out:
	rsh_free(r);
	return rc;
}

const char *
rsh_target(const struct rsh *r, size_t i)
{
	return r->rem[i].st == R_READY ? r->rem[i].target : NULL;
}

const char *
rsh_reason(const struct rsh *r, size_t i)
{
	return r->rem[i].reason;
}

double
rsh_seconds(const struct rsh *r)
{
	return r->seconds;
}

void
rsh_finish(struct rsh *r)
{
	size_t i;

	if (r == NULL || r->finished || r->rem == NULL)
		return;
	r->finished = true;
	stop_all(r, FINISH_GRACE_MS);
	for (i = 0; i < r->n; i++) {
		close_fd(&r->rem[i].out);
		close_fd(&r->rem[i].err);
	}
	if (live == r)
		release_signals(r);
}

void
rsh_free(struct rsh *r)
{
	size_t i;

	if (r == NULL)
		return;
	rsh_finish(r);
	for (i = 0; r->rem != NULL && i < r->n; i++)
		free(r->rem[i].target);
	free(r->rem);
	rsh_free_words(r->words);
	free(r);
}
