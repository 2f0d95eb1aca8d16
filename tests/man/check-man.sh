#!/bin/bash
# check-man.sh LIB MANDIR: every symbol LIB exports has a man3 page and is in
# the sweep_ namespace.
# check-man.sh --render MANDIR: every page renders with man(1) without warnings
# (two at a time).
# check-man.sh --listed MANDIR: every page is in MANDIR/meson.build's install list.
set -u
if [ "$1" = --render ]; then
	ls "$2"/man*/*.[0-9] | xargs -P 2 -n 8 sh -c '
		for page; do
			if ! out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings=w -l "$page" 2>&1 >/dev/null); then
				echo "man cannot render $page"; exit 1
			elif [ -n "$out" ]; then
				echo "warnings rendering $page:"; echo "$out"; exit 1
			fi
		done' sh || exit 1
	echo "rendered $(ls "$2"/man*/*.[0-9] | wc -l) pages"
	exit 0
fi
if [ "$1" = --listed ]; then
	# Every page in the tree is installed: man/meson.build names each one.
	fail=0
	for page in "$2"/man*/*.[0-9]; do
		rel=${page#"$2"/}
		grep -qF "'$rel'" "$2/meson.build" || { echo "not installed (add it to man/meson.build): $rel"; fail=1; }
	done
	[ $fail = 0 ] && echo "every page is listed in man/meson.build"
	exit $fail
fi
lib=$1 mandir=$2
fail=0
syms=$(nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | sed 's/@.*//' | sort -u)
[ -n "$syms" ] || { echo "no exported symbols found in $lib"; exit 1; }
n=0
for s in $syms; do
	n=$((n + 1))
	if [ ! -f "$mandir/man3/$s.3" ]; then
		echo "missing man page: man3/$s.3"
		fail=1
	fi
done
for s in $(nm -D --defined-only "$lib" | awk '{ print $3 }' | sed 's/@.*//' | sort -u); do
	case $s in sweep_*|SWEEP_*) ;; *) echo "exported symbol outside the sweep_ namespace: $s"; fail=1 ;; esac
done
echo "checked $n exported symbols"
exit $fail
