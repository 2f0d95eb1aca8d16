/* SPDX-License-Identifier: MIT */
/*
 * -t (list) and -x (extract): the archive read in one stream through
 * libarchive, members handled in archive order.
 *
 * Extraction: libarchive reads the archive, and xdisk.c writes each member
 * through descriptors below -C (nothing outside it, whatever changes
 * meanwhile; see there). A member with a ".." component or an absolute
 * name, or one that would go through a symlink (a member "l/x" after "l ->
 * /etc"), is an error (exit status 2) and nothing of it is written; the
 * rest goes on, as bsdtar does. GNU tar strips a leading "../" or "/"
 * instead and extracts below the current directory; either way nothing
 * lands outside -C. As root the owner, mode (with set-id bits), ACLs,
 * xattrs and file flags are restored as well (GNU tar -p --same-owner
 * --xattrs --acls); otherwise mode minus umask and times, as GNU tar
 * without -p (-p, --same-owner, --xattrs, --acls and their --no- forms
 * change that). Sparse members keep their holes. Directory modes and times
 * are set at the end, so a read-only directory is still filled and keeps
 * its mtime. Each -C applies to the operands after it.
 *
 * A damaged header is skipped as GNU tar skips it: "Skipping to next
 * header", the members after it are handled, exit status 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "tar.h"
#include "testhook.h"
#include "xdisk.h"

/*
 * libarchive 3.6 reads a pax time "-S.F" as -S + .F (see tar_fix_times()):
 * the time meant is -S - .F = (-S - 1) + (1 - .F). Times between -1 and 0
 * cannot be told from positive ones and stay as read.
 */
static void fix_times(struct archive_entry *e)
{
	if (archive_entry_mtime_is_set(e) && archive_entry_mtime(e) < 0 && archive_entry_mtime_nsec(e) > 0)
		archive_entry_set_mtime(e, archive_entry_mtime(e) - 1, 1000000000 - archive_entry_mtime_nsec(e));
	if (archive_entry_atime_is_set(e) && archive_entry_atime(e) < 0 && archive_entry_atime_nsec(e) > 0)
		archive_entry_set_atime(e, archive_entry_atime(e) - 1, 1000000000 - archive_entry_atime_nsec(e));
}

/*
 * --strip-components: name without its first n components (as GNU tar
 * counts them: runs of '/' separate, "." is one), or NULL when nothing is
 * left (the member is then skipped).
 */
static const char *strip_components(const char *name, unsigned n)
{
	for (; n > 0; n--) {
		const char *s = strchr(name, '/');

		if (!s)
			return NULL;
		while (*s == '/')
			s++;
		name = s;
	}
	return *name ? name : NULL;
}

/* Set the entry's name (or hard-link target) to its stripped form; false: skip the member. */
static bool strip_entry(struct archive_entry *e, unsigned n)
{
	const char *name = strip_components(archive_entry_pathname(e), n);
	const char *link = archive_entry_hardlink(e);
	char *copy;

	if (!name)
		return false;
	if (link && !(link = strip_components(link, n)))
		return false; /* a hard link to a name that is stripped away: GNU tar skips it too */
	/* Copies first: the stripped names point into the entry's own strings. */
	if (link) {
		if (!(copy = strdup(link)))
			return false;
		archive_entry_set_hardlink(e, copy);
		free(copy);
	}
	if (!(copy = strdup(name)))
		return false;
	archive_entry_set_pathname(e, copy);
	free(copy);
	return true;
}

/* e's name (and link target) replaced by what fn makes of it (NULL: unchanged); false: skip the member. */
static bool set_names(struct archive_entry *e, char *name, char *link, char *symlink)
{
	if (name)
		archive_entry_copy_pathname(e, name);
	if (link)
		archive_entry_copy_hardlink(e, link);
	if (symlink)
		archive_entry_copy_symlink(e, symlink);
	free(name);
	free(link);
	free(symlink);
	return true;
}

/*
 * --one-top-level=DIR: a name not below DIR is put there (GNU tar's
 * enforce_one_top_level): "." is DIR, "./a" is "DIR/a". malloc'ed, or NULL
 * when the name is there already.
 */
static char *one_top(const char *top, const char *name)
{
	const char *p = name;
	size_t n = strlen(top);
	char *out;

	while (*p == '/' || *p == '.')
		p++;
	if (!*p)
		return strdup(top);
	if (strncmp(p, top, n) == 0 && (p[n] == '/' || !p[n]))
		return NULL;
	/* "./a//b" -> "a/b" below DIR, as GNU tar's normalize_filename_x (a trailing '/' stays). */
	if (!(out = malloc(n + strlen(name) + 2)))
		return NULL;
	char *w = out + sprintf(out, "%s", top);
	for (const char *c = name; *c;) {
		const char *end = strchrnul(c, '/');
		if (end - c > 0 && !(end - c == 1 && c[0] == '.')) {
			*w++ = '/';
			memcpy(w, c, (size_t)(end - c));
			w += end - c;
		}
		c = end;
		while (*c == '/')
			c++;
	}
	if (name[strlen(name) - 1] == '/')
		*w++ = '/';
	*w = '\0';
	return out;
}

/*
 * A member's names as -t, -x and -d use them (GNU tar's
 * transform_stat_info): --transform, then --strip-components, then
 * --one-top-level. false: nothing is left of the name, skip the member.
 */
static bool rename_member(struct tar *t, struct archive_entry *e)
{
	const struct tar_opts *o = t->o;
	const char *link = archive_entry_hardlink(e);

	if (tar_transforms()) {
		const char *sym = archive_entry_filetype(e) == AE_IFLNK ? archive_entry_symlink(e) : NULL;
		set_names(e, tar_transform(archive_entry_pathname(e), TAR_XFORM_NAME),
			  link ? tar_transform(link, TAR_XFORM_LINK) : NULL, sym ? tar_transform(sym, TAR_XFORM_SYMLINK) : NULL);
	}
	if (o->strip_components && !strip_entry(e, o->strip_components))
		return false;
	if (o->one_top_level) {
		link = archive_entry_hardlink(e);
		set_names(e, one_top(o->one_top_level, archive_entry_pathname(e)),
			  link ? one_top(o->one_top_level, link) : NULL, NULL);
	}
	return true;
}

/* -O: the member's data to stdout, holes as zeros. 0, or -errno (-EIO: the archive failed). */
static int data_to_stdout(struct tar *t, struct archive *in, struct archive_entry *e)
{
	const void *buf;
	size_t len;
	la_int64_t off, pos = 0;
	int r;

	while ((r = archive_read_data_block(in, &buf, &len, &off)) == ARCHIVE_OK) {
		tar_checkpoint_in(t, in);
		if (off > pos && (r = tar_write_zeros(STDOUT_FILENO, (uint64_t)(off - pos))) < 0)
			return r;
		if ((r = cli_write_all(STDOUT_FILENO, buf, len)) < 0)
			return r;
		pos = off + (la_int64_t)len;
	}
	if (r != ARCHIVE_EOF)
		return -EIO;
	return archive_entry_size(e) > pos ? tar_write_zeros(STDOUT_FILENO, (uint64_t)(archive_entry_size(e) - pos)) : 0;
}

static int open_in(struct tar *t, struct archive **ret)
{
	const char *file = t->o->archive;
	struct archive *a = archive_read_new();
	int r;

	if (!a)
		return -ENOMEM;
	if (t->o->filter == TAR_FILTER_PROGRAM) {
		/* -I PROG reads with "PROG -d", as GNU tar runs it. */
		char *cmd;
		if (asprintf(&cmd, "%s -d", t->o->compress_program) < 0) {
			archive_read_free(a);
			return -ENOMEM;
		}
		archive_read_support_filter_program(a, cmd);
		free(cmd);
	}
	else
		archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	if (!file || strcmp(file, "-") == 0) {
		if (isatty(STDIN_FILENO)) {
			cli_msg("Refusing to read archive contents from terminal (missing -f option?)");
			cli_msg("Error is not recoverable: exiting now");
			archive_read_free(a);
			return -ENOTTY;
		}
		r = archive_read_open_fd(a, STDIN_FILENO, 64 * 1024);
	} else {
		r = archive_read_open_filename(a, file, 64 * 1024);
	}
	if (r != ARCHIVE_OK) {
		const char *why = archive_error_string(a);
		if (why && strstr(why, "Unrecognized archive format")) {
			/* Not a tar archive (nor a compressed one): GNU tar's words and status. */
			cli_msg("This does not look like a tar archive");
			cli_msg("Exiting with failure status due to previous errors");
		} else {
			cli_msg("%s: Cannot open: %s", tar_printable(file ? file : "-"), why);
			cli_msg("Error is not recoverable: exiting now");
		}
		archive_read_free(a);
		return -EIO;
	}
	*ret = a;
	return 0;
}

/*
 * Where members go: one disk writer per -C in force for an operand (each
 * -C applies to the names after it, as in GNU tar), opened when a member
 * first goes there.
 */
struct xtargets {
	struct xmeta_ctx ctx;
	size_t n;
	const char **dir;
	struct xdisk **x;
};

static void targets_init(struct xtargets *xt, struct tar *t)
{
	const struct tar_opts *o = t->o;
	bool root = geteuid() == 0;
	mode_t mask = umask(0);

	umask(mask);
	xt->ctx = (struct xmeta_ctx){
		.t = t,
		.same_owner = o->same_owner < 0 ? root : o->same_owner,
		.same_perms = o->same_perms < 0 ? root : o->same_perms,
		.numeric = o->numeric_owner,
		/* As root everything the archive carries is restored (tar -p --xattrs --acls); otherwise when asked. */
		.xattrs = o->xattrs < 0 ? root : o->xattrs,
		.acls = o->acls < 0 ? root : o->acls,
		.fflags = root,
		.times = !o->touch,
		.umask = mask,
	};
}

/* The writer for the directory dir (NULL: where we started); NULL when it cannot be opened (said). */
static struct xdisk *target(struct xtargets *xt, const char *dir)
{
	struct xdisk **nx;
	const char **nd;

	for (size_t i = 0; i < xt->n; i++)
		if (xt->dir[i] == dir || (xt->dir[i] && dir && strcmp(xt->dir[i], dir) == 0))
			return xt->x[i];
	if (!xt->ctx.lookup) {
		if (!(xt->ctx.lookup = archive_write_disk_new()))
			return NULL;
		archive_write_disk_set_standard_lookup(xt->ctx.lookup);
	}
	nx = realloc(xt->x, (xt->n + 1) * sizeof(*nx));
	if (nx)
		xt->x = nx;
	nd = realloc(xt->dir, (xt->n + 1) * sizeof(*nd));
	if (nd)
		xt->dir = nd;
	if (!nx || !nd || xdisk_open(&xt->ctx, dir, &xt->x[xt->n]) < 0)
		return NULL;
	xt->dir[xt->n] = dir;
	return xt->x[xt->n++];
}

/* Every directory's final metadata, in each -C. */
static void targets_close(struct xtargets *xt)
{
	for (size_t i = 0; i < xt->n; i++)
		xdisk_close(xt->x[i]);
	free(xt->x);
	free(xt->dir);
	if (xt->ctx.lookup)
		archive_write_free(xt->ctx.lookup);
}

/* What GNU tar says of a member list that cannot be read to its end. */
static void archive_failed(struct tar *t, struct archive *in)
{
	const char *why = archive_error_string(in);

	cli_msg("%s", why && *why ? why : "Unexpected EOF in archive");
	cli_msg("Error is not recoverable: exiting now");
	t->status = TAR_FATAL;
}

/*
 * -d: the directories compared in (each -C in force for an operand), held
 * open: a descriptor, or -1 after a message.
 */
struct dtargets {
	size_t n;
	const char **dir;
	int *fd;
};

static int diff_target(struct tar *t, struct dtargets *dt, const char *dir)
{
	const char **nd;
	int *nf, fd;

	for (size_t i = 0; i < dt->n; i++)
		if (dt->dir[i] == dir || (dt->dir[i] && dir && strcmp(dt->dir[i], dir) == 0))
			return dt->fd[i];
	fd = open(dir ? dir : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		tar_error(t, dir ? dir : ".", "Cannot open: %s", strerror(errno));
		return -1;
	}
	nd = realloc(dt->dir, (dt->n + 1) * sizeof(*nd));
	if (nd)
		dt->dir = nd;
	nf = realloc(dt->fd, (dt->n + 1) * sizeof(*nf));
	if (nf)
		dt->fd = nf;
	if (!nd || !nf) {
		close(fd);
		return -1;
	}
	dt->dir[dt->n] = dir;
	dt->fd[dt->n++] = fd;
	return fd;
}

static void diff_targets_close(struct dtargets *dt)
{
	for (size_t i = 0; i < dt->n; i++)
		close(dt->fd[i]);
	free(dt->dir);
	free(dt->fd);
}

int tar_read_archive(struct tar *t, enum tar_mode mode, bool verify)
{
	const struct tar_opts *o = t->o;
	bool extract = mode == TAR_EXTRACT, diff = mode == TAR_DIFF;
	struct archive *in = NULL;
	struct archive_entry *e;
	struct xtargets xt = { 0 };
	struct dtargets dt = { 0 };
	/* -W compares every member, below the last -C. */
	size_t nroots = verify ? 0 : o->nroots;
	const char *verify_dir = verify && o->nroots ? o->roots[o->nroots - 1].dir : NULL;
	unsigned *found = calloc(o->nroots ? o->nroots : 1, sizeof(*found));
	char *shown = NULL; /* the member's name as listed */
	bool skipping = false;
	uint64_t members = 0;
	int r;

	if (!verify)
		t->status = TAR_OK;
	if (!found)
		return -ENOMEM;
	if (open_in(t, &in) < 0) {
		free(found);
		return -EIO;
	}
	targets_init(&xt, t);
	for (;;) {
		const char *name;
		long root;

		r = archive_read_next_header(in, &e);
		tar_checkpoint_in(t, in);
		if (r == ARCHIVE_EOF || r == ARCHIVE_FATAL)
			break;
		if (r == ARCHIVE_RETRY) {
			/*
			 * A damaged header: libarchive looks for the next one,
			 * as GNU tar does ("Skipping to next header", once for
			 * each damaged stretch, exit 2 at the end).
			 */
			if (!skipping)
				cli_msg("Skipping to next header");
			skipping = true;
			t->status = TAR_FATAL;
			continue;
		}
		skipping = false;
		name = archive_entry_pathname(e);
		/*
		 * A name that is not valid UTF-8 (pax hdrcharset=BINARY, or
		 * GNU tar's raw bytes) comes as its bytes, which is exact:
		 * libarchive's note about the conversion is not a problem.
		 */
		if (r == ARCHIVE_WARN && !strstr(archive_error_string(in) ? archive_error_string(in) : "", "can't be converted"))
			tar_warn(t, name, "%s", archive_error_string(in));
		r = ARCHIVE_OK;
		if (!name || (nroots && (root = tar_select(o, name, found)) < 0))
			continue;
		if (!nroots)
			root = 0;
		/* --exclude applies to -t and -x as well, on the member name (GNU tar). */
		if (o->exclude && exclude_match(o->exclude, name, NULL, archive_entry_filetype(e) == AE_IFDIR))
			continue;
		fix_times(e);
		/* Listed by the name it has in the archive, unless --show-transformed-names. */
		free(shown);
		if (!(shown = strdup(archive_entry_pathname(e))) || !rename_member(t, e) || !tar_read_names(t, e))
			continue;
		if (o->show_transformed) {
			free(shown);
			shown = strdup(archive_entry_pathname(e));
		}
		/* -t: every name, -tv as GNU tar -tv; -x, -d: -v names, -vv long lines ("Verify " first with -W). */
		if (mode == TAR_LIST && !o->verbose) {
			fprintf(t->listing, "%s\n", tar_printable(shown));
		} else if (mode == TAR_LIST) {
			tar_list_long(t, t->listing, e, shown);
		} else if (o->verbose) {
			progress_clear_for(t->progress, t->listing);
			if (verify)
				fputs("Verify ", t->listing);
			if (o->verbose > 1)
				tar_list_long(t, t->listing, e, shown);
			else
				fprintf(t->listing, "%s\n", tar_printable(shown));
		}
		if (diff) {
			int dirfd = diff_target(t, &dt, verify ? verify_dir : o->nroots ? o->roots[root].dir : o->extract_dir);
			if (dirfd < 0) {
				cli_msg("Error is not recoverable: exiting now");
				t->status = TAR_FATAL;
				break;
			}
			if ((r = tar_diff_member(t, in, e, dirfd)) == ARCHIVE_FATAL)
				break;
			r = ARCHIVE_OK;
			continue;
		}
		if (!extract)
			continue;
		if (o->to_stdout) {
			/* Regular files' data only, as GNU tar -O; a hard link member has none. */
			if (archive_entry_filetype(e) == AE_IFREG && !archive_entry_hardlink(e) &&
			    (r = data_to_stdout(t, in, e)) < 0) {
				if (r == -EIO) {
					r = ARCHIVE_FATAL;
					break;
				}
				cli_msg("write error: %s", strerror(-r));
				cli_msg("Error is not recoverable: exiting now");
				t->status = TAR_FATAL;
				r = ARCHIVE_OK;
				break;
			}
			r = ARCHIVE_OK;
			continue;
		}
		struct xdisk *x = target(&xt, o->nroots ? o->roots[root].dir : o->extract_dir);
		if (!x) {
			cli_msg("Error is not recoverable: exiting now");
			t->status = TAR_FATAL;
			break;
		}
		test_pause("extract", ++members);
		if ((r = xdisk_member(x, in, e)) == ARCHIVE_FATAL)
			break;
		r = ARCHIVE_OK;
	}
	if (r == ARCHIVE_FATAL)
		archive_failed(t, in);
	else if (r == ARCHIVE_EOF)
		tar_drain_stdin(o);
	/* Directory modes and times, deferred to the end. */
	if (xt.n)
		test_pause("xdirs", 0);
	targets_close(&xt);
	diff_targets_close(&dt);
	if (!verify)
		tar_report_unmatched(t, found);
	archive_read_free(in);
	free(found);
	free(shown);
	return 0;
}
