#!/usr/bin/env node
// Prints each YAML document on standard input as one line of JSON, for
// jq: what tests/fleet reads the rendered manifests with.
'use strict';
const fs = require('fs');
const YAML = require('yaml');
for (const d of YAML.parseAllDocuments(fs.readFileSync(0, 'utf8'))) {
	if (d.errors.length) {
		console.error(`yaml: ${d.errors[0].message}`);
		process.exit(1);
	}
	const v = d.toJS();
	if (v !== null)
		console.log(JSON.stringify(v));
}
