git init -q
echo '#!/bin/sh' > run.sh && git add . && git commit -q -m init
chmod +x run.sh
git status -s
git diff
git commit -am 'make executable'
git ls-files -s
git log --summary --format=%s
