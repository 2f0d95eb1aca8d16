/* SPDX-License-Identifier: MIT */
/*
 * rsync's filter rules (see filter.h): parsing with rsync's syntax and
 * messages, per-directory merge files with rsync's inheritance, and
 * rsync's matching.
 *
 * A per-directory merge rule (": NAME") is a slot: wherever the rule stands
 * in a list, the rules of the NAME files of the directory at hand and of
 * its parents stand instead, the nearest directory's first. Each directory
 * the scan enters gets, per active slot, a node: the rules its own file
 * gave and a pointer to the node it inherits (its parent's, unless the rule
 * has 'n' or the file cleared the list). A directory whose files add
 * nothing shares its parent's nodes, so a tree without merge files costs
 * one map entry per directory.
 */
#include "filter.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "sync.h"

/* rule flags (rsync's FILTRULE_*) */
#define FR_INCLUDE      0x000001u
#define FR_DIRECTORY    0x000002u /* pattern ended in '/' */
#define FR_ABS          0x000004u /* matched against the absolute path ('/' modifier, a parent's merge file) */
#define FR_NEGATE       0x000008u /* '!' */
#define FR_PERISHABLE   0x000010u /* 'p' */
#define FR_SENDER       0x000020u /* 's', hide, show */
#define FR_RECEIVER     0x000040u /* 'r', protect, risk */
#define FR_XATTR        0x000080u /* 'x' */
#define FR_MERGE        0x000100u /* '.' or ':' */
#define FR_PERDIR       0x000200u /* ':' */
#define FR_NO_PREFIXES  0x000400u /* '-' or '+' on a merge rule: every line is that */
#define FR_WORD_SPLIT   0x000800u /* 'w' */
#define FR_NO_INHERIT   0x001000u /* 'n' */
#define FR_CVS          0x002000u /* 'C' */
#define FR_EXCLUDE_SELF 0x004000u /* 'e' */
#define FR_CLEAR        0x008000u /* '!' alone */
#define FR_WILD         0x010000u /* has '*', '?' or '[' */
#define FR_WILD2        0x020000u /* has "**" */
#define FR_WILD2_PREFIX 0x040000u /* starts with "**" */
#define FR_WILD3_SUFFIX 0x080000u /* ends with "***" */
#define FR_FROM_FILE    0x100000u /* its text came out of a file: messages do not echo it */

#define FR_SIDES (FR_SENDER | FR_RECEIVER)
/* what the rules of a merge file take from the merge rule (rsync's FILTRULES_FROM_CONTAINER) */
#define FR_FROM_CONTAINER (FR_ABS | FR_INCLUDE | FR_DIRECTORY | FR_NEGATE | FR_PERISHABLE)

/* parse flags (rsync's XFLG_*) */
#define PX_OLD_PREFIXES 0x1u /* --exclude/--include: only "- ", "+ " and "!" */
#define PX_ANCHORED     0x2u /* a per-directory file: "/x" is anchored at its directory */
#define PX_FATAL        0x4u /* a merge file that cannot be opened is an error */

#define MAX_MERGE_DEPTH 32
#define MAX_LINE (PATH_MAX + 1024) /* rsync's BIGPATHBUFLEN: longer lines are discarded */

static const char default_cvsignore[] =
	"RCS SCCS CVS CVS.adm RCSLOG cvslog.* tags TAGS .make.state .nse_depinfo *~ #* .#* ,* _$* *$ "
	"*.old *.bak *.BAK *.orig *.rej .del-* *.a *.olb *.o *.obj *.so *.exe *.Z *.elc *.ln core "
	".svn/ .git/ .hg/ .bzr/";

struct rule {
	char *pat;
	unsigned flags;
	unsigned slash_cnt;
	int slot; /* FR_PERDIR: which slot */
};

struct rules {
	struct rule *v;
	size_t n, cap;
};

/* A per-directory merge file: the name looked for, and the rule's flags (the template of its lines). */
struct slot {
	char *name;
	char *scan_dir; /* a name with a '/': the directory above the transfer its parent scan starts at */
	unsigned flags;
};

struct slots {
	struct slot *v;
	size_t n, cap;
};

struct filter_set {
	struct rules rules;
	struct rules cvs;   /* -C's list (the "-C" rule stands for it) */
	bool cvs_loaded;
	struct slots slots; /* the per-directory merge rules of the command line */
	bool from0;
	bool any;
	bool has_abs;       /* rules that need the absolute path */
};

/* A directory's rules of one slot, and those it inherits. */
struct fnode {
	unsigned refs;
	struct fnode *inherit;
	struct rules rules;
};

/* A directory's nodes, one per slot active there (NULL: active, no rules). */
struct fdir {
	unsigned refs;
	unsigned n;
	struct fnode *slot[];
};

struct root_info {
	char *dir, *base;
	char *abs_base; /* realpath of base, lazily */
	bool abs_tried;
	struct fdir *fd; /* the rules above the root (the parent scan), lazily */
	uint64_t parent_key; /* a followed symlink's root: the state of the directory holding it */
};

struct map_ent {
	uint64_t id;
	struct fdir *d;
};

struct filter_walk {
	const struct filter_set *fs;
	bool receiver, delete_excluded;
	struct slots slots; /* the set's, then those merge files add */
	struct root_info *roots;
	size_t nroots;
	struct map_ent *map;
	size_t mapn, mapcap;
	struct fdir *global; /* the state for names outside every entered directory */
	uint64_t pass;       /* the walk pass, in the keys' top bits */
	int err;
};

/* The context of one parse. */
struct parse {
	struct filter_set *fs;    /* its cvs list, from0 */
	struct slots *slots;      /* where new per-directory merge rules register */
	struct rules *list;       /* where rules go */
	struct fnode *node;       /* a per-directory file's node (a clear drops what it inherits) */
	struct fdir *active;      /* the slots active there (a second ": NAME" for one is dropped) */
	const char *prefix;       /* PX_ANCHORED: the directory, "" at the top of the transfer */
	bool abs_prefix;          /* prefix is an absolute directory above the transfer */
	const char *base;         /* where a merge file named without '/' is read (NULL: the working directory) */
	const char *file;         /* the file being read (NULL: an argument) */
	unsigned line;
	int depth;
	bool *any_abs;
};

static struct fnode none_node; /* an active slot without rules (never freed) */

/* ---- messages: text from files is not echoed (rsync 3.5's rule_text) ---- */

static void rule_err(const struct parse *p, const char *msg, const char *text)
{
	if (p->file)
		cli_msg("%s: <rule from %s line %u>", msg, p->file, p->line);
	else
		cli_msg("%s: %s", msg, text);
}

/* ---- lists ---- */

static void rules_clear(struct rules *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].pat);
	l->n = 0;
}

static void rules_free(struct rules *l)
{
	rules_clear(l);
	free(l->v);
	l->v = NULL;
	l->cap = 0;
}

static int rules_push(struct rules *l, struct rule r)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		struct rule *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = r;
	return 0;
}

static void slots_free(struct slots *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].name);
		free(s->v[i].scan_dir);
	}
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

static int slots_push(struct slots *s, const char *name, const char *scan_dir, unsigned flags)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4;
		struct slot *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n] = (struct slot){ .name = strdup(name), .scan_dir = scan_dir ? strdup(scan_dir) : NULL,
				    .flags = flags };
	if (!s->v[s->n].name || (scan_dir && !s->v[s->n].scan_dir)) {
		free(s->v[s->n].name);
		free(s->v[s->n].scan_dir);
		return -ENOMEM;
	}
	return (int)s->n++;
}

static void fnode_put(struct fnode *n)
{
	while (n && n != &none_node && --n->refs == 0) {
		struct fnode *up = n->inherit;

		rules_free(&n->rules);
		free(n);
		n = up;
	}
}

static struct fnode *fnode_get(struct fnode *n)
{
	if (n && n != &none_node)
		n->refs++;
	return n;
}

static void fdir_put(struct fdir *d)
{
	if (!d || --d->refs)
		return;
	for (unsigned i = 0; i < d->n; i++)
		fnode_put(d->slot[i]);
	free(d);
}

static struct fdir *fdir_new(unsigned n)
{
	struct fdir *d = calloc(1, sizeof(*d) + n * sizeof(d->slot[0]));

	if (d) {
		d->refs = 1;
		d->n = n;
		for (unsigned i = 0; i < n; i++)
			d->slot[i] = &none_node;
	}
	return d;
}

/* ---- matching ---- */

enum { WM_FALSE = 0, WM_TRUE = 1, WM_ABORT_ALL = -1, WM_ABORT_TO_STARSTAR = -2 };

/* A bracket expression at p (just past '['): whether c is in it; *end is set past the ']'. -1: malformed. */
static int bracket(const unsigned char *p, unsigned char c, const unsigned char **end)
{
	bool negate = *p == '!' || *p == '^', in = false;
	unsigned char prev = 0;

	if (negate)
		p++;
	for (bool first = true;; first = false) {
		unsigned char ch = *p;

		if (!ch)
			return -1;
		if (ch == ']' && !first)
			break;
		if (ch == '\\') {
			ch = *++p;
			if (!ch)
				return -1;
			in |= c == ch;
			prev = ch;
		} else if (ch == '-' && prev && p[1] && p[1] != ']') {
			unsigned char hi = *++p;

			if (hi == '\\' && !(hi = *++p))
				return -1;
			in |= c >= prev && c <= hi;
			prev = 0;
		} else if (ch == '[' && p[1] == ':') {
			const unsigned char *name = p + 2, *q = name;

			while (*q && *q != ']')
				q++;
			if (!*q)
				return -1;
			if (q - name < 1 || q[-1] != ':') {
				/* not "[:class:]": a plain '[' */
				in |= c == '[';
				prev = '[';
				p++;
				continue;
			}
			size_t len = (size_t)(q - name) - 1;
			static const struct {
				const char *n;
				int (*f)(int);
			} classes[] = {
				{ "alnum", isalnum }, { "alpha", isalpha }, { "blank", isblank }, { "cntrl", iscntrl },
				{ "digit", isdigit }, { "graph", isgraph }, { "lower", islower }, { "print", isprint },
				{ "punct", ispunct }, { "space", isspace }, { "upper", isupper }, { "xdigit", isxdigit },
			};
			size_t k;

			for (k = 0; k < sizeof(classes) / sizeof(classes[0]); k++)
				if (strlen(classes[k].n) == len && !memcmp(classes[k].n, name, len))
					break;
			if (k == sizeof(classes) / sizeof(classes[0]))
				return -1;
			in |= classes[k].f(c) != 0;
			prev = 0;
			p = q;
		} else {
			in |= c == ch;
			prev = ch;
		}
		p++;
	}
	*end = p + 1;
	return in != negate && c != '/';
}

/*
 * rsync's wildmatch, on one string: '?' and '*' never match '/', "**"
 * does; the abort codes keep a failing pattern from retrying what cannot
 * match (so a hostile pattern costs polynomial time, not exponential).
 */
static int dowild(const unsigned char *p, const unsigned char *t)
{
	for (; *p; p++, t++) {
		unsigned char pc = *p;

		if (!*t && pc != '*')
			return WM_ABORT_ALL;
		switch (pc) {
		case '\\':
			pc = *++p;
			/* fall through */
		default:
			if (*t != pc)
				return WM_FALSE;
			continue;
		case '?':
			if (*t == '/')
				return WM_FALSE;
			continue;
		case '[': {
			const unsigned char *end;
			int in = bracket(p + 1, *t, &end);

			if (in < 0)
				return WM_ABORT_ALL;
			if (!in)
				return WM_FALSE;
			p = end - 1;
			continue;
		}
		case '*': {
			bool star2 = p[1] == '*';

			while (p[1] == '*')
				p++;
			p++;
			if (!*p)
				return star2 || !strchr((const char *)t, '/') ? WM_TRUE : WM_FALSE;
			for (;; t++) {
				int m;

				if (!*t)
					return WM_ABORT_ALL;
				m = dowild(p, t);
				if (m != WM_FALSE) {
					if (!star2 || m != WM_ABORT_TO_STARSTAR)
						return m;
				} else if (!star2 && *t == '/') {
					return WM_ABORT_TO_STARSTAR;
				}
			}
		}
		}
	}
	return *t ? WM_FALSE : WM_TRUE;
}

bool filter_wildmatch(const char *pattern, const char *text)
{
	return dowild((const unsigned char *)pattern, (const unsigned char *)text) == WM_TRUE;
}

/* The start of the last n '/'-separated elements of s, or NULL when it has fewer (rsync's trailing_N_elements). */
static const char *trailing_elements(const char *s, unsigned n)
{
	for (const char *p = s + strlen(s); p-- > s;)
		if (*p == '/' && !--n)
			return p + 1;
	return n == 1 ? s : NULL;
}

/*
 * Match subject with slash handling as rsync's wildmatch_array: 0 the whole
 * string, >0 its last so many elements, <0 from its start or after any '/'.
 */
static bool match_at(const char *pat, const char *subject, int where, bool wild)
{
	const char *t = where > 0 ? trailing_elements(subject, (unsigned)where) : subject;
	int m;

	if (!t)
		return false;
	if (!wild)
		return !strcmp(pat, t);
	m = dowild((const unsigned char *)pat, (const unsigned char *)t);
	if (m != WM_TRUE && where < 0 && m != WM_ABORT_ALL) {
		for (; *t; t++) {
			if (*t == '/' && (m = dowild((const unsigned char *)pat, (const unsigned char *)t + 1)) != WM_FALSE &&
			    m != WM_ABORT_TO_STARSTAR)
				break;
		}
	}
	return m == WM_TRUE;
}

/* rsync's rule_matches(): path is the name in the file list, abs_base the absolute directory it is relative to. */
static bool rule_matches(const struct rule *r, const char *path, bool is_dir, const char *abs_base)
{
	bool yes = !(r->flags & FR_NEGATE);
	const char *name = path, *pat = r->pat;
	char sbuf[PATH_MAX + 8], *big = NULL;
	const char *subject;
	bool composed = false, anchored;
	int where;

	if (!*name)
		return false;
	/* the strings rsync matches as one: [abs base "/"] or ["/"], the name, ["/"] */
	const char *pre1 = "", *pre2 = "", *post = "";

	if (!r->slash_cnt && !(r->flags & FR_WILD2)) {
		/* no '/' in the pattern: the last component only */
		const char *slash = strrchr(name, '/');

		if (slash)
			name = slash + 1;
	} else if ((r->flags & FR_ABS) && abs_base && strcmp(abs_base, "/")) {
		pre1 = abs_base + (*abs_base == '/');
		pre2 = "/";
	} else if (r->flags & FR_WILD2_PREFIX) {
		pre2 = "/";
	}
	if (is_dir) {
		if (r->flags & FR_WILD3_SUFFIX)
			post = "/";
	} else if (r->flags & FR_DIRECTORY) {
		return !yes;
	}
	composed = *pre2 || *post;
	if (composed) {
		size_t len = strlen(pre1) + strlen(pre2) + strlen(name) + strlen(post) + 1;
		char *b = len <= sizeof(sbuf) ? sbuf : (big = malloc(len));

		if (!b)
			return false; /* out of memory: no match (the caller's next allocation reports it) */
		snprintf(b, len, "%s%s%s%s", pre1, pre2, name, post);
		subject = b;
	} else {
		subject = name;
	}
	anchored = *pat == '/';
	if (anchored)
		pat++;
	if (!anchored && r->slash_cnt && !(r->flags & FR_WILD2))
		where = (int)r->slash_cnt + 1;
	else if (!anchored && !(r->flags & FR_WILD2_PREFIX) && (r->flags & FR_WILD2))
		where = -1;
	else
		where = 0;

	bool m;

	if ((r->flags & FR_WILD) || composed) {
		m = match_at(pat, subject, where, r->flags & FR_WILD);
	} else if (anchored) {
		m = !strcmp(name, pat);
	} else {
		size_t l1 = strlen(name), l2 = strlen(pat);

		m = l2 <= l1 && !strcmp(name + l1 - l2, pat) && (l1 == l2 || name[l1 - l2 - 1] == '/');
	}
	free(big);
	return m ? yes : !yes;
}

/* ---- parsing ---- */

static int parse_str(struct parse *p, const char *str, unsigned tmpl, unsigned px);
static int parse_file(struct parse *p, const char *file, int dirfd, unsigned tmpl, unsigned px);

/* Whether a per-directory merge rule of this file name is active where the parse is. */
static bool slot_active(const struct parse *p, const char *base)
{
	for (size_t i = 0; i < p->slots->n; i++) {
		if (p->active && (i >= p->active->n || !p->active->slot[i]))
			continue; /* a slot of another part of the tree */
		if (!strcmp(p->slots->v[i].name, base))
			return true;
	}
	return false;
}

/* Clean a path as rsync's clean_fname() with CFN_COLLAPSE_DOT_DOT_DIRS: no "//", no ".", "x/.." dropped. */
static void clean_path(char *s)
{
	bool abs = *s == '/';
	char *out = s + abs, *in = s + abs, *start = out;

	while (*in) {
		char *slash = strchr(in, '/');
		size_t len = slash ? (size_t)(slash - in) : strlen(in);
		char *last = out > start ? out - 1 : start;

		while (last > start && *last != '/')
			last--;
		const char *prev = last > start ? last + 1 : start;
		bool prev_dotdot = out - prev == 2 && prev[0] == '.' && prev[1] == '.';

		if (!len || (len == 1 && in[0] == '.')) {
			/* nothing */
		} else if (len == 2 && in[0] == '.' && in[1] == '.' && (out > start || abs) && !prev_dotdot) {
			out = last; /* drop the previous component (nothing above "/") */
		} else {
			if (out > start)
				*out++ = '/';
			memmove(out, in, len);
			out += len;
		}
		in += len;
		while (*in == '/')
			in++;
	}
	*out = 0;
	if (!*s)
		strcpy(s, abs ? "/" : ".");
}

/* Add one rule (rsync's add_rule()): pat is len bytes. */
static int add_rule(struct parse *p, const char *pat, size_t len, unsigned flags, unsigned px)
{
	struct rule r = { .flags = flags, .slot = -1 };
	size_t pre = 0;
	const char *prefix = "";

	if (len > 1 && pat[len - 1] == '/') {
		len--;
		r.flags |= FR_DIRECTORY;
	}
	for (size_t i = 0; i < len; i++)
		r.slash_cnt += pat[i] == '/';
	if ((px & PX_ANCHORED) && p->prefix && !(r.flags & (FR_ABS | FR_MERGE)) && len && *pat == '/') {
		/* a per-directory file's "/x": anchored at its directory */
		prefix = p->prefix;
		if (p->abs_prefix) {
			r.flags |= FR_ABS;
			if (!strcmp(prefix, "/"))
				prefix = "";
		}
		pre = strlen(prefix);
		for (size_t i = 0; i < pre; i++)
			r.slash_cnt += prefix[i] == '/';
		if (pre && !p->abs_prefix)
			r.slash_cnt++; /* the '/' put before it */
	}
	r.pat = malloc(pre + len + 3);
	if (!r.pat)
		return -ENOMEM;
	if (pre && !p->abs_prefix)
		snprintf(r.pat, pre + len + 3, "/%s%.*s", prefix, (int)len, pat);
	else
		snprintf(r.pat, pre + len + 3, "%s%.*s", prefix, (int)len, pat);
	len = strlen(r.pat);
	if (strpbrk(r.pat, "*[?")) {
		const char *s2 = strstr(r.pat, "**");

		r.flags |= FR_WILD;
		if (s2) {
			r.flags |= FR_WILD2;
			if (s2 == r.pat)
				r.flags |= FR_WILD2_PREFIX;
			if (len >= 3 && !strcmp(r.pat + len - 3, "***"))
				r.flags |= FR_WILD3_SUFFIX;
		}
	}
	if (r.flags & FR_ABS)
		*p->any_abs = true;
	if (r.flags & FR_PERDIR) {
		/* a name with a '/': the directory above (where the parent scan starts), and the file name */
		const char *slash = strrchr(r.pat, '/');
		const char *base = slash ? slash + 1 : r.pat;
		char *scan = NULL;
		int k;

		if (slot_active(p, base)) {
			/* rsync: a per-directory merge file already mentioned is not added again */
			free(r.pat);
			return 0;
		}
		if (slash) {
			scan = strndup(r.pat, (size_t)(slash - r.pat) + 1);
			if (!scan) {
				free(r.pat);
				return -ENOMEM;
			}
		}
		k = slots_push(p->slots, base, scan, r.flags);
		free(scan);
		if (k < 0) {
			free(r.pat);
			return k;
		}
		r.slot = k; /* a merge file that names another: read_dir makes it active from there down */
	}
	int e = rules_push(p->list, r);

	if (e < 0)
		free(r.pat);
	return e;
}

/* -C's list: the defaults (perishable), ~/.cvsignore, $CVSIGNORE (rsync's get_cvs_excludes()). */
static int load_cvs(struct parse *p, unsigned tmpl)
{
	struct filter_set *fs = p->fs;
	struct parse q = *p;
	const char *home = getenv("HOME");
	int r;

	if (fs->cvs_loaded)
		return 0;
	fs->cvs_loaded = true;
	q.list = &fs->cvs;
	q.node = NULL;
	q.prefix = NULL;
	q.file = NULL;
	r = parse_str(&q, default_cvsignore, tmpl | FR_PERISHABLE, 0);
	if (r >= 0 && home) {
		char *f = malloc(strlen(home) + sizeof("/.cvsignore"));

		if (!f)
			return -ENOMEM;
		sprintf(f, "%s/.cvsignore", home);
		r = parse_file(&q, f, AT_FDCWD, tmpl, 0);
		free(f);
	}
	if (r >= 0 && getenv("CVSIGNORE"))
		r = parse_str(&q, getenv("CVSIGNORE"), tmpl, 0);
	return r;
}

static const char *rule_word(const char *s, const char *word)
{
	size_t l = strlen(word);

	if (strncmp(s, word, l))
		return NULL;
	if (isspace((unsigned char)s[l]) || s[l] == '_' || !s[l])
		return s + l - 1;
	if (s[l] == ',')
		return s + l;
	return NULL;
}

/*
 * Parse one rule from *sp (rsync's parse_rule_tok()): its flags in *flags,
 * its pattern at *pat, *len bytes. 1 a rule, 0 the end, -EINVAL (reported).
 */
static int parse_tok(struct parse *p, const char **sp, unsigned tmpl, unsigned px, unsigned *flags, const char **pat,
		     size_t *len)
{
	const char *s = *sp, *start;
	unsigned f;

	if (tmpl & FR_WORD_SPLIT) {
		while (isspace((unsigned char)*s))
			s++;
		*sp = s;
	}
	if (!*s)
		return 0;
	start = s;
	f = tmpl & FR_FROM_CONTAINER;
	if (p->file)
		f |= FR_FROM_FILE;
	if (tmpl & FR_NO_PREFIXES) {
		if (*s == '!' && (tmpl & FR_CVS))
			f |= FR_CLEAR; /* tentative */
	} else if (px & PX_OLD_PREFIXES) {
		if (*s == '-' && s[1] == ' ') {
			f &= ~FR_INCLUDE;
			s += 2;
		} else if (*s == '+' && s[1] == ' ') {
			f |= FR_INCLUDE;
			s += 2;
		} else if (*s == '!') {
			f |= FR_CLEAR; /* tentative */
		}
	} else {
		static const struct {
			const char *word;
			char ch;
		} words[] = {
			{ "clear", '!' }, { "dir-merge", ':' }, { "exclude", '-' }, { "hide", 'H' }, { "include", '+' },
			{ "merge", '.' }, { "protect", 'P' }, { "risk", 'R' }, { "show", 'S' },
		};
		char ch = 0;
		bool side_by_prefix = false;
		const char *w = NULL;

		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]) && !w; i++)
			if (*s == words[i].word[0]) {
				w = rule_word(s, words[i].word);
				if (w)
					ch = words[i].ch;
				else
					s = NULL;
				break;
			}
		if (s && !w) {
			ch = *s;
			if (s[1] == ',')
				s++;
		} else if (w) {
			s = w;
		}
		switch (s ? ch : 0) {
		case ':':
			f |= FR_PERDIR;
			/* fall through */
		case '.':
			f |= FR_MERGE;
			break;
		case '+':
			f |= FR_INCLUDE;
			break;
		case '-':
			break;
		case 'S':
			f |= FR_INCLUDE;
			/* fall through */
		case 'H':
			f |= FR_SENDER;
			side_by_prefix = true;
			break;
		case 'R':
			f |= FR_INCLUDE;
			/* fall through */
		case 'P':
			f |= FR_RECEIVER;
			side_by_prefix = true;
			break;
		case '!':
			f |= FR_CLEAR;
			break;
		default:
			rule_err(p, "Unknown filter rule", start);
			return -EINVAL;
		}
		while (ch != '!' && *++s && *s != ' ' && *s != '_') {
			if ((tmpl & FR_WORD_SPLIT) && isspace((unsigned char)*s)) {
				s--;
				break;
			}
			bool bad = false;

			switch (*s) {
			case '-':
				bad = (f & (FR_MERGE | FR_NO_PREFIXES)) != FR_MERGE;
				f |= FR_NO_PREFIXES;
				break;
			case '+':
				bad = (f & (FR_MERGE | FR_NO_PREFIXES)) != FR_MERGE;
				f |= FR_NO_PREFIXES | FR_INCLUDE;
				break;
			case '/':
				f |= FR_ABS;
				break;
			case '!':
				bad = f & FR_MERGE; /* the negation goes with a pattern, not a merge file's lines */
				f |= FR_NEGATE;
				break;
			case 'C':
				bad = (f & FR_NO_PREFIXES) || side_by_prefix;
				f |= FR_NO_PREFIXES | FR_WORD_SPLIT | FR_NO_INHERIT | FR_CVS;
				break;
			case 'e':
				bad = !(f & FR_MERGE);
				f |= FR_EXCLUDE_SELF;
				break;
			case 'n':
				bad = !(f & FR_MERGE);
				f |= FR_NO_INHERIT;
				break;
			case 'p':
				f |= FR_PERISHABLE;
				break;
			case 'r':
				bad = side_by_prefix;
				f |= FR_RECEIVER;
				break;
			case 's':
				bad = side_by_prefix;
				f |= FR_SENDER;
				break;
			case 'w':
				bad = !(f & FR_MERGE);
				f |= FR_WORD_SPLIT;
				break;
			case 'x':
				f |= FR_XATTR;
				break;
			default:
				bad = true;
			}
			if (bad) {
				if (p->file) {
					cli_msg("invalid modifier in filter rule: <rule from %s line %u>", p->file, p->line);
				} else {
					cli_msg("invalid modifier '%c' at position %d in filter rule: %s", *s,
						(int)(s - start), start);
				}
				return -EINVAL;
			}
		}
		if (*s)
			s++;
	}
	if (tmpl & FR_SIDES) {
		if (f & FR_SIDES) {
			rule_err(p, "specified-side merge file contains specified-side filter", start);
			return -EINVAL;
		}
		f |= tmpl & FR_SIDES;
	}
	if (tmpl & FR_WORD_SPLIT) {
		const char *e = s;

		while (*e && !isspace((unsigned char)*e))
			e++;
		*len = (size_t)(e - s);
	} else {
		*len = strlen(s);
	}
	if (f & FR_CLEAR) {
		if (!(tmpl & FR_NO_PREFIXES) && !(px & PX_OLD_PREFIXES) && *len) {
			rule_err(p, "'!' rule has trailing characters", start);
			return -EINVAL;
		}
		if (*len > 1)
			f &= ~FR_CLEAR;
	} else if (!*len && !(f & FR_CVS)) {
		rule_err(p, "unexpected end of filter rule", start);
		return -EINVAL;
	}
	*flags = f;
	*pat = s;
	*sp = s + *len;
	return 1;
}

/* Where a merge file named in a rule is read: its name as given, or below the parse's base. */
static char *merge_path(const struct parse *p, const char *name, size_t len)
{
	char *path;

	if (*name == '/' || !p->base)
		path = strndup(name, len);
	else if (asprintf(&path, "%s/%.*s", p->base, (int)len, name) < 0)
		path = NULL;
	return path;
}

/* rsync's parse_filter_str(). */
static int parse_str(struct parse *p, const char *str, unsigned tmpl, unsigned px)
{
	for (;;) {
		unsigned f;
		const char *pat;
		size_t len;
		int r = parse_tok(p, &str, tmpl, px, &f, &pat, &len);

		if (r <= 0)
			return r;
		if (len >= PATH_MAX) {
			if (p->file)
				cli_msg("discarding over-long filter: <rule from %s line %u>", p->file, p->line);
			else
				cli_msg("discarding over-long filter: %.*s", (int)len, pat);
			continue;
		}
		p->fs->any = true;
		if (f & FR_CLEAR) {
			rules_clear(p->list);
			if (p->node) {
				/* a per-directory file's clear drops what its directory inherits too */
				fnode_put(p->node->inherit);
				p->node->inherit = NULL;
			}
			continue;
		}
		if (f & FR_MERGE) {
			if (!len) {
				pat = ".cvsignore";
				len = 10;
			}
			if (f & FR_EXCLUDE_SELF) {
				const char *name = pat + len;

				while (name > pat && name[-1] != '/')
					name--;
				r = add_rule(p, name, (size_t)(pat + len - name), f & FR_FROM_FILE, 0);
				if (r < 0)
					return r;
				f &= ~FR_EXCLUDE_SELF;
			}
			if (!(f & FR_PERDIR)) {
				char *path = merge_path(p, pat, len);

				if (!path)
					return -ENOMEM;
				r = parse_file(p, path, AT_FDCWD, f, PX_FATAL);
				free(path);
				if (r < 0)
					return r;
				continue;
			}
		}
		r = add_rule(p, pat, len, f, px);
		if (r < 0)
			return r;
		if ((f & FR_CVS) && !(f & FR_MERGE)) {
			r = load_cvs(p, f);
			if (r < 0)
				return r;
		}
	}
}

/*
 * Read a merge file (rsync's parse_filter_file()): lines (or with 'w'
 * words), NUL-separated with --from0, comments and blank lines skipped.
 * dirfd: where a relative name is (opened without following symlinks of
 * other users, as rsync 3.4 does). A missing file is an error only with
 * PX_FATAL.
 */
static int parse_file(struct parse *p, const char *file, int dirfd, unsigned tmpl, unsigned px)
{
	struct parse q = *p;
	bool word_split = tmpl & FR_WORD_SPLIT, untrusted = false;
	FILE *f = stdin;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int r = 0, c;
	bool overflow = false, eof = false;

	if (p->depth >= MAX_MERGE_DEPTH) {
		cli_msg("merge-file include depth limit (%d) exceeded at %s", MAX_MERGE_DEPTH,
			p->file ? "<rule from a file>" : file);
		return px & PX_FATAL ? -EIO : 0;
	}
	if (px & PX_FATAL) {
		/*
		 * A rules file the command line names (--exclude-from, a merge
		 * rule): read whole once on the machine the command was typed on
		 * and sent to a remote server, which reads that copy, never its
		 * own disk or its standard input (the wire) (listfile.c). Inside
		 * a rules file, "-" is a file of that name.
		 */
		int err = 0;

		f = listfile_open(p->file && !strcmp(file, "-") ? "./-" : file, &err, &untrusted);
		if (!f) {
			if (untrusted)
				opath_refusal_msg();
			if (p->file)
				cli_msg("failed to open %sclude file <rule from %s line %u>",
					tmpl & FR_INCLUDE ? "in" : "ex", p->file, p->line);
			else
				cli_error(err, "failed to open %sclude file %s", tmpl & FR_INCLUDE ? "in" : "ex", file);
			return -EIO;
		}
	} else if (strcmp(file, "-") || p->file) {
		int fd = opath_openat(dirfd, file, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0, &untrusted);
		struct stat st;

		if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
			/* a FIFO or a device there would hang or feed us forever: as if it were not there */
			close(fd);
			fd = S_ISDIR(st.st_mode) ? -EISDIR : -ENOENT;
		}
		f = fd >= 0 ? fdopen(fd, "r") : NULL;
		if (!f) {
			int err = fd >= 0 ? -errno : fd;

			if (fd >= 0)
				close(fd);
			if (!(px & PX_FATAL))
				return err == -ENOMEM ? err : 0;
			if (untrusted)
				opath_refusal_msg();
			if (p->file)
				cli_msg("failed to open %sclude file <rule from %s line %u>",
					tmpl & FR_INCLUDE ? "in" : "ex", p->file, p->line);
			else
				cli_error(err, "failed to open %sclude file %s", tmpl & FR_INCLUDE ? "in" : "ex", file);
			return -EIO;
		}
	}
	q.file = file;
	q.line = 0;
	q.depth = p->depth + 1;
	while (!eof && r >= 0) {
		len = 0;
		overflow = false;
		q.line += !word_split;
		for (;;) {
			c = getc(f);
			if (c == EOF) {
				eof = true;
				break;
			}
			if (word_split && isspace(c))
				break;
			if (p->fs->from0 ? c == 0 : c == '\n' || c == '\r') {
				if (c == '\r') {
					int n = getc(f);

					if (n != '\n' && n != EOF)
						ungetc(n, f);
				}
				break;
			}
			if (len + 1 >= MAX_LINE) {
				overflow = true;
				continue;
			}
			if (len + 2 > cap) {
				size_t nc = cap ? cap * 2 : 256;
				char *nb = realloc(buf, nc);

				if (!nb) {
					r = -ENOMEM;
					break;
				}
				buf = nb;
				cap = nc;
			}
			buf[len++] = (char)c;
		}
		if (r < 0)
			break;
		if (overflow) {
			cli_msg("discarding over-long filter: <rule from %s line %u>", file, q.line);
			continue;
		}
		if (!len)
			continue;
		buf[len] = 0;
		if (!word_split && (buf[0] == ';' || buf[0] == '#'))
			continue;
		r = parse_str(&q, buf, tmpl, px & ~PX_FATAL);
	}
	free(buf);
	if (f != stdin)
		fclose(f);
	return r;
}

/* ---- the set ---- */

struct filter_set *filter_set_new(void)
{
	return calloc(1, sizeof(struct filter_set));
}

void filter_set_free(struct filter_set *fs)
{
	if (!fs)
		return;
	rules_free(&fs->rules);
	rules_free(&fs->cvs);
	slots_free(&fs->slots);
	free(fs);
}

void filter_set_from0(struct filter_set *fs, bool on)
{
	fs->from0 = on;
}

bool filter_set_empty(const struct filter_set *fs)
{
	return !fs || !fs->any;
}

bool filter_set_has_xattr(const struct filter_set *fs)
{
	for (size_t i = 0; fs && i < fs->rules.n; i++)
		if (fs->rules.v[i].flags & FR_XATTR)
			return true;
	return false;
}

bool filter_xattr_excluded(const struct filter_set *fs, const char *name)
{
	/* rsync's check_filter() with NAME_IS_XATTR: the 'x' rules alone, in order, the first match decides */
	for (size_t i = 0; fs && i < fs->rules.n; i++) {
		const struct rule *r = &fs->rules.v[i];

		if ((r->flags & FR_XATTR) && !(r->flags & (FR_MERGE | FR_CLEAR)) && rule_matches(r, name, false, NULL))
			return !(r->flags & FR_INCLUDE);
	}
	return false;
}

static struct parse top_parse(struct filter_set *fs)
{
	return (struct parse){ .fs = fs, .slots = &fs->slots, .list = &fs->rules, .any_abs = &fs->has_abs };
}

int filter_add(struct filter_set *fs, const char *arg, enum filter_arg how)
{
	struct parse p = top_parse(fs);

	switch (how) {
	case FILTER_EXCLUDE:
		return parse_str(&p, arg, 0, PX_OLD_PREFIXES);
	case FILTER_INCLUDE:
		return parse_str(&p, arg, FR_INCLUDE, PX_OLD_PREFIXES);
	default:
		return parse_str(&p, arg, 0, 0);
	}
}

int filter_add_file(struct filter_set *fs, const char *file, bool include)
{
	struct parse p = top_parse(fs);

	return parse_file(&p, file, AT_FDCWD, include ? FR_INCLUDE : 0, PX_FATAL | PX_OLD_PREFIXES);
}

int filter_add_cvs(struct filter_set *fs)
{
	int r = filter_add(fs, ":C", FILTER_RULE);

	return r < 0 ? r : filter_add(fs, "-C", FILTER_RULE);
}

/* ---- walks ---- */

struct filter_walk *filter_walk_new(const struct filter_set *fs, bool receiver, bool delete_excluded)
{
	struct filter_walk *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->fs = fs;
	w->receiver = receiver;
	w->delete_excluded = delete_excluded;
	for (size_t i = 0; fs && i < fs->slots.n; i++)
		if (slots_push(&w->slots, fs->slots.v[i].name, fs->slots.v[i].scan_dir, fs->slots.v[i].flags) < 0) {
			filter_walk_free(w);
			return NULL;
		}
	w->global = fdir_new((unsigned)w->slots.n);
	if (!w->global) {
		filter_walk_free(w);
		return NULL;
	}
	return w;
}

void filter_walk_free(struct filter_walk *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->mapcap; i++)
		if (w->map[i].d)
			fdir_put(w->map[i].d);
	free(w->map);
	for (size_t i = 0; i < w->nroots; i++) {
		free(w->roots[i].dir);
		free(w->roots[i].base);
		free(w->roots[i].abs_base);
		fdir_put(w->roots[i].fd);
	}
	free(w->roots);
	fdir_put(w->global);
	slots_free(&w->slots);
	free(w);
}

int filter_walk_error(const struct filter_walk *w)
{
	return w ? w->err : 0;
}

bool filter_walk_perdir(const struct filter_walk *w)
{
	return w && w->slots.n;
}

int filter_walk_root(struct filter_walk *w, uint32_t root, const char *dir, const char *base)
{
	if (root >= w->nroots) {
		struct root_info *v = realloc(w->roots, (root + 1) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + w->nroots, 0, (root + 1 - w->nroots) * sizeof(*v));
		w->roots = v;
		w->nroots = root + 1;
	}
	struct root_info *ri = &w->roots[root];

	free(ri->dir);
	free(ri->base);
	ri->dir = strdup(dir);
	ri->base = strdup(base);
	return ri->dir && ri->base ? 0 : -ENOMEM;
}

void filter_walk_pass(struct filter_walk *w)
{
	w->pass++;
}

uint64_t filter_walk_key(const struct filter_walk *w, uint64_t id)
{
	return id ? id | (w->pass << 48) : 0;
}

int filter_walk_root_parent(struct filter_walk *w, uint32_t root, uint64_t key)
{
	if (root >= w->nroots)
		return -EINVAL;
	w->roots[root].parent_key = key;
	return 0;
}

static const char *abs_base(const struct filter_walk *cw, uint32_t root)
{
	struct filter_walk *w = (struct filter_walk *)cw; /* a cache */
	struct root_info *ri;

	if (root >= w->nroots)
		return NULL;
	ri = &w->roots[root];
	if (!ri->abs_tried) {
		ri->abs_tried = true;
		ri->abs_base = realpath(ri->base, NULL);
	}
	return ri->abs_base;
}

static size_t map_slot(const struct filter_walk *w, uint64_t id)
{
	uint64_t h = id * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 20) & (w->mapcap - 1);
}

static struct fdir *map_get(const struct filter_walk *w, uint64_t id)
{
	if (!w->mapcap)
		return NULL;
	for (size_t i = map_slot(w, id);; i = (i + 1) & (w->mapcap - 1)) {
		if (!w->map[i].d)
			return NULL;
		if (w->map[i].id == id)
			return w->map[i].d;
	}
}

/* Takes d. */
static int map_put(struct filter_walk *w, uint64_t id, struct fdir *d)
{
	if ((w->mapn + 1) * 2 > w->mapcap) {
		size_t cap = w->mapcap ? w->mapcap * 2 : 1024;
		struct map_ent *old = w->map, *v = calloc(cap, sizeof(*v));
		size_t oldcap = w->mapcap;

		if (!v) {
			fdir_put(d);
			return -ENOMEM;
		}
		w->map = v;
		w->mapcap = cap;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].d) {
				size_t k = map_slot(w, old[i].id);

				while (w->map[k].d)
					k = (k + 1) & (cap - 1);
				w->map[k] = old[i];
			}
		free(old);
	}
	for (size_t i = map_slot(w, id);; i = (i + 1) & (w->mapcap - 1)) {
		if (!w->map[i].d) {
			w->map[i].id = id;
			w->map[i].d = d;
			w->mapn++;
			return 0;
		}
		if (w->map[i].id == id) {
			fdir_put(w->map[i].d);
			w->map[i].d = d;
			return 0;
		}
	}
}

/*
 * Read the slot files of one directory into a copy of parent's state.
 * dirfd/rel: the directory (rel as the file list names it, or an absolute
 * directory above the transfer with abs). Returns the new state (parent
 * itself, one more reference, when nothing changed) or NULL with *err.
 */
static struct fdir *read_dir(struct filter_walk *w, struct fdir *parent, int dirfd, const char *dir, bool abs,
			     const char *base, int only_slot, int *err)
{
	struct fdir *d = NULL;
	char *prefix = NULL;

	*err = 0;
	if (abs)
		prefix = strdup(dir);
	else
		prefix = strdup(strcmp(dir, ".") ? dir : "");
	if (!prefix) {
		*err = -ENOMEM;
		return NULL;
	}
	/* the loop sees slots a merge file adds (rsync reads those in the same directory too) */
	for (size_t k = 0; k < w->slots.n; k++) {
		struct fdir *cur = d ? d : parent;
		struct fnode *node;
		struct parse p;
		size_t nslots_before;
		int r;

		if (only_slot >= 0 && (int)k != only_slot)
			continue;
		if (k >= cur->n || !cur->slot[k])
			continue; /* a slot of another part of the tree */
		node = calloc(1, sizeof(*node));
		if (!node) {
			*err = -ENOMEM;
			break;
		}
		node->refs = 1;
		node->inherit = (w->slots.v[k].flags & FR_NO_INHERIT) ? NULL : fnode_get(cur->slot[k] == &none_node ? NULL : cur->slot[k]);
		p = (struct parse){ .fs = (struct filter_set *)w->fs, .slots = &w->slots, .list = &node->rules,
				    .node = node, .active = cur, .prefix = prefix, .abs_prefix = abs, .base = base,
				    .any_abs = &(bool){ false } };
		nslots_before = w->slots.n;
		r = parse_file(&p, w->slots.v[k].name, dirfd, w->slots.v[k].flags & ~(FR_MERGE | FR_PERDIR), PX_ANCHORED);
		if (r < 0) {
			fnode_put(node);
			*err = r;
			break;
		}
		bool changed = node->rules.n || node->inherit != (cur->slot[k] == &none_node ? NULL : cur->slot[k]) ||
			       w->slots.n != nslots_before;

		if (!changed) {
			fnode_put(node);
			continue;
		}
		if (!d) {
			/* copy the parent's state, with room for the slots this directory added */
			d = fdir_new((unsigned)w->slots.n);
			if (!d) {
				fnode_put(node);
				*err = -ENOMEM;
				break;
			}
			for (unsigned i = 0; i < parent->n; i++)
				d->slot[i] = fnode_get(parent->slot[i]);
			for (unsigned i = parent->n; i < d->n; i++)
				d->slot[i] = NULL; /* inactive unless added here (below) */
		} else if (d->n < w->slots.n) {
			struct fdir *g = realloc(d, sizeof(*d) + w->slots.n * sizeof(d->slot[0]));

			if (!g) {
				fnode_put(node);
				*err = -ENOMEM;
				break;
			}
			d = g;
			for (unsigned i = d->n; i < w->slots.n; i++)
				d->slot[i] = NULL;
			d->n = (unsigned)w->slots.n;
		}
		/* slots this file added are active from here down */
		for (size_t i = nslots_before; i < w->slots.n; i++)
			if (!d->slot[i])
				d->slot[i] = &none_node;
		fnode_put(d->slot[k]);
		d->slot[k] = node->rules.n || node->inherit ? node : &none_node;
		if (d->slot[k] == &none_node)
			fnode_put(node);
	}
	free(prefix);
	if (*err) {
		fdir_put(d);
		return NULL;
	}
	if (d)
		return d;
	parent->refs++;
	return parent;
}

/*
 * A root's starting state: the global one, plus the merge files of the
 * directories above it for a per-directory name with a '/' (rsync's parent
 * scan, from that directory down to the one holding the root).
 */
static struct fdir *root_state(struct filter_walk *w, uint32_t root, int *err)
{
	struct root_info *ri = root < w->nroots ? &w->roots[root] : NULL;
	struct fdir *cur;
	char *top = NULL;

	*err = 0;
	if (!ri)
		return w->global;
	if (ri->fd)
		return ri->fd;
	if (ri->parent_key && map_get(w, ri->parent_key)) {
		ri->fd = map_get(w, ri->parent_key);
		ri->fd->refs++;
		return ri->fd;
	}
	cur = w->global;
	cur->refs++;
	for (size_t k = 0; k < w->fs->slots.n && !*err; k++) {
		const struct slot *s = &w->slots.v[k];
		char *scan, *p;

		if (!s->scan_dir)
			continue;
		if (!top) {
			top = realpath(ri->dir, NULL);
			if (!top)
				break; /* the root is not a directory we can name: nothing above it to read */
		}
		if (*s->scan_dir == '/')
			scan = strdup(s->scan_dir);
		else if (asprintf(&scan, "%s/%s", top, s->scan_dir) < 0)
			scan = NULL;
		if (!scan) {
			*err = -ENOMEM;
			break;
		}
		clean_path(scan);
		/* the scan runs only when that directory is above the root (rsync's check) */
		size_t sl = strlen(scan);
		bool above = !strcmp(scan, "/") || (!strncmp(top, scan, sl) && top[sl] == '/');

		if (!above || !strcmp(scan, top)) {
			free(scan);
			continue;
		}
		/* each directory from scan down to top's parent */
		p = top + (strcmp(scan, "/") ? sl : 0);
		for (;;) {
			char *dir = strndup(top, p == top ? 1 : (size_t)(p - top));
			int dfd;

			if (!dir) {
				*err = -ENOMEM;
				break;
			}
			dfd = opath_open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, NULL);
			if (dfd >= 0) {
				struct fdir *n = read_dir(w, cur, dfd, dir, true, NULL, (int)k, err);

				close(dfd);
				if (n) {
					fdir_put(cur);
					cur = n;
				}
			}
			free(dir);
			if (*err)
				break;
			char *next = strchr(p + 1, '/');

			if (!next)
				break;
			p = next;
		}
		free(scan);
	}
	free(top);
	if (*err) {
		fdir_put(cur);
		return NULL;
	}
	ri->fd = cur;
	return cur;
}

int filter_enter(struct filter_walk *w, uint64_t parent_id, uint64_t id, uint32_t root, int dfd, const char *rel)
{
	struct fdir *parent, *d;
	const char *base = root < w->nroots ? w->roots[root].base : NULL;
	int err;

	if (!w->slots.n)
		return 0;
	parent = parent_id ? map_get(w, filter_walk_key(w, parent_id)) : NULL;
	if (!parent) {
		parent = root_state(w, root, &err);
		if (!parent)
			goto fail;
	}
	d = read_dir(w, parent, dfd, rel, false, base, -1, &err);
	if (!d)
		goto fail;
	return map_put(w, filter_walk_key(w, id), d);
fail:
	if (err == -EINVAL || err == -EIO)
		w->err = err;
	return err;
}

/* ---- checking ---- */

struct check {
	const struct filter_walk *w;
	const struct fdir *d;
	const char *rel;
	bool is_dir, no_perish, receiver;
	uint32_t root;
	int depth;
};

static int check_list(struct check *c, const struct rules *l);

static int check_rule(struct check *c, const struct rule *r)
{
	const struct filter_walk *w = c->w;
	unsigned sides = r->flags & FR_SIDES;

	if (c->no_perish && (r->flags & FR_PERISHABLE))
		return 0;
	if (r->flags & FR_PERDIR) {
		if (r->slot < 0 || (unsigned)r->slot >= c->d->n || c->depth > MAX_MERGE_DEPTH)
			return 0;
		c->depth++;
		for (const struct fnode *n = c->d->slot[r->slot]; n && n != &none_node; n = n->inherit) {
			int rc = check_list(c, &n->rules);

			if (rc) {
				c->depth--;
				return rc;
			}
		}
		c->depth--;
		return 0;
	}
	if (r->flags & FR_CVS)
		return check_list(c, &w->fs->cvs);
	/* a rule without a side is both sides' (the sender's only with --delete-excluded) */
	if (!sides && w->delete_excluded)
		sides = FR_SENDER;
	if (sides && !(sides & (c->receiver ? FR_RECEIVER : FR_SENDER)))
		return 0;
	if (r->flags & FR_XATTR)
		return 0; /* a rule for xattr names, not file names */
	if (!rule_matches(r, c->rel, c->is_dir, (r->flags & FR_ABS) ? abs_base(w, c->root) : NULL))
		return 0;
	return r->flags & FR_INCLUDE ? FILTER_INCLUDED : FILTER_EXCLUDED;
}

static int check_list(struct check *c, const struct rules *l)
{
	for (size_t i = 0; i < l->n; i++) {
		int rc = check_rule(c, &l->v[i]);

		if (rc)
			return rc;
	}
	return 0;
}

int filter_check(const struct filter_walk *w, uint64_t dir_id, uint32_t root, const char *rel, unsigned flags)
{
	struct check c = { .w = w, .rel = rel, .is_dir = flags & FILTER_DIR, .no_perish = flags & FILTER_NO_PERISH,
			   .receiver = w && w->receiver && !(flags & FILTER_AS_SENDER), .root = root };

	if (!w || !w->fs || !w->fs->rules.n)
		return FILTER_NONE;
	c.d = dir_id ? map_get(w, filter_walk_key(w, dir_id)) : NULL;
	if (!c.d && root < w->nroots && w->roots[root].parent_key)
		c.d = map_get(w, w->roots[root].parent_key);
	if (!c.d)
		c.d = root < w->nroots && w->roots[root].fd ? w->roots[root].fd : w->global;
	while (*c.rel == '/')
		c.rel++;
	return check_list(&c, &w->fs->rules);
}
