/* SPDX-License-Identifier: MIT */
/*
 * cap - what a job costs a daemon against its --max-blocks (see
 * transfer_over_cap in transfer.h), and the block size that would do.
 */
#include <stdint.h>
#include <stdio.h>

#include "proto/proto.h"
#include "daemon/transfer.h"

/* The smallest power of two from PROTO_MIN_BLOCK that cuts `total`
 * bytes into `max` blocks at most, or 0 if not even PROTO_MAX_BLOCK
 * does. */
static uint64_t
block_size_within(uint64_t total, uint64_t max)
{
	uint64_t b;

	for (b = PROTO_MIN_BLOCK; b <= PROTO_MAX_BLOCK; b *= 2)
		if ((total + b - 1) / b <= max)
			return b;
	return 0;
}

/* What the sender can do to cut `total` bytes into `max` blocks at
 * most: the block size, as --block-size takes it (512, 64K, 2M, 1G). */
static void
remedy(uint64_t total, uint64_t max, char *buf, size_t len)
{
	static const char units[] = "KMG";
	uint64_t b = block_size_within(total, max);
	int u = -1;

	if (b == 0) {
		snprintf(buf, len, "not even --block-size 1G makes so few");
		return;
	}
	while (u < 2 && b % 1024 == 0) {
		b /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "use --block-size %llu or more",
			 (unsigned long long)b);
	else
		snprintf(buf, len, "use --block-size %llu%c or more",
			 (unsigned long long)b, units[u]);
}

bool
transfer_over_cap(const struct job *job, uint32_t members, uint64_t max_blocks,
	      char *why, size_t len)
{
	uint64_t k = job_blocks(job), cost;
	char what[64];

	if (max_blocks == 0 || members == 0)
		return false;
	cost = k > UINT64_MAX / members ? UINT64_MAX : k * members;
	if (cost <= max_blocks)
		return false;
	remedy(job->total, max_blocks / members, what, sizeof(what));
	if (members == 1)
		snprintf(why, len, "a job of %llu blocks is more than this "
			 "daemon's --max-blocks %llu: %s",
			 (unsigned long long)k, (unsigned long long)max_blocks,
			 what);
	else
		snprintf(why, len, "a schedule across racks of %llu blocks for "
			 "%u members (%llu blocks x members) is more than this "
			 "daemon's --max-blocks %llu: %s, or the chain "
			 "(-a chain)", (unsigned long long)k, members,
			 (unsigned long long)cost,
			 (unsigned long long)max_blocks, what);
	return true;
}

