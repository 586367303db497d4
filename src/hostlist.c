/*
 * hostlist - parsing host lists (see hostlist.h).
 */
#include "hostlist.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net.h"

static int
hostlist_add(struct hostlist *hl, const char *s, size_t n)
{
	char **grown, *copy;

	copy = strndup(s, n);
	if (copy == NULL)
		return -ENOMEM;
	grown = realloc(hl->hosts, (hl->n + 1) * sizeof(*grown));
	if (grown == NULL) {
		free(copy);
		return -ENOMEM;
	}
	hl->hosts = grown;
	hl->hosts[hl->n++] = copy;
	return 0;
}

static int
check_entry(const char *s, size_t n, struct rd_err *err)
{
	char entry[300], host[256];
	uint16_t port;
	size_t i;

	if (n == 0)
		return rd_errf(err, -EINVAL, "empty entry in the host list");
	if (n >= sizeof(entry))
		return rd_errf(err, -EINVAL, "host name too long: %.40s...",
			       s);
	memcpy(entry, s, n);
	entry[n] = '\0';
	for (i = 0; i < n; i++)
		if (isspace((unsigned char)entry[i]) || !isprint((unsigned char)entry[i]))
			return rd_errf(err, -EINVAL, "bad character in host "
				       "'%s'", entry);
	if (net_split_hostport(entry, host, sizeof(host), &port, 1) < 0)
		return rd_errf(err, -EINVAL, "bad host '%s' (expected host, "
			       "host:port or [address]:port)", entry);
	return 0;
}

int
hostlist_parse(struct hostlist *hl, const char *spec, struct rd_err *err)
{
	const char *p = spec, *end;
	size_t n;
	int rc;

	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		end = p + strcspn(p, ",");
		n = (size_t)(end - p);
		while (n > 0 && isspace((unsigned char)p[n - 1]))
			n--;
		rc = check_entry(p, n, err);
		if (rc == 0)
			rc = hostlist_add(hl, p, n);
		if (rc < 0)
			return rc;
		if (*end == '\0')
			return 0;
		p = end + 1;
	}
}

void
hostlist_clear(struct hostlist *hl)
{
	size_t i;

	for (i = 0; i < hl->n; i++)
		free(hl->hosts[i]);
	free(hl->hosts);
	hl->hosts = NULL;
	hl->n = 0;
}
