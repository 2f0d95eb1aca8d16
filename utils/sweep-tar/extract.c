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
 * Which operand selects name (a member named so, or below one): its index,
 * o->nroots when there are no operands (everything), -1 for none. Marks
 * the operand that matched.
 */
static long selected(const struct tar_opts *o, const char *name, bool *matched)
{
	size_t nlen = strlen(name);

	while (nlen > 1 && name[nlen - 1] == '/')
		nlen--;
	if (o->nroots == 0)
		return 0;
	for (size_t i = 0; i < o->nroots; i++) {
		const char *want = o->roots[i].path + o->roots[i].strip;
		size_t wlen = strlen(want);

		while (wlen > 1 && want[wlen - 1] == '/')
			wlen--;
		if (nlen < wlen || memcmp(name, want, wlen) != 0)
			continue;
		if (nlen == wlen || (!o->no_recursion && name[wlen] == '/')) {
			matched[i] = true;
			return (long)i;
		}
	}
	return -1;
}

/* GNU tar -tv's type letter and mode bits ("drwxr-xr-x", "hrw-r--r--" for a hard link). */
static void mode_string(struct archive_entry *e, char *m)
{
	mode_t mode = archive_entry_mode(e);
	static const char rwx[] = "rwxrwxrwx";

	switch (archive_entry_filetype(e)) {
	case AE_IFDIR: m[0] = 'd'; break;
	case AE_IFLNK: m[0] = 'l'; break;
	case AE_IFCHR: m[0] = 'c'; break;
	case AE_IFBLK: m[0] = 'b'; break;
	case AE_IFIFO: m[0] = 'p'; break;
	case AE_IFSOCK: m[0] = 's'; break;
	default: m[0] = archive_entry_hardlink(e) ? 'h' : '-'; break;
	}
	for (int i = 0; i < 9; i++)
		m[1 + i] = (mode & (0400 >> i)) ? rwx[i] : '-';
	if (mode & S_ISUID)
		m[3] = (mode & S_IXUSR) ? 's' : 'S';
	if (mode & S_ISGID)
		m[6] = (mode & S_IXGRP) ? 's' : 'S';
	if (mode & S_ISVTX)
		m[9] = (mode & S_IXOTH) ? 't' : 'T';
	m[10] = '\0';
}

/*
 * GNU tar -tv's line: the owner/group/size column grows to the widest seen
 * so far (from 19), the date is local "YYYY-MM-DD HH:MM".
 */
static void list_verbose(FILE *out, struct archive_entry *e)
{
	static int ugswidth = 19;
	char mode[11], size[48], user[32], group[32], date[64];
	const char *un = archive_entry_uname(e), *gn = archive_entry_gname(e);
	time_t mt = archive_entry_mtime(e);
	struct tm tm;
	int pad;

	mode_string(e, mode);
	if (!un || !*un)
		snprintf(user, sizeof(user), "%lld", (long long)archive_entry_uid(e));
	if (!gn || !*gn)
		snprintf(group, sizeof(group), "%lld", (long long)archive_entry_gid(e));
	if (archive_entry_filetype(e) == AE_IFCHR || archive_entry_filetype(e) == AE_IFBLK)
		snprintf(size, sizeof(size), "%llu,%llu", (unsigned long long)archive_entry_rdevmajor(e),
			 (unsigned long long)archive_entry_rdevminor(e));
	else
		snprintf(size, sizeof(size), "%lld", (long long)archive_entry_size(e));
	if (localtime_r(&mt, &tm))
		strftime(date, sizeof(date), "%Y-%m-%d %H:%M", &tm);
	else
		snprintf(date, sizeof(date), "%lld", (long long)mt);
	un = un && *un ? un : user;
	gn = gn && *gn ? gn : group;
	pad = (int)(strlen(un) + 1 + strlen(gn) + 1 + strlen(size));
	if (pad > ugswidth)
		ugswidth = pad;
	fprintf(out, "%s %s/%s %*s %-16s ", mode, un, gn, ugswidth - pad + (int)strlen(size), size, date);
	fputs(tar_printable(archive_entry_pathname(e)), out);
	if (archive_entry_filetype(e) == AE_IFLNK && archive_entry_symlink(e))
		fprintf(out, " -> %s", tar_printable(archive_entry_symlink(e)));
	else if (archive_entry_hardlink(e))
		fprintf(out, " link to %s", tar_printable(archive_entry_hardlink(e)));
	fputc('\n', out);
}

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

/* n zero bytes to stdout: a hole of a sparse member under -O. 0 or -errno. */
static int zeros_to_stdout(uint64_t n)
{
	static const char zeros[65536];
	int r = 0;

	while (n > 0 && r == 0) {
		size_t k = n < sizeof(zeros) ? (size_t)n : sizeof(zeros);
		r = cli_write_all(STDOUT_FILENO, zeros, k);
		n -= k;
	}
	return r;
}

/* -O: the member's data to stdout, holes as zeros. 0, or -errno (-EIO: the archive failed). */
static int data_to_stdout(struct archive *in, struct archive_entry *e)
{
	const void *buf;
	size_t len;
	la_int64_t off, pos = 0;
	int r;

	while ((r = archive_read_data_block(in, &buf, &len, &off)) == ARCHIVE_OK) {
		if (off > pos && (r = zeros_to_stdout((uint64_t)(off - pos))) < 0)
			return r;
		if ((r = cli_write_all(STDOUT_FILENO, buf, len)) < 0)
			return r;
		pos = off + (la_int64_t)len;
	}
	if (r != ARCHIVE_EOF)
		return -EIO;
	return archive_entry_size(e) > pos ? zeros_to_stdout((uint64_t)(archive_entry_size(e) - pos)) : 0;
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

/*
 * The archive came through a pipe: read what follows its end (the last
 * record's padding, or more), as GNU tar does (sys_drain_input_pipe), so
 * that the writer is not killed by SIGPIPE, or told "Broken pipe", for
 * writing it: "sweep-tar cf - ... | sweep-tar xpf -", fpsync's tar mode.
 */
static void drain_pipe(const struct tar_opts *o)
{
	struct stat st;
	char buf[65536];

	if ((o->archive && strcmp(o->archive, "-") != 0) || fstat(STDIN_FILENO, &st) != 0 || !S_ISFIFO(st.st_mode))
		return;
	for (;;) {
		ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
}

/* What GNU tar says of a member list that cannot be read to its end. */
static void archive_failed(struct tar *t, struct archive *in)
{
	const char *why = archive_error_string(in);

	cli_msg("%s", why && *why ? why : "Unexpected EOF in archive");
	cli_msg("Error is not recoverable: exiting now");
	t->status = TAR_FATAL;
}

int tar_read_archive(struct tar *t, bool extract)
{
	const struct tar_opts *o = t->o;
	struct archive *in = NULL;
	struct archive_entry *e;
	struct xtargets xt = { 0 };
	bool *matched = calloc(o->nroots ? o->nroots : 1, sizeof(*matched)), skipping = false;
	uint64_t members = 0;
	int r;

	t->status = TAR_OK;
	if (!matched)
		return -ENOMEM;
	if (open_in(t, &in) < 0) {
		free(matched);
		return -EIO;
	}
	targets_init(&xt, t);
	for (;;) {
		const char *name;
		long root;

		r = archive_read_next_header(in, &e);
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
		if (!name || (root = selected(o, name, matched)) < 0)
			continue;
		/* --exclude applies to -t and -x as well, on the member name (GNU tar). */
		if (o->exclude && exclude_match(o->exclude, name, NULL, archive_entry_filetype(e) == AE_IFDIR))
			continue;
		fix_times(e);
		if (extract && o->strip_components && !strip_entry(e, o->strip_components))
			continue;
		if (!extract || o->verbose) {
			FILE *out = extract ? t->listing : stdout;
			if (o->verbose && !extract)
				list_verbose(out, e);
			else
				fprintf(out, "%s\n", tar_printable(name));
		}
		if (!extract)
			continue;
		if (o->to_stdout) {
			/* Regular files' data only, as GNU tar -O; a hard link member has none. */
			if (archive_entry_filetype(e) == AE_IFREG && !archive_entry_hardlink(e) &&
			    (r = data_to_stdout(in, e)) < 0) {
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
		drain_pipe(o);
	/* Directory modes and times, deferred to the end. */
	if (xt.n)
		test_pause("xdirs", 0);
	targets_close(&xt);
	for (size_t i = 0; i < o->nroots; i++)
		if (!matched[i]) {
			tar_error(t, o->roots[i].path + o->roots[i].strip, "Not found in archive");
		}
	archive_read_free(in);
	free(matched);
	return 0;
}
