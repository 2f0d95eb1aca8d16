/* SPDX-License-Identifier: MIT */
#include "copy_msg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char *copy_meta_name(enum sweep_copy_meta op)
{
	switch (op) {
	case SWEEP_COPY_META_OWNER: return "ownership";
	case SWEEP_COPY_META_XATTR: return "xattrs";
	case SWEEP_COPY_META_ACL: return "ACL";
	case SWEEP_COPY_META_MODE: return "permissions";
	case SWEEP_COPY_META_TIMES: return "times";
	}
	return "metadata";
}

const char *copy_error_format(const struct sweep_copy_error *ce, char *buf, size_t len)
{
	char *s = strdup(cli_quote(ce->src ? ce->src : "")); /* cli_quote reuses its buffers */
	const char *qs = s ? s : "?";
	const char *qd = cli_quote(ce->dst ? ce->dst : "");
	int n = 0;

	switch (ce->op) {
	case SWEEP_COPY_OP_STAT: n = snprintf(buf, len, "cannot stat %s", qs); break;
	case SWEEP_COPY_OP_OPEN_SRC:
		if (ce->err == -ESTALE) {
			n = snprintf(buf, len, "%s was replaced during the copy; not copied", qs);
			free(s);
			return buf;
		}
		n = snprintf(buf, len, "cannot open %s for reading", qs);
		break;
	case SWEEP_COPY_OP_READ: n = snprintf(buf, len, "error reading %s", qs); break;
	case SWEEP_COPY_OP_OPENDIR: n = snprintf(buf, len, "cannot access %s", qs); break;
	case SWEEP_COPY_OP_READLINK: n = snprintf(buf, len, "cannot read symbolic link %s", qs); break;
	case SWEEP_COPY_OP_CREATE: n = snprintf(buf, len, "cannot create regular file %s", qd); break;
	case SWEEP_COPY_OP_WRITE: n = snprintf(buf, len, "error writing %s", qd); break;
	case SWEEP_COPY_OP_CLONE: n = snprintf(buf, len, "failed to clone %s from %s", qd, qs); break;
	case SWEEP_COPY_OP_MKDIR: n = snprintf(buf, len, "cannot create directory %s", qd); break;
	case SWEEP_COPY_OP_SYMLINK: n = snprintf(buf, len, "cannot create symbolic link %s", qd); break;
	case SWEEP_COPY_OP_SPECIAL: n = snprintf(buf, len, "cannot create special file %s", qd); break;
	case SWEEP_COPY_OP_LINK: n = snprintf(buf, len, "cannot create hard link %s to %s", qd, qs); break;
	case SWEEP_COPY_OP_RENAME:
		if (ce->err == -ESTALE) {
			n = snprintf(buf, len, "the directory of %s was replaced during the copy; not copied", qd);
			free(s);
			return buf;
		}
		n = snprintf(buf, len, "cannot move the copy of %s onto %s", qs, qd);
		break;
	case SWEEP_COPY_OP_META:
		switch (ce->meta) {
		case SWEEP_COPY_META_OWNER: n = snprintf(buf, len, "failed to preserve ownership for %s", qd); break;
		case SWEEP_COPY_META_XATTR: n = snprintf(buf, len, "setting attributes for %s", qd); break;
		case SWEEP_COPY_META_TIMES: n = snprintf(buf, len, "preserving times for %s", qd); break;
		default: n = snprintf(buf, len, "preserving permissions for %s", qd); break;
		}
		break;
	case SWEEP_COPY_OP_OVERWRITE_DIR:
		n = snprintf(buf, len, "cannot overwrite directory %s with non-directory", qd);
		break;
	case SWEEP_COPY_OP_OVERWRITE_NONDIR:
		n = snprintf(buf, len, "cannot overwrite non-directory %s with directory %s", qd, qs);
		break;
	case SWEEP_COPY_OP_INTO_SELF:
		n = snprintf(buf, len, "cannot copy a directory, %s, into itself, %s", qs, qd);
		break;
	case SWEEP_COPY_OP_SAME_FILE: n = snprintf(buf, len, "%s and %s are the same file", qs, qd); break;
	case SWEEP_COPY_OP_OMIT_DIR: n = snprintf(buf, len, "-r not specified; omitting directory %s", qs); break;
	case SWEEP_COPY_OP_CHANGED: n = snprintf(buf, len, "%s: file changed as we read it", qs); break;
	case SWEEP_COPY_OP_DANGLING: n = snprintf(buf, len, "not writing through dangling symlink %s", qd); break;
	case SWEEP_COPY_OP_NEW_OVERWRITE: n = snprintf(buf, len, "will not overwrite just-created %s with %s", qd, qs); break;
	case SWEEP_COPY_OP_NEW_SYMLINK:
		n = snprintf(buf, len, "will not copy %s through just-created symlink %s", qs, qd);
		break;
	case SWEEP_COPY_OP_STAT_DEST: n = snprintf(buf, len, "cannot stat %s", qd); break;
	case SWEEP_COPY_OP_BACKUP: n = snprintf(buf, len, "cannot backup %s", qd); break;
	case SWEEP_COPY_OP_BACKUP_SOURCE:
		n = snprintf(buf, len, "backing up %s might destroy source;  %s not copied", qd, qs);
		break;
	case SWEEP_COPY_OP_LINK_SYMBOLIC: n = snprintf(buf, len, "cannot create symbolic link %s to %s", qd, qs); break;
	case SWEEP_COPY_OP_LINK_RELATIVE:
		/* cp names the destination, quoted only where it needs it (quotef) */
		n = snprintf(buf, len, "%s: can make relative symbolic links only in current directory",
			     cli_quotef(ce->dst ? ce->dst : ""));
		break;
	}
	if (ce->err && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ": %s", strerror(-ce->err));
	free(s);
	return buf;
}
