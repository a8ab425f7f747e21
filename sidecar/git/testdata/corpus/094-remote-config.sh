git init -q
git commit -q --allow-empty -m one
git remote
git remote add origin https://example.com/a.git
git remote add origin x; echo "exit $?"
git remote add up ../up
git remote add 'bad name' x; echo "exit $?"
git remote
git remote -v
git remote get-url up
git remote set-url up ../other
git remote -v
git config --get remote.up.url
git config --get-all remote.origin.fetch
git config branch.master.remote up
git config branch.master.merge refs/heads/master
git config --list
git config --local --list
git config --get core.bare
git config --get Core.Bare
git config --get nope.key; echo "exit $?"
git config --get nokey; echo "exit $?"
git config --add multi.key one
git config --add multi.key two
git config multi.key
git config --get multi.key
git config --get-all multi.key
git remote remove nope; echo "exit $?"
git remote remove up
git remote -v
git config --list
git -c extra.key=1 config --get extra.key
cat .git/config
git remote rm origin
git config --list
git config core.bare true
git config --list
git config core.bare false
git config user.name X
git config --list
cat .git/config
