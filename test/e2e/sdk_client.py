"""The official Python SDKs (`anthropic`, `openai`) pointed at `toolwire proxy` by base_url.

Usage: sdk_client.py <proxy url> <anthropic|openai-chat> <stream key>...
Prints one JSON line per stream with the calls of the SDK's own final message.
"""
import json
import sys


def anthropic_calls(base, key):
    import anthropic

    client = anthropic.Anthropic(api_key="sk-ant-python-test", base_url=base, max_retries=0)
    with client.messages.stream(model="m", max_tokens=100, messages=[{"role": "user", "content": "hi"}], extra_headers={"x-toolwire-stream": key}) as stream:
        message = stream.get_final_message()
    return [{"id": b.id, "name": b.name, "arguments": b.input} for b in message.content if b.type == "tool_use"]


def chat_calls(base, key):
    import openai

    client = openai.OpenAI(api_key="sk-python-test", base_url=base + "/v1", max_retries=0)
    with client.chat.completions.stream(model="m", messages=[{"role": "user", "content": "hi"}], extra_headers={"x-toolwire-stream": key}) as stream:
        completion = stream.get_final_completion()
    calls = completion.choices[0].message.tool_calls or []
    return [{"id": c.id, "name": c.function.name, "arguments": json.loads(c.function.arguments)} for c in calls]


def main():
    base, protocol, keys = sys.argv[1], sys.argv[2], sys.argv[3:]
    for key in keys:
        try:
            calls = anthropic_calls(base, key) if protocol == "anthropic" else chat_calls(base, key)
            print(json.dumps({"key": key, "calls": calls}))
        except Exception as error:
            print(json.dumps({"key": key, "error": f"{type(error).__name__}: {error}"}))


main()
