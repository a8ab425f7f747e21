const dayjs = require('dayjs');
dayjs.extend(require('dayjs/plugin/utc'));
dayjs.extend(require('dayjs/plugin/relativeTime'));
const d = dayjs.utc('2024-02-29T13:45:00Z');
console.log(d.format('YYYY-MM-DD HH:mm dddd'), d.add(1, 'year').format(), d.diff(dayjs.utc('2024-01-01'), 'day'), d.from(dayjs.utc('2024-03-10')));
