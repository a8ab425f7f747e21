import pLimit from 'p-limit';
const limit = pLimit(2);
let running = 0, peak = 0;
const job = (i) => limit(async () => { running++; peak = Math.max(peak, running); await new Promise(r => setTimeout(r, 5)); running--; return i * 2; });
console.log(await Promise.all([1, 2, 3, 4, 5].map(job)), peak, limit.activeCount, limit.pendingCount);
