/* SPDX-License-Identifier: MIT */
/*
 * json - JSON string literals (see json.h).
 */
#include "util/json.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s, or 0 if it is not one. */
static size_t
utf8_len(const unsigned char *s)
{
	size_t n, i;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff))
	    || (c >= 0xd800 && c <= 0xdfff))
		return 0;		/* overlong, out of range, surrogate */
	return n;
}

/* Write the escaped form of one character (or sequence) at s to out
 * (if not NULL); return how many bytes of s it took and add the output
 * length to *len. */
static size_t
escape_one(const unsigned char *s, char *out, size_t *len)
{
	static const char *const fffd = "\xef\xbf\xbd";
	char tmp[8];
	const char *w = tmp;
	size_t take = 1, n;

	switch (*s) {
	case '"': w = "\\\""; break;
	case '\\': w = "\\\\"; break;
	case '\n': w = "\\n"; break;
	case '\r': w = "\\r"; break;
	case '\t': w = "\\t"; break;
	default:
		if (*s < 0x20) {
			snprintf(tmp, sizeof(tmp), "\\u%04x", *s);
		} else if ((take = utf8_len(s)) == 0) {
			w = fffd;
			take = 1;
		} else {
			memcpy(tmp, s, take);
			tmp[take] = '\0';
		}
	}
	n = strlen(w);
	if (out != NULL)
		memcpy(out + *len, w, n);
	*len += n;
	return take;
}

char *
json_quote(const char *s)
{
	const unsigned char *p;
	size_t len = 1;
	char *out;

	if (s == NULL)
		return strdup("null");
	for (p = (const unsigned char *)s; *p != '\0';)
		p += escape_one(p, NULL, &len);
	out = malloc(len + 2);
	if (out == NULL)
		return NULL;
	out[0] = '"';
	len = 1;
	for (p = (const unsigned char *)s; *p != '\0';)
		p += escape_one(p, out, &len);
	out[len++] = '"';
	out[len] = '\0';
	return out;
}
