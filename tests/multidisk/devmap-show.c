/* SPDX-License-Identifier: MIT */
/*
 * devmap-show: what the library's device map (lib/device/devmap.c) says
 * about real filesystems, for the shell tests.
 *
 *   devmap-show map PATH...     per filesystem of each PATH: its spindles
 *                               ("spindle NAME KIND MEMBERS GROUP") and note
 *   devmap-show locate FILE...  per file: "FILE SPINDLE OFFSET GROUP" for its
 *                               first located extent (FIEMAP), "FILE - - -" when
 *                               none; GROUP among the spindles the files are on
 */
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device.h"

static const char *kind_name(enum sweep__spindle_kind k)
{
	static const char *const names[] = { "disk", "striped", "mirrored", "opaque", "nodev" };
	return (unsigned)k < 5 ? names[k] : "?";
}

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "map") && strcmp(argv[1], "locate"))) {
		fprintf(stderr, "usage: %s map|locate PATH...\n", argv[0]);
		return 2;
	}
	bool locate = !strcmp(argv[1], "locate");
	struct sweep__spindles *s = sweep__spindles_new();
	uint32_t *where = calloc((size_t)argc, sizeof(*where));
	uint64_t *at = calloc((size_t)argc, sizeof(*at));
	int rc = 0;
	if (!s || !where || !at)
		return 2;
	for (int i = 2; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
		struct stat st;
		struct sweep__devmap *m = NULL;
		if (fd < 0 || fstat(fd, &st) < 0) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			rc = 1;
			if (fd >= 0)
				close(fd);
			continue;
		}
		int r = sweep__devmap_new(s, fd, (uint64_t)st.st_dev, &m);
		if (r < 0) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(-r));
			close(fd);
			rc = 1;
			continue;
		}
		if (locate) {
			uint64_t phys, off;
			uint32_t sp;
			where[i] = UINT32_MAX;
			if (sweep_extent_first(fd, &phys) == 0) {
				sweep__devmap_locate(m, phys, &sp, &off);
				where[i] = sp;
				at[i] = off;
			}
		} else {
			printf("map %s spindles %zu home %s note %s\n", argv[i], sweep__devmap_spindles(m),
			       sweep__spindle_name(s, sweep__devmap_home(m)),
			       sweep__devmap_note(m)[0] ? sweep__devmap_note(m) : "-");
		}
		sweep__devmap_free(m);
		close(fd);
	}
	size_t ns = sweep__spindles_count(s);
	uint32_t *group = calloc(ns ? ns : 1, sizeof(*group));
	unsigned char *used = calloc(ns ? ns : 1, 1);
	if (!group || !used)
		return 2;
	for (int i = 2; locate && i < argc; i++)
		if (where[i] != UINT32_MAX && where[i] < ns)
			used[where[i]] = 1;
	if (sweep__spindles_groups(s, locate ? used : NULL, group) < 0)
		return 2;
	for (int i = 2; locate && i < argc; i++) {
		if (where[i] == UINT32_MAX)
			printf("%s - - -\n", argv[i]);
		else
			printf("%s %s %llu %s\n", argv[i], sweep__spindle_name(s, where[i]), (unsigned long long)at[i],
			       sweep__spindle_name(s, group[where[i]]));
	}
	for (size_t i = 0; !locate && i < ns; i++)
		printf("spindle %s %s %u %s\n", sweep__spindle_name(s, (uint32_t)i),
		       kind_name(sweep__spindle_kind(s, (uint32_t)i)), sweep__spindle_members(s, (uint32_t)i),
		       sweep__spindle_name(s, group[i]));
	free(group);
	free(used);
	free(where);
	free(at);
	sweep__spindles_free(s);
	return rc;
}
