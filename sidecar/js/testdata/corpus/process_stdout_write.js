process.stdout.write('no newline'); process.stdout.write(' then\n'); process.stderr.write('err\n')
