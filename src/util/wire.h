/* SPDX-License-Identifier: MIT */
/*
 * wire - bounds-checked big-endian encoding into growable buffers and
 * decoding from untrusted ones.  Pure: no I/O.
 *
 * Writers never fail midway: an allocation failure sets w->err and later
 * puts are ignored, so a sequence of puts needs one check at the end.
 * Readers likewise latch the first error; every get checks the remaining
 * length before touching memory.
 */
#ifndef RDMCP_WIRE_H
#define RDMCP_WIRE_H

#include <stddef.h>
#include <stdint.h>

struct wbuf {
	uint8_t *data;
	size_t len;
	size_t cap;
	int err;	/* 0 or -ENOMEM */
};

struct rbuf {
	const uint8_t *data;
	size_t len;
	size_t off;
	int err;	/* 0 or -EBADMSG */
};

/* Start an empty writer. */
void wbuf_init(struct wbuf *w);

/* Release a writer's memory; safe on an initialised or zeroed writer. */
void wbuf_free(struct wbuf *w);

void wput_u8(struct wbuf *w, uint8_t v);
void wput_u16(struct wbuf *w, uint16_t v);
void wput_u32(struct wbuf *w, uint32_t v);
void wput_u64(struct wbuf *w, uint64_t v);
void wput_bytes(struct wbuf *w, const void *p, size_t n);

/* A string as u32 length + bytes (no terminator). */
void wput_str(struct wbuf *w, const char *s);

/* Start reading `len` bytes at `data`. */
void rbuf_init(struct rbuf *r, const void *data, size_t len);

/* Each get returns 0 or -EBADMSG (input too short, or an earlier error). */
int rget_u8(struct rbuf *r, uint8_t *v);
int rget_u16(struct rbuf *r, uint16_t *v);
int rget_u32(struct rbuf *r, uint32_t *v);
int rget_u64(struct rbuf *r, uint64_t *v);
int rget_bytes(struct rbuf *r, void *p, size_t n);

/* A string of at most `max` bytes, without NUL bytes inside, returned as a
 * new NUL-terminated allocation (caller frees).  -EBADMSG if longer or
 * malformed, -ENOMEM. */
int rget_str(struct rbuf *r, size_t max, char **out);

/* 0 if every byte was consumed and no error occurred, else -EBADMSG. */
int rbuf_done(const struct rbuf *r);

/* Raw big-endian helpers for fixed headers. */
void be_put32(uint8_t *p, uint32_t v);
void be_put64(uint8_t *p, uint64_t v);
uint32_t be_get32(const uint8_t *p);
uint64_t be_get64(const uint8_t *p);

#endif
