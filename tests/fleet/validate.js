#!/usr/bin/env node
// Validates Kubernetes objects (YAML documents on standard input, as
// `kubectl kustomize` prints them) against the Kubernetes API's schemas,
// offline: the validators of the npm package kubernetes-models, which
// are compiled from the API's OpenAPI document (types, required fields,
// enums, formats, int-or-string).  Those schemas, like the API's own,
// let unknown fields through; the API server drops such a field (or
// refuses it, with strict field validation), so a misspelt one would
// be lost in silence.  Here it is an error: each object is read
// through a Proxy that records every field the validator looks at, and
// a field it never looked at is unknown to the schema.
// Prints one line per object; exits 1 if any is invalid.
'use strict';

const fs = require('fs');
const path = require('path');
const YAML = require('yaml');

const schemas = path.join(path.dirname(require.resolve(
    'kubernetes-models/package.json')), '_schemas');

// apps/v1 Deployment -> IoK8sApiAppsV1Deployment
function schemaName(apiVersion, kind) {
	const parts = String(apiVersion).split('/');
	const version = parts.pop();
	const group = parts.length ? parts[0].split('.')[0] : 'core';
	const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);
	return 'IoK8sApi' + cap(group) + cap(version) + kind;
}

// Wraps obj so that every key read is recorded under its path.
function watch(obj, where, seen) {
	if (obj === null || typeof obj !== 'object')
		return obj;
	return new Proxy(obj, {
		get(target, key, recv) {
			const v = Reflect.get(target, key, recv);
			if (typeof key !== 'string' ||
			    !Object.prototype.hasOwnProperty.call(target, key))
				return v;
			const p = where + '/' + key;
			seen.add(p);
			return watch(v, p, seen);
		},
	});
}

function unknownFields(obj, where, seen, out) {
	if (obj === null || typeof obj !== 'object')
		return;
	for (const key of Object.keys(obj)) {
		const p = where + '/' + key;
		if (!seen.has(p))
			out.push(p);
		else
			unknownFields(obj[key], p, seen, out);
	}
}

function check(doc) {
	const name = `${doc.kind}/${doc.metadata && doc.metadata.name}`;
	let mod;
	try {
		mod = require(path.join(schemas,
		    schemaName(doc.apiVersion, doc.kind) + '.js'));
	} catch (e) {
		return [`${name}: no schema for ${doc.apiVersion} ${doc.kind}`];
	}
	const seen = new Set();
	const errs = [];
	if (!mod.validate(watch(doc, '', seen)))
		for (const e of mod.validate.errors)
			errs.push(`${name}: ${e.instancePath || '/'}: ` +
			    `${e.message || e.keyword} ${JSON.stringify(e.params)}`);
	const unknown = [];
	unknownFields(doc, '', seen, unknown);
	for (const u of unknown)
		errs.push(`${name}: ${u}: unknown field`);
	return errs;
}

const docs = YAML.parseAllDocuments(fs.readFileSync(0, 'utf8'));
let bad = 0;
for (const d of docs) {
	if (d.errors.length) {
		console.log(`yaml: ${d.errors[0].message}`);
		bad++;
		continue;
	}
	const doc = d.toJS();
	if (doc === null)
		continue;
	const errs = check(doc);
	if (errs.length) {
		bad++;
		for (const e of errs)
			console.log(`invalid ${e}`);
	} else {
		console.log(`valid ${doc.apiVersion} ${doc.kind} ` +
		    `${doc.metadata.namespace || '-'}/${doc.metadata.name}`);
	}
}
process.exit(bad ? 1 : 0);
