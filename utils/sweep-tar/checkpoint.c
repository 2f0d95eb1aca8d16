/* SPDX-License-Identifier: MIT */
/*
 * --checkpoint[=[.]N] and --checkpoint-action=ACTION, as GNU tar has them
 * (src/checkpoint.c): every Nth record (-b blocks of 512 bytes, 20 by
 * default) of the archive written or read, the actions run in order:
 * dot (or "."), bell, echo, echo=STRING, ttyout=STRING, sleep=SECONDS,
 * exec=COMMAND, totals, wait=SIGNAL. STRING expands %u (the checkpoint's
 * number), %s ("write" or "read"), %c (GNU tar's default text), %d
 * (seconds since the start), %t and %{FORMAT}t (the time), %T and
 * %{R,W,D}T (bytes so far) and %* or %{N}* (spaces to the line's end).
 *
 * Records are counted in the tar stream itself, before compression and
 * after decompression, as GNU tar counts them: a write checkpoint when a
 * record is complete, a read one when a record is begun.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "tar.h"

enum cp_op { CP_DOT, CP_BELL, CP_ECHO, CP_TTYOUT, CP_SLEEP, CP_EXEC, CP_TOTALS, CP_WAIT };

struct cp_action {
	enum cp_op op;
	char *text;     /* echo=, ttyout=, exec= (NULL: echo's default) */
	unsigned secs;  /* sleep= */
	int sig;        /* wait= */
};

static struct {
	unsigned every;          /* --checkpoint=N (0: none) */
	bool given;              /* --checkpoint or an action was given */
	struct cp_action *act;
	size_t nact;
	sigset_t sigs;           /* wait=: blocked from the start, taken with sigwait() */
	uint64_t count;          /* records so far, read and written */
	uint64_t read_records, write_records;
	struct timespec start;
	FILE *tty;
	bool tty_cleanup;
} cp;

/* GNU tar's unquote_string: C escapes in an action's text. */
static char *unquote(const char *s)
{
	size_t n = strlen(s);
	char *out = malloc(n + 1), *w = out;

	if (!out)
		cli_die(TAR_FATAL, "out of memory");
	/* Quotes around the whole text go (copy_string_unquote). */
	if (n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0]) {
		s++;
		n -= 2;
	}
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\\' || i + 1 >= n) {
			*w++ = s[i];
			continue;
		}
		char c = s[++i];
		switch (c) {
		case 'a': *w++ = '\a'; break;
		case 'b': *w++ = '\b'; break;
		case 'f': *w++ = '\f'; break;
		case 'n': *w++ = '\n'; break;
		case 'r': *w++ = '\r'; break;
		case 't': *w++ = '\t'; break;
		case 'v': *w++ = '\v'; break;
		case '\\': *w++ = '\\'; break;
		default:
			if (c >= '0' && c <= '7') {
				int v = 0, k = 0;
				while (k < 3 && i < n && s[i] >= '0' && s[i] <= '7') {
					v = v * 8 + (s[i++] - '0');
					k++;
				}
				i--;
				*w++ = (char)v;
			} else {
				*w++ = '\\';
				*w++ = c;
			}
		}
	}
	*w = '\0';
	return out;
}

static int signal_number(const char *name)
{
	static const struct {
		const char *name;
		int sig;
	} tab[] = { { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT } };

	if (strncmp(name, "SIG", 3) == 0)
		name += 3;
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strcmp(tab[i].name, name) == 0)
			return tab[i].sig;
	return -1;
}

static struct cp_action *add(enum cp_op op)
{
	struct cp_action *n = realloc(cp.act, (cp.nact + 1) * sizeof(*n));

	if (!n)
		cli_die(TAR_FATAL, "out of memory");
	cp.act = n;
	cp.act[cp.nact] = (struct cp_action){ .op = op };
	if (cp.nact == 0)
		sigemptyset(&cp.sigs);
	cp.given = true;
	return &cp.act[cp.nact++];
}

void tar_checkpoint_action(const char *arg)
{
	if (strcmp(arg, ".") == 0 || strcmp(arg, "dot") == 0) {
		add(CP_DOT);
	} else if (strcmp(arg, "bell") == 0) {
		add(CP_BELL);
	} else if (strcmp(arg, "echo") == 0) {
		add(CP_ECHO);
	} else if (strncmp(arg, "echo=", 5) == 0) {
		add(CP_ECHO)->text = unquote(arg + 5);
	} else if (strncmp(arg, "exec=", 5) == 0) {
		add(CP_EXEC)->text = unquote(arg + 5);
	} else if (strncmp(arg, "ttyout=", 7) == 0) {
		add(CP_TTYOUT)->text = unquote(arg + 7);
	} else if (strncmp(arg, "sleep=", 6) == 0) {
		char *end;
		unsigned long n = strtoul(arg + 6, &end, 10);
		if (*end || !arg[6])
			cli_die(TAR_FATAL, "%s: not a valid timeout\n%s: Error is not recoverable: exiting now", arg, cli_prog());
		add(CP_SLEEP)->secs = (unsigned)n;
	} else if (strcmp(arg, "totals") == 0) {
		add(CP_TOTALS);
	} else if (strncmp(arg, "wait=", 5) == 0) {
		int sig = signal_number(arg + 5);
		if (sig < 0)
			cli_die(TAR_FATAL, "Unknown signal name: %s\n%s: Error is not recoverable: exiting now", arg + 5, cli_prog());
		add(CP_WAIT)->sig = sig;
		sigaddset(&cp.sigs, sig);
	} else {
		cli_die(TAR_FATAL, "%s: unknown checkpoint action\n%s: Error is not recoverable: exiting now", arg, cli_prog());
	}
}

void tar_checkpoint_option(const char *arg)
{
	char *end;

	cp.given = true;
	if (!arg) {
		cp.every = 10;
		return;
	}
	if (*arg == '.') {
		tar_checkpoint_action(".");
		arg++;
	}
	cp.every = (unsigned)strtoul(arg, &end, 0);
	if (*end)
		cli_die(TAR_FATAL, "--checkpoint value is not an integer\n%s: Error is not recoverable: exiting now", cli_prog());
}

void tar_checkpoint_ready(void)
{
	if (!cp.given)
		return;
	if (cp.nact == 0)
		add(CP_ECHO); /* GNU tar's historical default */
	if (cp.every == 0)
		cp.every = 10;
	/* Blocked before any thread starts, so that every thread leaves them to sigwait(). */
	sigprocmask(SIG_BLOCK, &cp.sigs, NULL);
	clock_gettime(CLOCK_MONOTONIC, &cp.start);
}

bool tar_checkpoints(void)
{
	return cp.every > 0;
}

static double elapsed(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - cp.start.tv_sec) + (double)(now.tv_nsec - cp.start.tv_nsec) / 1e9;
}

static int width(FILE *f)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");

	if (ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (cols && atoi(cols) > 0)
		return atoi(cols);
	return 80;
}

static int format(struct tar *t, FILE *f, int len, const char *in, bool write, uint64_t n);

/* %T: the bytes read, written and deleted so far ("R: N", "W: N"), separated by ','. */
static int totals(struct tar *t, FILE *f, const char *arg)
{
	char fmts[3][64] = { "R", "W", "D" };
	uint64_t rs = tar_record_size(t->o);
	int len = 0;

	if (arg) {
		const char *p = arg;
		for (int i = 0; i < 3; i++) {
			const char *comma = strchr(p, ',');
			size_t k = comma ? (size_t)(comma - p) : strlen(p);
			snprintf(fmts[i], sizeof(fmts[i]), "%.*s", (int)k, p);
			if (!comma) {
				for (i++; i < 3; i++)
					fmts[i][0] = '\0';
				break;
			}
			p = comma + 1;
		}
	}
	if (fmts[0][0] && cp.read_records)
		len += fprintf(f, "%s: %llu", fmts[0], (unsigned long long)(cp.read_records * rs));
	if (fmts[1][0] && cp.write_records)
		len += fprintf(f, "%s%s: %llu", len ? ", " : "", fmts[1], (unsigned long long)(cp.write_records * rs));
	return len;
}

static int format(struct tar *t, FILE *f, int len, const char *in, bool write, uint64_t n)
{
	const char *opstr = write ? "write" : "read";

	if (!in)
		in = write ? "Write checkpoint %u" : "Read checkpoint %u";
	for (const char *p = in; *p; p++) {
		char arg[256];
		bool has_arg = false;

		if (*p != '%') {
			fputc(*p, f);
			if (*p == '\r') {
				len = 0;
				cp.tty_cleanup = true;
			} else {
				len++;
			}
			continue;
		}
		p++;
		if (*p == '{') {
			const char *close = strchr(p + 1, '}');
			if (close && (size_t)(close - p) < sizeof(arg)) {
				memcpy(arg, p + 1, (size_t)(close - p - 1));
				arg[close - p - 1] = '\0';
				has_arg = true;
				p = close + 1;
			} else {
				fputc('%', f);
				fputc(*p, f);
				len += 2;
				continue;
			}
		}
		switch (*p) {
		case 'c':
			len = format(t, f, len, "%{%Y-%m-%d %H:%M:%S}t: %ds, %{read,wrote}T%*\r", write, n);
			break;
		case 'u':
			len += fprintf(f, "%llu", (unsigned long long)n);
			break;
		case 's':
			len += fprintf(f, "%s", opstr);
			break;
		case 'd':
			len += fprintf(f, "%.0f", elapsed());
			break;
		case 'T':
			len += totals(t, f, has_arg ? arg : NULL);
			break;
		case 't': {
			char buf[256];
			time_t now = time(NULL);
			struct tm tm;
			localtime_r(&now, &tm);
			strftime(buf, sizeof(buf), has_arg ? arg : "%c", &tm);
			len += fprintf(f, "%s", buf);
			break;
		}
		case '*': {
			int w = has_arg ? atoi(arg) : width(f);
			for (; w > len; len++)
				fputc(' ', f);
			break;
		}
		case '\0':
			fputc('%', f);
			return len + 1;
		default:
			fputc('%', f);
			fputc(*p, f);
			len += 2;
			break;
		}
	}
	fflush(f);
	return len;
}

static void run_exec(struct tar *t, const char *cmd, uint64_t n)
{
	char num[32];
	pid_t pid = fork();
	int status;

	if (pid < 0) {
		cli_msg("cannot fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		static const char *const fmts[] = { "posix", "gnu", "ustar", "v7" };
		snprintf(num, sizeof(num), "%llu", (unsigned long long)n);
		setenv("TAR_VERSION", "1.34", 1);
		setenv("TAR_ARCHIVE", t->o->archive ? t->o->archive : "-", 1);
		setenv("TAR_CHECKPOINT", num, 1);
		snprintf(num, sizeof(num), "%u", t->o->blocking ? t->o->blocking : 20);
		setenv("TAR_BLOCKING_FACTOR", num, 1);
		setenv("TAR_SUBCOMMAND", tar_mode_option(t->o->mode), 1);
		setenv("TAR_FORMAT", fmts[t->o->format], 1);
		sigprocmask(SIG_UNBLOCK, &cp.sigs, NULL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

static void run(struct tar *t, bool write, uint64_t n)
{
	for (size_t i = 0; i < cp.nact; i++) {
		const struct cp_action *a = &cp.act[i];
		int sig;

		switch (a->op) {
		case CP_DOT:
			progress_clear_for(t->progress, t->listing);
			fputc('.', t->listing ? t->listing : stdout);
			fflush(t->listing ? t->listing : stdout);
			break;
		case CP_BELL:
		case CP_TTYOUT:
			if (!cp.tty)
				cp.tty = fopen("/dev/tty", "we");
			if (cp.tty && a->op == CP_BELL) {
				fputc('\a', cp.tty);
				fflush(cp.tty);
			} else if (cp.tty) {
				format(t, cp.tty, 0, a->text, write, n);
			}
			break;
		case CP_ECHO:
			progress_clear(t->progress);
			fflush(stdout);
			format(t, stderr, fprintf(stderr, "%s: ", cli_prog()), a->text, write, n);
			fputc('\n', stderr);
			break;
		case CP_SLEEP:
			sleep(a->secs);
			break;
		case CP_EXEC:
			run_exec(t, a->text, n);
			break;
		case CP_TOTALS:
			fflush(stdout);
			totals(t, stderr, NULL);
			fputc('\n', stderr);
			break;
		case CP_WAIT:
			sigwait(&cp.sigs, &sig);
			break;
		}
	}
}

void tar_checkpoint_records(struct tar *t, bool write, uint64_t records)
{
	uint64_t *done = write ? &cp.write_records : &cp.read_records;

	while (cp.every && *done < records) {
		(*done)++;
		if (++cp.count % cp.every == 0)
			run(t, write, cp.count);
	}
}

void tar_checkpoint_in(struct tar *t, struct archive *in)
{
	uint64_t rs = tar_record_size(t->o);
	la_int64_t pos;

	if (!cp.every || (pos = archive_filter_bytes(in, 0)) < 0)
		return;
	tar_checkpoint_records(t, false, ((uint64_t)pos + rs - 1) / rs);
}

void tar_checkpoint_finish(void)
{
	if (cp.tty && cp.tty_cleanup) {
		int w = width(cp.tty);
		while (w-- > 0)
			fputc(' ', cp.tty);
		fputc('\r', cp.tty);
	}
	if (cp.tty)
		fclose(cp.tty);
	cp.tty = NULL;
	for (size_t i = 0; i < cp.nact; i++)
		free(cp.act[i].text);
	free(cp.act);
	cp.act = NULL;
	cp.nact = 0;
}
