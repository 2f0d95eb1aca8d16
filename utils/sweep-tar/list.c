/* SPDX-License-Identifier: MIT */
/* -v and -t: members listed as GNU tar lists them. */
#include <string.h>
#include <time.h>

#include "cli.h"
#include "tar.h"

/* GNU tar -tv's type letter and mode bits ("drwxr-xr-x", "hrw-r--r--" for a hard link). */
static void mode_string(struct archive_entry *e, char *m)
{
	cli_mode_string(archive_entry_mode(e), m);
	if (m[0] == '-' && archive_entry_hardlink(e))
		m[0] = 'h';
}

/*
 * GNU tar -tv's line: the owner/group/size column grows to the widest seen
 * so far (from 19), the date is local "YYYY-MM-DD HH:MM".
 */
void tar_list_long(struct tar *t, FILE *out, struct archive_entry *e, const char *name)
{
	bool numeric = t->o->numeric_owner;
	static int ugswidth = 19;
	char mode[11], size[48], user[32], group[32], date[64];
	const char *un = archive_entry_uname(e), *gn = archive_entry_gname(e);
	time_t mt = archive_entry_mtime(e);
	struct tm tm;
	int pad;

	mode_string(e, mode);
	if (numeric)
		un = gn = NULL;
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
	fputs(tar_printable(name ? name : archive_entry_pathname(e)), out);
	if (archive_entry_filetype(e) == AE_IFLNK && archive_entry_symlink(e))
		fprintf(out, " -> %s", tar_printable(archive_entry_symlink(e)));
	else if (archive_entry_hardlink(e))
		fprintf(out, " link to %s", tar_printable(archive_entry_hardlink(e)));
	fputc('\n', out);
}

void tar_list(struct tar *t, struct archive_entry *e)
{
	/* The name as given (GNU tar's orig_file_name), unless --show-transformed-names. */
	const char *name = t->list_name && !t->o->show_transformed ? t->list_name : archive_entry_pathname(e);
	size_t len = strlen(name);

	t->list_name = NULL;
	if (!t->o->verbose)
		return;
	progress_clear_for(t->progress, t->listing);
	if (t->o->verbose > 1) {
		tar_list_long(t, t->listing, e, name);
		return;
	}
	/* GNU tar -v shows directories with their trailing '/'. */
	fprintf(t->listing, "%s%s\n", tar_printable(name),
		archive_entry_filetype(e) == AE_IFDIR && len && name[len - 1] != '/' ? "/" : "");
}
