console.log(['it\'s', 'say "hi"', 'both \' "', 'nl\nx'])
