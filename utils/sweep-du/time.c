/* SPDX-License-Identifier: MIT */
/* sweep-du --time: dates as du's show_date() prints them (strftime plus %N). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "du.h"

int du_time_format(char *buf, size_t cap, const char *fmt, struct timespec ts)
{
	char f[512], ns[16];
	size_t o = 0;
	struct tm tm;
	time_t sec = ts.tv_sec;

	if (!localtime_r(&sec, &tm)) {
		/* du prints the raw seconds when the time does not fit a struct tm */
		snprintf(buf, cap, "%lld", (long long)ts.tv_sec);
		return -1;
	}
	/* %N (nanoseconds) is a gnulib fprintftime extension: spell it out for strftime */
	snprintf(ns, sizeof(ns), "%09ld", ts.tv_nsec);
	for (const char *p = fmt; *p && o + 10 < sizeof(f); p++) {
		if (p[0] == '%' && p[1] == 'N') {
			memcpy(f + o, ns, 9);
			o += 9;
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			f[o++] = '%';
			f[o++] = '%';
			p++;
		} else {
			f[o++] = *p;
		}
	}
	f[o] = 0;
	if (!*f || strftime(buf, cap, f, &tm) == 0)
		buf[0] = 0;
	return 0;
}
