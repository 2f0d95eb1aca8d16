#!/bin/bash
# sweep-sim's input is hostile too (issue 10): every trace reader bounds its
# line length and memory, and every out-of-range field is refused with
# "sweep-sim: FILE:LINE: what" and exit status 1, never accepted as nonsense.
set -euo pipefail
SIM=$BUILD_ROOT/utils/sweep-sim
work=$(mktemp -d "${TMPDIR:-/tmp}/sim-hostile.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_err FILE LINE PATTERN [sweep-sim args...]: exit 1 and one message naming FILE:LINE
expect_err() {
	local file=$1 line=$2 pat=$3 rc=0
	shift 3
	# bounded memory: 1 GiB of address space (not under ASan, which reserves terabytes of it)
	( [ -n "${SWEEP_SANITIZE:-}" ] || ulimit -v 1048576; timeout 60 "$SIM" replay "$@" "$file" ) >"$work/out" 2>"$work/err" || rc=$?
	[ $rc -eq 1 ] || fail "$file ($*): exit $rc, want 1: $(cat "$work/err")"
	grep -q "^sweep-sim: $file:$line: .*$pat" "$work/err" || fail "$file ($*): message '$(cat "$work/err")', want $file:$line: $pat"
	[ "$(wc -l <"$work/err")" -eq 1 ] || fail "$file: more than one message"
	[ ! -s "$work/out" ] || fail "$file: printed results"
}

# endless input without a newline: refused at the line bound, in bounded memory (1 GiB of address space)
expect_err /dev/zero 1 "line longer than 4096 bytes" --format plan
expect_err /dev/zero 1 "line longer than 4096 bytes"
head -c 100000 /dev/urandom | tr -d '\n' >"$work/noline"
expect_err "$work/noline" 1 "line longer than 4096 bytes" --format disksim
printf 'R 0 4096\nR 8\000 4096\n' >"$work/nul"
expect_err "$work/nul" 2 "NUL byte" --format plan
# a huge closed queue or device queue is refused before any memory is taken
rc=0; "$SIM" synth --queue 100000000 >/dev/null 2>"$work/err" || rc=$?
[ $rc -eq 2 ] && grep -q -- "--queue must be at most" "$work/err" || fail "synth --queue 100000000: rc $rc"
rc=0; "$SIM" synth --depth 4000000000 >/dev/null 2>"$work/err" || rc=$?
[ $rc -eq 2 ] && grep -q -- "--depth must be at most" "$work/err" || fail "synth --depth: rc $rc"
rc=0; "$SIM" synth --device eagle --sched wstf --max-response nan >/dev/null 2>"$work/err" || rc=$?
[ $rc -eq 2 ] || fail "--max-response nan: rc $rc"
rc=0; "$SIM" synth --device eagle --set rpm=inf >/dev/null 2>"$work/err" || rc=$?
[ $rc -eq 1 ] || fail "--set rpm=inf: rc $rc"

# every format, every kind of bad field: a good line first, the bad one on line 2
ok_tracefs='  dd-1 [000] ..... 1.000000: block_rq_issue: 7,0 R 4096 () 8 + 8 [dd]'
while IFS='|' read -r fmt good bad pat; do
	[ -n "$fmt" ] || continue
	printf '%s\n%s\n' "$good" "$bad" >"$work/t.$fmt"
	expect_err "$work/t.$fmt" 2 "$pat" --device eagle --format "$fmt"
done <<EOT
tracefs|$ok_tracefs|  dd-1 [000] ..... 2.000000: block_rq_issue: 7,0 R 4096 () -8 + 8 [dd]|sector: negative value
tracefs|$ok_tracefs|  dd-1 [000] ..... 2.000000: block_rq_issue: 7,0 R 4096 () 8 + 99999999999999999999 [dd]|sector count: value over 2^64-1
tracefs|$ok_tracefs|  dd-1 [000] ..... nan: block_rq_issue: 7,0 R 4096 () 8 + 8 [dd]|timestamp: not a time 'nan'
tracefs|$ok_tracefs|  dd-1 [000] ..... -1.5: block_rq_issue: 7,0 R 4096 () 8 + 8 [dd]|timestamp: negative time
tracefs|$ok_tracefs|  dd-1 [000] ..... 2.0: block_rq_issue: 7,0 R 4096 () 8 + 200000000 [dd]|longer than the device
tracefs|$ok_tracefs|  dd-1 [000] ..... 2.0: block_rq_issue: 7,0 R 4096 () 36028797018963968 + 8 [dd]|beyond 2^64 bytes
tracefs|$ok_tracefs|  <idle>-0 [000] ..s.. 0.999999: block_rq_complete: 7,0 R () 8 + 8 [0]|before its issue at 1.000000000 s
blkparse|  8,0 0 1 0.000000000 1 D R 8 + 8 [dd]|  8,0 0 2 inf 1 D R 8 + 8 [dd]|time: not a time 'inf'
blkparse|  8,0 0 1 0.000000000 1 D R 8 + 8 [dd]|  8,0 0 2 . 1 D R 8 + 8 [dd]|time: not a time '.'
blkparse|  8,0 0 1 0.000000000 1 D R 8 + 8 [dd]|  8,0 0 2 0.1 1 D R -8 + 8 [dd]|sector: negative value
blkparse|  8,0 0 1 0.000000000 1 D R 8 + 8 [dd]|  8,0 0 2 0.1 1 D R 8 + 18446744073709551616 [dd]|sector count: value over 2^64-1
blkparse|  8,0 0 1 0.000000000 1 D R 8 + 8 [dd]|  8,0 0 2 0.1 -1 D R 8 + 8 [dd]|pid: negative value
blkparse|  8,0 0 1 9.000000000 1 D R 8 + 8 [dd]|  8,0 0 2 0.5 0 C R 8 + 8 [0]|completion of sector 8 at 0.500000000 s, before its issue at 9.000000000 s
disksim|0.0 0 8 8 1|1.0 0 8 -8 1|size: negative value
disksim|0.0 0 8 8 1|1e999 0 8 8 1|time: not a time
disksim|0.0 0 8 8 1|1.0 0 8 8 xyz|flags: not a number
disksim|0.0 0 8 8 1|1.0 0 18446744073709551615 8 1|beyond 2^64 bytes
disksim|0.0 0 8 8 1|1.0 0 8 4000000000 1|longer than the device
disksim|0.0 0 8 8 1|1.0 0 8|want 5 fields
spc|0,8,4096,r,0.0|0,8,4096,r,-0.5|timestamp: negative time
spc|0,8,4096,r,0.0|0,8,4096,x,0.5|opcode: want r or w
spc|0,8,4096,r,0.0|0,8,-4096,r,0.5|size: negative value
spc|0,8,4096,r,0.0|4294967296,8,4096,r,0.5|ASU: value over 2^32-1
spc|0,8,4096,r,0.0|0,8,4096,r,nan|timestamp: not a time 'nan'
msr|128166372000000000,h,0,Read,0,4096,0|128166372000000001,h,0,Read,-4096,4096,0|offset: negative value
msr|128166372000000000,h,0,Read,0,4096,0|128166372000000001,h,0,Fetch,0,4096,0|type: want Read or Write
msr|128166372000000000,h,0,Read,0,4096,0|999999999999999999999,h,0,Read,0,4096,0|timestamp: value over 2^64-1
msr|128166372000000000,h,0,Read,0,4096,0|128166372000000001,h,0,Read,0,99999999999999,0|longer than the device
plan|R 0 4096 1|R 18446744073709551615 4096 1|beyond 2^64 bytes
plan|R 0 4096 1|X 0 4096 1|operation: want R or W
plan|R 0 4096 1|R 0 1e3 1|length: not a number
EOT

# a run past the model's clock (2^63 ns) fails instead of wrapping: a write acknowledged at 9.2e18 ns
# over a bus of 1e-12 MB/s (4e18 ns)
printf '0 0 0 8 1\n9199999999999 0 0 8 0\n' >"$work/far"
rc=0; "$SIM" replay --device hdd7200 --set bus_mb_s=1e-12 --format disksim "$work/far" >/dev/null 2>"$work/err" || rc=$?
[ $rc -eq 1 ] && grep -q "^sweep-sim: hdd7200/fcfs: Value too large" "$work/err" || fail "past 2^63 ns: rc $rc: $(cat "$work/err")"

# issue 32: nothing past the end of the device passes in silence. An offset past the end is an error
# (it used to wrap around), --no-wrap says so explicitly, and only --wrap folds a bigger disk's trace.
printf 'R 0 4096\nR 1000000000000 4096\n' >"$work/wrap"
expect_err "$work/wrap" 2 "past the end of the device" --device eagle
expect_err "$work/wrap" 2 "past the end of the device" --device eagle --no-wrap
"$SIM" replay --device eagle --wrap --json "$work/wrap" >"$work/out" || fail "--wrap replay failed"
grep -q '"requests": 2,' "$work/out" || fail "--wrap: $(cat "$work/out")"
# a 1 PB offset on the 500 GB hdd7200, and an SSD write that crosses the end of the 16 GiB device
printf 'W 1125899906842624 4096\n' >"$work/pb"
expect_err "$work/pb" 1 "past the end of the device" --device hdd7200
printf 'W 17179865088 8192\n' >"$work/cross"
expect_err "$work/cross" 1 "past the end of the device" --device ssd-pagemap
# a read or write of no bytes is refused where the format cannot mean a flush
printf 'R 0 4096\nR 8192 0\n' >"$work/zero"
expect_err "$work/zero" 2 "length 0" --format plan
printf '0,8,4096,r,0.0\n0,16,0,w,0.1\n' >"$work/zero.spc"
expect_err "$work/zero.spc" 2 "length 0" --format spc
# issue 27: memory and time bounded per request, not per device. 20 whole-device writes 1 ms apart on
# ssd-pagemap (each booked a channel interval per page into the future: 200 of them took 3.9 GB) in 1 GiB
# of address space, and 1,000 whole-device reads on ssd-blockmap (minutes, page by page)
for i in $(seq 20); do echo "0,0,17179869184,w,0.0$i"; done >"$work/whole.spc"
( [ -n "${SWEEP_SANITIZE:-}" ] || ulimit -v 1048576; "$SIM" replay --device ssd-pagemap --json "$work/whole.spc" ) \
	>"$work/out" 2>"$work/err" || fail "whole-device writes: $(cat "$work/err")"
grep -q '"writes": 20,' "$work/out" || fail "whole-device writes: $(cat "$work/out")"
for i in $(seq 1000); do echo "R 0 17179869184"; done >"$work/whole.plan"
"$SIM" replay --device ssd-blockmap --json "$work/whole.plan" >"$work/out" || fail "whole-device reads"
grep -q '"reads": 1000,' "$work/out" || fail "whole-device reads: $(cat "$work/out")"

# the command line: no run of zero requests, no request of zero bytes, --wrap only for traces
for args in "synth --requests 0" "synth --size 0" "synth --size 1000" "synth --wrap" \
	"replay --wrap --no-wrap $work/wrap"; do
	rc=0; "$SIM" $args >/dev/null 2>"$work/err" || rc=$?
	[ $rc -eq 2 ] && [ -s "$work/err" ] || fail "$args: rc $rc, want 2 and a message"
done
echo ok
