git init -q
echo a > a && git add a && git commit -q -m a
echo b > a && git commit -q -am b
git rev-parse HEAD
git rev-parse --short HEAD
git rev-parse HEAD~1
git rev-parse --abbrev-ref HEAD
git rev-parse --show-toplevel
git rev-parse --is-inside-work-tree
git rev-parse --git-dir
mkdir sub && cd sub && git rev-parse --show-prefix && git rev-parse --show-toplevel
