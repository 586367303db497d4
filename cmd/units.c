/* SPDX-License-Identifier: MIT */
/*
 * units - sizes and rates in words for people: what the report, the
 * progress line and the dry run print.
 */
#include <stdio.h>

#include "cmd.h"

void
format_bytes(char *buf, size_t len, double bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB",
					     "PiB" };
	size_t u = 0;

	while (bytes >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		bytes /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%.0f %s", bytes, units[u]);
	else
		snprintf(buf, len, "%.1f %s", bytes, units[u]);
}

void
format_rate(char *buf, size_t len, double bytes, double seconds)
{
	char b[32];

	if (seconds <= 0) {
		snprintf(buf, len, "-");
		return;
	}
	format_bytes(b, sizeof(b), bytes / seconds);
	snprintf(buf, len, "%s/s", b);
}
