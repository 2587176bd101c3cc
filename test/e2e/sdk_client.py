"""The official Python SDKs (`anthropic`, `openai`, `google-genai`) pointed at `toolwire proxy` by base_url.

Usage: sdk_client.py <proxy url> <anthropic|openai-chat|gemini> <stream key>...
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


def gemini_calls(base, key):
    from google import genai
    from google.genai import types

    client = genai.Client(api_key="gemini-python-test", http_options=types.HttpOptions(base_url=base, headers={"x-toolwire-stream": key}))
    calls = []
    for chunk in client.models.generate_content_stream(model="gemini-test", contents="hi"):
        for call in chunk.function_calls or []:
            calls.append({"id": call.id, "name": call.name, "arguments": call.args})
    return calls


CLIENTS = {"anthropic": anthropic_calls, "openai-chat": chat_calls, "gemini": gemini_calls}


def main():
    base, protocol, keys = sys.argv[1], sys.argv[2], sys.argv[3:]
    for key in keys:
        try:
            calls = CLIENTS[protocol](base, key)
            print(json.dumps({"key": key, "calls": calls}))
        except Exception as error:
            print(json.dumps({"key": key, "error": f"{type(error).__name__}: {error}"}))


main()
