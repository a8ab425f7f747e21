# stderr: unstable (network errors differ: the built-in has no network)
git init -q src
(cd src && echo a > a && git add a && git commit -q -m a)
git clone -q src dst
git clone src dst; echo "exit $?"
git clone nowhere x; echo "exit $?"
