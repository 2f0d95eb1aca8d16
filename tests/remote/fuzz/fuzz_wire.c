/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for sweep-sync's wire decoders (utils/sweep-sync/wire.c,
 * wire_msg.c), as a hostile peer would feed them: the input is a hello and
 * then a byte stream cut into frames by wire_take_frame() (zstd frames
 * decompressed), each frame decoded as the receiver decodes it (W_ROOTS,
 * W_FLIST entries, W_FILE_BEGIN's stat) and every name checked. Nothing may
 * crash, leak or read out of bounds, and every name a decoder accepts must
 * be one wm_name_ok() allows.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if HAVE_ZSTD
#include <zstd.h>
#endif

#include "wire.h"
#include "wire_msg.h"

static void must(int cond)
{
	if (!cond)
		abort();
}

static void decode(const struct wire_frame *f)
{
	struct wcur cur = { .p = f->data, .len = f->len };

	switch (f->type) {
	case W_ROOTS: {
		struct wroots r;

		if (wm_roots(f->data, f->len, &r) == 0) {
			for (uint32_t i = 0; i < r.n; i++)
				must(wm_name_ok(r.v[i].rel0, strlen(r.v[i].rel0)));
			wm_roots_free(&r);
		}
		break;
	}
	case W_FLIST: {
		struct wentry e;
		int k;

		while ((k = wm_entry(&cur, &e)) > 0) {
			must(wm_name_ok(e.rel, strlen(e.rel)));
			must(e.kind != WE_ENTRY || wm_type_ok(e.st.mode));
			(void)wm_name_below(e.rel, ".");
			wm_entry_free(&e);
		}
		break;
	}
	case W_FILE_BEGIN: {
		struct wire_stat st;

		(void)wc_u32(&cur);
		wc_stat(&cur, &st);
		(void)wc_done(&cur);
		break;
	}
	default:
		/* the string lists (W_ARGS, W_PATHS...) */
		while (!cur.bad && cur.off < cur.len) {
			bool oom = false;

			free(wc_strdup(&cur, &oom));
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t caps;
	char why[128];
	void *dctx = NULL;
	size_t off = 0;

	if (size >= WIRE_HELLO_LEN) {
		(void)wire_check_hello(data, WIRE_HELLO_LEN, &caps, why, sizeof(why));
		off = WIRE_HELLO_LEN;
	}
#if HAVE_ZSTD
	dctx = ZSTD_createDCtx();
#endif
	while (off < size) {
		struct wire_frame *f = NULL;
		const char *w = NULL;
		size_t used = 0;
		int r = wire_take_frame(dctx, data + off, size - off, &used, &f, &w);

		if (r <= 0)
			break;
		must(used > 0 && used <= size - off);
		off += used;
		decode(f);
		free(f);
	}
#if HAVE_ZSTD
	ZSTD_freeDCtx(dctx);
#endif
	return 0;
}
