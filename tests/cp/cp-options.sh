#!/bin/bash
# SPDX-License-Identifier: MIT
# GNU cp's options for scripts (issue 28): -i, -l, -s, --parents, -b,
# --backup, -S/--suffix, -f, --remove-destination, --attributes-only,
# --copy-contents, --strip-trailing-slashes, long options abbreviated as
# cp reads them. Each case runs GNU cp and sweep-cp on the same setup and
# compares the trees, stdout, stderr and exit status (lib.sh case_as_cp),
# hostile cases included: links onto existing files, a backup where a
# directory stands, -i with nothing to answer on stdin or stdin closed,
# --parents with '..' components.
. "$TESTS_DIR/cp/lib.sh"

note "-l and -s: new names, existing ones (refused without -f, replaced with it), the file itself"
for opt in -l -s; do
	case_as_cp 'echo a >f' $opt f g
	case_as_cp 'echo a >f; echo b >g' $opt f g
	case_as_cp 'echo a >f; echo b >g' $opt -f f g
	case_as_cp 'echo a >f; echo b >g' $opt --remove-destination f g
	case_as_cp 'echo a >f; mkdir g' $opt f g
	case_as_cp 'echo a >f; mkdir g; echo b >g/f' $opt f g
	case_as_cp 'echo a >f; mkdir g; echo b >g/f' $opt -f f g
	case_as_cp 'echo a >f' $opt f f
	case_as_cp 'echo a >f' $opt -f f f
	case_as_cp 'mkdir -p d/e; echo a >d/e/g' -r $opt d c
	case_as_cp 'mkdir -p d/e; echo a >d/e/g; ln -s g d/e/sl' -r $opt @PWD@/d c
	case_as_cp 'echo a >f; ln -s f sl; echo b >g' $opt -f sl g
	case_as_cp 'echo a >f; mkdir x' $opt -b f x/f
done
case_as_cp 'echo a >f' -l -s f g
case_as_cp 'mkdir d; echo a >d/f' -s d/f e
case_as_cp 'mkdir d e; echo a >d/f' -s d/f e/
case_as_cp 'mkdir d; echo a >d/f' -s @PWD@/nowhere/../d/f g
case_as_cp 'mkdir d; echo a >d/f' -s @PWD@/d/f g
case_as_cp 'mkdir d e; echo a >d/f' -s @PWD@/d/f e
case_as_cp 'echo a >f; ln f g' -l f g
case_as_cp 'echo a >f; ln -s f sl' -l sl g
case_as_cp 'echo a >f; ln -s f sl' -lP sl g

note "--backup, -b, -S: simple, numbered, existing, the environment, a directory where a file stands"
case_as_cp 'echo a >f; echo b >g' -b f g
case_as_cp 'echo a >f; echo b >g' --backup=numbered f g
case_as_cp 'echo a >f; echo b >g; echo c >g.~1~; echo d >g.~7~' --backup=numbered f g
case_as_cp 'echo a >f; echo b >g; echo c >g.~2~' --backup=existing f g
case_as_cp 'echo a >f; echo b >g; echo c >g~' --backup=simple f g
case_as_cp 'echo a >f; echo b >g' -S .bak f g
case_as_cp 'echo a >f; echo b >g' --suffix=.old -v f g
case_as_cp 'echo a >f; echo b >g' --backup=bogus f g
case_as_cp 'echo a >f; echo b >g' --backup=n f g
case_as_cp 'echo a >f; echo b >g' --backup=nu f g
case_as_cp 'echo a >f; echo b >g' --backup=none f g
case_as_cp 'echo a >f; echo b >g' -b -n f g
case_as_cp 'echo a >f; echo b >g' -bv f g
case_as_cp 'echo a >f; echo b >g' --b=simple f g
case_as_cp 'echo a >f' -b f f
case_as_cp 'echo a >f' -bf f f
case_as_cp 'echo a >f' --backup=numbered -f f f
case_as_cp 'mkdir -p d/x g/d; echo a >d/x/f; echo b >g/d/x' -rb d g
case_as_cp 'mkdir -p d g/d/x; echo a >d/x; echo b >g/d/x/f' -rb d g
case_as_cp 'mkdir -p d/x g/d/x; echo a >d/x/f; echo b >g/d/x/f' -rb d g
case_as_cp 'mkdir -p d/x g/d/x; echo a >d/x/f; echo b >g/d/x/f' -r --backup=t d g
case_as_cp 'echo a >f; ln -s f g' -b f g
case_as_cp 'echo a >f; echo b >g' -b -S / f g
VERSION_CONTROL=numbered case_as_cp 'echo a >f; echo b >g' -b f g
VERSION_CONTROL=never case_as_cp 'echo a >f; echo b >g' -b f g
VERSION_CONTROL=junk case_as_cp 'echo a >f; echo b >g' -b f g
VERSION_CONTROL=numbered case_as_cp 'echo a >f; echo b >g' f g
SIMPLE_BACKUP_SUFFIX=.orig case_as_cp 'echo a >f; echo b >g' -b f g

note "-i: the question on stderr, yes and no and nothing on stdin, stdin closed; -i against -n"
for answer in $'y\n' $'n\n' '' 'yes' $'Y\nn\n' closed; do
	CASE_STDIN=$answer case_as_cp 'echo a >f; echo b >g' -i f g
	CASE_STDIN=$answer case_as_cp 'echo a >f; echo b >g; chmod 444 g' -i f g
	# (stdin closed, cp's message depends on which file of its own got fd 0)
	[ "$answer" = closed ] || CASE_STDIN=$answer case_as_cp 'mkdir d e; echo a >d/f; echo b >d/g; echo c >e/f' -ri d/. e
done
CASE_STDIN=$'y\n' case_as_cp 'echo a >f; echo b >g' -in f g
CASE_STDIN=$'y\n' case_as_cp 'echo a >f; echo b >g' -ni f g
CASE_STDIN=$'y\n' case_as_cp 'echo a >f; echo b >g' -il f g
CASE_STDIN=$'n\n' case_as_cp 'echo a >f; echo b >g' -is f g
CASE_STDIN=$'y\n' case_as_cp 'echo a >f; echo b >g' -ib f g
CASE_STDIN=$'y\n' case_as_cp 'echo a >f' -i f g

note "--parents: the path below the directory, '..' and absolute components, a file on the way"
case_as_cp 'mkdir -p a/b d; echo x >a/b/f' --parents a/b/f d
case_as_cp 'mkdir -p a/b d; echo x >a/b/f' --parents -v a/b/f d
case_as_cp 'mkdir -p a/b d; echo x >a/b/f; chmod 700 a/b' --parents -p a/b/f d
case_as_cp 'mkdir -p a/b d; echo x >a/b/f' --parents -r a d
case_as_cp 'mkdir -p a/b d; echo x >a/b/f' --parents a/b/f d/x
case_as_cp 'mkdir -p a/b d; echo x >a/b/f' --parents a/b/f a/b/f
case_as_cp 'mkdir -p a/b d/a; echo x >a/b/f; echo y >d/a/b' --parents a/b/f d
case_as_cp 'mkdir -p a/b w/d; echo x >a/b/f' --parents ../a/b/f d
case_as_cp 'mkdir -p a/b d; echo x >a/b/f' --parents a/../a/b/f d
case_as_cp 'mkdir -p a/b d; echo x >a/b/f' --parents a/b/../b/f d
case_as_cp 'mkdir -p a/b d; echo x >a/b/f' --parents a//b/f d
case_as_cp 'mkdir -p a/b d; echo x >a/b/f' --parents a/b/f/ d
case_as_cp 'mkdir -p a/b d; echo x >a/b/f' --parents -t d a/b/f
# (coreutils' parent-perm.sh: with -p, directories already there get the source's mode)
for p in -p '' --preserve=mode -a; do
	case_as_cp 'mkdir -p a/b/c a/b/d e; touch a/b/c/foo a/b/d/foo; mkdir -p e/a/b/c; chmod g-rx e/a e/a/b; chmod 700 a/b/d' \
		$p --parents a/b/d/foo e
done
case_as_cp 'mkdir d; echo x >f' --parents @PWD@/f d

note "--attributes-only, --copy-contents, --strip-trailing-slashes, abbreviations"
case_as_cp 'echo abc >f; chmod 600 f; echo defgh >g' --attributes-only -p f g
case_as_cp 'echo abc >f' --attributes-only f g
# (coreutils 9's attr-existing.sh: nothing existing is removed, a link to it stays one)
case_as_cp 'printf 1 >file1; printf 2 >file2; ln file2 link2' -a --attributes-only file1 file2
case_as_cp 'printf 1 >file1; printf 2 >file2; ln -s file1 sym1' -a --attributes-only sym1 file2
case_as_cp 'printf 1 >file1; printf 2 >file2; ln -s file1 sym1' -a --remove-destination --attributes-only sym1 file2
case_as_cp 'printf 1 >file1; printf 2 >file2; ln -s file1 sym1' -a -b --attributes-only sym1 file2
is_root && case_as_cp 'mkdir d; mknod d/n c 1 3; echo x >d/f' -r --copy-contents d e
case_as_cp 'mkdir d; echo x >d/f' --strip-trailing-slashes -r d/// e
case_as_cp 'echo a >f; echo b >g' --rem f g
case_as_cp 'echo a >f; echo b >g' --re f g
case_as_cp 'echo a >f; echo b >g' --no f g
case_as_cp 'echo a >f; echo b >g' --interac f g
case_as_cp 'echo a >f; echo b >g' --sym f h
case_as_cp 'echo a >f' --lin f h
finish
