/* SPDX-License-Identifier: MIT */
/*
 * exclude-list MODE ROOT RULE...: print the entries under ROOT that survive
 * the rules, one per line, directories with a trailing '/', excluded
 * directories not entered. MODE "tar" names entries as GNU tar -c ROOT
 * does (ROOT/x) with tar's default matching; MODE "rsync" names them
 * relative to ROOT as rsync -r ROOT/ does. A RULE is "-PATTERN" (exclude)
 * or "+PATTERN" (include, rsync only). The test compares the list with
 * what tar -t and rsync -n really list.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exclude.h"

static struct exclude *ex;
static int rsync_mode;

static void walk(const char *full, const char *shown)
{
	DIR *d = opendir(full);
	struct dirent *de;

	if (!d) {
		perror(full);
		exit(2);
	}
	while ((de = readdir(d))) {
		char f[4096], s[4096];
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(f, sizeof(f), "%s/%s", full, de->d_name);
		snprintf(s, sizeof(s), "%s%s%s", shown, *shown ? "/" : "", de->d_name);
		if (lstat(f, &st) < 0) {
			perror(f);
			exit(2);
		}
		if (exclude_match(ex, s, de->d_name, S_ISDIR(st.st_mode)))
			continue;
		printf("%s%s\n", s, S_ISDIR(st.st_mode) ? "/" : "");
		if (S_ISDIR(st.st_mode))
			walk(f, s);
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: exclude-list tar|rsync ROOT [-PATTERN|+PATTERN]...\n");
		return 2;
	}
	rsync_mode = !strcmp(argv[1], "rsync");
	ex = exclude_new(rsync_mode ? EXCLUDE_RSYNC : EXCLUDE_GNU | EXCLUDE_LEADING_DIR);
	for (int i = 3; i < argc; i++) {
		if (exclude_add_rule(ex, argv[i] + 1, argv[i][0] == '+') < 0) {
			fprintf(stderr, "bad rule %s\n", argv[i]);
			return 2;
		}
	}
	if (!rsync_mode && !exclude_match(ex, argv[2], NULL, true))
		printf("%s/\n", argv[2]);
	if (rsync_mode || !exclude_match(ex, argv[2], NULL, true))
		walk(argv[2], rsync_mode ? "" : argv[2]);
	exclude_free(ex);
	return 0;
}
