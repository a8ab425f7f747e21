# stderr: unstable (git names the host in its identity error)
unset GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
git init -q
echo a > a && git add a
git commit -m a; echo "exit $?"
git config user.name 'Repo User'
git config user.email repo@example.com
git commit -m a
git log --format='%an <%ae> %cn <%ce>'
