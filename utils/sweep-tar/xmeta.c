/* SPDX-License-Identifier: MIT */
/*
 * -x: a member's metadata as the archive gives it (owner, mode, times,
 * xattrs, POSIX ACLs, file flags), set through the file's own descriptor.
 *
 * The order is the copy engine's (lib/copy/copy_meta.c): owner first
 * (chown clears set-id bits), then xattrs, then the mode, then times, and
 * the file flags last (an immutable file takes no further change). One
 * difference: the ACL is set after the mode, not before. The copy engine
 * copies a stat mode, whose group bits are the ACL mask; an archive's mode
 * (libarchive's entry) carries the ACL's group entry there, and setting the
 * ACL afterwards puts the mask back where the kernel keeps it.
 *
 * ACLs go to the kernel as the raw system.posix_acl_access/_default
 * values, as the copy engine sends them, built here from libarchive's
 * entries (no libacl).
 *
 * The copy engine's helpers (sweep__meta_copy) copy from one file to
 * another: their source is a file or a blob read from one, and they are
 * not exported from the shared library the tools link. Here the source is
 * an archive entry, so only the order and the calls are shared, not code.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "tar.h"
#include "xdisk.h"

/* The kernel's POSIX ACL xattr format (include/uapi/linux/posix_acl_xattr.h). */
#define ACL_EA_VERSION 2
enum { ACL_EA_USER_OBJ = 0x01, ACL_EA_USER = 0x02, ACL_EA_GROUP_OBJ = 0x04, ACL_EA_GROUP = 0x08,
       ACL_EA_MASK = 0x10, ACL_EA_OTHER = 0x20 };
struct acl_ea_entry {
	uint16_t tag, perm;
	uint32_t id;
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int acl_entry_cmp(const void *a, const void *b)
{
	const struct acl_ea_entry *x = a, *y = b;

	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* One ACL of the entry (access or default) in the kernel's form; kv->val NULL when it has none. */
static int acl_raw(const struct xmeta_ctx *c, struct archive_entry *e, int type, struct xattr_kv *kv)
{
	int n = archive_entry_acl_reset(e, type), got_type, perm, tag, id;
	const char *name;
	struct acl_ea_entry *v;
	size_t k = 0;

	kv->val = NULL;
	if (n <= 0 || !(archive_entry_acl_types(e) & type))
		return 0;
	if (!(v = calloc((size_t)n, sizeof(*v))))
		return -ENOMEM;
	while (k < (size_t)n && archive_entry_acl_next(e, type, &got_type, &perm, &tag, &id, &name) == ARCHIVE_OK) {
		struct acl_ea_entry *a = &v[k++];

		a->perm = (uint16_t)(perm & 7);
		a->id = UINT32_MAX; /* ACL_UNDEFINED_ID */
		switch (tag) {
		case ARCHIVE_ENTRY_ACL_USER_OBJ: a->tag = ACL_EA_USER_OBJ; break;
		case ARCHIVE_ENTRY_ACL_GROUP_OBJ: a->tag = ACL_EA_GROUP_OBJ; break;
		case ARCHIVE_ENTRY_ACL_MASK: a->tag = ACL_EA_MASK; break;
		case ARCHIVE_ENTRY_ACL_OTHER: a->tag = ACL_EA_OTHER; break;
		case ARCHIVE_ENTRY_ACL_USER:
			a->tag = ACL_EA_USER;
			a->id = (uint32_t)(name && !c->numeric ? archive_write_disk_uid(c->lookup, name, id) : id);
			break;
		case ARCHIVE_ENTRY_ACL_GROUP:
			a->tag = ACL_EA_GROUP;
			a->id = (uint32_t)(name && !c->numeric ? archive_write_disk_gid(c->lookup, name, id) : id);
			break;
		default: /* NFSv4 entries: not POSIX, not for Linux's ACLs */
			k--;
			break;
		}
	}
	/* The kernel wants them sorted by tag, then id (posix_acl_valid). */
	qsort(v, k, sizeof(*v), acl_entry_cmp);
	kv->len = 4 + k * sizeof(*v);
	if (k == 0 || !(kv->val = malloc(kv->len))) {
		free(v);
		return k == 0 ? 0 : -ENOMEM;
	}
	uint32_t version = ACL_EA_VERSION;
	memcpy(kv->val, &version, 4);
	memcpy((char *)kv->val + 4, v, k * sizeof(*v));
	free(v);
	return 0;
}

/*
 * An xattr name as stored in a SCHILY.xattr keyword: GNU tar writes '%' and
 * '=' as %25 and %3D, libarchive %-escapes those and unprintable bytes;
 * libarchive's reader hands the keyword over undecoded. Decoded in place.
 */
static void xattr_name_decode(char *s)
{
	char *w = s;

	for (const char *r = s; *r; r++) {
		int hi, lo;
		if (r[0] == '%' && (hi = hexval(r[1])) >= 0 && (lo = hexval(r[2])) >= 0 && (hi || lo)) {
			*w++ = (char)(hi << 4 | lo);
			r += 2;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

static int add_xattrs(const struct xmeta_ctx *c, struct xmeta *m, struct archive_entry *e)
{
	const char *name;
	const void *val;
	size_t len;
	int n = archive_entry_xattr_reset(e);

	if (n <= 0)
		return 0;
	if (!(m->x = calloc((size_t)n, sizeof(*m->x))))
		return -ENOMEM;
	while (m->nx < (size_t)n && archive_entry_xattr_next(e, &name, &val, &len) == ARCHIVE_OK) {
		struct xattr_kv *kv = &m->x[m->nx];

		if (!(kv->name = strdup(name)))
			return -ENOMEM;
		xattr_name_decode(kv->name);
		/* --xattrs-include, --xattrs-exclude */
		if (!tar_xattr_selected(c->t->o, kv->name, false)) {
			free(kv->name);
			kv->name = NULL;
			continue;
		}
		if (!(kv->val = malloc(len ? len : 1)))
			return -ENOMEM;
		memcpy(kv->val, val, len);
		kv->len = len;
		m->nx++;
	}
	return 0;
}

int xmeta_from_entry(const struct xmeta_ctx *c, struct archive_entry *e, struct xmeta *m)
{
	const char *un = archive_entry_uname(e), *gn = archive_entry_gname(e);
	unsigned long set = 0, clear = 0;
	int r = 0;

	memset(m, 0, sizeof(*m));
	m->mode = archive_entry_mode(e);
	m->uid = (uid_t)archive_entry_uid(e);
	m->gid = (gid_t)archive_entry_gid(e);
	/* GNU tar maps names to ids unless --numeric-owner; an unknown name keeps the number. */
	if (!c->numeric && un && *un)
		m->uid = (uid_t)archive_write_disk_uid(c->lookup, un, m->uid);
	if (!c->numeric && gn && *gn)
		m->gid = (gid_t)archive_write_disk_gid(c->lookup, gn, m->gid);
	m->ts[0].tv_nsec = UTIME_OMIT; /* GNU tar leaves atime alone unless the archive has one */
	if (archive_entry_atime_is_set(e)) {
		m->ts[0].tv_sec = archive_entry_atime(e);
		m->ts[0].tv_nsec = archive_entry_atime_nsec(e);
	}
	m->ts[1].tv_nsec = UTIME_OMIT;
	if (archive_entry_mtime_is_set(e)) {
		m->ts[1].tv_sec = archive_entry_mtime(e);
		m->ts[1].tv_nsec = archive_entry_mtime_nsec(e);
	}
	if (c->xattrs)
		r = add_xattrs(c, m, e);
	if (r == 0 && c->acls && !S_ISLNK(m->mode)) {
		r = acl_raw(c, e, ARCHIVE_ENTRY_ACL_TYPE_ACCESS, &m->acl[0]);
		if (r == 0 && S_ISDIR(m->mode))
			r = acl_raw(c, e, ARCHIVE_ENTRY_ACL_TYPE_DEFAULT, &m->acl[1]);
	}
	if (c->fflags) {
		archive_entry_fflags(e, &set, &clear);
		m->fl_set = set;
		m->fl_clear = clear;
	}
	if (r < 0)
		xmeta_free(m);
	return r;
}

void xmeta_free(struct xmeta *m)
{
	for (size_t i = 0; i < m->nx; i++) {
		free(m->x[i].name);
		free(m->x[i].val);
	}
	free(m->x);
	free(m->acl[0].val);
	free(m->acl[1].val);
	memset(m, 0, sizeof(*m));
}

/*
 * The file: fd open on it (a regular file, a directory), or an O_PATH
 * descriptor (a symlink, FIFO or device: opened without following and
 * checked by the caller), reached by its /proc/self/fd name for the calls
 * that take no O_PATH descriptor. The magic link resolves to the inode the
 * descriptor holds, never to a name looked up again.
 */
struct target {
	int fd;
	bool opath;
	char proc[40];
};

static int t_chown(const struct target *f, uid_t u, gid_t g)
{
	return f->opath ? fchownat(f->fd, "", u, g, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) : fchown(f->fd, u, g);
}

static int t_setxattr(const struct target *f, const char *name, const void *v, size_t n)
{
	return f->opath ? setxattr(f->proc, name, v, n, 0) : fsetxattr(f->fd, name, v, n, 0);
}

static int t_removexattr(const struct target *f, const char *name)
{
	return f->opath ? removexattr(f->proc, name) : fremovexattr(f->fd, name);
}

static int t_chmod(const struct target *f, mode_t mode)
{
	return f->opath ? chmod(f->proc, mode) : fchmod(f->fd, mode);
}

static int t_times(const struct target *f, const struct timespec ts[2])
{
	return f->opath ? utimensat(f->fd, "", ts, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) : futimens(f->fd, ts);
}

static bool unsupported(int err)
{
	return err == ENOTSUP || err == ENOSYS;
}

int xmeta_apply(const struct xmeta_ctx *c, const struct xmeta *m, int fd, bool opath, const char *name)
{
	struct target f = { .fd = fd, .opath = opath };
	bool link = S_ISLNK(m->mode), owned = false;
	mode_t mode = m->mode & 07777;
	int failed = 0;

	snprintf(f.proc, sizeof(f.proc), "/proc/self/fd/%d", fd);
	if (c->same_owner) {
		if (t_chown(&f, m->uid, m->gid) == 0)
			owned = true;
		else {
			failed = -errno;
			tar_error(c->t, name, "Cannot change ownership to uid %lu, gid %lu: %s",
				  (unsigned long)m->uid, (unsigned long)m->gid, strerror(errno));
		}
	}
	for (size_t i = 0; i < m->nx; i++)
		if (t_setxattr(&f, m->x[i].name, m->x[i].val, m->x[i].len) != 0)
			tar_warn(c->t, name, "Cannot set extended attribute %s: %s", m->x[i].name,
				 strerror(errno));
	/*
	 * An ACL the member has none of is removed: one inherited from a
	 * default ACL of the directory it was made in is not the archive's
	 * (GNU tar --acls restores the tree as archived). Before the mode,
	 * which then stands alone.
	 */
	for (int i = 0; c->acls && !link && i < (S_ISDIR(m->mode) ? 2 : 1); i++)
		if (!m->acl[i].val && t_removexattr(&f, i ? "system.posix_acl_default" : "system.posix_acl_access") != 0 &&
		    errno != ENODATA && !unsupported(errno))
			tar_warn(c->t, name, "Cannot remove the inherited %s ACL: %s", i ? "default" : "access", strerror(errno));
	if (!link) {
		/* Without -p: the mode less the umask, no set-id bits (GNU tar). */
		if (!c->same_perms)
			mode &= 0777 & ~c->umask;
		/* Set-id bits on a file that did not get its owner would give them to someone else. */
		if (!owned && (m->uid != geteuid() || m->gid != getegid()))
			mode &= (mode_t)~(S_ISUID | S_ISGID);
		if (t_chmod(&f, mode) != 0) {
			failed = -errno;
			tar_error(c->t, name, "Cannot change mode to %04o: %s", (unsigned)mode, strerror(errno));
		}
	}
	for (int i = 0; i < 2; i++)
		if (m->acl[i].val && t_setxattr(&f, i ? "system.posix_acl_default" : "system.posix_acl_access",
						 m->acl[i].val, m->acl[i].len) != 0)
			tar_warn(c->t, name, "Cannot set %s ACL: %s", i ? "default" : "access",
				 unsupported(errno) ? "Operation not supported" : strerror(errno));
	if (c->times && (m->ts[0].tv_nsec != UTIME_OMIT || m->ts[1].tv_nsec != UTIME_OMIT) &&
	    t_times(&f, m->ts) != 0)
		tar_warn(c->t, name, "Cannot utime: %s", strerror(errno));
	if ((m->fl_set || m->fl_clear) && !opath) {
		unsigned long have = 0;
		int fl;

		/* FS_IOC_*FLAGS take an int, whatever the constant's name says. */
		if (ioctl(fd, FS_IOC_GETFLAGS, &fl) == 0)
			have = (unsigned long)(unsigned)fl;
		fl = (int)((have | m->fl_set) & ~m->fl_clear);
		if (ioctl(fd, FS_IOC_SETFLAGS, &fl) != 0)
			tar_warn(c->t, name, "Cannot set file flags: %s", strerror(errno));
	}
	return failed;
}
