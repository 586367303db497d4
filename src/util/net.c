/* SPDX-License-Identifier: MIT */
/*
 * net - socket address parsing and formatting (see net.h).
 */
#include "util/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int
parse_port(const char *s, uint16_t *port)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 1 || v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

static int
copy_host(char *host, size_t hostlen, const char *s, size_t n)
{
	if (n == 0 || n >= hostlen)
		return -EINVAL;
	memcpy(host, s, n);
	host[n] = '\0';
	return 0;
}

int
net_split_hostport(const char *s, char *host, size_t hostlen, uint16_t *port,
		   uint16_t default_port)
{
	const char *colon, *close;

	*port = default_port;
	if (s[0] == '[') {
		close = strchr(s, ']');
		if (close == NULL || copy_host(host, hostlen, s + 1,
					       (size_t)(close - s - 1)) < 0)
			return -EINVAL;
		if (close[1] == '\0')
			return 0;
		return close[1] == ':' ? parse_port(close + 2, port) : -EINVAL;
	}
	colon = strchr(s, ':');
	if (colon != NULL && strchr(colon + 1, ':') != NULL) {
		/* a bare IPv6 address */
		return copy_host(host, hostlen, s, strlen(s));
	}
	if (colon == NULL)
		return copy_host(host, hostlen, s, strlen(s));
	if (copy_host(host, hostlen, s, (size_t)(colon - s)) < 0)
		return -EINVAL;
	return parse_port(colon + 1, port);
}

int
net_parse_numeric(const char *host, uint16_t port,
		  struct sockaddr_storage *out)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)out;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)out;

	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		return 0;
	}
	return -EINVAL;
}

bool
net_is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr)
			>> 24) == 127;
	return ss->ss_family == AF_INET6 &&
	       IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

bool
net_hostport_is_loopback(const char *s)
{
	char host[NET_ADDRSTRLEN];
	struct sockaddr_storage ss;
	uint16_t port;

	if (net_split_hostport(s, host, sizeof(host), &port, 0) < 0)
		return false;
	if (strcasecmp(host, "localhost") == 0)
		return true;
	return net_parse_numeric(host, 0, &ss) == 0 && net_is_loopback(&ss);
}

void
net_format_host(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	const struct sockaddr_in *in4 = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

	if (ss->ss_family == AF_INET &&
	    inet_ntop(AF_INET, &in4->sin_addr, buf, (socklen_t)len) != NULL)
		return;
	if (ss->ss_family == AF_INET6 &&
	    inet_ntop(AF_INET6, &in6->sin6_addr, buf, (socklen_t)len) != NULL)
		return;
	snprintf(buf, len, "?");
}

void
net_format(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];

	net_format_host(ss, host, sizeof(host));
	if (ss->ss_family == AF_INET6)
		snprintf(buf, len, "[%s]:%u", host, net_port(ss));
	else if (ss->ss_family == AF_INET)
		snprintf(buf, len, "%s:%u", host, net_port(ss));
	else
		snprintf(buf, len, "?");
}

void
net_format_sa(const struct sockaddr *sa, char *buf, size_t len)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (sa->sa_family == AF_INET)
		memcpy(&ss, sa, sizeof(struct sockaddr_in));
	else if (sa->sa_family == AF_INET6)
		memcpy(&ss, sa, sizeof(struct sockaddr_in6));
	net_format(&ss, buf, len);
}

uint16_t
net_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

bool
net_same_host(const struct sockaddr *a, const struct sockaddr_storage *b)
{
	if (a == NULL || a->sa_family != b->ss_family)
		return false;
	if (a->sa_family == AF_INET)
		return memcmp(&((const struct sockaddr_in *)a)->sin_addr,
			      &((const struct sockaddr_in *)b)->sin_addr,
			      sizeof(struct in_addr)) == 0;
	return a->sa_family == AF_INET6 &&
	       memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		      &((const struct sockaddr_in6 *)b)->sin6_addr,
		      sizeof(struct in6_addr)) == 0;
}

bool
net_equal(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	const struct sockaddr_in *a4 = (const void *)a, *b4 = (const void *)b;
	const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;

	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return a4->sin_port == b4->sin_port &&
		       a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return a6->sin6_port == b6->sin6_port &&
		       memcmp(&a6->sin6_addr, &b6->sin6_addr, 16) == 0;
	return false;
}

void
net_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

void
net_without_port(const struct sockaddr_storage *in,
		 struct sockaddr_storage *out)
{
	*out = *in;
	net_set_port(out, 0);
}

bool
net_is_any(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in *in4 = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

	if (ss->ss_family == AF_INET)
		return in4->sin_addr.s_addr == htonl(INADDR_ANY);
	if (ss->ss_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr);
	return true;
}
