git init -q
echo one > f
git add f
git commit -q -m one
echo two >> f
git commit -q -a -m 'two

with a body line'
git log
git log --oneline
git log -n 1
git log -1 --format='%H %h %T %t %P %p %an <%ae> %ad %s'
