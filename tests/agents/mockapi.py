#!/usr/bin/env python3
"""A scripted model API for tests/e2e/agents.bats, on loopback, over TLS.

It speaks the two APIs the agents use, streaming: Anthropic's Messages
API (Claude Code: POST /v1/messages) and OpenAI's Responses API (Codex:
POST /v1/responses).  A request whose conversation has no tool result yet
is answered with one tool call running the command in --command; the
next, with a final text that quotes the tool's output.  The call is to
the agent's own shell tool, or, when the request offers cordon mcp's
tool (named "run", "mcp__cordon__run" as Claude Code names it, or
"cordon_run" and "mcp_cordon_run" as OpenCode and Gemini CLI do), to
that one, with {"command": ...}.  Every request is
written to --log as one JSON line: method, path, headers, body.

It is an OAuth token endpoint too (Claude Code's, POST /v1/oauth/token;
Codex's, POST /oauth/token): a refresh is answered with the new tokens
of --tokens (a JSON object: access_token, refresh_token, id_token),
lasting an hour, or with the text of --tokens-raw as it is; without
either, 400.

usage: mockapi.py [--address ADDR] --listen PORT --cert PEM --key PEM
                  --log FILE --command 'SHELL COMMAND'
                  [--tokens JSON | --tokens-raw TEXT]
"""
import argparse
import json
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None
LOCK = threading.Lock()


def sse(handler, events):
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Connection", "close")
    handler.end_headers()
    for name, data in events:
        handler.wfile.write(("event: %s\ndata: %s\n\n" %
                             (name, json.dumps(data))).encode())
        handler.wfile.flush()
    handler.close_connection = True


def text_of(value):
    """The text in a tool result's content, whatever its shape."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(text_of(v) for v in value)
    if isinstance(value, dict):
        for key in ("text", "content", "output"):
            if key in value:
                return text_of(value[key])
        return ""
    return ""


# --- Anthropic Messages ---------------------------------------------------

def anthropic_result(body):
    """The last tool result in the conversation, or None."""
    found = None
    for m in body.get("messages", []):
        if isinstance(m.get("content"), list):
            for part in m["content"]:
                if part.get("type") == "tool_result":
                    found = text_of(part.get("content"))
    return found


def mcp_run(names):
    """The name of cordon mcp's tool among the tools offered, or None."""
    for name in names:
        if isinstance(name, str) and (name == "run" or
                                      name.endswith("__run") or
                                      name.endswith("cordon_run")):
            return name
    return None


def anthropic(handler, body):
    model = body.get("model", "claude")
    tools = [t.get("name") for t in body.get("tools", [])]
    result = anthropic_result(body)
    msg = {"id": "msg_1", "type": "message", "role": "assistant",
           "model": model, "content": [], "stop_reason": None,
           "stop_sequence": None,
           "usage": {"input_tokens": 10, "output_tokens": 1}}
    ev = [("message_start", {"type": "message_start", "message": msg})]
    name = mcp_run(tools) or next((n for n in ("Bash", "bash")
                                   if n in tools), None)
    if result is None and name is not None:
        block = {"type": "tool_use", "id": "toolu_1", "name": name,
                 "input": {}}
        args = {"command": ARGS.command}
        if name in ("Bash", "bash"):
            args["description"] = "run the test's command"
        args = json.dumps(args)
        ev += [("content_block_start", {"type": "content_block_start",
                "index": 0, "content_block": block}),
               ("content_block_delta", {"type": "content_block_delta",
                "index": 0, "delta": {"type": "input_json_delta",
                                      "partial_json": args}}),
               ("content_block_stop", {"type": "content_block_stop",
                                       "index": 0})]
        stop = "tool_use"
    else:
        text = "MOCK-DONE" if result is None else \
            "MOCK-DONE tool said: " + result
        ev += [("content_block_start", {"type": "content_block_start",
                "index": 0, "content_block": {"type": "text", "text": ""}}),
               ("content_block_delta", {"type": "content_block_delta",
                "index": 0, "delta": {"type": "text_delta", "text": text}}),
               ("content_block_stop", {"type": "content_block_stop",
                                       "index": 0})]
        stop = "end_turn"
    ev += [("message_delta", {"type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 5}}),
           ("message_stop", {"type": "message_stop"})]
    if not body.get("stream"):
        handler.send_json(200, dict(msg, content=[], stop_reason=stop))
        return
    sse(handler, ev)


# --- OpenAI Responses -----------------------------------------------------

def responses_result(body):
    found = None
    inp = body.get("input", [])
    if isinstance(inp, list):
        for item in inp:
            if isinstance(item, dict) and item.get("type") in (
                    "function_call_output", "custom_tool_call_output"):
                found = text_of(item.get("output"))
    return found


def responses_call(tools):
    """The function call item that runs ARGS.command with codex's tool."""
    names = [t.get("name") for t in tools if isinstance(t, dict)]
    for ns in tools:
        # Codex offers an MCP server's tools in a namespace
        # (mcp__cordon), and the call names both.
        if isinstance(ns, dict) and ns.get("type") == "namespace" and \
                mcp_run(t.get("name") for t in ns.get("tools", [])):
            return {"type": "function_call", "id": "fc_1",
                    "call_id": "call_1", "namespace": ns.get("name"),
                    "name": mcp_run(t.get("name") for t in ns["tools"]),
                    "arguments": json.dumps({"command": ARGS.command}),
                    "status": "completed"}
    if mcp_run(names):
        name, args = mcp_run(names), {"command": ARGS.command}
    elif "shell_command" in names:
        name, args = "shell_command", {"command": ARGS.command}
    elif "exec_command" in names:
        name, args = "exec_command", {"cmd": ARGS.command}
    else:
        name, args = "shell", {"command": ["bash", "-lc", ARGS.command]}
    return {"type": "function_call", "id": "fc_1", "call_id": "call_1",
            "name": name, "arguments": json.dumps(args),
            "status": "completed"}


def responses(handler, body):
    result = responses_result(body)
    resp = {"id": "resp_1", "object": "response", "status": "in_progress",
            "model": body.get("model", "gpt"), "output": []}
    if result is None:
        item = responses_call(body.get("tools", []))
    else:
        item = {"type": "message", "id": "msg_1", "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "annotations": [],
                             "text": "MOCK-DONE tool said: " + result}]}
    done = dict(resp, status="completed", output=[item],
                usage={"input_tokens": 10, "output_tokens": 5,
                       "total_tokens": 15,
                       "input_tokens_details": {"cached_tokens": 0},
                       "output_tokens_details": {"reasoning_tokens": 0}})
    sse(handler, [
        ("response.created", {"type": "response.created",
                              "response": resp}),
        ("response.output_item.added", {"type": "response.output_item.added",
                                        "output_index": 0, "item": item}),
        ("response.output_item.done", {"type": "response.output_item.done",
                                       "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed",
                                "response": done})])


# --- Gemini generateContent ------------------------------------------------

def gemini_result(body):
    """The last function response in the conversation, or None."""
    found = None
    for c in body.get("contents", []):
        for part in c.get("parts", []) if isinstance(c, dict) else []:
            if isinstance(part, dict) and "functionResponse" in part:
                found = text_of(part["functionResponse"].get("response"))
    return found


def gemini_tools(body):
    return [d.get("name") for t in body.get("tools", []) or []
            for d in t.get("functionDeclarations", []) or []]


def gemini(handler, body, stream):
    result = gemini_result(body)
    tools = gemini_tools(body)
    name = mcp_run(tools) or ("run_shell_command"
                              if "run_shell_command" in tools else None)
    if result is None and name is not None:
        part = {"functionCall": {"name": name,
                                 "args": {"command": ARGS.command}}}
    else:
        part = {"text": "MOCK-DONE" if result is None else
                "MOCK-DONE tool said: " + result}
    answer = {"candidates": [{"content": {"role": "model", "parts": [part]},
                              "finishReason": "STOP", "index": 0}],
              "usageMetadata": {"promptTokenCount": 10,
                                "candidatesTokenCount": 5,
                                "totalTokenCount": 15},
              "modelVersion": "mock-model"}
    if not stream:
        handler.send_json(200, answer)
        return
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.wfile.write(("data: %s\r\n\r\n" % json.dumps(answer)).encode())
    handler.wfile.flush()
    handler.close_connection = True


# --- OAuth token endpoint --------------------------------------------------

def oauth_token(handler, body):
    """A refresh: the new tokens of --tokens, or invalid_grant."""
    if ARGS.tokens_raw is not None:
        data = ARGS.tokens_raw.encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
        return
    if body.get("grant_type") != "refresh_token" or not ARGS.tokens:
        handler.send_json(400, {"error": "invalid_grant"})
        return
    handler.send_json(200, dict(json.loads(ARGS.tokens), expires_in=3600,
                                token_type="Bearer",
                                scope="user:inference"))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send_json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def record(self, body):
        with LOCK, open(ARGS.log, "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path,
                                "headers": dict(self.headers.items()),
                                "body": body}) + "\n")

    def do_GET(self):
        self.record(None)
        if self.path.split("?")[0].endswith("/models"):
            self.send_json(200, {"object": "list", "data": [],
                                 "models": []})
        else:
            self.send_json(404, {"error": {"message": "not here"}})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"unparsed": raw.decode("latin-1")}
        self.record(body)
        path = self.path.split("?")[0]
        if path.endswith("/messages"):
            anthropic(self, body)
        elif path.endswith("/responses"):
            responses(self, body)
        elif path.endswith(":streamGenerateContent"):
            gemini(self, body, True)
        elif path.endswith(":generateContent"):
            gemini(self, body, False)
        elif path.endswith(":countTokens"):
            self.send_json(200, {"totalTokens": 10})
        elif path in ("/v1/oauth/token", "/oauth/token"):
            oauth_token(self, body)
        else:
            self.send_json(200, {})


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--address", default="127.0.0.1")
    p.add_argument("--listen", type=int, required=True)
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--command", required=True)
    p.add_argument("--tokens")
    p.add_argument("--tokens-raw")
    ARGS = p.parse_args()
    srv = ThreadingHTTPServer((ARGS.address, ARGS.listen), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(ARGS.cert, ARGS.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print("listening", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
