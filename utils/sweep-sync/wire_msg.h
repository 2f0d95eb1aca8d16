/* SPDX-License-Identifier: MIT */
/*
 * Decoding the sender's messages (wire.h gives their layout), for the
 * receiver and for the fuzz target (tests/remote/fuzz_wire.c). Pure: no
 * I/O, no state but what is passed. Every decoder checks every length
 * against its payload and every value the receiver would act on: names
 * ("." or components, none empty, "." or ".."; nothing absolute), file
 * types, errno values, statuses. -EPROTO for anything else.
 */
#ifndef SWEEP_SYNC_WIRE_MSG_H
#define SWEEP_SYNC_WIRE_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#include <sweep/copy.h>

/* A name as it may travel: "." or NAME(/NAME)*, each NAME not "", "." or "..", at most 255 bytes. */
bool wm_name_ok(const char *s, size_t n);
/* rel lies in the tree of rel0 (rel0 itself, or below it; "." holds every name). */
bool wm_name_below(const char *rel, const char *rel0);

struct wroot {
	char *src;  /* as the sender shows it (messages only) */
	char *rel0; /* the top entry's name */
	uint32_t flags; /* WRR_* */
};
struct wroots {
	uint32_t nsrc, flags, missing, n;
	struct wroot *v;
};
/* W_ROOTS: 0, -EPROTO (a bad name; with relative false, a rel0 with a '/'), -ENOMEM. */
int wm_roots(const unsigned char *p, size_t len, struct wroots *out);
void wm_roots_free(struct wroots *r);

/* One source entry's attributes, one allocation (names and values after the array). */
struct xattr_set {
	size_t n;
	struct sweep_copy_xattr v[];
};

struct wentry {
	uint8_t kind;      /* WE_ENTRY or WE_SKIP */
	uint32_t root;
	char *rel;
	struct wire_stat st; /* WE_ENTRY */
	char *link;          /* a symlink's target */
	struct xattr_set *xa; /* WE_ENTRY: its attributes, NULL for none */
	bool is_dir;         /* WE_SKIP */
};
/*
 * The next entry of a W_FLIST payload at cur: 1 with *e, 0 at its end,
 * -EPROTO, -ENOMEM. Checks the name, the file type, a symlink's target
 * (not empty), the attributes' names; the caller checks the root.
 */
int wm_entry(struct wcur *cur, struct wentry *e);
void wm_entry_free(struct wentry *e);

/* A file type a sender may list (regular, directory, symlink, device, FIFO, socket). */
bool wm_type_ok(uint32_t mode);
/* A -errno a peer may send (-4095..-1). */
bool wm_errno_ok(int32_t err);

#endif
