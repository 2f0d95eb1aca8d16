#!/bin/bash
# SPDX-License-Identifier: MIT
# A directory of more than 100,000 entries: fts reads it in batches of
# 100,000 and sorts each batch of more than 10,000 by inode on its own
# (gnulib fts_build), so its output order is neither readdir order nor inode
# order. sweep-du must reproduce it (and does so for every walk order).
set -u
. "$TESTS_DIR/du/lib.sh"

mkdir "$DU_TMP/huge"
cd "$DU_TMP/huge" || die "cd"
seq -f 'h%06g' 1 100500 | xargs touch
mkdir zz && head -c 10000 /dev/zero >zz/data
ln h000001 zz/link
cd "$DU_TMP" || die "cd"
du_same -a huge
du_same -s --inodes huge
"$SWEEP_DU" -a --order=none huge >"$DU_TMP/none.out"
du -a huge >"$DU_TMP/du.out"
check "--order=none: the same lines as du" cmp -s "$DU_TMP/du.out" "$DU_TMP/none.out"
finish
