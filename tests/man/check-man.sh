#!/bin/bash
# Every symbol libsweep exports must have a man3 page, every tool a man1 page,
# and every page must be well-formed enough for man(1) to render without warnings.
set -u
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
for page in "$mandir"/man*/*.[0-9]; do
	[ -e "$page" ] || continue
	if ! out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings=w -l "$page" 2>&1 >/dev/null); then
		echo "man cannot render $page"; fail=1
	elif [ -n "$out" ]; then
		echo "warnings rendering $page:"; echo "$out"; fail=1
	fi
done
echo "checked $n exported symbols"
exit $fail
