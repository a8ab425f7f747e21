git init -q
echo a > a && git add a
git commit -q -m '

  leading blank lines   

trailing spaces   


double blank


'
git log --format='[%B]'
git commit --allow-empty -m '   '; echo "exit $?"
