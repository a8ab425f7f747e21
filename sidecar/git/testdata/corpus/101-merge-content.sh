git init -q -b main
seq 1 12 > f && printf 'x\ny\nz\n' > same && printf 'no newline' > tail && git add . && git commit -q -m base
git checkout -q -b topic
sed -i 's/^10$/ten/' f && sed -i 's/^y$/Y/' same && printf 'no newline\nmore' > tail && git commit -q -am topic
git checkout -q main
sed -i 's/^2$/two/; s/^3$/three/' f && sed -i 's/^y$/Y/' same && echo new > g && git add g && git commit -q -am main
git merge topic; echo "exit $?"
cat f same tail
git log --format='%s %p' --all
git diff --stat HEAD~1 HEAD
