/* SPDX-License-Identifier: MIT */
/*
 * wire - big-endian encoding and bounded decoding (see wire.h).
 */
#include "util/wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void
wbuf_init(struct wbuf *w)
{
	memset(w, 0, sizeof(*w));
}

void
wbuf_free(struct wbuf *w)
{
	free(w->data);
	memset(w, 0, sizeof(*w));
}

static uint8_t *
wbuf_grow(struct wbuf *w, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (w->err)
		return NULL;
	if (n > SIZE_MAX / 2 - w->len) {
		w->err = -ENOMEM;
		return NULL;
	}
	if (w->len + n > w->cap) {
		cap = w->cap ? w->cap : 256;
		while (cap < w->len + n)
			cap *= 2;
		p = realloc(w->data, cap);
		if (p == NULL) {
			w->err = -ENOMEM;
			return NULL;
		}
		w->data = p;
		w->cap = cap;
	}
	p = w->data + w->len;
	w->len += n;
	return p;
}

void
be_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void
be_put64(uint8_t *p, uint64_t v)
{
	be_put32(p, (uint32_t)(v >> 32));
	be_put32(p + 4, (uint32_t)v);
}

uint32_t
be_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

uint64_t
be_get64(const uint8_t *p)
{
	return (uint64_t)be_get32(p) << 32 | be_get32(p + 4);
}

void
wput_u8(struct wbuf *w, uint8_t v)
{
	uint8_t *p = wbuf_grow(w, 1);

	if (p != NULL)
		*p = v;
}

void
wput_u16(struct wbuf *w, uint16_t v)
{
	uint8_t *p = wbuf_grow(w, 2);

	if (p != NULL) {
		p[0] = (uint8_t)(v >> 8);
		p[1] = (uint8_t)v;
	}
}

void
wput_u32(struct wbuf *w, uint32_t v)
{
	uint8_t *p = wbuf_grow(w, 4);

	if (p != NULL)
		be_put32(p, v);
}

void
wput_u64(struct wbuf *w, uint64_t v)
{
	uint8_t *p = wbuf_grow(w, 8);

	if (p != NULL)
		be_put64(p, v);
}

void
wput_bytes(struct wbuf *w, const void *src, size_t n)
{
	uint8_t *p = wbuf_grow(w, n);

	if (p != NULL && n > 0)
		memcpy(p, src, n);
}

void
wput_str(struct wbuf *w, const char *s)
{
	size_t n = strlen(s);

	if (n > UINT32_MAX) {
		w->err = -ENOMEM;
		return;
	}
	wput_u32(w, (uint32_t)n);
	wput_bytes(w, s, n);
}

void
rbuf_init(struct rbuf *r, const void *data, size_t len)
{
	r->data = data;
	r->len = data != NULL ? len : 0;
	r->off = 0;
	r->err = 0;
}

/* Claim n bytes or latch the error. */
static const uint8_t *
rbuf_take(struct rbuf *r, size_t n)
{
	const uint8_t *p;

	if (r->err || n > r->len - r->off) {
		r->err = -EBADMSG;
		return NULL;
	}
	p = r->data + r->off;
	r->off += n;
	return p;
}

int
rget_u8(struct rbuf *r, uint8_t *v)
{
	const uint8_t *p = rbuf_take(r, 1);

	if (p == NULL)
		return -EBADMSG;
	*v = p[0];
	return 0;
}

int
rget_u16(struct rbuf *r, uint16_t *v)
{
	const uint8_t *p = rbuf_take(r, 2);

	if (p == NULL)
		return -EBADMSG;
	*v = (uint16_t)(p[0] << 8 | p[1]);
	return 0;
}

int
rget_u32(struct rbuf *r, uint32_t *v)
{
	const uint8_t *p = rbuf_take(r, 4);

	if (p == NULL)
		return -EBADMSG;
	*v = be_get32(p);
	return 0;
}

int
rget_u64(struct rbuf *r, uint64_t *v)
{
	const uint8_t *p = rbuf_take(r, 8);

	if (p == NULL)
		return -EBADMSG;
	*v = be_get64(p);
	return 0;
}

int
rget_bytes(struct rbuf *r, void *dst, size_t n)
{
	const uint8_t *p = rbuf_take(r, n);

	if (p == NULL)
		return -EBADMSG;
	if (n > 0)
		memcpy(dst, p, n);
	return 0;
}

int
rget_str(struct rbuf *r, size_t max, char **out)
{
	const uint8_t *p;
	uint32_t n;
	char *s;

	*out = NULL;
	if (rget_u32(r, &n) < 0 || n > max) {
		r->err = -EBADMSG;
		return -EBADMSG;
	}
	p = rbuf_take(r, n);
	if (p == NULL || (n > 0 && memchr(p, '\0', n) != NULL)) {
		r->err = -EBADMSG;
		return -EBADMSG;
	}
	s = malloc((size_t)n + 1);
	if (s == NULL)
		return -ENOMEM;
	if (n > 0)
		memcpy(s, p, n);
	s[n] = '\0';
	*out = s;
	return 0;
}

int
rbuf_done(const struct rbuf *r)
{
	return (r->err || r->off != r->len) ? -EBADMSG : 0;
}
