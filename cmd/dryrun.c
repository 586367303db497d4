/* SPDX-License-Identifier: MIT */
/*
 * -n/--dry-run: what a push would do, and how long it would take.
 *
 * Every host was contacted, authenticated and asked whether it would take
 * the job (its daemon ran every check of a real push and created nothing);
 * here the plan and a predicted time are printed:
 *
 *   predicted = set-up (measured: resolve, connect, authenticate, check)
 *             + steps of the schedule x time of one block on a link
 *
 * where a block's time is its size at the link rate: --bwlimit if given,
 * else the speed the kernel reports for the interface that reaches the
 * first host (/sys/class/net/IF/speed), else an assumed 10 Gbit/s, and
 * the output says which.  The model is the papers' (every member sends
 * and receives one block per step); it ignores the disk, the CPU and
 * shaping the kernel does not report.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cmd.h"
#include "util/net.h"
#include "sched/schedule.h"

#define ASSUMED_BITS_PER_S 10e9

/* The local interface the kernel routes "address:port" through: a UDP
 * socket connected there (nothing is sent) tells our address. */
static int
interface_towards(const char *addr, char *ifname, size_t len)
{
	struct sockaddr_storage peer, local;
	socklen_t sl = sizeof(local);
	struct ifaddrs *ifs, *i;
	char host[256];
	uint16_t port;
	int fd, rc = -ENOENT;

	if (net_split_hostport(addr, host, sizeof(host), &port, 1) < 0 ||
	    net_parse_numeric(host, port, &peer) < 0)
		return -EINVAL;
	fd = socket(peer.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&peer, sizeof(peer)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&local, &sl) < 0)
		rc = -errno;
	close(fd);
	if (rc != -ENOENT || getifaddrs(&ifs) < 0)
		return rc;
	for (i = ifs; i != NULL && rc == -ENOENT; i = i->ifa_next)
		if (net_same_host(i->ifa_addr, &local)) {
			snprintf(ifname, len, "%s", i->ifa_name);
			rc = 0;
		}
	freeifaddrs(ifs);
	return rc;
}

/* The interface's speed in bit/s as the kernel reports it, or 0. */
static double
link_speed(const char *ifname)
{
	char path[IF_NAMESIZE + 64];
	long mbit = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifname);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	if (fscanf(f, "%ld", &mbit) != 1 || mbit <= 0)
		mbit = 0;
	fclose(f);
	return (double)mbit * 1e6;
}

/* The rate a block moves at, in bytes/s, and where it comes from. */
static double
plan_rate(const struct opts *o, const char *addr, char *from, size_t len)
{
	char ifname[IF_NAMESIZE + 1] = "";
	double bits = 0;

	if (addr != NULL && interface_towards(addr, ifname, sizeof(ifname)) == 0)
		bits = link_speed(ifname);
	if (o->bwlimit > 0 && (bits == 0 || (double)o->bwlimit * 8 < bits)) {
		snprintf(from, len, "--bwlimit");
		return (double)o->bwlimit;
	}
	if (bits > 0) {
		snprintf(from, len, "the link speed of %s", ifname);
		return bits / 8;
	}
	snprintf(from, len, "assumed: the speed of %s is not known; "
		 "--bwlimit RATE predicts at RATE", ifname[0] ? ifname : "the "
		 "interface");
	return ASSUMED_BITS_PER_S / 8;
}

void
dry_plan_make(const struct opts *o, enum sched_alg alg,
	      const struct push_summary *s, size_t would, const char *addr,
	      struct dry_plan *pl)
{
	struct sched *sc = NULL;
	uint32_t members = (uint32_t)would + 1;

	memset(pl, 0, sizeof(*pl));
	pl->would = would;
	pl->alg = alg;
	pl->bytes = s->bytes;
	pl->send = s->would_send < s->bytes ? s->would_send : s->bytes;
	pl->block = s->block_size ? s->block_size : 1;
	pl->blocks = (pl->send + pl->block - 1) / pl->block;
	pl->setup = s->setup;
	pl->rate = plan_rate(o, addr, pl->rate_from, sizeof(pl->rate_from));
	if (would > 0 && members <= SCHED_MAX_MEMBERS && pl->blocks > 0 &&
	    sched_new(alg, members, 0, pl->blocks, &sc) == 0)
		pl->steps = sched_steps(sc);
	sched_free(sc);
	pl->step_s = (double)pl->block / pl->rate;
	pl->seconds = pl->setup + (double)pl->steps * pl->step_s;
}

void
dry_plan_print(const struct opts *o, const struct dry_plan *pl,
	       const struct push_summary *s)
{
	char size[32], bs[32];

	if (o->json)
		return;
	format_bytes(size, sizeof(size), (double)pl->bytes);
	format_bytes(bs, sizeof(bs), (double)pl->block);
	printf("dry run: %zu of %zu hosts would take %s, %zu already hold it, "
	       "%zu would fail; nothing was created or sent\n", pl->would,
	       s->hosts, size, s->ok - pl->would, s->failed);
	if (pl->would > 0 && pl->send < pl->bytes) {
		format_bytes(size, sizeof(size), (double)pl->send);
		printf("delta: %s would be sent from here; the hosts hold the "
		       "rest, or pass it on to each other\n", size);
	}
	if (pl->would == 0)
		return;
	printf("plan: %llu block%s of %s, %s schedule of %llu steps for %zu "
	       "members (the sender and %zu host%s)\n",
	       (unsigned long long)pl->blocks, pl->blocks == 1 ? "" : "s", bs,
	       sched_alg_name(pl->alg), (unsigned long long)pl->steps,
	       pl->would + 1, pl->would, pl->would == 1 ? "" : "s");
	printf("predicted: %.3f s = set-up %.3f s (measured) + %llu steps x "
	       "%.3f ms (one block at %.3f Gbit/s, %s)\n", pl->seconds,
	       pl->setup, (unsigned long long)pl->steps, pl->step_s * 1e3,
	       pl->rate * 8 / 1e9, pl->rate_from);
	fflush(stdout);
}
