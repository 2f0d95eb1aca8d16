/* SPDX-License-Identifier: MIT */
/*
 * The files options name (--exclude-from, --include-from, merge rules,
 * --files-from; "-" for standard input), read whole once, on the machine
 * the command was typed on. A remote transfer sends each to the server
 * (W_LISTFILE), whose own parse of the same options then reads the
 * client's copy: a rules file is the client's, as in rsync, and the
 * server's standard input (the wire) is never read as a list.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sync.h"

struct listfile {
	char *name;
	char *data;
	size_t len;
};

static struct listfile *files;
static size_t nfiles;
static bool server_side;

void listfile_server(void)
{
	server_side = true;
}

static const struct listfile *find(const char *name)
{
	for (size_t i = 0; i < nfiles; i++)
		if (!strcmp(files[i].name, name))
			return &files[i];
	return NULL;
}

int listfile_add(const char *name, const void *data, size_t len)
{
	struct listfile *v = realloc(files, (nfiles + 1) * sizeof(*v));
	char *n = strdup(name), *d = malloc(len + 1);

	if (v)
		files = v;
	if (!v || !n || !d) {
		free(n);
		free(d);
		return -ENOMEM;
	}
	memcpy(d, data, len);
	d[len] = 0;
	files[nfiles++] = (struct listfile){ .name = n, .data = d, .len = len };
	return 0;
}

/* Read fd to its end into a new listfile entry. */
static int slurp(const char *name, int fd)
{
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);
	int r = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			char *b = realloc(buf, cap * 2);

			if (!b) {
				r = -ENOMEM;
				break;
			}
			buf = b;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (r == 0)
		r = listfile_add(name, buf, len);
	free(buf);
	return r;
}

FILE *listfile_open(const char *name, int *err, bool *untrusted)
{
	const struct listfile *lf = find(name);

	*untrusted = false;
	*err = 0;
	if (!lf && server_side) {
		*err = -ENOENT; /* the client did not send it */
		return NULL;
	}
	if (!lf) {
		int fd = strcmp(name, "-") ? opath_open(name, O_RDONLY | O_CLOEXEC, 0, untrusted) : 0;
		int r = fd < 0 ? fd : slurp(name, fd);

		if (fd > 0)
			close(fd);
		if (r < 0) {
			*err = r;
			return NULL;
		}
		lf = &files[nfiles - 1];
	}
	/* fmemopen refuses an empty buffer: an empty list reads as /dev/null does */
	FILE *f = lf->len ? fmemopen(lf->data, lf->len, "r") : fopen("/dev/null", "re");
	if (!f)
		*err = -errno;
	return f;
}

size_t listfile_count(void)
{
	return nfiles;
}

void listfile_get(size_t i, const char **name, const char **data, size_t *len)
{
	*name = files[i].name;
	*data = files[i].data;
	*len = files[i].len;
}

void listfile_free_all(void)
{
	for (size_t i = 0; i < nfiles; i++) {
		free(files[i].name);
		free(files[i].data);
	}
	free(files);
	files = NULL;
	nfiles = 0;
}
