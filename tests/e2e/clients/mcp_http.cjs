// mcp_http.cjs: the MCP conformance suite tests servers over Streamable
// HTTP only; this serves it on 127.0.0.1:PORT/mcp and relays each of its
// sessions, message for message, to a stdio server of its own (argv:
// the server's command), started at that session's initialize and
// ended (its stdin closed) with it.  No message is changed.  Built on
// the official TypeScript SDK's transports (pinned in tests/npm); run
// with NODE_PATH=tests/npm/node_modules.
const http = require("http");
const { randomUUID } = require("crypto");
const { StreamableHTTPServerTransport } =
    require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { StdioClientTransport } =
    require("@modelcontextprotocol/sdk/client/stdio.js");

const [port, command, ...args] = process.argv.slice(2);
const sessions = {};

async function open() {
	const stdio = new StdioClientTransport({ command, args,
	    stderr: "inherit" });
	const web = new StreamableHTTPServerTransport({
		sessionIdGenerator: () => randomUUID(),
		onsessioninitialized: (id) => { sessions[id] = web; },
	});
	web.onmessage = (msg) => stdio.send(msg);
	stdio.onmessage = (msg) => web.send(msg);
	web.onclose = () => {
		if (web.sessionId)
			delete sessions[web.sessionId];
		stdio.close();
	};
	await stdio.start();
	await web.start();
	return web;
}

http.createServer(async (req, res) => {
	let body = "";
	req.on("data", (d) => { body += d; });
	await new Promise((r) => req.on("end", r));
	let parsed;
	try {
		parsed = body ? JSON.parse(body) : undefined;
	} catch {
		res.writeHead(400).end();
		return;
	}
	const id = req.headers["mcp-session-id"];
	let web = id ? sessions[id] : undefined;
	if (!web && req.method === "POST" && parsed &&
	    parsed.method === "initialize")
		web = await open();
	if (!web) {
		res.writeHead(400, { "content-type": "application/json" }).end(
		    JSON.stringify({ jsonrpc: "2.0", id: null, error: {
		    code: -32000, message: "no such session" } }));
		return;
	}
	await web.handleRequest(req, res, parsed);
}).listen(Number(port), "127.0.0.1", () => console.log("listening"));
