/* SPDX-License-Identifier: MIT */
/*
 * rsync's itemized output (-i, "%i %n%L"): an 11-character code YXcstpoguax
 * where Y says what happened ('>' data received, 'c' created or changed
 * here, 'h' hard link, '.' attributes only), X the type (f d L D S), and
 * each later column names an attribute that differs from what the
 * destination had ('+' everywhere for a new item). The rules follow rsync's
 * itemize() in generator.c and log.c's %i; the code here is our own.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <sweep.h>

#include "progress.h"
#include "filter.h"
#include "sync.h"

/*
 * rsync's default --modify-window=0 compares whole seconds: a time that
 * differs only in nanoseconds is "the same" (and set exactly only when the
 * file is transferred). Matching that keeps -i and the quick check in step.
 */
long long sync_modify_window;

bool same_mtime(const struct fst *a, const struct fst *b)
{
	long long d;

	if (sync_modify_window == 0)
		return a->st_mtim.tv_sec == b->st_mtim.tv_sec;
	if (sync_modify_window < 0)
		return a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
	d = (long long)a->st_mtim.tv_sec - (long long)b->st_mtim.tv_sec;
	return (d < 0 ? -d : d) <= sync_modify_window;
}

/* One side's attributes: a name the l*xattr calls take, or (a remote source) the set its sender sent. */
struct xside {
	const char *path;
	const struct sweep_copy_xattr *v;
	size_t n;
	/*
	 * --fake-super: rsync's own records (user.rsync.%stat and the like) are
	 * not compared; a source's names (src) are compared as the copy
	 * engine stores them (sweep_copy_fake_xattr_name(3)).
	 */
	bool fake, src;
	const struct filter_set *xfilter; /* xattr rules ('x'): they decide, instead of leaving system.* out */
};

/* One xattr value of a side, malloc'ed, or NULL with *len = 0 when absent. */
static char *get_xattr(const struct xside *x, const char *name, ssize_t *len)
{
	const char *path = x->path;
	ssize_t n;
	char *v;

	*len = 0;
	if (!path) {
		for (size_t i = 0; i < x->n; i++)
			if (!strcmp(x->v[i].name, name) && (v = malloc(x->v[i].len + 1))) {
				memcpy(v, x->v[i].value, x->v[i].len);
				*len = (ssize_t)x->v[i].len;
				return v;
			}
		return NULL;
	}
	n = lgetxattr(path, name, NULL, 0);
	if (n < 0)
		return NULL;
	v = malloc((size_t)n + 1);
	if (!v)
		return NULL;
	n = lgetxattr(path, name, v, (size_t)n);
	if (n < 0) {
		free(v);
		return NULL;
	}
	*len = n;
	return v;
}

/* The value of a's attribute aname and of b's bname: equal. */
static bool xattr_equal_as(const struct xside *a, const char *aname, const struct xside *b, const char *bname)
{
	ssize_t la, lb;
	char *va = get_xattr(a, aname, &la), *vb = get_xattr(b, bname, &lb);
	bool eq = la == lb && (la == 0 || !memcmp(va, vb, (size_t)la));

	free(va);
	free(vb);
	return eq;
}

static bool xattr_equal(const struct xside *a, const struct xside *b, const char *name)
{
	return xattr_equal_as(a, name, b, name);
}

static int cmp_str(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;

	return strcmp(x ? x : "", y ? y : "");
}

/*
 * The sorted list of names rsync -X carries (everything but system.*), each
 * "NAME\0REAL": as compared, then as read from the side.
 */
static char **xattr_names(const struct xside *x, size_t *ret_n)
{
	const char *path = x->path;
	ssize_t len = 0;
	char *buf, **names;
	size_t n = 0, k = 0;

	*ret_n = 0;
	if (!path) {
		for (size_t i = 0; i < x->n; i++)
			len += (ssize_t)strlen(x->v[i].name) + 1;
	} else {
		len = llistxattr(path, NULL, 0);
	}
	if (len <= 0)
		return NULL;
	buf = malloc((size_t)len + 1);
	if (!buf)
		return NULL;
	if (!path) {
		char *q = buf;

		for (size_t i = 0; i < x->n; i++)
			q = stpcpy(q, x->v[i].name) + 1;
	} else {
		len = llistxattr(path, buf, (size_t)len);
	}
	if (len <= 0) {
		free(buf);
		return NULL;
	}
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(buf + i) + 1)
		n++;
	names = malloc((n + 1) * sizeof(*names));
	if (!names) {
		free(buf);
		return NULL;
	}
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(buf + i) + 1) {
		char mapped[XATTR_NAME_MAX + 1];
		const char *real = buf + i, *name = real;
		size_t ln, lr = strlen(real);

		if (x->xfilter ? !strncmp(real, "system.posix_acl_", 17) || filter_xattr_excluded(x->xfilter, real)
			       : !strncmp(real, "system.", 7))
			continue;
		if (x->fake && !strncmp(real, "user.rsync.%", 12))
			continue;
		if (x->fake && x->src && !(name = sweep_copy_fake_xattr_name(real, mapped, sizeof(mapped))))
			continue;
		ln = strlen(name);
		if ((names[k] = malloc(ln + lr + 2))) {
			memcpy(names[k], name, ln + 1);
			memcpy(names[k] + ln + 1, real, lr + 1);
			k++;
		}
	}
	free(buf);
	qsort(names, k, sizeof(*names), cmp_str);
	*ret_n = k;
	return names;
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static bool xattrs_differ(const struct xside *a, const struct xside *b)
{
	size_t na, nb;
	char **va = xattr_names(a, &na), **vb = xattr_names(b, &nb);
	bool diff = na != nb;

	for (size_t i = 0; !diff && i < na; i++)
		diff = strcmp(va[i], vb[i]) ||
		       !xattr_equal_as(a, va[i] + strlen(va[i]) + 1, b, vb[i] + strlen(vb[i]) + 1);
	free_names(va, na);
	free_names(vb, nb);
	return diff;
}

static bool acls_differ(const struct xside *a, const struct xside *b, bool dir)
{
	if (!xattr_equal(a, b, "system.posix_acl_access"))
		return true;
	return dir && !xattr_equal(a, b, "system.posix_acl_default");
}

/*
 * A name that the l*xattr calls can take for one side of n without a path
 * lookup from the top: /proc/self/fd/DIR/NAME, DIR being its directory
 * opened beneath the side's root (*dirfd, closed by the caller).
 */
static const char *xattr_path(struct sync_ctx *c, const struct sync_node *n, int dst_root, char *buf, size_t len,
			      int *dirfd)
{
	bool dst = dst_root != -2;
	const char *rel = dst ? node_dst_rel(c, n) : node_src_rel(c, n);
	int root = dst ? dst_root : c->src_fd[n->root];
	const char *slash = strrchr(rel, '/'), *name = slash ? slash + 1 : rel;
	char *dir = slash ? strndup(rel, (size_t)(slash - rel)) : NULL;

	*dirfd = -1;
	if (root < 0 || (slash && !dir))
		return NULL;
	*dirfd = sweep_open_beneath(root, dir ? dir : ".", O_PATH | O_DIRECTORY, 0);
	free(dir);
	if (*dirfd < 0)
		return NULL;
	snprintf(buf, len, "/proc/self/fd/%d/%s", *dirfd, name);
	return buf;
}

bool sync_keep_time(const struct sync_opts *o, unsigned mode)
{
	return o->times && !(S_ISDIR(mode) && o->omit_dir_times) && !(S_ISLNK(mode) && o->omit_link_times);
}

unsigned itemize_attrs(struct sync_ctx *c, struct sync_node *n)
{
	return itemize_attrs_vs(c, n, &n->d.st, c->dest_fd);
}

unsigned itemize_attrs_vs(struct sync_ctx *c, struct sync_node *n, const struct fst *d, int d_root)
{
	const struct fst *s = &n->s.st;
	const struct sync_opts *o = &c->o;
	unsigned f = 0;

	if (S_ISREG(s->st_mode) && s->st_size != d->st_size)
		f |= IT_SIZE;
	/* rsync -b without --backup-dir implies -O: directory times are not compared */
	if (sync_keep_time(o, s->st_mode) && !same_mtime(s, d) && !(S_ISDIR(s->st_mode) && o->backup && !o->backup_dir))
		f |= IT_TIME;
	/* Linux cannot chmod a symlink, so rsync never reports its perms */
	if (o->perms && !S_ISLNK(s->st_mode) && (s->st_mode & 07777) != (d->st_mode & 07777))
		f |= IT_PERMS;
	else if (!o->perms && o->executability && S_ISREG(s->st_mode) && !(s->st_mode & 0111) != !(d->st_mode & 0111))
		f |= IT_PERMS;
	/* rsync's itemize(): -U compares the access times of non-directories, to the second */
	if (o->atimes && !S_ISDIR(s->st_mode) && s->st_atim.tv_sec != d->st_atim.tv_sec)
		f |= IT_ATIME;
	/* rsync's am_root is -1 with --fake-super: owners are compared (and recorded) */
	if (o->owner && (c->am_root || o->fake_super) && s->st_uid != d->st_uid)
		f |= IT_OWNER;
	if (o->group && s->st_gid != d->st_gid)
		f |= IT_GROUP;
	if (o->acls || o->xattrs) {
		char sb[64 + NAME_MAX], db[64 + NAME_MAX];
		int sfd = -1, dfd;
		/* a remote source's are those its sender sent */
		const struct filter_set *xf = filter_set_has_xattr(o->filters) ? o->filters : NULL;
		struct xside sx = { .fake = o->fake_super, .src = true, .xfilter = xf };
		const char *sp = c->role == ROLE_RECEIVER ? "" : xattr_path(c, n, -2, sb, sizeof(sb), &sfd);
		const char *dp = xattr_path(c, n, d_root, db, sizeof(db), &dfd);
		struct xside dx = { .path = dp, .fake = o->fake_super, .xfilter = xf };

		if (c->role == ROLE_RECEIVER)
			sx.v = remote_xattrs(c, n, &sx.n);
		else
			sx.path = sp;
		if (sp && dp) {
			if (o->acls && !S_ISLNK(s->st_mode) && acls_differ(&sx, &dx, S_ISDIR(s->st_mode)))
				f |= IT_ACL;
			if (o->xattrs && xattrs_differ(&sx, &dx))
				f |= IT_XATTR;
		}
		if (sfd >= 0)
			close(sfd);
		if (dfd >= 0)
			close(dfd);
	}
	return f;
}

void itemize_code(const struct sync_opts *o, mode_t mode, unsigned f, char c[12])
{
	/* '<': sent, as rsync's sender says it (a client pushing prints the receiving server's lines) */
	c[0] = f & IT_LOCAL ? (f & IT_HLINK ? 'h' : 'c') : !(f & IT_TRANSFER) ? '.' : o->sent_view ? '<' : '>';
	if (S_ISLNK(mode)) {
		c[1] = 'L';
		c[3] = '.';
	} else {
		c[1] = S_ISDIR(mode) ? 'd' : S_ISREG(mode) ? 'f' : (S_ISCHR(mode) || S_ISBLK(mode)) ? 'D' : 'S';
		c[3] = f & IT_SIZE ? 's' : '.';
	}
	c[4] = !(f & IT_TIME) ? '.' : o->times ? 't' : 'T';
	c[2] = f & IT_CHANGE ? 'c' : '.';
	c[5] = f & IT_PERMS ? 'p' : '.';
	c[6] = f & IT_OWNER ? 'o' : '.';
	c[7] = f & IT_GROUP ? 'g' : '.';
	c[8] = f & IT_ATIME ? 'u' : '.';
	c[9] = f & IT_ACL ? 'a' : '.';
	c[10] = f & IT_XATTR ? 'x' : '.';
	c[11] = 0;
	if (f & IT_NEW) {
		memset(c + 2, '+', 9);
	} else if (c[0] == '.' || c[0] == 'h' || c[0] == 'c') {
		int i = 2;

		while (c[i] == '.')
			i++;
		if (!c[i])
			memset(c + 2, ' ', 9);
	}
}

/* Length of the valid UTF-8 sequence at p (no overlongs, surrogates or > U+10FFFF), 0 if none. */
static size_t utf8_len(const unsigned char *p)
{
	size_t n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 : 0;

	if (!n)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
	    (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
		return 0;
	return n;
}

/*
 * Print a name as rsync does: control bytes (but tab) and a backslash that
 * starts "\\#ddd" become "\\#ooo", and so do bytes that are not valid in the
 * locale's character set (rsync passes names through iconv to it): in a
 * UTF-8 locale, invalid sequences; otherwise every byte above 0x7f.
 */
void sync_put_name(const struct sync_ctx *c, FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		size_t n = *p >= 0x80 && c->utf8 ? utf8_len(p) : 0;

		if (n) {
			fwrite(p, 1, n, f);
			p += n - 1;
		} else if ((*p < ' ' && *p != '\t') || *p >= 0x80 ||
			   (*p == '\\' && p[1] == '#' && p[2] >= '0' && p[2] <= '9' && p[3] >= '0' &&
			    p[3] <= '9' && p[4] >= '0' && p[4] <= '9')) {
			fprintf(f, "\\#%03o", *p);
		} else {
			putc(*p, f);
		}
	}
}

/* A line built in memory, then handed to out.c for its turn. */
struct line {
	FILE *f;
	char *buf;
	size_t len;
};

static bool line_open(struct line *l)
{
	l->buf = NULL;
	l->len = 0;
	l->f = open_memstream(&l->buf, &l->len);
	return l->f != NULL;
}

static void line_emit(struct sync_ctx *c, struct line *l, size_t at)
{
	if (fclose(l->f) == 0)
		out_add(c, at, l->buf, l->len);
	free(l->buf);
}

void itemize_print(struct sync_ctx *c, const struct sync_node *n, unsigned f, const char *xname)
{
	const struct fst *st = n->flags & N_SRC ? &n->s.st : &n->d.st;
	bool dir = S_ISDIR(st->st_mode);
	char code[12];
	struct line l;

	/*
	 * rsync's itemize(): without -t, a transfer or a local change that
	 * did not match a basis sets the time to now, so 'T' shows (the
	 * 'cDc.T......' of a device, a hard link's 'hf..T......').
	 */
	if (!sync_keep_time(&c->o, st->st_mode) && (f & (IT_TRANSFER | IT_LOCAL)) && !(f & IT_MATCHED) && (!(f & IT_HLINK) || (xname && *xname)))
		f |= IT_TIME;
	if ((f & IT_NEW) && (n->flags & N_SRC))
		c->stats.created[report_type(st->st_mode)]++;
	/* --log-file: what rsync's maybe_log_item() logs with a format that has %i, whatever stdout shows */
	if (synclog_on() && ((f & IT_SIGNIFICANT) || (xname && *xname) || c->o.itemize >= 2 ||
			     (c->o.itemize && c->o.name_level >= 2)))
		synclog_item(c, n, f, xname);
	if (c->o.itemize) {
		/* rsync's itemize(): unchanged entries too with -ii, or -i with -vv (--info=name2) */
		if (!(f & IT_SIGNIFICANT) && c->o.itemize < 2 && c->o.name_level < 2 && !(xname && *xname))
			return;
	} else if (c->o.name_level > 0) {
		/* -v names what was made or transferred, as rsync -v does (not what a --*-dest DIR matched) */
		if ((f & IT_MATCHED) && !(f & IT_SIGNIFICANT) && c->o.name_level < 2)
			return;
		bool kept_link = (f & IT_HLINK) && !(xname && *xname); /* a hard link already in place */

		if (!(f & (IT_NEW | IT_TRANSFER | IT_CHANGE)) && (!(f & IT_LOCAL) || kept_link) && !dir &&
		    !(f & IT_MATCHED) && c->o.name_level >= 2) {
			/* rsync's set_file_attrs() at -vv: "NAME is uptodate", or NAME alone when it set something */
			if (!line_open(&l))
				return;
			sync_put_name(c, l.f, n->rel);
			fputs(f & (IT_TIME | IT_PERMS | IT_OWNER | IT_GROUP | IT_ACL | IT_XATTR) ? "\n" : " is uptodate\n",
			      l.f);
			line_emit(c, &l, (size_t)(n - c->list.v));
			return;
		}
		if (!(f & (IT_NEW | IT_TRANSFER | IT_LOCAL | IT_CHANGE)) && !(dir && (f & IT_SIGNIFICANT)))
			return;
	} else {
		return;
	}
	if (!line_open(&l))
		return;
	if (c->o.itemize) {
		itemize_code(&c->o, st->st_mode, f, code);
		fprintf(l.f, "%s ", code);
	}
	sync_put_name(c, l.f, n->rel);
	if (dir)
		putc('/', l.f);
	if (xname && *xname) {
		fputs(" => ", l.f);
		sync_put_name(c, l.f, xname);
	} else if (S_ISLNK(st->st_mode) && n->s.link) {
		fputs(" -> ", l.f);
		sync_put_name(c, l.f, n->s.link);
	}
	putc('\n', l.f);
	line_emit(c, &l, (size_t)(n - c->list.v));
}

void itemize_deleting(struct sync_ctx *c, size_t at, const char *rel, bool is_dir)
{
	struct line l;

	synclog_deleting(c, at, rel, is_dir);
	if ((!c->o.itemize && c->o.info_del < 1) || !line_open(&l))
		return;
	fputs(c->o.itemize ? "*deleting   " : "deleting ", l.f);
	sync_put_name(c, l.f, rel);
	fputs(is_dir ? "/\n" : "\n", l.f);
	line_emit(c, &l, at);
}
