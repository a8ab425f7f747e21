git init -q
i=1
while [ $i -le 40 ]; do echo "line $i"; i=$((i+1)); done > big.txt
git add big.txt && git commit -q -m base
sed -e 's/^line 5$/LINE FIVE/' -e 's/^line 20$/LINE TWENTY/' -e 's/^line 23$/LINE 23/' -e '/^line 40$/d' big.txt > tmp && mv tmp big.txt
git diff
git diff --stat
