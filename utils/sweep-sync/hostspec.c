/* SPDX-License-Identifier: MIT */
/*
 * rsync's reading of an operand as a remote one: "[USER@]HOST:PATH" (remote
 * shell), "[USER@]HOST::MODULE/PATH" and "rsync://[USER@]HOST[:PORT]/MODULE/PATH"
 * (daemon). A colon counts only before the first slash, so "./a:b" and
 * "/x/a:b" are local names; HOST may be an IPv6 literal in brackets. The
 * rules follow rsync's parse_hostspec() and check_for_hostspec().
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sync.h"

/*
 * Scan "[USER@]HOST" at s up to ':' (or, with url, also '/' or the end).
 * Fills user/host spans and returns the character that ended it (pointer),
 * or NULL when s is not a host spec.
 */
static const char *scan_host(const char *s, bool url, struct hostspec *h)
{
	const char *host_start = s, *p;
	size_t hostlen = 0;
	bool have_len = false;

	h->user_len = 0;
	for (p = s;; p++) {
		if (!*p) {
			if (!url)
				return NULL;
			break;
		}
		if (*p == ':' || *p == '/') {
			if (*p == '/' && !url)
				return NULL;
			break;
		}
		if (*p == '@') {
			h->user_len = (size_t)(p - s);
			host_start = p + 1;
		} else if (*p == '[') {
			if (p != host_start)
				return NULL;
			const char *q = p + 1;
			while (*q && *q != ']' && *q != '/')
				q++;
			hostlen = (size_t)(q - (p + 1));
			if (*q != ']' || (q[1] && q[1] != '/' && q[1] != ':') || !hostlen)
				return NULL;
			h->host = p + 1;
			have_len = true;
			p = q;
		}
	}
	if (!have_len) {
		h->host = host_start;
		hostlen = (size_t)(p - host_start);
	}
	h->host_len = hostlen;
	h->user = h->user_len ? s : NULL;
	return p;
}

bool hostspec_parse(const char *arg, struct hostspec *h)
{
	const char *p;

	memset(h, 0, sizeof(*h));
	if (!strncasecmp(arg, "rsync://", 8)) {
		p = scan_host(arg + 8, true, h);
		if (p) {
			h->daemon = true;
			if (*p == ':') {
				p++;
				while (*p >= '0' && *p <= '9')
					p++;
				if (*p && *p != '/')
					goto shell;
			}
			h->path = *p == '/' ? p + 1 : p;
			return true;
		}
	}
shell:
	memset(h, 0, sizeof(*h));
	p = scan_host(arg, false, h);
	if (!p)
		return false;
	p++; /* the ':' */
	if (*p == ':') {
		h->daemon = true;
		p++;
	}
	h->path = p;
	return true;
}
