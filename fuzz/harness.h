/* SPDX-License-Identifier: MIT */
/*
 * harness - what the stateful fuzz targets share (fuzz_serve.c, the
 * daemon; fuzz_push.c, the sender) and what fuzz/mkseeds.c writes their
 * seeds with: the fixed key, reading an input, following a stream of
 * frames as its reader sees it, the script language, descriptors.
 *
 * A script is what one end of a control connection says, op by op; each
 * op is one byte, its kind in the low 3 bits, then its operands (numbers
 * big-endian; a missing byte reads as 0):
 *
 *   SC_FRAME  type, flags (SCF_*), [arg u32], [val u64], [len u16, body]:
 *             a frame with a good header
 *   SC_RAW    len u16, bytes: sent as they are (bad headers, half frames)
 *   SC_WAIT   type: until the other end has sent a frame of that type
 *             (0: any but NOP) that no SC_WAIT before took, or closed,
 *             or a while passed (the target says how long)
 *   SC_CLOSE  the connection ends here (what each target does then: its
 *             header comment)
 *   SC_PAUSE  ms: a pause of ms % SC_PAUSE_MS while the other end runs
 *   SC_X5..7  the target's own
 */
#ifndef RDMCP_FUZZ_HARNESS_H
#define RDMCP_FUZZ_HARNESS_H

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/auth.h"
#include "util/log.h"
#include "proto/proto.h"
#include "util/wire.h"

enum {
	SC_FRAME, SC_RAW, SC_WAIT, SC_CLOSE, SC_PAUSE, SC_X5, SC_X6, SC_X7,
};
#define SCF_ARG 0x1u
#define SCF_VAL 0x2u
#define SCF_BODY 0x4u
#define SC_WAIT_MS 200
#define SC_PAUSE_MS 50

/* A property does not hold: say which, and let libFuzzer keep the input
 * as a crash. */
#define FUZZ_FAIL(...)                                                        \
	do {                                                                  \
		fprintf(stderr, "\nPROPERTY VIOLATED (%s:%d): ", __FILE__,    \
			__LINE__);                                            \
		fprintf(stderr, __VA_ARGS__);                                 \
		fputc('\n', stderr);                                          \
		abort();                                                      \
	} while (0)

/* The cluster's key, the same in every run. */
static inline void
fuzz_key(struct auth_key *k)
{
	int i;

	for (i = 0; i < AUTH_KEY_LEN; i++)
		k->k[i] = (uint8_t)(0xa5 ^ (i * 7));
}

/* ---------------------------------------------------------------------
 * Script encoding (mkseeds)
 */

static inline void
sc_frame(struct wbuf *w, uint8_t type, uint32_t arg, uint64_t val,
	 const void *body, uint16_t len)
{
	uint8_t flags = (arg ? SCF_ARG : 0) | (val ? SCF_VAL : 0) |
			(len ? SCF_BODY : 0);

	wput_u8(w, SC_FRAME);
	wput_u8(w, type);
	wput_u8(w, flags);
	if (arg)
		wput_u32(w, arg);
	if (val)
		wput_u64(w, val);
	if (len) {
		wput_u16(w, len);
		wput_bytes(w, body, len);
	}
}

static inline void
sc_op(struct wbuf *w, uint8_t op, int operand)
{
	wput_u8(w, op);
	if (operand >= 0)
		wput_u8(w, (uint8_t)operand);
}

/* ---------------------------------------------------------------------
 * Reading an input
 */

struct in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t
in_u8(struct in *in)
{
	if (in->n == 0)
		return 0;
	in->n--;
	return *in->p++;
}

static inline uint64_t
in_be(struct in *in, int bytes)
{
	uint64_t v = 0;

	while (bytes-- > 0)
		v = v << 8 | in_u8(in);
	return v;
}

/* Up to `want` bytes of the input, in place; returns how many. */
static inline size_t
in_take(struct in *in, size_t want, const uint8_t **out)
{
	size_t n = want < in->n ? want : in->n;

	*out = in->p;
	in->p += n;
	in->n -= n;
	return n;
}

/* An SC_FRAME's operands (after its op byte) as header and body. */
static inline size_t
in_frame(struct in *in, uint8_t hdr[PROTO_FRAME_LEN], struct frame *f,
	 const uint8_t **body)
{
	uint8_t flags;
	size_t n = 0;

	memset(f, 0, sizeof(*f));
	f->type = in_u8(in);
	flags = in_u8(in);
	if (flags & SCF_ARG)
		f->arg = (uint32_t)in_be(in, 4);
	if (flags & SCF_VAL)
		f->val = in_be(in, 8);
	*body = NULL;
	if (flags & SCF_BODY)
		n = in_take(in, (size_t)in_be(in, 2), body);
	f->len = n;
	frame_encode(f, hdr);
	return n;
}

/* ---------------------------------------------------------------------
 * A stream of frames as its reader sees it: headers decoded as the
 * reader decodes them; after a bad one the reader has dropped the
 * connection and nothing more counts.
 */

#define FS_KEEP 8192	/* body bytes kept for the callback */

struct fstream {
	uint8_t hdr[PROTO_FRAME_LEN];
	size_t hlen;
	struct frame f;
	uint64_t left;		/* body bytes of f still to come */
	uint8_t body[FS_KEEP];
	size_t kept;
	bool broken;
	uint64_t frames;
	/* a whole frame (body: its first `kept` bytes) */
	void (*on_frame)(void *ctx, const struct frame *f,
			 const uint8_t *body, size_t kept);
	void *ctx;
};

static inline void
fs_init(struct fstream *s, void (*on_frame)(void *, const struct frame *,
					    const uint8_t *, size_t),
	void *ctx)
{
	memset(s, 0, sizeof(*s));
	s->on_frame = on_frame;
	s->ctx = ctx;
}

static inline void
fs_whole(struct fstream *s)
{
	s->frames++;
	s->hlen = 0;
	if (s->on_frame != NULL)
		s->on_frame(s->ctx, &s->f, s->body, s->kept);
}

static inline void
fs_feed(struct fstream *s, const uint8_t *p, size_t n)
{
	size_t take;

	while (n > 0 && !s->broken) {
		if (s->hlen < PROTO_FRAME_LEN) {
			take = PROTO_FRAME_LEN - s->hlen;
			take = take < n ? take : n;
			memcpy(s->hdr + s->hlen, p, take);
			s->hlen += take;
			p += take;
			n -= take;
			if (s->hlen < PROTO_FRAME_LEN)
				return;
			if (frame_decode(s->hdr, &s->f) < 0) {
				s->broken = true;
				return;
			}
			s->left = s->f.len;
			s->kept = 0;
			if (s->left == 0)
				fs_whole(s);
			continue;
		}
		take = s->left < n ? (size_t)s->left : n;
		if (s->kept < FS_KEEP) {
			size_t keep = FS_KEEP - s->kept < take ? FS_KEEP - s->kept
							       : take;

			memcpy(s->body + s->kept, p, keep);
			s->kept += keep;
		}
		s->left -= take;
		p += take;
		n -= take;
		if (s->left == 0)
			fs_whole(s);
	}
}

/* ---------------------------------------------------------------------
 * The process
 */

/* Open descriptors but pipes and /dev/null: the sanitizers' symbolizer,
 * which libFuzzer starts when it first prints a function, talks to the
 * process through pipes it keeps; the code under test opens none. */
static inline int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], to[300];
	ssize_t len;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, to, sizeof(to) - 1);
		to[len > 0 ? len : 0] = '\0';
		n += strncmp(to, "pipe:", 5) != 0 &&
		     strcmp(to, "/dev/null") != 0;
	}
	closedir(d);
	return n;
}

/* What the descriptors are, on stderr (after a leak). */
static inline void
dump_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], to[300];
	ssize_t n;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, to, sizeof(to) - 1);
		to[n > 0 ? n : 0] = '\0';
		fprintf(stderr, "  fd %s -> %s\n", e->d_name, to);
	}
	closedir(d);
}

/* Entries of a directory but `except`, -1 if it cannot be read. */
static inline int
count_entries(const char *dir, const char *except)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") != 0 &&
		     strcmp(e->d_name, "..") != 0 &&
		     (except == NULL || strcmp(e->d_name, except) != 0);
	closedir(d);
	return n;
}

static inline int
fuzz_rm_entry(const char *path, const struct stat *sb, int flag,
	      struct FTW *ftw)
{
	if (flag == FTW_D || flag == FTW_DP)
		chmod(path, 0700);
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

/* Remove a tree (never following a link); 0 or -1. */
static inline int
fuzz_rm_tree(const char *dir)
{
	return nftw(dir, fuzz_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A new directory "rdmcp-fuzz-WHAT.PID.XXXXXX" in $TMPDIR (or /tmp) into
 * out; first the ones of processes that are gone (a crash, a timeout:
 * libFuzzer does not run atexit then) are removed. */
static inline void
fuzz_tmpdir(const char *what, char *out, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	char prefix[64], path[PATH_MAX];
	struct dirent *e;
	DIR *d;
	long pid;

	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	snprintf(prefix, sizeof(prefix), "rdmcp-fuzz-%s.", what);
	d = opendir(tmp);
	while (d != NULL && (e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
			continue;
		pid = strtol(e->d_name + strlen(prefix), NULL, 10);
		if (pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
			snprintf(path, sizeof(path), "%s/%s", tmp, e->d_name);
			fuzz_rm_tree(path);
		}
	}
	if (d != NULL)
		closedir(d);
	snprintf(out, len, "%s/%s%ld.XXXXXX", tmp, prefix, (long)getpid());
	if (mkdtemp(out) == NULL) {
		perror(out);
		abort();
	}
}

static inline void
fuzz_log_sink(void *ctx, enum log_level level, const char *msg)
{
	fprintf(stderr, "[%d] %s\n", (int)level, msg);
}

/* Logs on stderr with FUZZ_LOG=1 (debug: FUZZ_LOG=3), else none. */
static inline void
fuzz_logs(void)
{
	const char *v = getenv("FUZZ_LOG");

	if (v != NULL && *v != '\0' && *v != '0')
		log_setup(fuzz_log_sink, NULL,
			  atoi(v) >= 3 ? LOG_DEBUG : LOG_INFO);
}

#endif
