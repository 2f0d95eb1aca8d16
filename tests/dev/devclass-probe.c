/* SPDX-License-Identifier: MIT */
/*
 * The device class of paths or block devices, one line each, with the
 * probe counter of this process (so a test sees whether a probe ran):
 *
 *   devclass-probe [--cache=DIR] [--force=hdd|ssd|auto] [--forget] [--explain] [--profile] ARG...
 *
 * ARG is a path (sweep_fsinfo_path) or bdev:NODE for a block device node
 * itself. --cache keeps the cross-run cache in DIR instead of /run/sweep
 * ("" for none). --forget drops the in-process cache before each ARG.
 * Output: class=C reason=R probes=N reads=N random_ns=N seq_ns=N cached=0|1
 * error=E device=NAME, or with --explain what sweep_device_explain says;
 * --profile adds a line with what sweep_profile_explain says.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "device.h"

static int describe_bdev(const char *node, struct sweep_fsinfo *fi)
{
	struct stat st;
	if (stat(node, &st) < 0)
		return -errno;
	if (!S_ISBLK(st.st_mode))
		return -ENOTBLK;
	memset(fi, 0, sizeof(*fi));
	fi->size = sizeof(*fi);
	snprintf(fi->fs_name, sizeof(fi->fs_name), "-");
	fi->rotational = sweep__fsinfo_disk(st.st_rdev, fi->disk, sizeof(fi->disk));
	sweep__device_decide(st.st_rdev, fi->rotational, fi);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cache", required_argument, NULL, 'c' },
		{ "force", required_argument, NULL, 'f' },
		{ "forget", no_argument, NULL, 'F' },
		{ "explain", no_argument, NULL, 'e' },
		{ "profile", no_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	bool forget = false, explain = false, profile = false;
	int opt, status = 0;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			sweep__device_set_cache_dir(optarg);
			break;
		case 'f': {
			enum sweep_device_class c;
			if (sweep_device_class_parse(optarg, &c) < 0 || sweep_device_force(c) < 0) {
				fprintf(stderr, "devclass-probe: bad --force %s\n", optarg);
				return 2;
			}
			break;
		}
		case 'F':
			forget = true;
			break;
		case 'e':
			explain = true;
			break;
		case 'p':
			profile = true;
			break;
		default:
			return 2;
		}
	}
	for (int i = optind; i < argc; i++) {
		struct sweep_fsinfo fi = { .size = sizeof(fi) };
		int r;
		if (forget)
			sweep__device_forget();
		if (strncmp(argv[i], "bdev:", 5) == 0)
			r = describe_bdev(argv[i] + 5, &fi);
		else
			r = sweep_fsinfo_path(argv[i], &fi);
		if (r < 0) {
			fprintf(stderr, "devclass-probe: %s: %s\n", argv[i], strerror(-r));
			status = 1;
			continue;
		}
		if (explain || profile) {
			char line[256];
			if (explain) {
				sweep_device_explain(&fi, line, sizeof(line));
				printf("%s\n", line);
			}
			if (profile) {
				sweep_profile_explain(&fi, line, sizeof(line));
				printf("profile: %s\n", line);
			}
			continue;
		}
		printf("class=%s reason=%s probes=%u reads=%" PRIu32 " random_ns=%" PRIu64 " seq_ns=%" PRIu64
		       " cached=%d error=%d device=%s\n",
		       sweep_device_class_name(fi.device_class), sweep_device_reason_name(fi.device_reason),
		       sweep__device_probes(), fi.probe_reads, fi.probe_random_ns, fi.probe_seq_ns,
		       (fi.probe_flags & SWEEP_PROBE_CACHED) ? 1 : 0, -fi.probe_error,
		       fi.device_name[0] ? fi.device_name : "-");
	}
	return status;
}
