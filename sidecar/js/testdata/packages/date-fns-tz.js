// date-fns-tz converts between zones through Intl.DateTimeFormat's
// formatToParts (hourCycle h23, timeZone, timeZoneName).
const { formatInTimeZone, toZonedTime, fromZonedTime, getTimezoneOffset } = require('date-fns-tz');
const { format, addDays } = require('date-fns');
const d = new Date(Date.UTC(2026, 2, 8, 6, 59, 30));
for (const tz of ['UTC', 'America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'Australia/Sydney', 'America/Los_Angeles']) {
  console.log(tz, formatInTimeZone(d, tz, 'yyyy-MM-dd HH:mm:ss XXX'), formatInTimeZone(addDays(d, 120), tz, 'PPpp'), getTimezoneOffset(tz, d) / 60000);
  console.log(format(toZonedTime(d, tz), 'yyyy-MM-dd HH:mm'), fromZonedTime('2026-03-08 02:30', tz).toISOString());
}
