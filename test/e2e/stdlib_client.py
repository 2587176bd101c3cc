"""A client in plain Python (standard library only) that reads streams through `toolwire proxy`.

It accumulates calls the naive way many hand-written clients do: Anthropic input_json_delta
fragments concatenated per block, Chat Completions fields concatenated per index (like the
Python SDK's accumulate_delta, which also concatenates ids and names). Through the proxy it must
see exactly the calls toolwire decodes.

Usage: stdlib_client.py <proxy url> <anthropic|openai-chat> <stream key>...
Prints one JSON line per stream: {"key": ..., "calls": [{"id", "name", "arguments"}] } or {"key", "error"}.
"""
import json
import sys
import urllib.request


def sse_events(response):
    data_lines, name = [], None
    for raw in response:
        line = raw.decode("utf-8").rstrip("\r\n")
        if line == "":
            if data_lines:
                yield name, "\n".join(data_lines)
            data_lines, name = [], None
        elif line.startswith(":"):
            continue
        elif line.startswith("data:"):
            data_lines.append(line[5:].lstrip(" ") if line[5:6] == " " else line[5:])
        elif line.startswith("event:"):
            name = line[6:].strip()
    if data_lines:
        yield name, "\n".join(data_lines)


def post(url, key, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers={
        "content-type": "application/json", "x-api-key": "sk-ant-python-test", "authorization": "Bearer sk-python-test",
        "anthropic-version": "2023-06-01", "x-toolwire-stream": key})
    return urllib.request.urlopen(request, timeout=20)


def anthropic_calls(base, key):
    blocks = {}
    with post(base + "/v1/messages", key, {"model": "m", "max_tokens": 100, "stream": True, "messages": [{"role": "user", "content": "hi"}]}) as response:
        for _name, data in sse_events(response):
            event = json.loads(data)
            if event.get("type") == "content_block_start" and event["content_block"].get("type") == "tool_use":
                block = event["content_block"]
                blocks[event["index"]] = {"id": block["id"], "name": block["name"], "buf": "", "input": block.get("input")}
            elif event.get("type") == "content_block_delta" and event["index"] in blocks and event["delta"].get("type") == "input_json_delta":
                blocks[event["index"]]["buf"] += event["delta"]["partial_json"]
            elif event.get("type") == "error":
                raise RuntimeError(event["error"]["message"])
    out = []
    for index in sorted(blocks):
        block = blocks[index]
        out.append({"id": block["id"], "name": block["name"], "arguments": json.loads(block["buf"]) if block["buf"] else block["input"]})
    return out


def chat_calls(base, key):
    calls = {}
    finish = None
    with post(base + "/v1/chat/completions", key, {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}) as response:
        for _name, data in sse_events(response):
            if data.strip() == "[DONE]":
                break
            chunk = json.loads(data)
            if chunk.get("error"):
                raise RuntimeError(chunk["error"].get("message"))
            for choice in chunk.get("choices") or []:
                finish = choice.get("finish_reason") or finish
                for entry in (choice.get("delta") or {}).get("tool_calls") or []:
                    call = calls.setdefault(entry["index"], {"id": "", "name": "", "arguments": ""})
                    call["id"] += entry.get("id") or ""
                    function = entry.get("function") or {}
                    call["name"] += function.get("name") or ""
                    call["arguments"] += function.get("arguments") or ""
    if finish is None:
        raise RuntimeError("missing finish_reason")
    return [{"id": c["id"], "name": c["name"], "arguments": json.loads(c["arguments"])} for _, c in sorted(calls.items())]


def main():
    base, protocol, keys = sys.argv[1], sys.argv[2], sys.argv[3:]
    for key in keys:
        try:
            calls = anthropic_calls(base, key) if protocol == "anthropic" else chat_calls(base, key)
            print(json.dumps({"key": key, "calls": calls}))
        except Exception as error:  # reported, not raised: the test compares
            print(json.dumps({"key": key, "error": f"{type(error).__name__}: {error}"}))


main()
