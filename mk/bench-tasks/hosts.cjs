// The bench's /etc/hosts for sandbox-runtime's own proxy (node --require):
// git.test and npm.test are tasks.bats's server on 127.0.0.1, as
// `cordon run --resolve` makes them for cordon.  Only srt's process sees
// it: the variable that could carry it into the sandbox is not set.
'use strict';
const dns = require('node:dns');
const hosts = { 'git.test': '127.0.0.1', 'npm.test': '127.0.0.1' };
const lookup = dns.lookup;
const plookup = dns.promises.lookup;

function addr(name) {
	return hosts[String(name).toLowerCase()];
}

dns.lookup = function (name, opts, cb) {
	const a = addr(name);
	if (typeof opts === 'function') {
		cb = opts;
		opts = {};
	}
	if (a === undefined)
		return lookup.call(dns, name, opts, cb);
	if (opts !== null && typeof opts === 'object' && opts.all)
		process.nextTick(cb, null, [{ address: a, family: 4 }]);
	else
		process.nextTick(cb, null, a, 4);
	return {};
};

dns.promises.lookup = async function (name, opts) {
	const a = addr(name);
	if (a === undefined)
		return plookup.call(dns.promises, name, opts);
	if (opts !== null && typeof opts === 'object' && opts.all)
		return [{ address: a, family: 4 }];
	return { address: a, family: 4 };
};

// srt is an ES module: its `import { lookup } from 'node:dns'` sees
// the change only once the built-in's named exports are synced.
require('node:module').syncBuiltinESMExports();
