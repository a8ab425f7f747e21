const moment = require('moment');
require('moment/locale/fr');
const m = moment.utc('2021-03-04T05:06:07Z');
console.log(m.format('dddd, MMMM Do YYYY, h:mm:ss a'), m.clone().locale('fr').format('LLLL'), m.add(3, 'days').toISOString());
console.log(moment.duration(90, 'minutes').humanize(), moment.utc('2020-02-30', 'YYYY-MM-DD', true).isValid());
