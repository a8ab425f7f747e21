git init -q empty
git clone empty e2
cd e2 && git status
