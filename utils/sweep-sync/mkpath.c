/* SPDX-License-Identifier: MIT */
/*
 * --mkpath: the missing directories on the way to DEST are made, as rsync's
 * make_path() makes them, one component at a time through opath (a symlink
 * on the way followed only when root or the user running owns it), so the
 * path is never led elsewhere between the check and the mkdir.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sweep.h>

#include "cli.h"
#include "sync.h"

/* Is the directory path there? 1 yes, 0 missing, -errno (after the message) something else. */
static int dir_there(const char *path)
{
	bool untrusted;
	int fd = opath_open(path, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, &untrusted);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	if (fd == -ENOENT)
		return 0;
	if (untrusted)
		opath_refusal_msg();
	cli_error(fd, "mkdir %s failed", cli_quote(path));
	return fd;
}

/* Make path's last component below its (existing) parent: 0 or -errno after the message. */
static int make_one(const char *path)
{
	const char *base;
	bool untrusted;
	int pfd = opath_open_parent(path, &base, &untrusted), r = 0;

	if (pfd < 0) {
		if (untrusted)
			opath_refusal_msg();
		cli_error(pfd, "mkdir %s failed", cli_quote(path));
		return pfd;
	}
	if (mkdirat(pfd, base, 0777) < 0 && errno != EEXIST) {
		r = -errno;
		cli_error(r, "mkdir %s failed", cli_quote(path));
	}
	close(pfd);
	return r;
}

/*
 * The scan found no DEST; now there is one, empty and of its own mode and
 * times, and rsync compares the source's top directory with it ('.d..t...... ./').
 */
static void held_as_there(struct sync_ctx *c)
{
	struct sweep_stat ss;
	struct stat st;

	if (fstat(c->dest_fd, &st) < 0)
		return;
	sweep_stat_from_stat(&ss, &st);
	for (size_t i = 0; i < c->list.n; i++) {
		struct sync_node *n = &c->list.v[i];

		if (!strcmp(n->rel, ".") && !(n->flags & N_DST)) {
			n->flags |= N_DST;
			fst_pack(&n->d.st, &ss);
		}
	}
}

int sync_mkpath(struct sync_ctx *c, struct sync_dest *d, bool whole)
{
	char *path = strdup(d->dst), *end;
	int made = 0, r = 0;
	bool missing = false;

	if (!path) {
		cli_msg("out of memory");
		return EXIT_PARTIAL;
	}
	/* rsync's MKP_DROP_NAME: a lone file's DEST is its name, the directories above it are made */
	if (!whole) {
		char *slash = strrchr(path, '/');

		if (!slash || slash == path)
			goto out;
		*slash = 0;
	}
	end = path + strlen(path);
	/* each prefix in turn, from the first component: "a", "a/b", "a/b/c" */
	for (char *p = path + (*path == '/'); p <= end && r >= 0; p++) {
		if (*p && *p != '/')
			continue;
		char save = *p;

		*p = 0;
		if (*path && strcmp(path, ".") && strcmp(path, "..")) {
			if (!missing) {
				r = dir_there(path);
				missing = r == 0;
			}
			if (r >= 0 && missing) {
				/* a dry run makes nothing and counts what it would make, as rsync's */
				r = c->o.dry_run ? 0 : make_one(path);
				made += r == 0;
			}
		}
		*p = save;
	}
	if (r < 0) {
		free(path);
		return EXIT_FILEIO;
	}
	if (made && (c->o.itemize || c->o.name_level > 0))
		printf("created %d director%s for %s\n", made, made == 1 ? "y" : "ies", path);
	d->mkpath_missing = c->o.dry_run && made;
	if (made && whole && !c->o.dry_run) {
		/* DEST is a directory now: held as one that was there */
		d->stat = 0;
		d->is_dir = true;
		c->dest_fd = opath_open(d->dst, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, NULL);
		if (c->dest_fd < 0) {
			cli_error(c->dest_fd, "change_dir#1 %s failed", cli_quote(d->dst));
			c->dest_fd = -1;
			free(path);
			return EXIT_FILESELECT;
		}
		held_as_there(c);
	}
out:
	free(path);
	return 0;
}
