// luxon formats and computes zones through Intl.DateTimeFormat and
// Intl.NumberFormat.
const { DateTime, Duration, Interval, Info } = require('luxon');
const dt = DateTime.fromISO('2026-12-02T13:04:05.067Z', { zone: 'utc' });
console.log(dt.toISO(), dt.toLocaleString(), dt.toLocaleString(DateTime.DATETIME_FULL), dt.toLocaleString(DateTime.DATE_HUGE), dt.toLocaleString(DateTime.TIME_SIMPLE));
console.log(dt.setZone('America/New_York').toFormat('yyyy-MM-dd HH:mm ZZZZ'), dt.setZone('Asia/Kolkata').toString(), dt.setZone('Europe/Paris').offset);
console.log(dt.toFormat('DDDD t'), dt.toFormat('ff'), dt.plus({ months: 3 }).setZone('America/Los_Angeles').toLocaleString(DateTime.DATETIME_MED));
console.log(Duration.fromObject({ hours: 26, minutes: 5 }).shiftTo('days', 'hours', 'minutes').toObject(), Interval.fromDateTimes(dt, dt.plus({ days: 10 })).length('days'));
console.log(Info.months('long').slice(0, 3), Info.weekdays('short'), DateTime.fromFormat('12/25/2026 9:15 PM', 'MM/dd/yyyy h:mm a', { zone: 'utc' }).toISO());
