git init -q
git commit -m empty; echo "exit $?"
echo x > x
git commit -m untracked; echo "exit $?"
git add x
git commit -q -m x
git commit -m again; echo "exit $?"
echo y > x
git commit -m unstaged; echo "exit $?"
