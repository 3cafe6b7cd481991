// mcp_client.cjs: an MCP client on the official TypeScript SDK (pinned in
// tests/npm), for mcp.bats: it starts the server (argv), calls the tool
// run once per element of the JSON array in $MCP_CALLS (its arguments),
// and prints each result as a JSON line.  With $MCP_ANSWER (allow-once,
// allow-run or deny) it says it can be asked (elicitation) and answers
// each question so, printing {"asked": MESSAGE} first; without, it says
// nothing of elicitation.  Run with NODE_PATH=tests/npm/node_modules.
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } =
    require("@modelcontextprotocol/sdk/client/stdio.js");
const { ElicitRequestSchema } = require("@modelcontextprotocol/sdk/types.js");

async function main() {
	const [command, ...args] = process.argv.slice(2);
	const answer = process.env.MCP_ANSWER;
	const client = new Client({ name: "cordon-test", version: "1" },
	    { capabilities: answer ? { elicitation: {} } : {} });
	if (answer) {
		client.setRequestHandler(ElicitRequestSchema, async (req) => {
			console.log(JSON.stringify({ asked: req.params.message }));
			return answer === "decline" ? { action: "decline" } :
			    { action: "accept", content: { decision: answer } };
		});
	}
	const transport = new StdioClientTransport({ command, args,
	    stderr: "inherit" });
	await client.connect(transport);
	for (const a of JSON.parse(process.env.MCP_CALLS || "[]")) {
		const r = await client.callTool({ name: "run", arguments: a },
		    undefined, { timeout: 120000 });
		console.log(JSON.stringify(r));
	}
	await client.close();
}

main().catch((e) => {
	console.error("mcp_client:", e.message);
	process.exit(1);
});
