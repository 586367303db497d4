/* SPDX-License-Identifier: MIT */
/*
 * hostlist - host list expressions, as pdsh and Slurm write them.  Pure.
 *
 * A list is comma-separated entries.  An entry is a host name or address
 * with optional ":port", where the name may hold bracketed numeric ranges:
 *
 *     node[01-64,70]        node01 .. node64, node70 (zero padding kept)
 *     rack[1-2]n[01-16]     32 hosts: the product of the ranges
 *     node[1-30/4]          node1, node5 .. node29: a step, as clush's
 *     10.0.0.[1-8]:7000     addresses with a port
 *     [fe80::1]:7000        an IPv6 address (brackets holding a colon)
 *
 * Every host expands to a name or an address: a name has letters, digits,
 * '-', '.' and '_' and starts with a letter or digit (so an IPv4 address
 * is one); with a ':' it must be an IPv6 address, with an optional %zone.
 * Hosts go on remote shells' command lines (--rsh): nothing a shell acts
 * on, and no option.
 *
 * Whitespace around entries is ignored.  The reverse, hostlist_compress(),
 * writes a set of hosts back in this form, e.g. for failure reports.
 */
#ifndef RDMCP_HOSTLIST_H
#define RDMCP_HOSTLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/log.h"

/* Expanding one expression to more hosts than this is an error. */
#define HOSTLIST_MAX 1000000

struct hostlist {
	char **hosts;
	size_t n;
	size_t max;	/* refuse to grow beyond this; 0: HOSTLIST_MAX */
};

/* Append the hosts of `spec` to `hl` (start from a zeroed hostlist).
 * Returns 0, or -EINVAL with a reason that quotes the expression and
 * points at the offending character, and names a host that is no name or
 * address (-ENOMEM, -E2BIG). */
int hostlist_parse(struct hostlist *hl, const char *spec, struct rd_err *err);

/* As hostlist_parse, but blanks separate entries too, as commas do
 * ("node1 node2, node[3-4]"): a line of a host or topology file. */
int hostlist_parse_line(struct hostlist *hl, const char *line,
			struct rd_err *err);

/* Append the hosts of a host file: one or more entries per line
 * (hostlist_parse_line), '#' starts a comment, blank lines are skipped.
 * `text` is the file's contents; errors name `name` and the line. */
int hostlist_parse_file(struct hostlist *hl, const char *text,
			const char *name, struct rd_err *err);

/* Remove from `hl` every host that appears in `ex`, exactly (a set
 * difference). */
void hostlist_exclude(struct hostlist *hl, const struct hostlist *ex);

/* Remove from `hl` every host an entry of `ex` names, as -x does: the
 * same name, ignoring case, and if the entry has a port, the same port (a
 * host of hl without one has default_port); an entry without a port
 * names the host at any port.  matched[j] (unless NULL) is set true for
 * each entry j of ex that named a host.  Returns how many hosts were
 * removed, or -ENOMEM (hl unchanged). */
ssize_t hostlist_leave_out(struct hostlist *hl, const struct hostlist *ex,
			   uint16_t default_port, bool *matched);

/* Drop repeated hosts, keeping first occurrences in order; returns how
 * many were dropped. */
size_t hostlist_dedupe(struct hostlist *hl);

/* Write hosts[i] for every i with pick == NULL or pick[i] true, as a
 * compressed expression ("node[01-05,07],other"), into buf (NUL-terminated,
 * truncated with "..." if too small).  Returns the length it needed (as
 * snprintf), or -ENOMEM. */
long hostlist_compress(char *const *hosts, size_t n, const bool *pick,
		       char *buf, size_t len);

/* Release the entries; the hostlist is empty afterwards. */
void hostlist_clear(struct hostlist *hl);

#endif
