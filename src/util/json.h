/* SPDX-License-Identifier: MIT */
/*
 * json - the small part of JSON that rdmcp writes (--json).  Pure.
 */
#ifndef RDMCP_JSON_H
#define RDMCP_JSON_H

#include <stddef.h>

/* `s` as a JSON string literal, quotes included, in a malloc'd buffer (or
 * NULL if out of memory; NULL s gives "null").  Quotes, backslashes and
 * control characters are escaped; bytes that are not valid UTF-8 become
 * U+FFFD, so the output is always valid JSON. */
char *json_quote(const char *s);

#endif
