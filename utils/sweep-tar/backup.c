/* SPDX-License-Identifier: MIT */
/*
 * --backup[=CONTROL], --suffix=SUFFIX: a file about to be replaced is
 * renamed first, as GNU tar does (gnulib backupfile): "simple" (NAME~),
 * "numbered" (NAME.~N~), "existing" (numbered where numbered backups are
 * there already, else simple; the default), "none". CONTROL defaults to
 * $VERSION_CONTROL, SUFFIX to $SIMPLE_BACKUP_SUFFIX or "~". The rename is
 * done in the directory descriptor the member goes into (xdisk.c), so the
 * backup stays next to the file, below -C.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "tar.h"

enum backup_type { BACKUP_NONE, BACKUP_SIMPLE, BACKUP_EXISTING, BACKUP_NUMBERED };

static enum backup_type type = BACKUP_NONE;
static const char *suffix = "~";

static int parse(const char *arg, enum backup_type *t)
{
	static const struct {
		const char *name;
		enum backup_type t;
	} names[] = { { "none", BACKUP_NONE },       { "off", BACKUP_NONE },      { "simple", BACKUP_SIMPLE },
		      { "never", BACKUP_SIMPLE },    { "existing", BACKUP_EXISTING }, { "nil", BACKUP_EXISTING },
		      { "numbered", BACKUP_NUMBERED }, { "t", BACKUP_NUMBERED } };
	size_t n = strlen(arg), hit = 0;

	/* argmatch: the whole word or an abbreviation of only one of them */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(arg, names[i].name) == 0) {
			*t = names[i].t;
			return 0;
		}
		if (n && strncmp(arg, names[i].name, n) == 0 && (!hit || names[hit - 1].t != names[i].t)) {
			*t = names[i].t;
			if (hit)
				return -1;
			hit = i + 1;
		}
	}
	return hit ? 0 : -1;
}

void tar_backup_option(const char *control, const char *suffix_arg)
{
	const char *env = getenv("VERSION_CONTROL"), *s = getenv("SIMPLE_BACKUP_SUFFIX");

	if (suffix_arg)
		suffix = suffix_arg;
	else if (s && *s && !strchr(s, '/'))
		suffix = s;
	if (!control)
		control = env && *env ? env : "existing";
	if (parse(control, &type) < 0) {
		fflush(stdout);
		fprintf(stderr, "%s: invalid argument %s for '%s'\n", cli_prog(), cli_quote(control),
			control == env ? "$VERSION_CONTROL" : "--backup");
		fprintf(stderr, "Valid arguments are:\n  - 'none', 'off'\n  - 'simple', 'never'\n  - 'existing', 'nil'\n"
				"  - 'numbered', 't'\n");
		fprintf(stderr, "Try '%s --help' or '%s --usage' for more information.\n", cli_prog(), cli_prog());
		exit(TAR_FATAL);
	}
}

bool tar_backups(void)
{
	return type != BACKUP_NONE;
}

/* The highest N of "base.~N~" in the directory dirfd (0: none). */
static unsigned long highest(int dirfd, const char *base)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t n = strlen(base);
	unsigned long best = 0;
	DIR *d;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	for (struct dirent *de; (de = readdir(d));) {
		const char *p = de->d_name;
		char *end;
		if (strncmp(p, base, n) != 0 || strncmp(p + n, ".~", 2) != 0 || p[n + 2] < '1' || p[n + 2] > '9')
			continue;
		unsigned long v = strtoul(p + n + 2, &end, 10);
		if (end[0] == '~' && end[1] == '\0' && v > best)
			best = v;
	}
	closedir(d);
	return best;
}

char *tar_backup_name(int dirfd, const char *base)
{
	unsigned long n = type == BACKUP_SIMPLE ? 0 : highest(dirfd, base);
	char *name;

	if (type == BACKUP_NUMBERED || (type == BACKUP_EXISTING && n > 0)) {
		if (asprintf(&name, "%s.~%lu~", base, n + 1) < 0)
			return NULL;
	} else if (asprintf(&name, "%s%s", base, suffix) < 0) {
		return NULL;
	}
	return name;
}
