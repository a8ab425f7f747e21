git init -q
printf 'line1\nline2\nline3\nline4\nline5\nline6\nline7\nline8\nline9\nline10\n' > f.txt
git add f.txt
git commit -q -m base
printf 'line1\nline2\nchanged3\nline4\nline5\nline6\nline7\nline8\nline9\nline10\nline11\n' > f.txt
git commit -q -am edit
git log -p
