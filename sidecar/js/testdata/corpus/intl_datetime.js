// Intl.DateTimeFormat and Date's toLocale*String in en-US: the patterns
// ICU picks for each set of fields, styles, hour cycles, time zones.
const d = new Date(Date.UTC(2026, 11, 2, 13, 4, 5, 67));
const midnight = new Date(Date.UTC(2026, 0, 5, 0, 4, 5));
const summer = new Date(Date.UTC(2026, 6, 4, 18, 30));
const cases = [
  {}, { dateStyle: 'full' }, { dateStyle: 'long' }, { dateStyle: 'medium' }, { dateStyle: 'short' },
  { timeStyle: 'full' }, { timeStyle: 'long' }, { timeStyle: 'medium' }, { timeStyle: 'short' },
  { dateStyle: 'full', timeStyle: 'short' }, { dateStyle: 'long', timeStyle: 'long' }, { dateStyle: 'medium', timeStyle: 'medium' }, { dateStyle: 'short', timeStyle: 'short' },
  { year: 'numeric', month: 'long', day: 'numeric' }, { year: 'numeric', month: 'short', day: 'numeric' }, { weekday: 'long', year: 'numeric', month: 'long', day: 'numeric' },
  { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric' }, { weekday: 'short', month: 'short', day: 'numeric' },
  { month: 'long', year: 'numeric' }, { month: 'short', year: 'numeric' }, { month: 'short', day: 'numeric' }, { month: 'long', day: 'numeric' }, { month: 'short', day: '2-digit' },
  { month: 'long' }, { month: 'short' }, { month: 'narrow' }, { weekday: 'long' }, { weekday: 'short' }, { weekday: 'narrow' }, { year: 'numeric' }, { year: '2-digit' },
  { day: 'numeric' }, { day: '2-digit' }, { month: 'numeric' }, { month: '2-digit' }, { month: 'numeric', day: 'numeric' }, { month: '2-digit', day: '2-digit' },
  { month: 'numeric', year: 'numeric' }, { month: '2-digit', year: 'numeric' }, { year: 'numeric', month: '2-digit', day: '2-digit' }, { year: '2-digit', month: '2-digit', day: '2-digit' },
  { weekday: 'short', year: 'numeric', month: 'numeric', day: 'numeric' }, { weekday: 'long', month: 'numeric', day: 'numeric' }, { month: 'long', year: '2-digit' },
  { hour: 'numeric' }, { hour: '2-digit' }, { hour: 'numeric', minute: '2-digit' }, { hour: '2-digit', minute: '2-digit' }, { hour: 'numeric', minute: 'numeric', second: 'numeric' },
  { minute: '2-digit' }, { minute: '2-digit', second: '2-digit' }, { second: 'numeric' }, { minute: 'numeric', second: 'numeric', fractionalSecondDigits: 2 },
  { hour: 'numeric', hour12: false }, { hour: 'numeric', minute: '2-digit', hour12: false }, { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false },
  { hour: 'numeric', minute: '2-digit', hourCycle: 'h23' }, { hour: 'numeric', minute: '2-digit', hourCycle: 'h24' }, { hour: 'numeric', minute: '2-digit', hourCycle: 'h11' },
  { timeStyle: 'short', hour12: false },
  { year: 'numeric', month: 'long', day: 'numeric', hour: 'numeric', minute: '2-digit' }, { year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' },
  { year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: '2-digit' }, { weekday: 'long', hour: 'numeric' }, { weekday: 'long', hour: 'numeric', minute: '2-digit' },
  { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' }, { weekday: 'long', month: 'long', day: 'numeric', hour: 'numeric' },
  { weekday: 'short', month: 'long', day: 'numeric', year: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' },
  { hour: 'numeric', minute: '2-digit', timeZoneName: 'short' }, { timeZoneName: 'short' }, { timeZoneName: 'long' },
  { year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric', fractionalSecondDigits: 3 },
  { hour: 'numeric', minute: '2-digit', timeZone: 'America/New_York', timeZoneName: 'short' }, { timeZone: 'Asia/Kolkata', timeZoneName: 'short' },
  { timeZone: 'Europe/Berlin', timeZoneName: 'short' }, { timeZone: 'Europe/Berlin', timeZoneName: 'long' }, { timeZone: 'America/Los_Angeles', timeZoneName: 'long' },
  { timeZone: 'Europe/London', timeZoneName: 'short' }, { timeZone: 'Asia/Tokyo', timeZoneName: 'shortOffset' }, { timeZone: 'Asia/Tokyo', timeZoneName: 'longOffset' },
  { timeZone: 'America/Chicago', dateStyle: 'medium', timeStyle: 'long' }, { timeZone: 'Australia/Sydney', timeStyle: 'long' }, { timeZone: 'utc', timeStyle: 'full' },
];
for (const c of cases) {
  const f = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', ...c });
  console.log(JSON.stringify(c), '=>', [d, midnight, summer].map((x) => f.format(x)).join(' | '));
}
const utc = { timeZone: 'UTC' };
console.log(d.toLocaleString('en-US', utc), d.toLocaleDateString('en-US', utc), d.toLocaleTimeString('en-US', utc), d.toLocaleDateString('en-US', { ...utc, hour: 'numeric' }), d.toLocaleTimeString('en-US', { ...utc, month: 'long' }));
console.log(d.toLocaleString(), d.toLocaleDateString(), d.toLocaleTimeString(), new Date(NaN).toLocaleString(), [1.5, new Date(0)].toLocaleString());
console.log(new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).formatToParts(d));
console.log(new Intl.DateTimeFormat('en-US', { hour: 'numeric', minute: '2-digit', hourCycle: 'h23', timeZone: 'America/New_York' }).formatToParts(summer));
console.log(new Intl.DateTimeFormat().resolvedOptions(), new Intl.DateTimeFormat('en', { timeStyle: 'short' }).resolvedOptions(), new Intl.DateTimeFormat('en', { hour: 'numeric', weekday: 'long', minute: 'numeric' }).resolvedOptions());
console.log(new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Paris' }).resolvedOptions().timeZone, Intl.DateTimeFormat().resolvedOptions().timeZone);
for (const bad of [() => new Intl.DateTimeFormat('en-US').format(NaN), () => new Intl.DateTimeFormat('en-US', { timeZone: 'Mars/X' }), () => new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', hour: 'numeric' })]) {
  try { bad(); } catch (e) { console.log(e.name, e.message); }
}
const eras = [Date.UTC(2026, 11, 2, 13, 4, 5), Date.UTC(-40, 0, 1), Date.UTC(2026, 0, 5, 0, 4)];
for (const o of [{ era: 'short' }, { era: 'long' }, { era: 'narrow' }, { year: 'numeric', month: 'long', day: 'numeric', era: 'long' }, { year: 'numeric', era: 'short' }, { year: 'numeric', month: 'long', era: 'short' }, { era: 'long', hour: 'numeric' },
  { hour12: false, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', era: 'short' }]) {
  const f = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', ...o });
  console.log(JSON.stringify(o), eras.map((x) => f.format(x)).join(' | '), f.formatToParts(eras[1]).map((p) => p.type).join());
}
