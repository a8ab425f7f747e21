git init -q src
(cd src && echo a > a && git add a && git commit -q -m a)
git clone -q src dst
cd dst
echo b > b && git add b && git commit -q -m b
git status
git status -sb
