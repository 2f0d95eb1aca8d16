/* SPDX-License-Identifier: MIT */
/*
 * --link-dest, --compare-dest and --copy-dest: directories beside DEST
 * (an earlier snapshot, say) where an entry missing from DEST may already
 * be. An entry of the same data and attributes is hard-linked from there
 * (--link-dest: rsnapshot-style backups keep one inode per unchanged file),
 * or left out of DEST (--compare-dest); one of the same data but other
 * attributes is copied locally; anything else is transferred as usual.
 * The DIRs are opened as DEST is (symlinks only of root or of the user
 * running), and every entry in them is reached beneath that descriptor
 * without following a symlink.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sweep.h>

#include "cli.h"
#include "sync.h"

static const char *kind_name(enum basis_kind k)
{
	return k == BASIS_LINK ? "--link-dest" : k == BASIS_COPY ? "--copy-dest" : "--compare-dest";
}

/* Drop "." components and "x/.." pairs by name (only for a DEST that does not exist yet). */
static void lexical_clean(char *p)
{
	char *out = p, *in = p;
	size_t base = *p == '/' ? 1 : 0; /* a leading '/' stays */
	size_t kept = 0;                 /* components written that a ".." may remove */

	out += base;
	in += base;
	while (*in) {
		char *slash = strchr(in, '/');
		size_t len = slash ? (size_t)(slash - in) : strlen(in);

		if (len == 0 || (len == 1 && in[0] == '.')) {
			/* skip */
		} else if (len == 2 && in[0] == '.' && in[1] == '.' && kept) {
			while (out > p + base && out[-1] != '/')
				out--;
			if (out > p + base)
				out--;
			kept--;
		} else {
			if (out > p + base)
				*out++ = '/';
			memmove(out, in, len);
			out += len;
			if (!(len == 2 && in[0] == '.' && in[1] == '.'))
				kept++;
		}
		if (!slash)
			break;
		in = slash + 1;
	}
	if (out == p)
		*out++ = '.';
	*out = 0;
}

int basis_open(struct sync_ctx *c)
{
	for (int i = 0; i < MAX_BASIS_DIRS; i++)
		c->basis_fd[i] = -1;
	for (int i = 0; i < c->o.nbasis; i++) {
		const char *dir = c->o.basis[i];
		char *path = NULL;
		bool untrusted;
		int fd;

		/* rsync: a relative DIR is relative to DEST */
		if (dir[0] != '/') {
			const char *d = c->dest_show && c->dest_show[0] ? c->dest_show : ".";

			path = malloc(strlen(d) + strlen(dir) + 2);
			if (!path)
				return -ENOMEM;
			sprintf(path, "%s/%s", d, dir);
		}
		fd = opath_open(path ? path : dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, &untrusted);
		if (fd == -ENOENT && path && c->dest_fd < 0) {
			/* a dry run into a DEST not made: "DEST/../DIR" taken by name, as rsync does then */
			lexical_clean(path);
			fd = opath_open(path, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, &untrusted);
		}
		if (fd < 0) {
			if (untrusted)
				opath_refusal_msg();
			/* rsync warns and goes on without that DIR */
			cli_error(fd, "%s arg does not exist: %s", kind_name(c->o.basis_kind), path ? path : dir);
		}
		c->basis_fd[i] = fd;
		free(path);
	}
	return 0;
}

void basis_close(struct sync_ctx *c)
{
	for (int i = 0; i < c->o.nbasis; i++) {
		if (c->basis_fd[i] >= 0)
			close(c->basis_fd[i]);
		c->basis_fd[i] = -1;
	}
}

int sync_parent_beneath(int root, const char *rel, const char **name)
{
	const char *slash = strrchr(rel, '/');
	char *dir;
	int fd;

	*name = slash ? slash + 1 : rel;
	if (!slash)
		return sweep_open_beneath(root, ".", O_PATH | O_DIRECTORY, 0);
	dir = strndup(rel, (size_t)(slash - rel));
	if (!dir)
		return -ENOMEM;
	fd = sweep_open_beneath(root, dir, O_PATH | O_DIRECTORY, 0);
	free(dir);
	return fd;
}

/*
 * Entry rel of basis DIR i: its lstat (with --fake-super, as its record
 * says), and a symlink's target. 0 or -errno.
 */
static int basis_stat(struct sync_ctx *c, int i, const char *rel, struct sweep_stat *ss, char *link, size_t len)
{
	const char *name;
	int dfd = sync_parent_beneath(c->basis_fd[i], rel, &name), r = 0;
	struct stat st;

	if (dfd < 0)
		return dfd;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		close(dfd);
		return -errno;
	}
	sweep_stat_from_stat(ss, &st);
	if (c->o.fake_super)
		r = fake_overlay(c, dfd, name, rel, ss);
	if (r == 0 && S_ISLNK(ss->mode) && S_ISREG(st.st_mode)) {
		char *t = fake_read_target(dfd, name);

		if (!t || strlen(t) >= len)
			r = t ? -ENAMETOOLONG : -errno;
		else
			strcpy(link, t);
		free(t);
	} else if (r == 0 && S_ISLNK(ss->mode)) {
		ssize_t n = readlinkat(dfd, name, link, len - 1);

		if (n < 0)
			r = -errno;
		else
			link[n] = 0;
	}
	close(dfd);
	return r;
}

/* rsync's quick check of a basis entry: same data as the source (size and time, or target, or device). */
static bool same_data(const struct sync_ctx *c, const struct sync_node *n, const struct fst *b, const char *link)
{
	mode_t m = n->s.st.st_mode;

	if (S_ISREG(m))
		return n->s.st.st_size == b->st_size && (c->o.size_only || (!c->o.ignore_times && same_mtime(&n->s.st, b)));
	if (S_ISLNK(m))
		return link && n->s.link && !strcmp(link, n->s.link);
	if (S_ISCHR(m) || S_ISBLK(m))
		return n->s.st.st_rdev == b->st_rdev;
	return true;
}

int basis_find(struct sync_ctx *c, struct sync_node *n, struct fst *st, int *which)
{
	const char *rel = node_dst_rel(c, n);
	int level = 0, best = -1;
	struct fst best_st = { 0 };
	char link[PATH_MAX];

	for (int i = 0; i < c->o.nbasis; i++) {
		struct sweep_stat ss;
		struct fst b;

		if (c->basis_fd[i] < 0 || basis_stat(c, i, rel, &ss, link, sizeof(link)) < 0 ||
		    (ss.mode & S_IFMT) != (n->s.st.st_mode & S_IFMT))
			continue;
		fst_pack(&b, &ss);
		if (level == 0) {
			level = 1;
			best = i;
			best_st = b;
		}
		/* -c would compare checksums: the basis is then only a local copy's source (level 1) */
		if (c->o.checksum || !same_data(c, n, &b, link))
			continue;
		if (level == 1) {
			level = 2;
			best = i;
			best_st = b;
		}
		/*
		 * Attributes as rsync's unchanged_attrs(), xattrs included (-X:
		 * compared with the basis entry's, the filter rules applied). ACLs
		 * are not compared here: with -A a basis entry is copied, never
		 * linked.
		 */
		unsigned f = itemize_attrs_vs(c, n, &b, c->basis_fd[i]) & ~(unsigned)IT_SIZE;
		if (!S_ISDIR(n->s.st.st_mode) && !(f & (IT_PERMS | IT_OWNER | IT_GROUP | IT_TIME | IT_ACL | IT_XATTR)) &&
		    !c->o.acls) {
			level = 3;
			best = i;
			best_st = b;
			break;
		}
	}
	*st = best_st;
	*which = best;
	return level;
}

int basis_link(struct sync_ctx *c, const struct sync_node *n, int which)
{
	const char *rel = node_dst_rel(c, n), *bname, *dname;
	int bfd = sync_parent_beneath(c->basis_fd[which], rel, &bname), dfd, r;

	if (bfd < 0)
		return bfd;
	dfd = sync_parent_beneath(c->dest_fd, rel, &dname);
	if (dfd < 0) {
		close(bfd);
		return dfd;
	}
	/* linkat without AT_SYMLINK_FOLLOW: a symlink is linked itself, never what it points to */
	r = linkat(bfd, bname, dfd, dname, 0) < 0 ? -errno : 0;
	close(bfd);
	close(dfd);
	return r;
}
