git init -q
echo keep > debug.log
git add debug.log && git commit -q -m 'tracked log'
echo '*.log' > .gitignore
echo more >> debug.log
echo other > other.log
git status -s
git add .gitignore debug.log
git status -s
git commit -q -m 'ignore logs'
git status
