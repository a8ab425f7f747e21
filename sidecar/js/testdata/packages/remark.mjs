import { unified } from 'unified';
import remarkParse from 'remark-parse';
import remarkGfm from 'remark-gfm';
import remarkHtml from 'remark-html';
import { writeFileSync } from 'node:fs';
const file = await unified().use(remarkParse).use(remarkGfm).use(remarkHtml).process('# Hello\n\n~~gone~~ and a [link](https://x.org).\n\n- [x] done\n- [ ] todo\n');
writeFileSync('out.html', String(file));
console.log(String(file));
