/* SPDX-License-Identifier: MIT */
/*
 * --send-libs: the shared libraries a dynamically linked ELF executable
 * needs, found as this machine's loader finds them (ldd), sent with it to
 * a directory next to it, as sbcast does.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "store/manifest.h"
#include "util/path.h"

extern char **environ;

#define LDD_SECONDS 30		/* ldd runs the loader: bound it */

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* True if `path` starts like an ELF file. */
static bool
is_elf(const char *path)
{
	unsigned char magic[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool elf;

	if (fd < 0)
		return false;
	elf = read(fd, magic, 4) == 4 && memcmp(magic, "\177ELF", 4) == 0;
	close(fd);
	return elf;
}

/* Run `ldd path` with its output on a pipe; returns the read end, or
 * -errno. */
static int
spawn_ldd(const char *path, pid_t *pid)
{
	char *argv[] = { (char *)"ldd", (char *)"--", (char *)path, NULL };
	posix_spawn_file_actions_t fa;
	int fds[2], rc;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null",
					 O_WRONLY, 0);
	rc = posix_spawnp(pid, "ldd", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		return -rc;
	}
	return fds[0];
}

/* One line of ldd: "\tNAME => /PATH (0x...)" gives NAME and PATH; the
 * loader, the vDSO and "not found" give nothing (and are noted). */
static int
parse_line(char *line, char **name, char **file)
{
	char *arrow = strstr(line, " => "), *paren;

	*name = *file = NULL;
	if (arrow == NULL)
		return 0;		/* the vDSO, the loader, "statically" */
	*arrow = '\0';
	*name = line + strspn(line, " \t");
	*file = arrow + 4;
	if (strncmp(*file, "not found", 9) == 0)
		return -ENOENT;
	paren = strstr(*file, " (");
	if (paren != NULL)
		*paren = '\0';
	return (*file)[0] == '/' ? 0 : -EINVAL;
}

/* The C library's own parts must match the nodes' loader: never sent. */
static bool
is_libc_part(const char *name)
{
	static const char *const parts[] = { "libc.so", "libm.so",
		"libpthread.so", "libdl.so", "librt.so", "libresolv.so",
		"libutil.so", "ld-linux", NULL };
	const char *base = path_base(name);
	size_t i;

	for (i = 0; parts[i] != NULL; i++)
		if (strncmp(base, parts[i], strlen(parts[i])) == 0)
			return true;
	return false;
}

struct libs {
	char **name, **file;
	size_t n;
};

static int
keep_lib(struct libs *l, const char *name, const char *file)
{
	char **nn = realloc(l->name, (l->n + 1) * sizeof(*nn)), **ff;

	if (nn == NULL)
		return -ENOMEM;
	l->name = nn;
	ff = realloc(l->file, (l->n + 1) * sizeof(*ff));
	if (ff == NULL)
		return -ENOMEM;
	l->file = ff;
	l->name[l->n] = strdup(name);
	l->file[l->n] = strdup(file);
	l->n++;
	return l->name[l->n - 1] && l->file[l->n - 1] ? 0 : -ENOMEM;
}

/* Read ldd's answer for `exe`: the libraries to send.  Returns 0 or
 * -errno after a message. */
static int
read_ldd(char *out, const char *exe, struct libs *l)
{
	char *line, *save = NULL, *name, *file;
	int rc = 0, bad;

	for (line = strtok_r(out, "\n", &save); rc == 0 && line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		bad = parse_line(line, &name, &file);
		if (bad == -ENOENT) {
			warnx_("--send-libs: %s needs %s, which is not found "
			       "here", exe, name);
			rc = -ENOENT;
		} else if (bad == 0 && file != NULL && !is_libc_part(name)) {
			rc = keep_lib(l, name, file);
			if (rc < 0)
				warnx_("--send-libs: %s: %s", exe,
				       strerror(-rc));
		}
	}
	return rc;
}

/* All that ldd writes on fd, within LDD_SECONDS (else it is killed):
 * a new string in *out.  0 or -errno. */
static int
collect(int fd, pid_t pid, char **out)
{
	uint64_t deadline = now_ms() + LDD_SECONDS * 1000;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap), *grown;
	ssize_t n = 1;
	int64_t left;

	while (buf != NULL && n > 0) {
		if (len + 1 == cap) {
			grown = realloc(buf, cap *= 2);
			if (grown == NULL)
				break;
			buf = grown;
		}
		left = (int64_t)(deadline - now_ms());
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0) {
			kill(pid, SIGKILL);
			free(buf);
			return -ETIMEDOUT;
		}
		n = read(fd, buf + len, cap - len - 1);
		len += n > 0 ? (size_t)n : 0;
	}
	if (buf == NULL || n != 0) {
		free(buf);
		return n < 0 ? -errno : -ENOMEM;
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

/* DEST_libs/ and the libraries in it.  Returns 0 or -errno after a
 * message. */
static int
add_to_manifest(struct manifest *m, const struct libs *l, const char *dest,
		const char *exe)
{
	struct rd_err err = { 0 };
	char *dir = NULL, *to;
	size_t i;
	int rc;

	if (l->n == 0)
		return 0;
	if (asprintf(&dir, "%s_libs", dest) < 0) {
		dir = NULL;
		rc = -ENOMEM;
		goto out;
	}
	rc = mf_add_dir(m, dir, 0755);
	for (i = 0; rc == 0 && i < l->n; i++) {
		to = path_join(dir, path_base(l->name[i]));
		rc = to ? mf_add(m, l->file[i], to, false, &err) : -ENOMEM;
		free(to);
	}
out:
	if (rc < 0)
		warnx_("--send-libs: %s: %s", exe,
		       err.code ? err.msg : strerror(-rc));
	free(dir);
	return rc;
}

static void
libs_free(struct libs *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->name[i]);
		free(l->file[i]);
	}
	free(l->name);
	free(l->file);
}

int
add_libs(struct manifest *m, const char *exe, const char *dest)
{
	struct libs l = { 0 };
	char *out = NULL;
	pid_t pid;
	int fd, status, rc;

	if (!is_elf(exe))
		return 0;	/* scripts and data: nothing to add */
	fd = spawn_ldd(exe, &pid);
	if (fd < 0) {
		warnx_("--send-libs: cannot run ldd: %s", strerror(-fd));
		return fd;
	}
	rc = collect(fd, pid, &out);
	close(fd);
	waitpid(pid, &status, 0);	/* it ended, or was killed */
	if (rc == -ETIMEDOUT)
		warnx_("--send-libs: ldd %s took more than %d s", exe,
		       LDD_SECONDS);
	else if (rc < 0)
		warnx_("--send-libs: reading what ldd says of %s: %s", exe,
		       strerror(-rc));
	if (rc == 0)
		rc = read_ldd(out, exe, &l);
	free(out);
	if (rc == 0)
		rc = add_to_manifest(m, &l, dest, exe);
	libs_free(&l);
	return rc;
}
