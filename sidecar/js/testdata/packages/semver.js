const semver = require('semver');
console.log(semver.valid('1.2.3'), semver.satisfies('1.3.0', '^1.2'), semver.maxSatisfying(['1.2.3', '1.4.0', '2.0.0'], '~1.4'));
console.log(semver.inc('1.2.3', 'prerelease', 'beta'), semver.coerce('v2.x').version, semver.sort(['2.0.0', '1.0.0-rc.1', '1.0.0']));
