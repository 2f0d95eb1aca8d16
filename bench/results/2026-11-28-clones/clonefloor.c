/* SPDX-License-Identifier: MIT */
/* clonefloor SRC DST MODE THREADS: the least a same-filesystem cloning copy does.
 * MODE create: open(O_CREAT|O_EXCL) at the final name, FICLONE, fchmod (fcp's calls).
 * MODE tmpfile: O_TMPFILE in the directory, FICLONE, fchmod, futimens, linkat (unnamed until complete). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <ftw.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
static char **files; static mode_t *modes; static struct timespec *mt; static size_t nf, cap;
static size_t slen; static const char *dst; static int tmpfile_mode; static int nth;
static char *dpath(const char *p) { char *out; return asprintf(&out, "%s%s", dst, p + slen) < 0 ? NULL : out; }
static int cb(const char *p, const struct stat *st, int fl, struct FTW *f)
{
	(void)f;
	if (fl == FTW_D) { char *d = dpath(p); mkdir(d, 0700); free(d); }
	else if (S_ISREG(st->st_mode)) {
		if (nf == cap) { cap = cap ? cap * 2 : 1024; files = realloc(files, cap * sizeof(*files)); modes = realloc(modes, cap * sizeof(*modes)); mt = realloc(mt, cap * sizeof(*mt)); }
		modes[nf] = st->st_mode & 07777; mt[nf] = st->st_mtim; files[nf++] = strdup(p);
	}
	return 0;
}
static void *run(void *arg)
{
	long k = (long)arg;
	/* directories split between threads: file i goes to the thread of its directory's number */
	size_t dirno = 0; const char *last = NULL; size_t lastlen = 0;
	for (size_t i = 0; i < nf; i++) {
		const char *sl = strrchr(files[i], '/'); size_t dl = (size_t)(sl - files[i]);
		if (!last || dl != lastlen || memcmp(last, files[i], dl)) { dirno++; last = files[i]; lastlen = dl; }
		if ((long)(dirno % (size_t)nth) != k) continue;
		int s = open(files[i], O_RDONLY | O_NOFOLLOW | O_CLOEXEC); if (s < 0) { perror(files[i]); continue; }
		char *d = dpath(files[i]); int o;
		if (!tmpfile_mode) {
			o = open(d, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
			if (o >= 0) { if (ioctl(o, FICLONE, s) < 0) perror("clone"); fchmod(o, modes[i]); close(o); }
		} else {
			char *sl2 = strrchr(d, '/'); *sl2 = 0;
			int dfd = open(d, O_PATH | O_DIRECTORY | O_CLOEXEC); *sl2 = '/';
			o = openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
			if (o >= 0) {
				if (ioctl(o, FICLONE, s) < 0) perror("clone");
				fchmod(o, modes[i]);
				struct timespec ts[2] = { mt[i], mt[i] }; futimens(o, ts);
				if (linkat(o, "", dfd, sl2 + 1, AT_EMPTY_PATH) < 0) perror("link");
				close(o);
			}
			close(dfd);
		}
		if (o < 0) perror(d);
		free(d); close(s);
	}
	return NULL;
}
int main(int argc, char **argv)
{
	if (argc != 5) return 2;
	slen = strlen(argv[1]); dst = argv[2]; tmpfile_mode = !strcmp(argv[3], "tmpfile"); nth = atoi(argv[4]);
	nftw(argv[1], cb, 64, FTW_PHYS);
	pthread_t t[16];
	for (long k = 0; k < nth; k++) pthread_create(&t[k], NULL, run, (void *)k);
	for (long k = 0; k < nth; k++) pthread_join(t[k], NULL);
	return 0;
}
