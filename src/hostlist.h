/*
 * hostlist - parsing host lists.  Pure.
 *
 * For now a comma-separated list of "host", "host:port" or "[v6]:port"
 * entries; whitespace around entries is ignored.
 */
#ifndef RDMCP_HOSTLIST_H
#define RDMCP_HOSTLIST_H

#include <stddef.h>

#include "log.h"

struct hostlist {
	char **hosts;
	size_t n;
};

/* Append the hosts of `spec` to `hl` (start from a zeroed hostlist).
 * Returns 0, or -EINVAL with a reason naming the offending entry. */
int hostlist_parse(struct hostlist *hl, const char *spec, struct rd_err *err);

/* Release the entries; the hostlist is empty afterwards. */
void hostlist_clear(struct hostlist *hl);

#endif
