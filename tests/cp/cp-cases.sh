#!/bin/bash
# SPDX-License-Identifier: MIT
# cp's behaviour case by case, each with a setup of its own: GNU cp and
# sweep-cp run with the same arguments in two copies of the setup; the
# resulting trees (type, mode, size, links, symlink target, contents),
# stdout, stderr (program name swapped) and exit status must be the same.
# The cases are the defects of issue 27 and what coreutils' tests/cp
# catches (the test's name is given where one does).
. "$TESTS_DIR/cp/lib.sh"

note "a symlink copied onto the file it names: 'the same file', nothing destroyed (defect 2)"
for opt in -a -d -P -rP "--remove-destination -P"; do
	# shellcheck disable=SC2086
	case_as_cp 'mkdir d; echo data >d/f; ln -s f d/sl' $opt d/sl d/f
done
case_as_cp 'mkdir d s; echo data >d/f; ln -s ../d/f s/f' -a s/f d/
case_as_cp 'mkdir -p d/s s; echo data >d/s/f; ln -s ../d/s/f s/f' -a s d/
case_as_cp 'echo data >f; ln -s f sl; ln -s f sl2' -a sl sl2
case_as_cp 'echo data >f; ln f h' -a f h

note "nothing written through a symlink made by an earlier operand (defect 10, tests/cp/abuse.sh)"
case_as_cp 'mkdir a b c; ln -s ../t a/1; echo payload >b/1; echo orig >t' -dR a/1 b/1 c
case_as_cp 'mkdir a b c; ln -s ../t a/1; echo payload >b/1' -dR a/1 b/1 c
case_as_cp 'mkdir a b c; ln -s ../t a/1; echo payload >b/1; echo orig >t' -dR --remove-destination a/1 b/1 c
case_as_cp 'mkdir a b c; echo 1 >a/x; echo 2 >b/x' a/x b/x c
case_as_cp 'mkdir a b c; ln -s ../t a/1; ln -s ../u b/1' -d a/1 b/1 c
case_as_cp 'mkdir -p a/d b/d c; echo 1 >a/d/x; echo 2 >b/d/y' -r a/d b/d c
# one name in two merged directories: the later operand's replaces the earlier's (-n: left alone), whichever
# of them lies first on the disk (b's is written first here)
for opt in -a -an; do
	case_as_cp 'mkdir -p a/d/s b/d/s c; echo 2 >b/d/s/x; sync; echo 1 >a/d/s/x; echo 3 >b/d/s/z' $opt a/d b/d c
done
case_as_cp 'mkdir c; echo 1 >a' a a c
case_as_cp 'mkdir c; echo 1 >a' a ./a c
case_as_cp 'mkdir c d; echo 1 >a; ln a d/a' a d/a c

note "hard links: kept where cp keeps them (defect 13, tests/cp/link-preserve.sh)"
case_as_cp 'mkdir c; echo 1 >a; ln -s a b' --preserve=links -R -H a b c
case_as_cp 'mkdir d; (cd d && touch a && ln -s a b)' --preserve=links -R -L d c
case_as_cp 'mkdir d; (cd d && touch a && ln a b)' --preserve=links -R -L d c
case_as_cp 'mkdir d; (cd d && touch a && ln a b)' -dR --no-preserve=links d c
case_as_cp 'mkdir c; touch a; ln a b' -d a b c

note "--no-preserve=mode: new copies get the default modes (defect 14, tests/cp/preserve-mode.sh)"
case_as_cp 'echo m >m; chmod 600 m' --no-preserve=mode m m1
case_as_cp 'echo m >m; chmod 731 m' -a --no-preserve=mode m m1
case_as_cp 'echo m >m; chmod 731 m; echo x >m1; chmod 600 m1' --no-preserve=mode m m1
case_as_cp 'mkdir -p d/e; echo m >d/m; chmod 600 d/m; chmod 700 d/e; mkfifo d/p; chmod 600 d/p' -r --no-preserve=mode d out
case_as_cp 'mkdir -p d/e; chmod 2700 d/e' -r --no-preserve=all d out
case_as_cp 'echo m >m; chmod 731 m' --no-preserve=mode -p m m1

note "--preserve=context without SELinux: refused as cp refuses it (defect 15)"
case_as_cp 'echo m >m' --preserve=context m m1
case_as_cp 'echo m >m' -a --preserve=context m m1
case_as_cp 'echo m >m' --preserve=context --no-preserve=context m m1

note "a file of holes stays holes (defect 3)"
for opts in "-a" "" "--reflink=never" "--sparse=always"; do
	rm -rf "$CP_TMP/holes"
	mkdir "$CP_TMP/holes" && truncate -s 64M "$CP_TMP/holes/src" || die "truncate"
	# shellcheck disable=SC2086
	cp $opts "$CP_TMP/holes/src" "$CP_TMP/holes/gnu" && "$SWEEP_CP" $opts "$CP_TMP/holes/src" "$CP_TMP/holes/sweep" ||
		die "copy of a file of holes"
	check "cp $opts of 64M of holes: size kept" [ "$(stat -c %s "$CP_TMP/holes/sweep")" = 67108864 ]
	check "cp $opts of 64M of holes: as many blocks as GNU cp's ($(stat -c %b "$CP_TMP/holes/gnu"))" \
		[ "$(stat -c %b "$CP_TMP/holes/sweep")" = "$(stat -c %b "$CP_TMP/holes/gnu")" ]
done

note "-au into an existing tree keeps a hard-link group one inode (defect 13, tests/cp/preserve-link.sh)"
for first in f linkm; do
	rm -rf "$CP_TMP/pl" && mkdir -p "$CP_TMP/pl/s" "$CP_TMP/pl/t/s" || die "mkdir"
	(
		cd "$CP_TMP/pl" || exit 1
		touch s/f && ln s/f s/linkm && ln s/f s/linke && ln s/f s/fileo && ln s/f s/fileu &&
			touch "t/s/$first" && ln "t/s/$first" t/s/linke && touch -d '-1 hour' t/s/fileo &&
			touch -d '+1 hour' t/s/fileu
	) || die "setup"
	"$SWEEP_CP" -au "$CP_TMP/pl/s" "$CP_TMP/pl/t" || fail "-au exit status"
	n=$(cd "$CP_TMP/pl/t/s" && stat -c %i f linkm linke fileo fileu | sort -u | wc -l)
	check "-au, $first already in the tree: the five names are one inode (got $n)" [ "$n" = 1 ]
done

note "an existing FIFO or device as the destination is written into, not replaced (defect 11, tests/cp/sparse-to-pipe.sh)"
# (never -a or -p through a link to the real /dev/null: GNU cp would give it the file's mode and times)
case_as_cp 'echo hi >f; ln -s /dev/null n' f n
case_as_cp 'echo hi >f; ln -s /dev/null n' --remove-destination f n
if is_root; then
	case_as_cp 'echo hi >f; mknod n c 1 3' f n
	case_as_cp 'echo hi >f; mknod n c 1 3' -a f n
	case_as_cp 'mkdir d; echo hi >d/f; mkdir o; mknod o/f c 1 3' -r d/f o
else
	skip_part "a device made with mknod needs root"
fi
for tool in cp "$SWEEP_CP"; do
	for what in sparse data; do
		rm -rf "$CP_TMP/pipe" && mkdir "$CP_TMP/pipe" && mkfifo "$CP_TMP/pipe/p" || die "mkfifo"
		if [ $what = sparse ]; then truncate -s 1M "$CP_TMP/pipe/src"; else seq 1 20000 >"$CP_TMP/pipe/src"; fi
		timeout 20 cat "$CP_TMP/pipe/p" >"$CP_TMP/pipe/out" &
		reader=$!
		"$tool" "$CP_TMP/pipe/src" "$CP_TMP/pipe/p" || fail "$(basename "$tool") $what file into a FIFO: exit status"
		wait $reader
		check "$(basename "$tool"): a $what file into a FIFO: the reader gets its bytes" \
			cmp -s "$CP_TMP/pipe/src" "$CP_TMP/pipe/out"
		check "$(basename "$tool"): a $what file into a FIFO: the FIFO stays one" [ -p "$CP_TMP/pipe/p" ]
	done
done

note "a file is read to its end, whatever its size said (defect 12, tests/cp/proc-zero-len.sh, proc-short-read.sh)"
# /proc/cpuinfo says 0 bytes; compared without the lines that change between reads
"$SWEEP_CP" /proc/cpuinfo "$CP_TMP/cpuinfo" || fail "cp /proc/cpuinfo: exit status"
check "/proc/cpuinfo (size 0): its content copied, as cat reads it" \
	cmp -s <(sed '/MHz/d; /bogomips/d' /proc/cpuinfo) <(sed '/MHz/d; /bogomips/d' "$CP_TMP/cpuinfo")
# larger than a page, as proc-short-read.sh wants
big=/proc/self/mountinfo
for f in /proc/kallsyms /proc/modules; do
	[ -r "$f" ] && [ "$(wc -c <"$f")" -gt 8192 ] && { big=$f; break; }
done
if [ "$big" != /proc/self/mountinfo ]; then
	# (as cat reads it just before or just after: a module loaded meanwhile changes it)
	cat "$big" >"$CP_TMP/big.before"
	"$SWEEP_CP" "$big" "$CP_TMP/big" || fail "cp $big: exit status"
	cat "$big" >"$CP_TMP/big.after"
	check "$big ($(wc -c <"$CP_TMP/big.after") bytes, size 0): all of it, as cat reads it" \
		eval 'cmp -s "$CP_TMP/big.before" "$CP_TMP/big" || cmp -s "$CP_TMP/big.after" "$CP_TMP/big"'
else
	skip_part "no /proc file larger than two pages"
fi
# a sysfs attribute says 4096 and holds a line
sysf=$(find /sys/class/net/lo/ -maxdepth 1 -name address 2>/dev/null)
if [ -n "$sysf" ] && [ "$(stat -c %s "$sysf")" != "$(wc -c <"$sysf")" ]; then
	cp "$sysf" "$CP_TMP/sys.gnu" && "$SWEEP_CP" "$sysf" "$CP_TMP/sys.sweep" || fail "cp $sysf: exit status"
	check "$sysf (size $(stat -c %s "$sysf"), $(wc -c <"$sysf") bytes): the bytes it holds, as GNU cp" \
		cmp -s "$CP_TMP/sys.gnu" "$CP_TMP/sys.sweep"
else
	skip_part "no sysfs file whose size is not its content"
fi
# a file that grows while it is read: the copy has what was there at its end (cp reads to EOF)
. "$TESTS_DIR/common/hooks.sh"
if have_hooks; then
	for mode in thread serial; do
		rm -rf "$CP_TMP/grow" && mkdir "$CP_TMP/grow" || die "mkdir"
		head -c $((3 << 20)) /dev/urandom >"$CP_TMP/grow/f"
		# paused once the file is open: its planned reads (3 whole buffers) may be done, not the read past them
		if SWEEP_TEST_COPY=$mode pause_at read:1 "$SWEEP_CP" "$CP_TMP/grow/f" "$CP_TMP/grow/copy"; then
			printf 'appended while read\n' >>"$CP_TMP/grow/f"
			resume || fail "$mode: a file that grew: exit status"
			check "$mode copies: a file that grew while read is copied to its new end" \
				cmp -s "$CP_TMP/grow/f" "$CP_TMP/grow/copy"
		else
			fail "$mode: did not pause at read:1"
		fi
	done
else
	skip_part "a file growing mid-copy needs the pause points (-Dtest_hooks=true)"
fi

finish
